#include "gpu/cudnn_conv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include "common/error.hpp"
#include "gpu/cudnn_check.hpp"

namespace fusetune::gpu {
namespace {

void* dev_ptr(CUdeviceptr p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

ConvAlgoChoice to_choice(const cudnnConvolutionFwdAlgoPerf_t& perf) {
  ConvAlgoChoice c;
  c.algo = static_cast<int>(perf.algo);
  c.time_ms = perf.time;
  c.workspace = perf.memory;
  c.math_type = static_cast<int>(perf.mathType);
  c.algo_name = fwd_algo_name(c.algo);
  c.status = static_cast<int>(perf.status);
  return c;
}

// Why each result was rejected, for the error when none is usable.
std::string rejection_summary(const std::vector<ConvAlgoChoice>& all, MathMode mode) {
  std::string out;
  for (const ConvAlgoChoice& c : all) {
    if (!out.empty()) out += "; ";
    out += fmt::format("{} ({}): ", c.algo_name, math_type_name(c.math_type));
    if (c.status != CUDNN_STATUS_SUCCESS) {
      out += cudnnGetErrorString(static_cast<cudnnStatus_t>(c.status));
    } else if (!math_type_allowed(mode, c.math_type)) {
      out += fmt::format("math type not allowed for {}", math_mode_name(mode));
    } else {
      out += "no valid time";
    }
  }
  return out.empty() ? "cuDNN returned no results" : out;
}

}  // namespace

CudnnConv::CudnnConv(CudnnHandle& handle, const spec::Conv& conv, spec::Layout layout, MathMode mode)
    : handle_(handle.get()), conv_(conv), layout_(layout), mode_(mode), descs_(conv, layout) {
  if (handle_ == nullptr) throw Error(ExitCode::failure, "CudnnConv: the CudnnHandle was moved from");
  descs_.conv.set_math_type(search_math_type(mode_));
}

std::optional<size_t> CudnnConv::workspace_for(int algo, cudnnMathType_t math_type) {
  descs_.conv.set_math_type(math_type);
  size_t bytes = 0;
  const cudnnStatus_t status = cudnnGetConvolutionForwardWorkspaceSize(
      handle_, descs_.x.get(), descs_.w.get(), descs_.conv.get(), descs_.y.get(),
      static_cast<cudnnConvolutionFwdAlgo_t>(algo), &bytes);
  if (status != CUDNN_STATUS_SUCCESS) {
    // Not every algorithm supports every shape: that is an answer, not an error.
    detail::discard_cudnn_last_error();
    return std::nullopt;
  }
  return bytes;
}

size_t CudnnConv::max_workspace_bytes(size_t cap) {
  // A tf32 search may return results of any math type (each is run as measured), and the
  // workspace an algorithm needs can depend on it; fp32 runs everything under FMA_MATH.
  std::vector<cudnnMathType_t> math_types{CUDNN_FMA_MATH};
  if (mode_ == MathMode::tf32) math_types = {CUDNN_TENSOR_OP_MATH, CUDNN_DEFAULT_MATH, CUDNN_FMA_MATH};
  size_t most = 0;
  for (const cudnnMathType_t math_type : math_types) {
    for (int algo = 0; algo < CUDNN_CONVOLUTION_FWD_ALGO_COUNT; ++algo) {
      if (const std::optional<size_t> bytes = workspace_for(algo, math_type)) {
        most = std::max(most, std::min(*bytes, cap));
      }
    }
  }
  descs_.conv.set_math_type(search_math_type(mode_));
  return most;
}

std::vector<ConvAlgoChoice> CudnnConv::find(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr workspace,
                                            size_t workspace_bytes) {
  chosen_.reset();
  all_results_.clear();
  // The descriptor's math type bounds what cuDNN tries: FMA_MATH keeps tensor cores out entirely.
  descs_.conv.set_math_type(search_math_type(mode_));
  // Ask for every result cuDNN can return: at least one per algorithm, more if cuDNN says it
  // may report more (math-type variants of one algorithm).
  int max_count = 0;
  FT_CUDNN_CALL(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &max_count));
  const int requested = std::max(max_count, static_cast<int>(CUDNN_CONVOLUTION_FWD_ALGO_COUNT));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(requested));
  int returned = 0;
  FT_CUDNN_CALL(cudnnFindConvolutionForwardAlgorithmEx(
      handle_, descs_.x.get(), dev_ptr(x), descs_.w.get(), dev_ptr(w), descs_.conv.get(), descs_.y.get(),
      dev_ptr(y), requested, &returned, perf.data(), dev_ptr(workspace), workspace_bytes));
  // Algorithms that failed inside the search report it in their status; drop their messages.
  detail::discard_cudnn_last_error();
  for (int i = 0; i < std::min(returned, requested); ++i) {
    all_results_.push_back(to_choice(perf[static_cast<size_t>(i)]));
  }
  std::vector<ConvAlgoChoice> ranked = rank_algos(all_results_, mode_);
  if (ranked.empty()) {
    throw Error(ExitCode::failure, fmt::format("no cuDNN forward algorithm is usable for {} math: {}",
                                               math_mode_name(mode_), rejection_summary(all_results_, mode_)));
  }
  chosen_ = ranked.front();
  return ranked;
}

