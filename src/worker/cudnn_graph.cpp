#include "worker/cudnn_graph.hpp"

// worker/graph_plans.hpp includes cudnn_frontend.h, without the frontend's own copy of
// nlohmann/json (ours comes from the system: one definition of nlohmann in the program).
#include "worker/graph_plans.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "codegen/op_render.hpp"
#include "spec/ops.hpp"

namespace fusetune::worker {

namespace fe = cudnn_frontend;
using T = std::shared_ptr<fe::graph::Tensor_attributes>;

namespace {

// Tensor ids in the variant pack: x, w, out, then the per-channel views by their offset into
// `chan` in units of K floats (the conv bias is view 0 when the conv has one).
constexpr int64_t kUidX = 1;
constexpr int64_t kUidW = 2;
constexpr int64_t kUidOut = 3;
constexpr int64_t kUidChan = 100;

using detail::check_graph;

std::vector<int64_t> nhwc_strides(int64_t c, int64_t h, int64_t w) { return {h * w * c, 1, w * c, c}; }

// Builds the graph's nodes from the problem.
class Builder {
 public:
  Builder(fe::graph::Graph& g, const GraphDesc& d) : g_(g), d_(d), chan_{d.problem.conv.k, d.problem.conv.bias} {}

  // The output tensor of the whole graph (not yet marked as an output).
  T build() {
    const spec::Conv& c = d_.problem.conv;
    const bool nhwc = d_.in_layout == spec::Layout::nhwc;
    const std::vector<int64_t> x_strides =
        nhwc ? nhwc_strides(c.c, c.h, c.w) : std::vector<int64_t>{c.c * c.h * c.w, c.h * c.w, c.w, 1};
    const bool krsc = d_.epilogue || nhwc;
    const T x = g_.tensor(fe::graph::Tensor_attributes()
                              .set_name("x")
                              .set_uid(kUidX)
                              .set_dim({c.n, c.c, c.h, c.w})
                              .set_stride(x_strides)
                              .set_data_type(fe::DataType_t::FLOAT));
    const T w = g_.tensor(fe::graph::Tensor_attributes()
                              .set_name("w")
                              .set_uid(kUidW)
                              .set_dim({c.k, c.c, c.r, c.s})
                              .set_stride(krsc ? nhwc_strides(c.c, c.r, c.s)
                                               : std::vector<int64_t>{c.c * c.r * c.s, c.r * c.s, c.s, 1})
                              .set_data_type(fe::DataType_t::FLOAT));
    T v = g_.conv_fprop(x, w,
                        fe::graph::Conv_fprop_attributes()
                            .set_name("conv")
                            .set_padding({c.pad_h, c.pad_w})
                            .set_stride({c.stride_h, c.stride_w})
                            .set_dilation({c.dil_h, c.dil_w})
                            .set_compute_data_type(fe::DataType_t::FLOAT));
    v->set_data_type(fe::DataType_t::FLOAT);
    if (d_.bias) v = pw(fe::PointwiseMode_t::ADD, v, channel_view(0));
    if (!d_.epilogue) return v;
    for (const spec::Op& op : d_.problem.pre) v = apply(op, v);
    if (d_.problem.reduce) {
      v = g_.reduction(v, fe::graph::Reduction_attributes()
                              .set_name("reduce")
                              .set_mode(reduce_mode(*d_.problem.reduce))
                              .set_compute_data_type(fe::DataType_t::FLOAT));
      v->set_dim({c.n, 1, c.p(), c.q()}).set_stride(nhwc_strides(1, c.p(), c.q()));
    }
    return v;
  }

  // Per-channel views and their offsets into `chan` (floats).
  [[nodiscard]] const std::map<int64_t, int64_t>& views() const { return views_; }

 private:
  static fe::ReductionMode_t reduce_mode(spec::ReduceKind k) {
    switch (k) {
      case spec::ReduceKind::min: return fe::ReductionMode_t::MIN;
      case spec::ReduceKind::max: return fe::ReductionMode_t::MAX;
      case spec::ReduceKind::sum: return fe::ReductionMode_t::ADD;
      case spec::ReduceKind::mean: return fe::ReductionMode_t::ADD;  // 1/K by the step after
    }
    return fe::ReductionMode_t::ADD;
  }

