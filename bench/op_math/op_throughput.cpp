// Throughput of the epilogue pass per op (issue 10's deliverable 3): for each chain (every op
// once and twice, and every pair of the costliest ops), fusetune's own epilogue kernels
// (codegen::generate_variants, the `epilogue.nchw` and channels-last `epilogue.nhwc` designs,
// 16-byte vectors), compiled by NVRTC and timed alone on random data (never zeros), next to a
// device-to-device copy of the same bytes measured in the same run. Prints one markdown row per
// chain and layout: the fastest variant, its median, GB/s (bytes read + written) and % of copy.
//   op_throughput [--problem 'conv2d(...)'] [--chains FILE] [--reps N]
#include <cuda.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "gpu/compiler.hpp"
#include "gpu/context.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/event.hpp"
#include "gpu/module.hpp"
#include "gpu/stream.hpp"
#include "spec/parser.hpp"

namespace ft = fusetune;

namespace {

// A conv whose output is 0.54 G elements (2.1 GB) and cheap to make: only the pass is timed.
constexpr const char* kConv = "conv2d(n=64,c=1,h=256,w=256,k=128,r=1,bias=false";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class Fn>
double time_ms(Fn&& fn, CUstream s, int reps) {
  fn();  // warm
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    ft::gpu::Event a, b;
    a.record(s);
    fn();
    b.record(s);
    t.push_back(double(ft::gpu::Event::elapsed_ms(a, b)));
  }
  return median(t);
}

struct Best {
  std::string name;
  double ms = 1e30;
  double bytes = 0;
};

