#pragma once
// The version-2 main operator's float64 terms on the GPU (kernel_templates/ref_main_any.cu):
// per output y (the sum without bias), A = sum |terms|, B = sum terms^2 and the term count n,
// as detail::conv_any / detail::gemm_any compute them on the CPU and in the same term order, so
// the two agree bit for bit (tests/gpu_main_terms_test.cpp). The stages then run on the CPU from
// these terms (model_reference_with_terms): they are linear in the output size, the main
// operator is the superlinear part.
//
// Needs a gpu::Context current on the calling thread. Device memory: 32 bytes per output of the
// chunk being computed, the chunk sized to half the free memory and freed before returning.
#include <cuda.h>

#include <string>

#include "gpu/compiler.hpp"
#include "gpu/module.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/problem.hpp"

namespace fusetune::reference {

// The program's NVRTC compile for `arch` (no context needed, so a worker starts it before its
// context exists). --fmad=false: the CPU twin rounds B's squares before adding them.
[[nodiscard]] gpu::CompileResult compile_main_terms(const spec::Problem& problem, const std::string& arch);

class GpuMainTerms {
 public:
  // Loads the compiled program into the current context. Throws Error with NVRTC's log when it
  // did not compile (a bug in fusetune).
  GpuMainTerms(const spec::Problem& problem, const gpu::CompileResult& compiled);

  // The terms for fp32 inputs already in device memory, in ModelData's order (x: the main
  // operator's input; w: its weight). Throws InputError naming the bytes needed and free when
  // not even one chunk fits; synchronizes `stream`.
  [[nodiscard]] detail::MainTerms compute(CUdeviceptr x, CUdeviceptr w, CUstream stream) const;

 private:
  spec::Problem problem_;
  gpu::Module module_;
  CUfunction kernel_ = nullptr;
};

// Tests and one-off callers: compiles, uploads data.input and data.weight, computes, frees.
[[nodiscard]] detail::MainTerms gpu_main_terms(const spec::Problem& problem, const ModelData& data,
                                               const std::string& arch, CUstream stream);

}  // namespace fusetune::reference
