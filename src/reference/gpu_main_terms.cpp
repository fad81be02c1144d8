#include "reference/gpu_main_terms.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <vector>

#include "common/error.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/cuda_check.hpp"
#include "reference/main_terms_source.hpp"

namespace fusetune::reference {
namespace {

// Of the free device memory, the share one chunk's terms may take: the rest is for the
// candidates' buffers and workspaces that come later and the driver's own use.
constexpr double kChunkShare = 0.5;
// Grid-stride kernels: enough blocks to fill any current GPU many times over.
constexpr uint64_t kMaxBlocks = uint64_t(1) << 20;
constexpr uint32_t kThreads = 256;  // ref_main_any.cu's FT_MA_THREADS

gpu::Dim3 grid_for(uint64_t blocks) { return {uint32_t(std::clamp<uint64_t>(blocks, 1, kMaxBlocks)), 1, 1}; }

template <typename T>
void download(const gpu::DeviceBuffer& from, std::vector<T>& to, const MainTermsChunk& c, CUstream stream) {
  from.copy_to_host(to.data() + c.out_begin, size_t(c.outputs) * sizeof(T), 0, stream);
}

}  // namespace

gpu::CompileResult compile_main_terms(const spec::Problem& problem, const std::string& arch) {
  gpu::CompileOptions opt;
  opt.arch = arch;
  opt.strict_fp32 = true;  // --fmad=false, see the header
  return gpu::compile_cuda(render_reference_main_source(problem), "ref_main_any.cu", opt);
}

GpuMainTerms::GpuMainTerms(const spec::Problem& problem, const gpu::CompileResult& compiled)
    : problem_(problem),
      module_([&]() -> std::string_view {
        if (!compiled.ok())
          throw Error(ExitCode::failure, "GPU reference kernel ref_main_any.cu failed to compile: " + compiled.log);
        return compiled.cubin.empty() ? std::string_view(compiled.ptx) : std::string_view(compiled.cubin);
      }()),
      kernel_(module_.function(reference_main_kernel(problem))) {}

detail::MainTerms GpuMainTerms::compute(CUdeviceptr x, CUdeviceptr w, CUstream stream) const {
  const int64_t total = problem_.main_out_elems();
  const double free_bytes = double(gpu::device_memory().free_bytes);
  const auto room = int64_t(kChunkShare * free_bytes / double(kMainTermsBytesPerOutput));
  std::vector<MainTermsChunk> chunks;
  try {
    chunks = main_terms_chunks(problem_, std::min(total, room));
  } catch (const InputError& e) {
    throw InputError(fmt::format("{} ({:.2f} GB of device memory free; the float64 terms take {} bytes per output)",
                                 e.what(), free_bytes / 1e9, kMainTermsBytesPerOutput));
  }
  int64_t largest = 0;
  for (const MainTermsChunk& c : chunks) largest = std::max(largest, c.outputs);
  gpu::DeviceBuffer y(size_t(largest) * 8), a(size_t(largest) * 8), b(size_t(largest) * 8), n(size_t(largest) * 8);
  detail::MainTerms terms;
  terms.resize(size_t(total));
  const int64_t n_tiles = (problem_.gemm.n + kMainTermsGemmTile - 1) / kMainTermsGemmTile;
  for (const MainTermsChunk& c : chunks) {
    if (problem_.is_conv()) {
      gpu::launch_kernel(kernel_, grid_for((uint64_t(c.units) + kThreads - 1) / kThreads), {kThreads, 1, 1}, 0,
                         stream, x, w, static_cast<long long>(c.unit_begin), static_cast<long long>(c.units), y.ptr(),
                         a.ptr(), b.ptr(), n.ptr());
    } else {
      const auto tile = uint32_t(kMainTermsGemmTile);
      gpu::launch_kernel(kernel_, grid_for(uint64_t(c.units) * uint64_t(n_tiles)), {tile, tile, 1}, 0, stream, x, w,
                         static_cast<long long>(c.unit_begin), static_cast<long long>(c.units),
                         static_cast<long long>(c.out_begin / problem_.gemm.n), y.ptr(), a.ptr(), b.ptr(), n.ptr());
    }
    download(y, terms.y, c, stream);  // each copy synchronizes the stream
    download(a, terms.a, c, stream);
    download(b, terms.b, c, stream);
    download(n, terms.n, c, stream);
  }
  return terms;
}

detail::MainTerms gpu_main_terms(const spec::Problem& problem, const ModelData& data, const std::string& arch,
                                 CUstream stream) {
  const GpuMainTerms program(problem, compile_main_terms(problem, arch));
  gpu::DeviceBuffer x(data.input.size() * sizeof(float)), w(data.weight.size() * sizeof(float));
  x.upload(std::span<const float>(data.input), 0, stream);
  w.upload(std::span<const float>(data.weight), 0, stream);
  return program.compute(x.ptr(), w.ptr(), stream);
}

}  // namespace fusetune::reference