  // A [1, K, 1, 1] channels-last view of K floats at chan + offset.
  T channel_view(int64_t offset) {
    const int64_t uid = kUidChan + offset / chan_.k;
    views_[uid] = offset;
    return g_.tensor(fe::graph::Tensor_attributes()
                         .set_name(fmt::format("chan{}", offset / chan_.k))
                         .set_uid(uid)
                         .set_dim({1, chan_.k, 1, 1})
                         .set_stride({chan_.k, 1, chan_.k, chan_.k})
                         .set_data_type(fe::DataType_t::FLOAT));
  }

  T scalar(double value) { return g_.tensor(fe::graph::Tensor_attributes(float(value))); }

  T operand(const spec::Op& op, size_t i) {
    const std::optional<spec::Operand> a = spec::operand_or_default(op, i);
    if (!a) throw InputError(fmt::format("op {} lacks operand {}", codegen::op_text(op), i + 1));
    return a->per_channel ? channel_view(chan_.param_offset(a->param_index)) : scalar(a->value);
  }

  static fe::graph::Pointwise_attributes attrs(fe::PointwiseMode_t mode) {
    return fe::graph::Pointwise_attributes().set_mode(mode).set_compute_data_type(fe::DataType_t::FLOAT);
  }
  T done(T t) {
    t->set_data_type(fe::DataType_t::FLOAT);
    return t;
  }
  T pw(fe::PointwiseMode_t mode, T a) { return done(g_.pointwise(a, attrs(mode))); }
  T pw(fe::PointwiseMode_t mode, T a, T b) { return done(g_.pointwise(a, b, attrs(mode))); }

  T clamp(T v, T lo, T hi) { return pw(fe::PointwiseMode_t::MIN, pw(fe::PointwiseMode_t::MAX, v, lo), hi); }
  // clamp(v / 6 + 1/2, 0, 1): PyTorch's hardsigmoid, relu6(v + 3) / 6.
  T hardsigmoid(T v) {
    const T t = pw(fe::PointwiseMode_t::ADD, pw(fe::PointwiseMode_t::MUL, v, scalar(1.0 / 6.0)), scalar(0.5));
    return clamp(t, scalar(0.0), scalar(1.0));
  }

  T apply(const spec::Op& op, T v) {
    using M = fe::PointwiseMode_t;
    switch (op.kind) {
      case spec::OpKind::add: return pw(M::ADD, v, operand(op, 0));
      case spec::OpKind::sub: return pw(M::SUB, v, operand(op, 0));
      case spec::OpKind::rsub: return pw(M::ADD, pw(M::NEG, v), operand(op, 0));
      case spec::OpKind::mul: return pw(M::MUL, v, operand(op, 0));
      case spec::OpKind::div: return pw(M::DIV, v, operand(op, 0));
      case spec::OpKind::rdiv: return pw(M::MUL, pw(M::RECIPROCAL, v), operand(op, 0));
      case spec::OpKind::min: return pw(M::MIN, v, operand(op, 0));
      case spec::OpKind::max: return pw(M::MAX, v, operand(op, 0));
      case spec::OpKind::clamp:
      case spec::OpKind::hardtanh: return clamp(v, operand(op, 0), operand(op, 1));
      case spec::OpKind::relu: return pw(M::RELU_FWD, v);
      case spec::OpKind::leaky_relu: {
        const std::optional<spec::Operand> a = spec::operand_or_default(op, 0);
        if (!a || a->per_channel) throw InputError("leaky_relu's slope must be a scalar");
        return done(g_.pointwise(
            v, attrs(M::RELU_FWD).set_relu_lower_clip(0.0f).set_relu_lower_clip_slope(float(a->value))));
      }
      case spec::OpKind::gelu: return pw(M::GELU_FWD, v);
      case spec::OpKind::gelu_tanh: return pw(M::GELU_APPROX_TANH_FWD, v);
      case spec::OpKind::tanh: return pw(M::TANH_FWD, v);
      case spec::OpKind::sigmoid: return pw(M::SIGMOID_FWD, v);
      case spec::OpKind::silu: return done(g_.pointwise(v, attrs(M::SWISH_FWD).set_swish_beta(1.0f)));
      case spec::OpKind::mish: return pw(M::MUL, v, pw(M::TANH_FWD, pw(M::SOFTPLUS_FWD, v)));
      case spec::OpKind::hardswish: return pw(M::MUL, v, hardsigmoid(v));
      case spec::OpKind::hardsigmoid: return hardsigmoid(v);
      case spec::OpKind::softplus: {
        // PyTorch returns x where beta * x > threshold; log1p(exp(beta x)) / beta equals x there
        // to within 2^-28 relative (threshold 20), so cuDNN's plain softplus stands for both.
        const std::optional<spec::Operand> beta = spec::operand_or_default(op, 0);
        if (!beta || beta->per_channel) throw InputError("softplus's beta must be a scalar");
        return done(g_.pointwise(v, attrs(M::SOFTPLUS_FWD).set_softplus_beta(float(beta->value))));
      }
      case spec::OpKind::exp: return pw(M::EXP, v);
      case spec::OpKind::log: return pw(M::LOG, v);
      case spec::OpKind::abs: return pw(M::ABS, v);
      case spec::OpKind::neg: return pw(M::NEG, v);
      case spec::OpKind::square: return pw(M::MUL, v, v);
      case spec::OpKind::sqrt: return pw(M::SQRT, v);
    }
    throw InputError("an op the cuDNN graph cannot express");
  }

