#include "gpu/cublaslt_descs.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "gpu/cublaslt_check.hpp"

namespace fusetune::gpu {
namespace {

// The checking macro would print "attr", not which one: name the attribute's number here.
void check_set(cublasStatus_t status, const char* what, int attr) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw Error(ExitCode::failure,
                fmt::format("setting {} attribute {} failed: {}", what, attr, cublas_status_text(status)));
  }
}

}  // namespace

CublasLtHandle::CublasLtHandle() {
  cublasLtHandle_t handle = nullptr;
  FT_CUBLAS_CALL(cublasLtCreate(&handle));
  handle_.reset(handle);
}

void CublasLtHandle::Destroy::operator()(cublasLtHandle_t handle) const noexcept {
  FT_CUBLAS_CALL_NOEXCEPT(cublasLtDestroy(handle));
}

CublasLtMatmulDesc::CublasLtMatmulDesc(cublasComputeType_t compute, cudaDataType_t scale) {
  cublasLtMatmulDesc_t desc = nullptr;
  FT_CUBLAS_CALL(cublasLtMatmulDescCreate(&desc, compute, scale));
  desc_.reset(desc);
}

void CublasLtMatmulDesc::set_bytes(cublasLtMatmulDescAttributes_t attr, const void* value, size_t bytes) {
  check_set(cublasLtMatmulDescSetAttribute(desc_.get(), attr, value, bytes), "matmul descriptor", int(attr));
}

void CublasLtMatmulDesc::Destroy::operator()(cublasLtMatmulDesc_t desc) const noexcept {
  FT_CUBLAS_CALL_NOEXCEPT(cublasLtMatmulDescDestroy(desc));
}

CublasLtMatrixLayout::CublasLtMatrixLayout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  FT_CUBLAS_CALL(cublasLtMatrixLayoutCreate(&layout, type, rows, cols, ld));
  layout_.reset(layout);
}

void CublasLtMatrixLayout::set_bytes(cublasLtMatrixLayoutAttribute_t attr, const void* value, size_t bytes) {
  check_set(cublasLtMatrixLayoutSetAttribute(layout_.get(), attr, value, bytes), "matrix layout", int(attr));
}

void CublasLtMatrixLayout::Destroy::operator()(cublasLtMatrixLayout_t layout) const noexcept {
  FT_CUBLAS_CALL_NOEXCEPT(cublasLtMatrixLayoutDestroy(layout));
}

CublasLtPreference::CublasLtPreference() {
  cublasLtMatmulPreference_t pref = nullptr;
  FT_CUBLAS_CALL(cublasLtMatmulPreferenceCreate(&pref));
  pref_.reset(pref);
}

void CublasLtPreference::set_bytes(cublasLtMatmulPreferenceAttributes_t attr, const void* value, size_t bytes) {
  check_set(cublasLtMatmulPreferenceSetAttribute(pref_.get(), attr, value, bytes), "matmul preference", int(attr));
}

void CublasLtPreference::Destroy::operator()(cublasLtMatmulPreference_t pref) const noexcept {
  FT_CUBLAS_CALL_NOEXCEPT(cublasLtMatmulPreferenceDestroy(pref));
}

}  // namespace fusetune::gpu