// The fastest 16-byte-vector variant of `design` for the problem, its last kernel step (the
// epilogue pass) timed alone.
Best best_pass(const ft::spec::Problem& p, const std::string& design, const ft::gpu::DeviceLimits& limits,
               CUstream s, int reps) {
  Best best;
  ft::codegen::GenerateOptions gen;
  // 16-byte vectors, the block sizes and elements per thread that win such passes (the whole
  // space is tune's job): few enough to compile per chain, in parallel.
  std::vector<ft::codegen::Variant> vs;
  for (ft::codegen::Variant& v : ft::codegen::generate_variants(p, limits, gen)) {
    if (v.design != design || v.name.find(".v4.") == std::string::npos) continue;
    if (v.name.find(".b128.") != std::string::npos || v.name.find(".b1024.") != std::string::npos) continue;
    if (v.name.ends_with(".e8")) continue;
    vs.push_back(std::move(v));
  }
  std::vector<std::future<ft::gpu::CompileResult>> compiles;
  for (const ft::codegen::Variant& v : vs) {
    compiles.push_back(std::async(std::launch::async, [&v, &limits] {
      ft::gpu::CompileOptions o;
      o.arch = limits.arch_flag();
      o.ptxas_verbose = false;
      return ft::gpu::compile_cuda(v.source, v.name + ".cu", o);
    }));
  }
  for (size_t vi = 0; vi < vs.size(); ++vi) {
    const ft::codegen::Variant& v = vs[vi];
    const ft::gpu::CompileResult c = compiles[vi].get();
    if (c.status != ft::gpu::CompileStatus::ok) {
      std::fprintf(stderr, "%s: compile failed\n", v.name.c_str());
      continue;
    }
    const ft::gpu::Module m(c.cubin);
    std::vector<ft::gpu::DeviceBuffer> bufs;
    std::vector<CUdeviceptr> ptrs;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
    for (const ft::codegen::Buffer& b : v.buffers) {
      bufs.emplace_back(size_t(std::max<int64_t>(1, b.floats())) * 4);
      // Random values (never zeros): a small host block repeated over the buffer.
      std::vector<float> block(size_t(std::min<int64_t>(std::max<int64_t>(1, b.floats()), 1 << 20)));
      for (float& f : block) f = dist(rng);
      for (int64_t off = 0; off < b.floats(); off += int64_t(block.size())) {
        const size_t n = size_t(std::min<int64_t>(int64_t(block.size()), b.floats() - off));
        bufs.back().copy_from_host(block.data(), n * 4, size_t(off) * 4, s);
      }
      ptrs.push_back(bufs.back().ptr());
    }
    const ft::codegen::Step* last = nullptr;
    for (const auto& step : v.plan) if (step.kind() == ft::codegen::StepKind::kernel) last = &step;
    if (last == nullptr) continue;
    const ft::codegen::KernelStep& k = last->kernel();
    const CUfunction f = m.function(k.name);
    if (k.launch.smem_bytes > 48 * 1024) ft::gpu::set_max_dynamic_smem(f, int(k.launch.smem_bytes));
    std::vector<CUdeviceptr> args;
    for (size_t a = 0; a < k.args.size(); ++a) args.push_back(ptrs[k.buffer_arg(a)]);
    std::vector<void*> argp;
    for (CUdeviceptr& a : args) argp.push_back(&a);
    // In place, the pass reads what it wrote last time: the op chain's values drift, so refresh
    // is not needed for timing (no data-dependent control flow in the renderings' fast paths).
    const double ms = time_ms([&] { ft::gpu::launch(f, k.launch.grid, k.launch.block, k.launch.smem_bytes, s, argp.data()); },
                              s, reps);
    double bytes = 0;
    for (ft::codegen::BufferRef r : last->reads()) bytes += double(v.buffers[r].floats()) * 4;
    for (ft::codegen::BufferRef r : last->writes()) bytes += double(v.buffers[r].floats()) * 4;
    if (ms < best.ms) best = {v.name, ms, bytes};
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string conv = kConv;
  std::string chains_file;
  int reps = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--problem") conv = argv[i + 1];
    if (a == "--chains") chains_file = argv[i + 1];
    if (a == "--reps") reps = std::stoi(argv[i + 1]);
  }
  std::vector<std::string> chains;
  if (!chains_file.empty()) {
    std::ifstream in(chains_file);
    for (std::string line; std::getline(in, line);) {
      if (!line.empty() && line[0] != '#') chains.push_back(line);
    }
  } else {
    chains = {"relu", "mish", "mish | mish"};
  }
  try {
    ft::gpu::Context ctx(0);
    ft::gpu::Stream stream;
    const CUstream s = stream.get();
    const ft::gpu::DeviceInfo dev = ft::gpu::query_device(0);
    // The copy: 1 GiB device to device, bytes read + written.
    const size_t copy_bytes = size_t(1) << 30;
    ft::gpu::DeviceBuffer ca(copy_bytes), cb(copy_bytes);
    const double copy_ms =
        time_ms([&] { FT_CU_CALL(cuMemcpyDtoDAsync(cb.ptr(), ca.ptr(), copy_bytes, s)); }, s, reps);
    const double copy_gbps = 2.0 * double(copy_bytes) / copy_ms / 1e6;
    std::printf("device %s; copy %.1f GB/s (1 GiB, median of %d)\n\n", dev.name.c_str(), copy_gbps, reps);
    std::printf("| chain | layout | fastest variant | ms | GB/s | %% of copy |\n| --- | --- | --- | --- | --- | --- |\n");
    for (const std::string& chain : chains) {
      for (const auto& [layout, design] : {std::pair{"nchw", "epilogue.nchw"}, std::pair{"nhwc", "epilogue.nhwc"}}) {
        const std::string text = fmt::format("{},in={},out={}) | {}", conv, layout, layout, chain);
        const ft::spec::Problem p = ft::spec::parse(text);
        const Best b = best_pass(p, design, dev.limits, s, reps);
        if (b.name.empty()) {
          std::printf("| %s | %s | (none) | | | |\n", chain.c_str(), layout);
          continue;
        }
        const double gbps = b.bytes / b.ms / 1e6;
        std::printf("| %s | %s | %s | %.3f | %.0f | %.1f |\n", chain.c_str(), layout, b.name.c_str(), b.ms, gbps,
                    100.0 * gbps / copy_gbps);
        std::fflush(stdout);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "op_throughput: %s\n", e.what());
    return 1;
  }
  return 0;
}
