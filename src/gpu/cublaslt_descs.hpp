#pragma once
// Move-only owners (STYLE.md 5) of cuBLASLt's four handle kinds: the library handle, a matmul
// descriptor, a matrix layout and a heuristic preference. Each is created in its constructor
// (throwing fusetune::Error with cuBLASLt's status) and destroyed exactly once.
//
// Attributes are set through set(attr, value): the value's type must be the one cuBLASLt
// documents for that attribute (its size is checked by cuBLASLt, which refuses a mismatch
// with CUBLAS_STATUS_INVALID_VALUE, reported with the attribute's number).
#include <cublasLt.h>

#include <cstdint>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

// The library handle. Creating it needs a GPU and, like cuDNN, binds to the current device's
// PRIMARY context (gpu::Context makes it current). Not tied to a stream: cublasLtMatmul takes
// the stream per call.
class CublasLtHandle {
 public:
  CublasLtHandle();
  [[nodiscard]] cublasLtHandle_t get() const noexcept { return handle_.get(); }

 private:
  struct Destroy {
    void operator()(cublasLtHandle_t handle) const noexcept;
  };
  UniqueHandle<cublasLtHandle_t, Destroy> handle_;
};

// What the matmul computes: compute and scale types, transposes, epilogue, bias.
class CublasLtMatmulDesc {
 public:
  CublasLtMatmulDesc(cublasComputeType_t compute, cudaDataType_t scale);
  template <typename T>
  void set(cublasLtMatmulDescAttributes_t attr, const T& value) {
    set_bytes(attr, &value, sizeof(T));
  }
  [[nodiscard]] cublasLtMatmulDesc_t get() const noexcept { return desc_.get(); }

 private:
  void set_bytes(cublasLtMatmulDescAttributes_t attr, const void* value, size_t bytes);
  struct Destroy {
    void operator()(cublasLtMatmulDesc_t desc) const noexcept;
  };
  UniqueHandle<cublasLtMatmulDesc_t, Destroy> desc_;
};

// One operand's shape in memory: column-major rows x cols with leading dimension ld (elements),
// and for a strided batch its count and stride.
class CublasLtMatrixLayout {
 public:
  CublasLtMatrixLayout(cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld);
  template <typename T>
  void set(cublasLtMatrixLayoutAttribute_t attr, const T& value) {
    set_bytes(attr, &value, sizeof(T));
  }
  [[nodiscard]] cublasLtMatrixLayout_t get() const noexcept { return layout_.get(); }

 private:
  void set_bytes(cublasLtMatrixLayoutAttribute_t attr, const void* value, size_t bytes);
  struct Destroy {
    void operator()(cublasLtMatrixLayout_t layout) const noexcept;
  };
  UniqueHandle<cublasLtMatrixLayout_t, Destroy> layout_;
};

// What the heuristic may return: the workspace cap and the pointer alignments it may assume.
class CublasLtPreference {
 public:
  CublasLtPreference();
  template <typename T>
  void set(cublasLtMatmulPreferenceAttributes_t attr, const T& value) {
    set_bytes(attr, &value, sizeof(T));
  }
  [[nodiscard]] cublasLtMatmulPreference_t get() const noexcept { return pref_.get(); }

 private:
  void set_bytes(cublasLtMatmulPreferenceAttributes_t attr, const void* value, size_t bytes);
  struct Destroy {
    void operator()(cublasLtMatmulPreference_t pref) const noexcept;
  };
  UniqueHandle<cublasLtMatmulPreference_t, Destroy> pref_;
};

}  // namespace fusetune::gpu
