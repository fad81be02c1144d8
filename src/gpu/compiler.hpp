#pragma once
// CUDA source -> CUBIN (and PTX) with NVRTC, plus the resources ptxas reports per kernel.
// A compile error is a result (status compile_failed, with the compiler's log), not an
// exception: the tuner records it against the variant and goes on (STYLE.md 3). Only misuse
// throws: options NVRTC rejects (InputError) or an NVRTC API failure (Error).
//
// Thread safety: compile_cuda may be called from several threads at once; each call owns
// its nvrtcProgram and NVRTC is thread safe across programs.
#include <string>
#include <vector>

#include "gpu/ptxas_info.hpp"

namespace fusetune::gpu {

struct CompileOptions {
  std::string arch = "sm_90";  // sm_XX / sm_XXa: CUBIN + PTX; compute_XX: PTX only
  bool strict_fp32 = false;    // --fmad=false (see compiler.cpp)
  bool ptxas_verbose = true;   // -Xptxas=-v --no-cache: registers/spills/smem figures
  int max_registers = 0;       // --maxrregcount=N when > 0
  std::vector<std::string> extra;  // appended verbatim, after ours
};

enum class CompileStatus { ok, compile_failed };

struct CompileResult {
  CompileStatus status = CompileStatus::compile_failed;
  std::string log;                   // NVRTC + ptxas output, also on success (ptxas info lines)
  std::vector<std::string> options;  // exactly what NVRTC got; record it with the CUBIN
  // Max over the program's kernels, from ptxas's report (-1: no report, i.e. ptxas_verbose
  // off; verbose compiles bypass NVRTC 13's CUBIN cache, whose hits print no report).
  int registers = -1;
  int spill_stores = 0;
  int spill_loads = 0;
  int stack_bytes = 0;
  int smem_bytes = 0;
  int cmem_bytes = 0;
  std::string cubin;  // ELF bytes, load with gpu::Module; empty for compute_XX or on failure
  std::string ptx;    // NVRTC 13 returns PTX for sm_XX targets too, so no second compile
  double compile_ms = 0;
  std::vector<std::string> kernel_names;  // from the PTX's .entry lines (plain for extern "C")
  std::vector<KernelResources> kernels;   // per kernel, from the ptxas log

  [[nodiscard]] bool ok() const { return status == CompileStatus::ok; }
};

CompileResult compile_cuda(const std::string& source, const std::string& program_name,
                           const CompileOptions& options);

// The option list compile_cuda passes to NVRTC for these options (for display and records).
std::vector<std::string> nvrtc_options(const CompileOptions& options);

// "13.0": part of the tuning database's environment fingerprint.
std::string nvrtc_version();

// Real architectures this NVRTC can target, e.g. {"sm_75", "sm_80", ..., "sm_121"}, to
// validate --arch before compiling anything.
std::vector<std::string> nvrtc_supported_archs();

// Directories given to NVRTC with -I so <cuda_fp16.h> and <cuda/std/...> resolve. The
// build-time toolkit path (FUSETUNE_CUDA_INCLUDE_DIR) first; if that is gone (binary moved
// to another machine), $FUSETUNE_CUDA_INCLUDE, $CUDA_HOME/include, $CUDA_PATH/include,
// /usr/local/cuda/include, whichever exists. Its cccl/ subfolder is added when present.
const std::vector<std::string>& cuda_include_dirs();

}  // namespace fusetune::gpu
