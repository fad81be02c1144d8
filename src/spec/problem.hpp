#pragma once
// The problem class: one Conv2d, then an epilogue (elementwise ops, at most one
// channel reduction with keepdim, more elementwise ops). Plain data: the parser
// builds it, codegen, the references and the tuner read it.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusetune::spec {

enum class Layout { nchw, nhwc, any };

struct Conv {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t k = 1, r = 1, s = 1;         // filters: K output channels, R x S window
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dil_h = 1, dil_w = 1;
  bool bias = true;
  Layout in = Layout::nchw;    // nchw | nhwc
  Layout out = Layout::nchw;   // nchw | nhwc | any

  // Conv output extents (before any reduction).
  [[nodiscard]] int64_t p() const { return (h + 2 * pad_h - dil_h * (r - 1) - 1) / stride_h + 1; }
  [[nodiscard]] int64_t q() const { return (w + 2 * pad_w - dil_w * (s - 1) - 1) / stride_w + 1; }
  [[nodiscard]] int64_t input_elems() const { return n * c * h * w; }
  [[nodiscard]] int64_t weight_elems() const { return k * c * r * s; }
  [[nodiscard]] int64_t conv_out_elems() const { return n * k * p() * q(); }
  [[nodiscard]] double flops() const { return 2.0 * double(conv_out_elems()) * double(c * r * s); }
};

// Elementwise ops. `rsub`/`rdiv` are the reversed operand orders (operand - x, operand / x);
// min/max are symmetric so they have no reversed form.
enum class OpKind {
  add, sub, rsub, mul, div, rdiv, min, max,
  clamp, relu, leaky_relu, gelu, gelu_tanh, tanh, sigmoid, silu, mish,
  hardswish, hardsigmoid, hardtanh, softplus, exp, log, abs, neg, square, sqrt,
};

enum class ReduceKind { min, max, sum, mean };

// An op argument: a scalar constant (applied in fp32, as PyTorch applies a Python float
// to an fp32 tensor) or a per-output-channel parameter tensor of shape (K,1,1).
struct Operand {
  bool per_channel = false;
  double value = 0.0;    // scalar value when !per_channel
  int param_index = -1;  // which per-channel parameter (0-based, order of appearance)
};

struct Op {
  OpKind kind = OpKind::relu;
  std::vector<Operand> args;  // binary ops: 1; clamp/hardtanh: 2; leaky_relu: 1; softplus: 2
};

struct Problem {
  Conv conv;
  std::vector<Op> pre;                  // before the reduction (or the whole chain)
  std::optional<ReduceKind> reduce;     // over channels, keepdim
  std::vector<Op> post;                 // after the reduction: scalar operands only
  int num_params = 0;                   // per-channel parameter tensors, each K floats

  [[nodiscard]] int64_t out_channels() const { return reduce ? 1 : conv.k; }
  [[nodiscard]] int64_t out_elems() const { return conv.n * out_channels() * conv.p() * conv.q(); }
};

}  // namespace fusetune::spec