void CudnnConv::choose(const ConvAlgoChoice& choice) {
  if (choice.status != CUDNN_STATUS_SUCCESS || !math_type_allowed(mode_, choice.math_type)) {
    throw Error(ExitCode::failure,
                fmt::format("cuDNN algorithm {} ({}, status {}) cannot be chosen for {} math",
                            fwd_algo_name(choice.algo), math_type_name(choice.math_type), choice.status,
                            math_mode_name(mode_)));
  }
  const std::optional<size_t> bytes = workspace_for(choice.algo, run_math_type(mode_, choice.math_type));
  descs_.conv.set_math_type(search_math_type(mode_));
  if (!bytes) {
    throw Error(ExitCode::failure, fmt::format("cuDNN algorithm {} does not support this convolution",
                                               fwd_algo_name(choice.algo)));
  }
  ConvAlgoChoice chosen = choice;
  chosen.workspace = std::max(chosen.workspace, *bytes);
  chosen.algo_name = fwd_algo_name(chosen.algo);
  chosen_ = std::move(chosen);
}

void CudnnConv::forward(CUdeviceptr x, CUdeviceptr w, CUdeviceptr y, CUdeviceptr workspace, size_t workspace_bytes,
                        CUdeviceptr bias_or_0) {
  if (!chosen_) {
    throw Error(ExitCode::failure, "CudnnConv::forward: no algorithm chosen (call find() or choose() first)");
  }
  if (workspace_bytes < chosen_->workspace) {
    throw Error(ExitCode::failure, fmt::format("CudnnConv::forward: {} needs {} bytes of workspace, got {}",
                                               chosen_name(), chosen_->workspace, workspace_bytes));
  }
  // cuDNN selects kernels by (algorithm, math type), so the descriptor must carry the math type
  // the result was measured with (FMA for fp32 whatever cuDNN reported: see run_math_type).
  descs_.conv.set_math_type(run_math_type(mode_, chosen_->math_type));
  const float one = 1.0f;
  const float zero = 0.0f;
  FT_CUDNN_CALL(cudnnConvolutionForward(handle_, &one, descs_.x.get(), dev_ptr(x), descs_.w.get(),
                                        dev_ptr(w), descs_.conv.get(),
                                        static_cast<cudnnConvolutionFwdAlgo_t>(chosen_->algo), dev_ptr(workspace),
                                        workspace_bytes, &zero, descs_.y.get(), dev_ptr(y)));
  if (bias_or_0 != 0) add_bias(y, bias_or_0);
}

void CudnnConv::add_bias(CUdeviceptr y, CUdeviceptr bias) {
  // y = 1 * bias (broadcast from (1,K,1,1)) + 1 * y
  const float one = 1.0f;
  FT_CUDNN_CALL(cudnnAddTensor(handle_, &one, descs_.bias.get(), dev_ptr(bias), &one, descs_.y.get(), dev_ptr(y)));
}

std::string CudnnConv::chosen_name() const { return chosen_ ? choice_label(*chosen_, mode_) : "none"; }

}  // namespace fusetune::gpu
