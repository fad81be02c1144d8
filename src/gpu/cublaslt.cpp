#include "gpu/cublaslt.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <limits>

#include "common/error.hpp"
#include "gpu/cublaslt_check.hpp"

namespace fusetune::gpu {
namespace {

// fp32 storage everywhere: A, B, C, D, bias and alpha/beta.
constexpr cudaDataType_t kType = CUDA_R_32F;

CublasLtMatrixLayout make_layout(const LtMatrix& m, int64_t batch) {
  CublasLtMatrixLayout layout(kType, uint64_t(m.rows), uint64_t(m.cols), m.ld);
  if (batch > 1) {
    layout.set(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, int32_t(batch));
    layout.set(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t(m.batch_stride));
  }
  return layout;
}

cublasOperation_t op(const LtMatrix& m) { return m.transposed ? CUBLAS_OP_T : CUBLAS_OP_N; }

// Refuses what cuBLASLt would refuse less clearly, before anything is created.
LtGemmLayout checked_layout(const spec::Gemm& g, bool linear, uint32_t alignment) {
  if (alignment < 4 || alignment > 256 || !std::has_single_bit(alignment)) {
    throw InputError(fmt::format("cuBLASLt alignment must be a power of two from 4 to 256 bytes, not {}", alignment));
  }
  if (g.batch > std::numeric_limits<int32_t>::max()) {
    throw InputError(fmt::format("cuBLASLt takes a batch count up to 2^31 - 1, not {}", g.batch));
  }
  return lt_gemm_layout(g, linear);
}

template <typename T>
T get_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
  T value{};
  size_t written = 0;
  FT_CUBLAS_CALL(cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written));
  return value;
}

CublasLtAlgoKey read_key(const cublasLtMatmulAlgo_t& algo) {
  CublasLtAlgoKey key;
  key.id = get_config<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID);
  key.tile = get_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  key.stages = get_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  key.splitk = get_config<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  key.reduction = get_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  key.swizzle = get_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  key.custom = get_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  key.inner_shape = get_config<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  key.cluster = get_config<uint16_t>(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return key;
}

// Writes every configurable field of `key` (AlgoInit set the ID). The first failure's status
// and the name of the field it refused, or success.
cublasStatus_t write_key(cublasLtMatmulAlgo_t& algo, const CublasLtAlgoKey& key, const char** failed) {
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  const auto set = [&](cublasLtMatmulAlgoConfigAttributes_t attr, const auto& value, const char* name) {
    if (status != CUBLAS_STATUS_SUCCESS) return;
    status = cublasLtMatmulAlgoConfigSetAttribute(&algo, attr, &value, sizeof value);
    if (status != CUBLAS_STATUS_SUCCESS) *failed = name;
  };
  set(CUBLASLT_ALGO_CONFIG_TILE_ID, key.tile, "tile");
  set(CUBLASLT_ALGO_CONFIG_STAGES_ID, key.stages, "stages");
  set(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, key.splitk, "splitk");
  set(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, key.reduction, "reduction");
  set(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, key.swizzle, "swizzle");
  set(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, key.custom, "custom");
  set(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, key.inner_shape, "inner");
  set(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, key.cluster, "cluster");
  return status;
}

void check_aligned(CUdeviceptr ptr, uint32_t alignment, const char* what) {
  if (ptr == 0) throw Error(ExitCode::failure, fmt::format("cuBLASLt GEMM: {} is a null pointer", what));
  if (ptr % alignment != 0) {
    throw Error(ExitCode::failure, fmt::format("cuBLASLt GEMM: {} at {:#x} is not aligned to the plan's {} bytes", what,
                                               ptr, alignment));
  }
}

}  // namespace

namespace {

// The epilogue that adds the bias (when the problem has one), then applies the activation.
cublasLtEpilogue_t lt_epilogue(bool bias, GemmActivation activation) {
  switch (activation) {
    case GemmActivation::none: return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
    case GemmActivation::relu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case GemmActivation::gelu_tanh: return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;  // unreachable: the switch names every value
}

}  // namespace

cublasComputeType_t cublas_compute_type(MathMode mode) {
  switch (mode) {
    case MathMode::tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case MathMode::fp32: return CUBLAS_COMPUTE_32F;
  }
  return CUBLAS_COMPUTE_32F;  // unreachable: the switch names every mode
}

size_t cublaslt_version() { return cublasLtGetVersion(); }

GemmPlan::GemmPlan(const CublasLtHandle& handle, const spec::Gemm& gemm, bool linear, MathMode mode,
                   uint32_t alignment, GemmActivation activation)
    : handle_(handle.get()),
      gemm_(gemm),
      linear_(linear),
      mode_(mode),
      alignment_(alignment),
      activation_(activation),
      layout_(checked_layout(gemm, linear, alignment)),
      desc_(cublas_compute_type(mode), kType),
      lt_a_(make_layout(layout_.lt_a, layout_.batch)),
      lt_b_(make_layout(layout_.lt_b, layout_.batch)),
      d_(make_layout(layout_.d, layout_.batch)) {
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSA, int32_t(op(layout_.lt_a)));
  desc_.set(CUBLASLT_MATMUL_DESC_TRANSB, int32_t(op(layout_.lt_b)));
  desc_.set(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t(lt_epilogue(gemm_.bias, activation_)));
  if (gemm_.bias) {
    desc_.set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(kType));
    // One bias vector for every batch entry (nn.Linear's), not one per entry.
    desc_.set(CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t(0));
  }
}

