#include "spec/conv_checks.hpp"

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "spec/parser.hpp"

namespace fusetune::spec::detail {
namespace {

// a*b, or nullopt past kMaxTensorElems (fields are <= 2^40 each, so products of two
// can exceed int64; the builtin catches that without UB).
std::optional<int64_t> bounded_mul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product) || product > kMaxTensorElems) return std::nullopt;
  return product;
}

// One output extent. Computed here rather than with Conv::p() because p() truncates
// a negative numerator toward zero and would call an empty output size 1. Any stride
// >= 1 leaves at least one output once the dilated window fits in the padded input.
void check_extent(std::string_view extent, std::string_view size_key, int64_t size, int64_t pad,
                  std::string_view window_key, int64_t window, int64_t dil, int column) {
  const std::optional<int64_t> reach = bounded_mul(dil, window - 1);
  const int64_t padded = size + 2 * pad;  // <= 3 * 2^40: no overflow
  if (!reach || *reach + 1 > padded) {
    throw SpecError(column, fmt::format("conv output {} is empty: the dilated window "
                                        "dilation*({}-1)+1 = {} exceeds {} + 2*pad = {}",
                                        extent, window_key,
                                        reach ? fmt::format("{}", *reach + 1) : std::string("more than 2^40"),
                                        size_key, padded));
  }
}

void check_elems(std::string_view tensor, std::string_view formula,
                 std::initializer_list<int64_t> dims, int column) {
  int64_t total = 1;
  for (int64_t d : dims) {
    const std::optional<int64_t> next = bounded_mul(total, d);
    if (!next) {
      throw SpecError(column, fmt::format("{} tensor has more than 2^40 elements ({}); "
                                          "reduce the sizes",
                                          tensor, formula));
    }
    total = *next;
  }
}

}  // namespace

void check_conv(const Conv& c, int column) {
  check_extent("height P", "h", c.h, c.pad_h, "r", c.r, c.dil_h, column);
  check_extent("width Q", "w", c.w, c.pad_w, "s", c.s, c.dil_w, column);
  check_elems("input", "n*c*h*w", {c.n, c.c, c.h, c.w}, column);
  check_elems("weight", "k*c*r*s", {c.k, c.c, c.r, c.s}, column);
  check_elems("conv output", "n*k*p*q", {c.n, c.k, c.p(), c.q()}, column);
}

}  // namespace fusetune::spec::detail
