#pragma once
// Device memory from cuMemAlloc, freed exactly once. Needs the owning Context current.
//
// Ordering: copies to and from the host return when complete. Device-side copies and fills
// are enqueued on `stream` (default: the legacy NULL stream, which orders with the
// blocking gpu::Stream) and return at once.
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;  // empty: size 0, ptr 0
  explicit DeviceBuffer(size_t bytes);

  // The device address; pass it (a CUdeviceptr, 64-bit) where a kernel takes a T*.
  // cuMemAlloc aligns it to at least 256 bytes.
  [[nodiscard]] CUdeviceptr ptr() const noexcept { return memory_.get().ptr; }
  [[nodiscard]] size_t size() const noexcept { return memory_.get().size; }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }

  // Byte ranges [offset, offset + bytes) must lie inside the buffer (else fusetune::Error).
  void copy_from_host(const void* src, size_t bytes, size_t offset = 0, CUstream stream = nullptr);
  void copy_to_host(void* dst, size_t bytes, size_t offset = 0, CUstream stream = nullptr) const;
  void copy_from(const DeviceBuffer& src, size_t bytes, CUstream stream = nullptr);
  // Fills the whole buffer with a 32-bit pattern (e.g. a NaN sentinel); size must be a
  // multiple of 4.
  void fill_u32(uint32_t word, CUstream stream = nullptr);
  void fill_u8(uint8_t byte, CUstream stream = nullptr);

  template <typename T>
  void upload(std::span<const T> host, size_t offset_elems = 0, CUstream stream = nullptr) {
    copy_from_host(host.data(), host.size_bytes(), offset_elems * sizeof(T), stream);
  }
  // The whole buffer as Ts (size must be a multiple of sizeof(T)).
  template <typename T>
  [[nodiscard]] std::vector<T> download(CUstream stream = nullptr) const {
    check_multiple(sizeof(T));
    std::vector<T> host(size() / sizeof(T));
    copy_to_host(host.data(), host.size() * sizeof(T), 0, stream);
    return host;
  }

 private:
  void check_range(size_t offset, size_t bytes, const char* what) const;
  void check_multiple(size_t unit) const;
  // Address and size move together, so a moved-from buffer is empty (size 0, ptr 0).
  // No member initializers: the type must be complete for UniqueHandle's checks inside this
  // class, and Allocation{} (zeros) is the empty handle anyway.
  struct Allocation {
    CUdeviceptr ptr;
    size_t size;
    bool operator==(const Allocation&) const = default;
  };
  struct Free {
    void operator()(const Allocation& memory) const noexcept;
  };
  UniqueHandle<Allocation, Free> memory_;  // move-only, freed once
};

}  // namespace fusetune::gpu