CublasLtPreference GemmPlan::preference(size_t max_workspace_bytes) const {
  CublasLtPreference pref;
  pref.set(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(max_workspace_bytes));
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_);
  pref.set(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_);
  return pref;
}

namespace {

// The heuristic and AlgoCheck read the bias pointer's VALUE to decide which alignment a
// kernel may assume (cublasLt.h, CUBLASLT_MATMUL_DESC_BIAS_POINTER). A stand-in address with
// exactly the plan's alignment makes every answer hold for any bias run() accepts, whatever
// pointer an earlier run() left on the descriptor. It is never dereferenced.
void assume_bias_alignment(CublasLtMatmulDesc& desc, bool bias, uint32_t alignment) {
  if (bias) desc.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, reinterpret_cast<const void*>(uintptr_t(alignment)));
}

}  // namespace

std::vector<GemmAlgo> GemmPlan::algorithms(int max_count, size_t max_workspace_bytes) {
  if (max_count < 1) throw InputError(fmt::format("cuBLASLt heuristic: max_count must be positive, not {}", max_count));
  assume_bias_alignment(desc_, gemm_.bias, alignment_);
  const CublasLtPreference pref = preference(max_workspace_bytes);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(max_count));
  int returned = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, desc_.get(), lt_a_.get(), lt_b_.get(), d_.get(), d_.get(), pref.get(),
                                     max_count, results.data(), &returned);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) return {};  // no kernel for this problem here
  FT_CUBLAS_CALL(status);
  std::vector<GemmAlgo> algos;
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulHeuristicResult_t& r = results[std::size_t(i)];
    if (r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > max_workspace_bytes) continue;
    algos.push_back(GemmAlgo{read_key(r.algo), r.algo, r.workspaceSize, r.wavesCount});
  }
  return algos;
}

std::optional<GemmAlgo> GemmPlan::rebuild(const CublasLtAlgoKey& key, size_t max_workspace_bytes, std::string* why) {
  const auto refuse = [&](const std::string& reason) -> std::optional<GemmAlgo> {
    if (why != nullptr) *why = fmt::format("cuBLASLt algorithm {} does not apply: {}", key.text(), reason);
    return std::nullopt;
  };
  GemmAlgo out;
  cublasStatus_t s = cublasLtMatmulAlgoInit(handle_, cublas_compute_type(mode_), kType, kType, kType, kType, kType,
                                            key.id, &out.algo);
  if (s != CUBLAS_STATUS_SUCCESS) return refuse("cublasLtMatmulAlgoInit: " + cublas_status_text(s));
  const char* failed = "";
  s = write_key(out.algo, key, &failed);
  if (s != CUBLAS_STATUS_SUCCESS) return refuse(fmt::format("setting {}: {}", failed, cublas_status_text(s)));
  assume_bias_alignment(desc_, gemm_.bias, alignment_);
  cublasLtMatmulHeuristicResult_t checked{};
  s = cublasLtMatmulAlgoCheck(handle_, desc_.get(), lt_a_.get(), lt_b_.get(), d_.get(), d_.get(), &out.algo, &checked);
  if (s != CUBLAS_STATUS_SUCCESS) return refuse("cublasLtMatmulAlgoCheck: " + cublas_status_text(s));
  if (checked.state != CUBLAS_STATUS_SUCCESS) return refuse("cublasLtMatmulAlgoCheck: " + cublas_status_text(checked.state));
  if (checked.workspaceSize > max_workspace_bytes) {
    return refuse(fmt::format("needs {} bytes of workspace, more than the {} allowed", checked.workspaceSize,
                              max_workspace_bytes));
  }
  // What cuBLASLt holds now must be what was asked for: a field it silently changed would make
  // the stored choice and the run differ.
  out.key = read_key(out.algo);
  if (out.key != key) return refuse("cuBLASLt changed it to " + out.key.text());
  out.workspace_bytes = checked.workspaceSize;
  out.waves = checked.wavesCount;
  return out;
}

void GemmPlan::run(const GemmAlgo& algo, CUdeviceptr a, CUdeviceptr b, CUdeviceptr bias, CUdeviceptr c,
                   CUdeviceptr workspace, size_t workspace_bytes, CUstream stream) {
  check_aligned(a, alignment_, "A");
  check_aligned(b, alignment_, "B");
  check_aligned(c, alignment_, "the output");
  if (gemm_.bias) {
    check_aligned(bias, alignment_, "the bias");
    desc_.set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, reinterpret_cast<const void*>(bias));
  } else if (bias != 0) {
    throw Error(ExitCode::failure, "cuBLASLt GEMM: a bias pointer for a problem without bias");
  }
  if (workspace_bytes < algo.workspace_bytes || (algo.workspace_bytes > 0 && workspace == 0)) {
    throw Error(ExitCode::failure, fmt::format("cuBLASLt GEMM: {} needs {} bytes of workspace, given {}", algo.name(),
                                               algo.workspace_bytes, workspace == 0 ? 0 : workspace_bytes));
  }
  const float alpha = 1.0f, beta = 0.0f;
  // The swap (cublaslt_layout.hpp): cuBLASLt's A is our B, its B our A; C = D (beta = 0).
  const auto ptr = [](CUdeviceptr p) { return reinterpret_cast<void*>(p); };
  FT_CUBLAS_CALL(cublasLtMatmul(handle_, desc_.get(), &alpha, ptr(b), lt_a_.get(), ptr(a), lt_b_.get(), &beta, ptr(c),
                                d_.get(), ptr(c), d_.get(), &algo.algo, workspace == 0 ? nullptr : ptr(workspace),
                                workspace_bytes, stream));
}

}  // namespace fusetune::gpu
