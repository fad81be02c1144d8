#pragma once
// The problem class: a main operator (Conv2d, Conv3d, the transposed convs, Linear/Matmul),
// then an epilogue. Plain data: the parser builds it, codegen, the references and the
// tuner read it.
//
// The epilogue has two forms (docs/spec-language.md):
//   the chain form   elementwise ops with scalar or per-channel operands, at most one
//                    reduction over channels with keepdim, more elementwise ops: pre,
//                    reduce, post. Today's generated conv2d designs take exactly this.
//   the general form everything else (named values used again, extra inputs, reductions
//                    over any dims, pooling, norms with statistics from the data, softmax,
//                    logsumexp): stages, a list where each stage reads the current value
//                    (and, for binary ops, a scalar, a parameter, a named value or an input).
// The parser puts every epilogue that fits the chain form in it (so the conv2d specs of
// version 1 parse to what they always did) and leaves `stages` empty; otherwise pre, reduce
// and post are empty and `stages` holds the epilogue.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fusetune::spec {

enum class Layout { nchw, nhwc, any };

enum class MainKind { conv2d, conv3d, conv_transpose2d, conv_transpose3d, linear, matmul };

// Every conv kind. conv2d leaves the depth fields at 1/0 and groups at 1; the transposed
// kinds read the output sizes from `out_pad` and the transposed formula.
struct Conv {
  int64_t n = 1, c = 1, h = 1, w = 1;  // input
  int64_t k = 1, r = 1, s = 1;         // filters: K output channels, R x S window
  int64_t stride_h = 1, stride_w = 1;
  int64_t pad_h = 0, pad_w = 0;
  int64_t dil_h = 1, dil_w = 1;
  bool bias = true;
  Layout in = Layout::nchw;    // nchw | nhwc (channels first | last, for every conv kind)
  Layout out = Layout::nchw;   // nchw | nhwc | any
  // Version 2: conv3d's depth (input D, filter T), the transposed convs' output padding, groups.
  int64_t d = 1, t = 1;
  int64_t stride_d = 1, pad_d = 0, dil_d = 1;
  int64_t out_pad_d = 0, out_pad_h = 0, out_pad_w = 0;
  int64_t groups = 1;
  bool transposed = false;

  // Conv output extents (before any reduction): depth O, height P, width Q.
  [[nodiscard]] int64_t o() const { return extent(d, pad_d, t, dil_d, stride_d, out_pad_d); }
  [[nodiscard]] int64_t p() const { return extent(h, pad_h, r, dil_h, stride_h, out_pad_h); }
  [[nodiscard]] int64_t q() const { return extent(w, pad_w, s, dil_w, stride_w, out_pad_w); }
  [[nodiscard]] int64_t input_elems() const { return n * c * d * h * w; }
  // PyTorch's weight shapes: conv (K, C/g, T, R, S); transposed (C, K/g, T, R, S).
  [[nodiscard]] int64_t weight_elems() const {
    return (transposed ? c * (k / groups) : k * (c / groups)) * t * r * s;
  }
  [[nodiscard]] int64_t conv_out_elems() const { return n * k * o() * p() * q(); }
  // A transposed conv does the multiply-adds of the forward conv it is the gradient of.
  [[nodiscard]] double flops() const {
    return transposed ? 2.0 * double(input_elems()) * double((k / groups) * t * r * s)
                      : 2.0 * double(conv_out_elems()) * double((c / groups) * t * r * s);
  }

 private:
  [[nodiscard]] int64_t extent(int64_t size, int64_t pad, int64_t win, int64_t dil, int64_t stride,
                               int64_t out_pad) const {
    return transposed ? (size - 1) * stride - 2 * pad + dil * (win - 1) + out_pad + 1
                      : (size + 2 * pad - dil * (win - 1) - 1) / stride + 1;
  }
};

