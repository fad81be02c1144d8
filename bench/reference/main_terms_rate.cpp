// How fast the float64 reference makes a version-2 main operator's terms on the GPU
// (reference::GpuMainTerms, kernel_templates/ref_main_any.cu), in multiply-adds per second, for the
// main-operator kinds of KernelBench level 2 at sizes of 1e10 to 1e12 multiply-adds; and, for the
// conv kinds, fusetune's fallback fp32 conv (worker::ConvNdDirect) on the same data. It measures
// what worker/model_inputs.hpp's kMaxReferenceMacs was estimated from (issue 43: the 1e13 limit
// "is seconds to some 20 s per draw (estimated, not measured yet)"). Wall time of compute(),
// which includes its chunking and the copies of the terms to the host, as a session pays it;
// the median of --reps runs after one warm-up. Data: a cheap exact pattern, never zeros.
//   main_terms_rate [--reps N] [SPEC ...]
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/stream.hpp"
#include "reference/gpu_main_terms.hpp"
#include "reference/model_data.hpp"
#include "spec/parser.hpp"
#include "worker/conv_nd_direct.hpp"

namespace ft = fusetune;

namespace {

const char* const kDefaultSpecs[] = {
    "linear(m=1024,k=8192,n=8192) | relu",                                             // 6.9e10 (KernelBench #9)
    "matmul(batch=16,m=1024,k=1024,n=1024) | relu",                                    // 1.7e10
    "conv2d(n=128,c=64,h=64,w=64,k=128,r=3) | relu",                                   // 3.7e10
    "conv3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3) | relu",                                // 2.1e10
    "conv_transpose2d(n=64,c=64,h=32,w=32,k=64,r=4,stride=2,pad=1) | relu",             // 1.1e10
    "conv_transpose3d(n=16,c=32,d=16,h=16,w=16,k=32,r=3,stride=2,pad=1,out_pad=1) | relu",  // 1.7e10
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void fill(ft::gpu::DeviceBuffer& b, size_t n, int64_t mod) {
  std::vector<float> h(n);
  for (size_t i = 0; i < n; ++i) h[i] = float(int64_t(i % uint64_t(mod)) - mod / 2) * 0x1p-10f;
  b.copy_from_host(h.data(), n * 4);
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 3;
  std::vector<std::string> specs;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      specs.emplace_back(argv[i]);
    }
  }
  if (specs.empty()) specs.assign(std::begin(kDefaultSpecs), std::end(kDefaultSpecs));
  try {
    ft::gpu::Context ctx(0);
    ft::gpu::Stream stream;
    const auto dev = ft::gpu::query_device(0);
    const std::string arch = dev.limits.arch_flag();
    fmt::print("{} ({}), median of {} runs after a warm-up\n\n", dev.name, arch, reps);
    fmt::print("| problem | multiply-adds | float64 terms s | terms/s | fallback conv s | fallback MAC/s |\n");
    fmt::print("| --- | --- | --- | --- | --- | --- |\n");
    for (const std::string& text : specs) {
      const ft::spec::Problem p = ft::spec::parse(text);
      const double macs = (p.is_conv() ? p.conv.flops() : p.gemm.flops()) / 2.0;
      const ft::reference::ModelSizes sizes = ft::reference::model_sizes(p);
      const auto nx = size_t(sizes.input), nw = size_t(sizes.weight);
      ft::gpu::DeviceBuffer x(nx * 4), w(nw * 4);
      fill(x, nx, 1021);
      fill(w, nw, 13);
      const ft::reference::GpuMainTerms terms(p, ft::reference::compile_main_terms(p, arch));
      std::vector<double> t_terms, t_direct;
      for (int r = 0; r <= reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        (void)terms.compute(x.ptr(), w.ptr(), stream.get());  // synchronizes
        if (r > 0) t_terms.push_back(seconds_since(t0));
      }
      std::string direct_s = "-", direct_rate = "-";
      if (p.is_conv()) {
        ft::gpu::DeviceBuffer y(size_t(p.main_out_elems()) * 4);
        const ft::worker::ConvNdDirect conv(p, arch);
        for (int r = 0; r <= reps; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          conv.run(ft::worker::ConvNdBuffers{x.ptr(), w.ptr(), 0, y.ptr()}, stream.get());
          stream.synchronize();
          if (r > 0) t_direct.push_back(seconds_since(t0));
        }
        direct_s = fmt::format("{:.4f}", median(t_direct));
        direct_rate = fmt::format("{:.3g}", macs / median(t_direct));
      }
      fmt::print("| `{}` | {:.3g} | {:.3f} | {:.3g} | {} | {} |\n", text, macs, median(t_terms), macs / median(t_terms),
                 direct_s, direct_rate);
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "main_terms_rate: {}\n", e.what());
    return 1;
  }
  return 0;
}