  fe::graph::Graph& g_;
  const GraphDesc& d_;
  codegen::ChanLayout chan_;
  std::map<int64_t, int64_t> views_;  // uid -> float offset into chan
};

}  // namespace

struct CudnnGraph::Impl {
  cudnnHandle_t handle;
  GraphDesc desc;
  std::map<int64_t, int64_t> views;
  // Listing, keying, building and running the plans (the part every graph kind shares).
  std::unique_ptr<detail::GraphPlans> plans;

  // The variant pack of one run: x, w, out and the per-channel views into `chan`.
  std::unordered_map<int64_t, void*> pack(const GraphBuffers& b) const {
    const auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
    std::unordered_map<int64_t, void*> out{{kUidX, ptr(b.x)}, {kUidW, ptr(b.w)}, {kUidOut, ptr(b.out)}};
    for (const auto& [uid, offset] : views) out[uid] = ptr(b.chan + CUdeviceptr(4 * offset));
    return out;
  }

  // A fresh graph with the operation graph built. Throws GraphRefused.
  std::shared_ptr<fe::graph::Graph> make_graph() {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe::DataType_t::FLOAT)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    Builder b(*g, desc);
    const T out = b.build();
    out->set_output(true).set_uid(kUidOut).set_data_type(fe::DataType_t::FLOAT);
    if (!desc.problem.reduce || !desc.epilogue) {
      const spec::Conv& c = desc.problem.conv;
      const bool nhwc = desc.epilogue || desc.in_layout == spec::Layout::nhwc;
      out->set_dim({c.n, c.k, c.p(), c.q()})
          .set_stride(nhwc ? nhwc_strides(c.k, c.p(), c.q())
                           : std::vector<int64_t>{c.k * c.p() * c.q(), c.p() * c.q(), c.q(), 1});
    }
    views = b.views();
    check_graph(g->validate(), "the graph");
    check_graph(g->build_operation_graph(handle), "the operation graph");
    return g;
  }
};

CudnnGraph::CudnnGraph(cudnnHandle_t handle, const GraphDesc& desc) : impl_(std::make_unique<Impl>()) {
  impl_->handle = handle;
  impl_->desc = desc;
  impl_->make_graph();  // refuses early what cuDNN cannot represent
  impl_->plans = std::make_unique<detail::GraphPlans>(
      [impl = impl_.get()] { return impl->make_graph(); },
      desc.math == MathMode::fp32 ? detail::strict_fp32_notes() : std::vector<fe::NumericalNote_t>{});
}

CudnnGraph::~CudnnGraph() = default;

std::vector<GraphEngine> CudnnGraph::engines(size_t most, bool build) { return impl_->plans->engines(most, build); }

int64_t CudnnGraph::prepare(const EngineKey& key) { return impl_->plans->prepare(key); }

void CudnnGraph::execute(const EngineKey& key, const GraphBuffers& b, CUdeviceptr workspace, size_t workspace_bytes) {
  auto pack = impl_->pack(b);
  impl_->plans->run(key, impl_->handle, pack, workspace, workspace_bytes);
}

int64_t CudnnGraph::prepare_named(const std::string& name) { return impl_->plans->prepare_named(name); }

void CudnnGraph::execute_named(const std::string& name, const GraphBuffers& b, CUdeviceptr workspace,
                               size_t workspace_bytes) {
  auto pack = impl_->pack(b);
  impl_->plans->run_named(name, impl_->handle, pack, workspace, workspace_bytes);
}

bool CudnnGraph::built(const EngineKey& key) const { return impl_->plans->built(key); }

std::string CudnnGraph::name(const EngineKey& key) const { return impl_->plans->name(key); }

}  // namespace fusetune::worker
