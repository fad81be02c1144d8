#pragma once
// Problems for the tests, built as structs, written once: operands, ops, a conv shape (the
// other fields keep spec::Conv's defaults: stride 1, no padding, dilation 1, bias, NCHW), and
// the presets by name (parsed from their spec text).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "spec/problem.hpp"

namespace fusetune::spec_builders {

inline spec::Operand scalar(double v) { return spec::Operand{false, v, -1}; }
inline spec::Operand param(int i) { return spec::Operand{true, 0.0, i}; }
inline spec::Op op(spec::OpKind kind, std::vector<spec::Operand> args = {}) { return spec::Op{kind, std::move(args)}; }

inline spec::Conv conv(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t r, int64_t s) {
  spec::Conv cv;
  cv.n = n, cv.c = c, cv.h = h, cv.w = w, cv.k = k, cv.r = r, cv.s = s;
  return cv;
}

// The same stride, padding and dilation along H and W.
inline spec::Conv with_window(spec::Conv cv, int64_t stride, int64_t pad, int64_t dilation) {
  cv.stride_h = cv.stride_w = stride;
  cv.pad_h = cv.pad_w = pad;
  cv.dil_h = cv.dil_w = dilation;
  return cv;
}

inline spec::Problem preset(const std::string& name) { return spec::parse(*spec::preset_spec(name)); }

}  // namespace fusetune::spec_builders
