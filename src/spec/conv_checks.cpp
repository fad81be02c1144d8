#include "spec/conv_checks.hpp"

#include <algorithm>
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

// A transposed conv's output extent: (size-1)*stride - 2*pad + dil*(window-1) + out_pad + 1,
// which must be positive; PyTorch also asks out_pad < max(stride, dilation).
void check_transposed_extent(std::string_view extent, int64_t size, int64_t stride, int64_t pad, int64_t window,
                             int64_t dil, int64_t out_pad, int column) {
  if (out_pad >= std::max(stride, dil)) {
    throw SpecError(column, fmt::format("out_pad {} must be below stride or dilation (both {}) along {}", out_pad,
                                        std::max(stride, dil) == stride ? stride : dil, extent));
  }
  const std::optional<int64_t> grown = bounded_mul(size - 1, stride);
  const std::optional<int64_t> reach = bounded_mul(dil, window - 1);
  if (!grown || !reach || *grown + *reach + out_pad + 1 > kMaxTensorElems) {
    throw SpecError(column, fmt::format("conv output {} is larger than 2^40", extent));
  }
  if (*grown + *reach + out_pad + 1 - 2 * pad <= 0) {
    throw SpecError(column, fmt::format("conv output {} is empty: 2*pad = {} removes all of it", extent, 2 * pad));
  }
}

}  // namespace

void check_conv(const Conv& c, int column, std::string_view op) {
  if (c.transposed) {
    check_transposed_extent("depth O", c.d, c.stride_d, c.pad_d, c.t, c.dil_d, c.out_pad_d, column);
    check_transposed_extent("height P", c.h, c.stride_h, c.pad_h, c.r, c.dil_h, c.out_pad_h, column);
    check_transposed_extent("width Q", c.w, c.stride_w, c.pad_w, c.s, c.dil_w, c.out_pad_w, column);
  } else {
    check_extent("depth O", "d", c.d, c.pad_d, "t", c.t, c.dil_d, column);
    check_extent("height P", "h", c.h, c.pad_h, "r", c.r, c.dil_h, column);
    check_extent("width Q", "w", c.w, c.pad_w, "s", c.s, c.dil_w, column);
  }
  if (c.c % c.groups != 0 || c.k % c.groups != 0) {
    throw SpecError(column, fmt::format("{}: groups = {} must divide both c = {} and k = {}", op, c.groups, c.c, c.k));
  }
  const bool three = c.d != 1 || c.t != 1 || op.find("3d") != std::string_view::npos;
  if (three) {
    check_elems("input", "n*c*d*h*w", {c.n, c.c, c.d, c.h, c.w}, column);
    check_elems("weight", "k*c*t*r*s", {c.k, c.c, c.t, c.r, c.s}, column);
    check_elems("conv output", "n*k*o*p*q", {c.n, c.k, c.o(), c.p(), c.q()}, column);
  } else {
    check_elems("input", "n*c*h*w", {c.n, c.c, c.h, c.w}, column);
    check_elems("weight", "k*c*r*s", {c.k, c.c, c.r, c.s}, column);
    check_elems("conv output", "n*k*p*q", {c.n, c.k, c.p(), c.q()}, column);
  }
}

void check_gemm(const Gemm& g, int column, std::string_view op) {
  (void)op;
  check_elems("A", "batch*m*k", {g.batch, g.m, g.k}, column);
  check_elems("B", "batch*k*n", {g.batch, g.k, g.n}, column);
  check_elems("output", "batch*m*n", {g.batch, g.m, g.n}, column);
}

}  // namespace fusetune::spec::detail
