#include "worker/conv_nd_graph.hpp"

#include <fmt/format.h>

#include "worker/conv_nd_shape.hpp"
#include "worker/graph_plans.hpp"

namespace fusetune::worker {

namespace {

namespace fe = cudnn_frontend;
using T = std::shared_ptr<fe::graph::Tensor_attributes>;

// Tensor ids in the variant pack.
constexpr int64_t kUidX = 1;
constexpr int64_t kUidW = 2;
constexpr int64_t kUidY = 3;
constexpr int64_t kUidBias = 4;

T tensor(fe::graph::Graph& g, const char* name, int64_t uid, const NdTensor& t) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(t.dim)
                      .set_stride(t.stride)
                      .set_data_type(fe::DataType_t::FLOAT));
}

// A fresh graph with its operation graph built; throws GraphRefused.
std::shared_ptr<fe::graph::Graph> make_graph(cudnnHandle_t handle, const ConvNdDesc& d, const ConvNdGeometry& geo) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(fe::DataType_t::FLOAT)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  const T x = tensor(*g, "x", kUidX, geo.x);
  const T w = tensor(*g, "w", kUidW, geo.w);
  T v;
  if (geo.dgrad) {
    v = g->conv_dgrad(x, w,
                      fe::graph::Conv_dgrad_attributes()
                          .set_name("conv_transpose")
                          .set_padding(geo.pad)
                          .set_stride(geo.stride)
                          .set_dilation(geo.dilation)
                          .set_compute_data_type(fe::DataType_t::FLOAT));
    // dgrad cannot infer dx's shape (several give the same dy): output padding lives here.
    v->set_dim(geo.y.dim).set_stride(geo.y.stride);
  } else {
    v = g->conv_fprop(x, w,
                      fe::graph::Conv_fprop_attributes()
                          .set_name("conv")
                          .set_padding(geo.pad)
                          .set_stride(geo.stride)
                          .set_dilation(geo.dilation)
                          .set_compute_data_type(fe::DataType_t::FLOAT));
  }
  v->set_data_type(fe::DataType_t::FLOAT);
  if (d.bias) {
    v = g->pointwise(v, tensor(*g, "bias", kUidBias, geo.bias),
                     fe::graph::Pointwise_attributes()
                         .set_name("bias")
                         .set_mode(fe::PointwiseMode_t::ADD)
                         .set_compute_data_type(fe::DataType_t::FLOAT));
  }
  v->set_output(true).set_uid(kUidY).set_dim(geo.y.dim).set_stride(geo.y.stride).set_data_type(fe::DataType_t::FLOAT);
  detail::check_graph(g->validate(), "the graph");
  detail::check_graph(g->build_operation_graph(handle), "the operation graph");
  return g;
}

}  // namespace

struct ConvNdGraph::Impl {
  cudnnHandle_t handle;
  ConvNdDesc desc;
  ConvNdGeometry geo;
  detail::GraphPlans plans;

  Impl(cudnnHandle_t h, const ConvNdDesc& d, const ConvNdGeometry& g)
      : handle(h),
        desc(d),
        geo(g),
        plans([this] { return make_graph(handle, desc, geo); },
              d.math == MathMode::fp32 ? detail::strict_fp32_notes() : std::vector<fe::NumericalNote_t>{}) {}
  Impl(const Impl&) = delete;  // `plans` holds a pointer to this Impl
  Impl& operator=(const Impl&) = delete;

  std::unordered_map<int64_t, void*> pack(const ConvNdBuffers& b) const {
    const auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); };
    std::unordered_map<int64_t, void*> out{{kUidX, ptr(b.x)}, {kUidW, ptr(b.w)}, {kUidY, ptr(b.y)}};
    if (desc.bias) out[kUidBias] = ptr(b.bias);
    return out;
  }
};

namespace {

// The mapping's refusal is a refusal like cuDNN's: the candidate is `not_supported`, not an error.
ConvNdGeometry geometry_or_refuse(const ConvNdDesc& d) {
  if (const auto why = conv_nd_unsupported(d.kind, d.conv, d.layout))
    throw GraphRefused("cuDNN conv graph: " + *why);
  return conv_nd_geometry(d.kind, d.conv, d.layout);
}

}  // namespace

ConvNdGraph::ConvNdGraph(cudnnHandle_t handle, const ConvNdDesc& desc)
    : impl_(std::make_unique<Impl>(handle, desc, geometry_or_refuse(desc))) {
  (void)make_graph(handle, desc, impl_->geo);  // refuses early what cuDNN cannot represent
}

ConvNdGraph::~ConvNdGraph() = default;

std::vector<GraphEngine> ConvNdGraph::engines(size_t most, bool build) { return impl_->plans.engines(most, build); }

int64_t ConvNdGraph::prepare(const EngineKey& key) { return impl_->plans.prepare(key); }

void ConvNdGraph::execute(const EngineKey& key, const ConvNdBuffers& b, CUdeviceptr workspace,
                          size_t workspace_bytes) {
  auto pack = impl_->pack(b);
  impl_->plans.run(key, impl_->handle, pack, workspace, workspace_bytes);
}

int64_t ConvNdGraph::prepare_named(const std::string& name) { return impl_->plans.prepare_named(name); }

void ConvNdGraph::execute_named(const std::string& name, const ConvNdBuffers& b, CUdeviceptr workspace,
                                size_t workspace_bytes) {
  auto pack = impl_->pack(b);
  impl_->plans.run_named(name, impl_->handle, pack, workspace, workspace_bytes);
}

std::string ConvNdGraph::name(const EngineKey& key) const { return impl_->plans.name(key); }

bool ConvNdGraph::built(const EngineKey& key) const { return impl_->plans.built(key); }

}  // namespace fusetune::worker
