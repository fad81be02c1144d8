#include "gpu/compiler.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "gpu/nvrtc_check.hpp"
#include "gpu/nvrtc_program.hpp"

#ifndef FUSETUNE_CUDA_INCLUDE_DIR
#define FUSETUNE_CUDA_INCLUDE_DIR ""
#endif

namespace fusetune::gpu {
namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = std::min(s.find(';', start), s.size());
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool has_cuda_headers(const std::string& dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::exists(std::filesystem::path(dir) / "cuda_fp16.h", ec);
}

std::vector<std::string> find_include_dirs() {
  std::vector<std::string> candidates = split_list(FUSETUNE_CUDA_INCLUDE_DIR);
  for (const char* var : {"FUSETUNE_CUDA_INCLUDE", "CUDA_HOME", "CUDA_PATH"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') {
      candidates.push_back(std::string(var) == "FUSETUNE_CUDA_INCLUDE" ? v : std::string(v) + "/include");
    }
  }
  candidates.emplace_back("/usr/local/cuda/include");
  for (const auto& dir : candidates) {
    if (!has_cuda_headers(dir)) continue;
    std::vector<std::string> dirs{dir};
    std::error_code ec;
    // CUDA 13 keeps libcu++/CUB/Thrust under include/cccl; nvcc adds it implicitly, NVRTC does not.
    if (std::filesystem::is_directory(std::filesystem::path(dir) / "cccl", ec)) dirs.push_back(dir + "/cccl");
    return dirs;
  }
  return {};  // compiles still work for sources that include no CUDA headers
}

// Names of the kernels in a PTX module: ".visible .entry name(" / ".weak .entry name(".
std::vector<std::string> ptx_entries(const std::string& ptx) {
  std::vector<std::string> names;
  constexpr std::string_view kEntry = ".entry ";
  for (size_t pos = ptx.find(kEntry); pos != std::string::npos; pos = ptx.find(kEntry, pos)) {
    pos += kEntry.size();
    const size_t end = ptx.find_first_of("( \t\r\n", pos);
    names.push_back(ptx.substr(pos, end - pos));
  }
  return names;
}

void summarize(CompileResult& r) {
  for (const auto& k : r.kernels) {
    r.registers = std::max(r.registers, k.registers);
    r.spill_stores = std::max(r.spill_stores, k.spill_stores);
    r.spill_loads = std::max(r.spill_loads, k.spill_loads);
    r.stack_bytes = std::max(r.stack_bytes, k.stack_bytes);
    r.smem_bytes = std::max(r.smem_bytes, k.smem_bytes);
    r.cmem_bytes = std::max(r.cmem_bytes, k.cmem_bytes);
  }
}

int nvrtc_major() {
  static const int major = [] {
    int ma = 0;
    int mi = 0;
    return nvrtcVersion(&ma, &mi) == NVRTC_SUCCESS ? ma : 0;
  }();
  return major;
}

}  // namespace

const std::vector<std::string>& cuda_include_dirs() {
  static const std::vector<std::string> dirs = find_include_dirs();
  return dirs;
}

std::vector<std::string> nvrtc_options(const CompileOptions& o) {
  std::vector<std::string> opts{"--gpu-architecture=" + o.arch, "-std=c++17", "-default-device"};
  // No --use_fast_math: its approximate exp/div/sqrt would change epilogue results (gelu,
  // sigmoid, softplus) beyond what the verifier's fp32 tolerance is meant to absorb.
  // --fmad=false under --math fp32: every product is rounded to fp32 before it is added,
  // as when each op runs on its own (PyTorch eager: `mul(2.0)` then `add(param[k])` are two
  // kernels, two roundings). Contracting them into one FMA rounds once and changes the last
  // bit, so strict mode keeps IEEE mul-then-add semantics. In tf32 mode contraction stays on:
  // it is faster and no less accurate.
  if (o.strict_fp32) opts.emplace_back("--fmad=false");
  if (o.ptxas_verbose) {
    opts.emplace_back("-Xptxas=-v");
    // NVRTC 13 keeps CUBINs in the driver's compute cache (~/.nv/ComputeCache) wherever a
    // driver is installed; a cache hit skips ptxas and so prints no resource report (seen on
    // the H200 machine: the second compile of a source came back with an empty log).
    // Registers and spills are what the tuner prunes by, so verbose compiles bypass it.
    if (nvrtc_major() >= 13) opts.emplace_back("--no-cache");
  }
  if (o.max_registers > 0) opts.push_back(fmt::format("--maxrregcount={}", o.max_registers));
  for (const auto& dir : cuda_include_dirs()) opts.push_back("-I" + dir);
  opts.insert(opts.end(), o.extra.begin(), o.extra.end());
  return opts;
}

CompileResult compile_cuda(const std::string& source, const std::string& program_name,
                           const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompileResult r;
  r.options = nvrtc_options(options);

  NvrtcProgram prog(source, program_name);
  const nvrtcResult status = prog.compile(r.options);
  // The log first, whatever the status, so a failure carries the compiler's words.
  r.log = prog.log();
  r.kernels = parse_ptxas_info(r.log);
  summarize(r);

  if (status == NVRTC_ERROR_INVALID_OPTION) {
    // Every variant would fail the same way: a usage error, not a variant's failure.
    std::string why = r.log.empty() ? "invalid option" : r.log;
    std::replace(why.begin(), why.end(), '\n', ' ');  // errors reach the user as one line
    while (!why.empty() && why.back() == ' ') why.pop_back();
    throw InputError(fmt::format("NVRTC rejected the compile options ({}): {}", fmt::join(r.options, " "), why));
  }
  if (status == NVRTC_ERROR_COMPILATION) {
    if (r.log.empty()) r.log = nvrtcGetErrorString(status);
  } else {
    FT_NVRTC_CALL(status);  // any other failure is NVRTC misuse or breakage: throw
    r.status = CompileStatus::ok;
    r.ptx = prog.ptx();
    r.cubin = prog.cubin();
    r.kernel_names = ptx_entries(r.ptx);
  }
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return r;
}

std::string nvrtc_version() {
  int major = 0;
  int minor = 0;
  FT_NVRTC_CALL(nvrtcVersion(&major, &minor));
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> nvrtc_supported_archs() {
  int n = 0;
  FT_NVRTC_CALL(nvrtcGetNumSupportedArchs(&n));
  std::vector<int> archs(static_cast<size_t>(n));
  if (n > 0) FT_NVRTC_CALL(nvrtcGetSupportedArchs(archs.data()));
  std::vector<std::string> out;
  out.reserve(archs.size());
  for (int a : archs) out.push_back(fmt::format("sm_{}", a));
  return out;
}

}  // namespace fusetune::gpu
