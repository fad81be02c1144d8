#pragma once
// Compiling a generator's variants with NVRTC on two threads (the CI machine's cores), as the
// tuner would: sm_90 in, sm_90a out, through the tuner's own options. Each result carries the
// compiling thread's CPU time: a per-variant bound on it means "on one core", whatever else
// ctest -j runs beside it (wall time under load measured up to twice the CPU time).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "codegen/compile_target.hpp"
#include "codegen/variant.hpp"
#include "gpu/compiler.hpp"

namespace fusetune::codegen::testing {

struct Compiled {
  const Variant* variant = nullptr;
  gpu::CompileResult result;
  double cpu_ms = 0;
};

inline double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * double(t.tv_sec) + 1e-6 * double(t.tv_nsec);
}

inline std::vector<Compiled> compile_every(const std::vector<Variant>& variants, bool strict_fp32) {
  std::vector<Compiled> out(variants.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < variants.size(); i = next++) {
      const gpu::CompileOptions o = compile_options(variants[i], "sm_90", strict_fp32);
      const double t0 = thread_cpu_ms();
      gpu::CompileResult r = gpu::compile_cuda(variants[i].source, variants[i].name + ".cu", o);
      out[i] = Compiled{&variants[i], std::move(r), thread_cpu_ms() - t0};
    }
  };
  auto a = std::async(std::launch::async, worker);
  auto b = std::async(std::launch::async, worker);
  a.get();
  b.get();
  return out;
}

// What every compiled wgmma variant must show: compiled for sm_90a (sm_90 in), within `max_cpu_ms`
// of one core, without spills, its MMAs kept asynchronous (ptxas neither serializes them nor
// injects waits: it does both where registers of an MMA in flight are touched, e.g. across a
// loop's back edge), and every kernel step of its plan in the module.
inline void expect_compiled_cleanly(const Compiled& c, double max_cpu_ms) {
  const Variant& v = *c.variant;
  const gpu::CompileResult& r = c.result;
  EXPECT_TRUE(r.ok()) << v.name << "\n" << r.log;
  EXPECT_NE(std::find(r.options.begin(), r.options.end(), "--gpu-architecture=sm_90a"), r.options.end()) << v.name;
  EXPECT_LE(c.cpu_ms, max_cpu_ms) << v.name << " (wall " << r.compile_ms << " ms)";
  EXPECT_EQ(r.spill_stores, 0) << v.name << "\n" << r.log;
  EXPECT_EQ(r.spill_loads, 0) << v.name << "\n" << r.log;
  EXPECT_EQ(r.log.find("serialized"), std::string::npos) << v.name << "\n" << r.log;
  EXPECT_EQ(r.log.find("warpgroup.wait is injected"), std::string::npos) << v.name << "\n" << r.log;
  for (const auto& st : v.plan) {
    if (st.kind() != StepKind::kernel) continue;
    EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), st.kernel().name), r.kernel_names.end())
        << v.name << " " << st.kernel().name;
  }
}

}  // namespace fusetune::codegen::testing
