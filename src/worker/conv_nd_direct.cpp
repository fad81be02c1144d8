#include "worker/conv_nd_direct.hpp"

#include <algorithm>

#include "common/error.hpp"
#include "reference/gpu_sources.hpp"
#include "reference/main_terms_source.hpp"

namespace fusetune::worker {
namespace {

constexpr uint32_t kThreads = 256;                      // conv_nd_direct.cu's FT_DIRECT_THREADS
constexpr uint64_t kMaxBlocks = uint64_t(1) << 20;     // a grid-stride loop covers the rest

gpu::CompileResult compile(const spec::Problem& problem, const std::string& arch) {
  gpu::CompileOptions opt;
  opt.arch = arch;
  opt.ptxas_verbose = false;
  gpu::CompileResult r = gpu::compile_cuda(render_conv_nd_direct_source(problem), "conv_nd_direct.cu", opt);
  if (!r.ok()) throw Error(ExitCode::failure, "fusetune's fallback conv (conv_nd_direct.cu) failed to compile: " + r.log);
  return r;
}

std::string image(const gpu::CompileResult& r) { return r.cubin.empty() ? r.ptx : r.cubin; }

}  // namespace

std::string render_conv_nd_direct_source(const spec::Problem& problem) {
  return "// fusetune's fallback conv, rendered by src/worker/conv_nd_direct.cpp.\n" +
         reference::render_conv_shape_defines(problem) + reference::reference_template("conv_nd_direct.cu");
}

ConvNdDirect::ConvNdDirect(const spec::Problem& problem, const std::string& arch)
    : outputs_(problem.main_out_elems()),
      module_(image(compile(problem, arch))),
      kernel_(module_.function(kConvNdDirectKernel)),
      add_bias_(module_.function(kConvNdAddBiasKernel)) {}

void ConvNdDirect::run(const ConvNdBuffers& b, CUstream stream) const {
  gpu::launch_kernel(kernel_, grid(), {kThreads, 1, 1}, 0, stream, b.x, b.w, b.bias, b.y);
}

void ConvNdDirect::add_bias(CUdeviceptr y, CUdeviceptr bias, CUstream stream) const {
  gpu::launch_kernel(add_bias_, grid(), {kThreads, 1, 1}, 0, stream, y, bias);
}

gpu::Dim3 ConvNdDirect::grid() const {
  return {uint32_t(std::clamp<uint64_t>((uint64_t(outputs_) + kThreads - 1) / kThreads, 1, kMaxBlocks)), 1, 1};
}

}  // namespace fusetune::worker
