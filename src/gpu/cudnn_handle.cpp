#include "gpu/cudnn_handle.hpp"

#include "gpu/cudnn_check.hpp"

namespace fusetune::gpu {

CudnnHandle::CudnnHandle() {
  cudnnHandle_t handle = nullptr;
  FT_CUDNN_CALL(cudnnCreate(&handle));
  handle_.reset(handle);
}

void CudnnHandle::set_stream(CUstream stream) { FT_CUDNN_CALL(cudnnSetStream(handle_.get(), stream)); }

void CudnnHandle::Deleter::operator()(cudnnHandle_t handle) const noexcept {
  FT_CUDNN_CALL_NOEXCEPT(cudnnDestroy(handle));
}

}  // namespace fusetune::gpu