// linear: y = x W^T (+ b) with x (M, K), W (N, K) as nn.Linear stores it.
// matmul: C = op(A) op(B) for each of `batch` pairs; A is (M, K), or (K, M) with trans_a;
// B is (K, N), or (N, K) with trans_b. The output is (M, N), or (batch, M, N) when batch > 1.
struct Gemm {
  int64_t batch = 1, m = 1, k = 1, n = 1;
  bool bias = false;
  bool trans_a = false, trans_b = false;
  [[nodiscard]] double flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
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
// to an fp32 tensor), a parameter tensor (per output channel, shape (K,1,1), in the chain
// form; in the general form of the shape Problem::param_shapes gives), or -- general form
// only -- a named value or an extra input tensor.
struct Operand {
  bool per_channel = false;  // a parameter tensor (param_index)
  double value = 0.0;        // scalar value when none of the others is set
  int param_index = -1;      // which parameter (0-based, order of appearance)
  int value_index = -1;      // which named value (`as NAME`; 0-based, order of definition)
  int input_index = -1;      // which extra input (0 for `input1`, ...)
  [[nodiscard]] bool scalar() const { return !per_channel && value_index < 0 && input_index < 0; }
};

struct Op {
  OpKind kind = OpKind::relu;
  std::vector<Operand> args;  // binary ops: 1; clamp/hardtanh: 2; leaky_relu: 1; softplus: 2
};

// General-form stages.
enum class StageKind { op, reduce, pool, norm, softmax, log_softmax, logsumexp, name };
enum class PoolKind { max, avg };
enum class NormKind { batch, group, instance, layer };

struct Stage {
  StageKind kind = StageKind::op;
  Op op;                                  // op
  ReduceKind reduce = ReduceKind::sum;    // reduce
  std::vector<int> dims;                  // reduce, logsumexp: sorted dims; softmax, log_softmax: one
  bool keepdim = true;                    // reduce, logsumexp
  PoolKind pool = PoolKind::max;          // pool over the last pool_dims dims
  int pool_dims = 2;
  std::array<int64_t, 3> window{1, 1, 1}, stride{1, 1, 1}, pad{0, 0, 0};  // first pool_dims used
  bool count_include_pad = true;          // avg pool, PyTorch's default
  NormKind norm = NormKind::batch;        // norm
  int64_t groups = 1;                     // group norm
  int norm_dims = 1;                      // layer norm: over the last norm_dims dims
  double eps = 1e-5;
  bool affine = true;
  int weight_param = -1, bias_param = -1; // affine parameters (indices into param_shapes)
  int value_index = -1;                   // name: the value it defines
};

struct Problem {
  MainKind main = MainKind::conv2d;
  Conv conv;                            // conv kinds
  Gemm gemm;                            // linear, matmul
  std::vector<Op> pre;                  // chain form: before the reduction (or the whole chain)
  std::optional<ReduceKind> reduce;     // over channels, keepdim
  std::vector<Op> post;                 // after the reduction: scalar operands only
  int num_params = 0;                   // parameter tensors (chain form: each K floats)
  std::vector<Stage> stages;            // general form; empty for the chain form
  // General form: each parameter's shape, as broadcast against the value it applies to
  // (so its rank is that value's: (1, K, 1, 1) per channel, (1, 1, 1, 1) a learned scalar).
  std::vector<std::vector<int64_t>> param_shapes;
  std::vector<std::vector<int64_t>> input_shapes;  // extra inputs (general form)
  int num_values = 0;                              // named values (general form)

  [[nodiscard]] bool is_conv() const { return main != MainKind::linear && main != MainKind::matmul; }
  // What today's generated designs (fused conv, epilogue kernels, cuDNN conv2d) take.
  [[nodiscard]] bool is_conv2d_chain() const {
    return main == MainKind::conv2d && stages.empty() && conv.groups == 1 && !conv.transposed;
  }
  // The main operator's output shape: conv (N, K, [O,] P, Q); gemm (M, N) or (batch, M, N).
  [[nodiscard]] std::vector<int64_t> main_shape() const {
    switch (main) {
      case MainKind::conv2d:
      case MainKind::conv_transpose2d: return {conv.n, conv.k, conv.p(), conv.q()};
      case MainKind::conv3d:
      case MainKind::conv_transpose3d: return {conv.n, conv.k, conv.o(), conv.p(), conv.q()};
      case MainKind::linear:
      case MainKind::matmul:
        return gemm.batch > 1 ? std::vector<int64_t>{gemm.batch, gemm.m, gemm.n} : std::vector<int64_t>{gemm.m, gemm.n};
    }
    return {};
  }
  [[nodiscard]] int64_t main_out_elems() const {
    int64_t e = 1;
    for (int64_t x : main_shape()) e *= x;
    return e;
  }
  // Dim 1 of the main output: conv K, linear N (PyTorch's dim=1, which `param[k]` and
  // `channel` name).
  [[nodiscard]] int64_t channels() const { return main_shape()[1]; }
  // Chain form only (general-form shapes: spec/shape_rules.hpp).
  [[nodiscard]] int64_t out_channels() const { return reduce ? 1 : channels(); }
  [[nodiscard]] int64_t out_elems() const { return main_out_elems() / channels() * out_channels(); }
};

}  // namespace fusetune::spec
