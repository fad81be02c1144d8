#include "reference/image_slices.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace fusetune::reference {

bool sliceable_by_images(const spec::Problem& p) { return p.is_conv2d_chain(); }

spec::Problem slice_problem(const spec::Problem& p, int64_t images) {
  spec::Problem s = p;
  s.conv.n = images;
  return s;
}

std::vector<ImageSlice> image_slices(int64_t n, int64_t per_slice) {
  if (per_slice < 1) throw Error(ExitCode::failure, "image_slices: a slice needs at least one image");
  std::vector<ImageSlice> out;
  for (int64_t first = 0; first < n; first += per_slice) out.push_back({first, std::min(per_slice, n - first)});
  return out;
}

int64_t most_images_within(int64_t n, double budget, const std::function<double(int64_t)>& bytes) {
  int64_t lo = 0, hi = n;  // bytes(lo) fits (lo = 0: nothing yet); every s > hi does not
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (bytes(mid) <= budget)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

void merge_slice(ft_compare_acc& total, const ft_compare_acc& slice, uint64_t first_element) {
  ft_compare_acc shifted = slice;
  if (shifted.first_bad != ~0ull) shifted.first_bad += first_element;
  ft_compare_combine(total, shifted);
}

}  // namespace fusetune::reference
