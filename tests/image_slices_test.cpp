// Verification sliced by images (reference/image_slices.hpp), without a GPU: the slices and their
// offsets, the largest slice within a budget, and the merge of per-slice comparison sums, which
// must give the figures one comparison of the whole output gives (compare_bounded, the CPU twin
// of ref_compare.cu, stands in for the device comparison).
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "error_stats_expect.hpp"
#include "reference/bounds.hpp"
#include "reference/image_slices.hpp"
#include "spec/parser.hpp"

namespace fusetune::reference {
namespace {

TEST(ImageSlices, FullSlicesThenAShorterLast) {
  EXPECT_EQ(image_slices(8, 3), (std::vector<ImageSlice>{{0, 3}, {3, 3}, {6, 2}}));
  EXPECT_EQ(image_slices(8, 4), (std::vector<ImageSlice>{{0, 4}, {4, 4}}));
  EXPECT_EQ(image_slices(8, 8), (std::vector<ImageSlice>{{0, 8}}));
  EXPECT_EQ(image_slices(5, 9), (std::vector<ImageSlice>{{0, 5}}));
  EXPECT_EQ(image_slices(3, 1), (std::vector<ImageSlice>{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_THROW((void)image_slices(4, 0), Error);
  // Every image once, in order.
  for (int64_t n : {1, 7, 520})
    for (int64_t s : {1, 2, 3, 7, 100, 520}) {
      int64_t next = 0;
      for (const ImageSlice& sl : image_slices(n, s)) {
        EXPECT_EQ(sl.first, next);
        EXPECT_GE(sl.images, 1);
        EXPECT_LE(sl.images, s);
        next += sl.images;
      }
      EXPECT_EQ(next, n);
    }
}

TEST(ImageSlices, MostImagesWithinABudget) {
  // Page-rounded bytes, as GpuReference::answer_bytes counts them.
  const auto bytes = [](int64_t s) { return std::ceil(double(s) * 3.3 / 2.0) * 2.0; };
  for (double budget : {0.0, 3.9, 4.0, 10.0, 99.0, 1e9}) {
    const int64_t s = most_images_within(520, budget, bytes);
    if (s > 0) {
      EXPECT_LE(bytes(s), budget);
    }
    if (s < 520) {
      EXPECT_GT(bytes(s + 1), budget) << budget;
    }
  }
  EXPECT_EQ(most_images_within(520, 1.0, bytes), 0);
  EXPECT_EQ(most_images_within(520, 1e9, bytes), 520);
}

TEST(ImageSlices, OnlyTheChainFormOfConv2dIsSliced) {
  const spec::Problem p = spec::parse("conv2d(n=8,c=3,h=9,w=9,k=4,r=3) | relu | reduce_max(channel)");
  EXPECT_TRUE(sliceable_by_images(p));
  EXPECT_EQ(slice_problem(p, 3).conv.n, 3);
  EXPECT_EQ(slice_problem(p, 3).out_elems() * 8, p.out_elems() * 3);
  spec::Problem conv3d = p;
  conv3d.main = spec::MainKind::conv3d;
  EXPECT_FALSE(sliceable_by_images(conv3d));
}

// Image n's elements are one contiguous run [n*C*PQ, (n+1)*C*PQ) in NCHW and NHWC alike: what
// lets a slice's output start at first * (elements per image) in either layout.
TEST(ImageSlices, AnImageIsContiguousInBothLayouts) {
  const int64_t n_img = 3, C = 5, PQ = 7;
  for (int64_t n = 0; n < n_img; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t pq = 0; pq < PQ; ++pq) {
        const int64_t nchw = (n * C + c) * PQ + pq, nhwc = (n * PQ + pq) * C + c;
        for (int64_t i : {nchw, nhwc}) {
          EXPECT_GE(i, n * C * PQ);
          EXPECT_LT(i, (n + 1) * C * PQ);
        }
      }
}

struct Data {
  std::vector<float> out, bound, var;
  std::vector<double> ref;
};

// count elements like a TF32 verification's: errors mostly inside the bounds, a few ill-conditioned
// (infinite bound) elements, NaN on both sides somewhere, and mismatches only from `bad_from` on.
Data make_data(uint64_t count, uint64_t bad_from, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Data d;
  for (uint64_t i = 0; i < count; ++i) {
    const double r = u(rng) * 4.0;
    const double b = 1e-4 * (1.0 + std::fabs(r));  // the fp32 rule's tolerance too
    d.ref.push_back(r);
    d.bound.push_back(i % 97 == 5 ? std::numeric_limits<float>::infinity() : float(b));
    d.var.push_back(float(b * b / 9.0));
    double o = r + 0.3 * b * u(rng);
    if (i >= bad_from && i % 131 == 17) o = r + 10.0 * b;  // a mismatch
    if (i >= bad_from && i % 499 == 3) o = std::numeric_limits<double>::quiet_NaN();  // unwritten
    d.out.push_back(float(o));
  }
  d.ref[11] = std::numeric_limits<double>::quiet_NaN();  // NaN in both: a match
  d.out[11] = std::numeric_limits<float>::quiet_NaN();
  return d;
}

// The per-slice sums merged, as the worker's ReferenceCheck::compare_sliced merges them.
GpuErrorStats sliced(const Data& d, int64_t n, int64_t per_slice, MathMode math, double kappa) {
  const uint64_t per_image = d.ref.size() / uint64_t(n);
  // As GpuReference::compare_sums: the TF32 rule (1) or the fp32 rule with the variances (2).
  const int mode = math == MathMode::tf32 ? 1 : 2;
  ft_compare_acc total = ft_compare_acc_zero();
  for (const ImageSlice& sl : image_slices(n, per_slice)) {
    const uint64_t first = uint64_t(sl.first) * per_image;
    ft_compare_acc acc = ft_compare_acc_zero();
    // Indices relative to the slice, as the slice's own comparison reports them.
    for (uint64_t i = 0; i < uint64_t(sl.images) * per_image; ++i) {
      const uint64_t g = first + i;
      ft_compare_element(acc, i, double(d.out[g]), d.ref[g], mode, double(d.bound[g]), double(d.var[g]));
    }
    merge_slice(total, acc, first);
  }
  return finish_compare(total, d.ref.size(), math, kappa);
}

TEST(ImageSlices, MergedSlicesGiveTheWholeComparison) {
  const int64_t n = 8;
  const uint64_t per_image = 3 * 37;  // K' * P * Q
  for (MathMode math : {MathMode::tf32, MathMode::fp32})
    for (uint64_t bad_from : {uint64_t(0), 5 * per_image + 7, n * per_image}) {  // none bad in the last case
      const Data d = make_data(n * per_image, bad_from, 42 + uint32_t(bad_from));
      const double kappa = 1.7;
      const GpuErrorStats whole = compare_bounded(d.out.data(), d.ref.data(), d.bound.data(), d.var.data(),
                                                  d.ref.size(), math, kappa);
      if (bad_from < n * per_image) {
        ASSERT_GT(whole.mismatches, 0u);
        EXPECT_GE(whole.first_bad, bad_from);
      } else {
        EXPECT_EQ(whole.first_bad, GpuErrorStats::kNone);
      }
      if (math == MathMode::tf32) {
        EXPECT_GT(whole.unchecked, 0u);
      }
      for (int64_t per_slice : {1, 2, 3, 5, 8}) {
        SCOPED_TRACE(::testing::Message() << math_mode_name(math) << " bad from " << bad_from << ", slices of "
                                          << per_slice);
        expect_same_figures(whole, sliced(d, n, per_slice, math, kappa));
      }
    }
}

}  // namespace
}  // namespace fusetune::reference
