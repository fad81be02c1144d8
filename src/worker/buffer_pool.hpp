#pragma once
// The worker's device buffers by name, each between two guard bands. A candidate that writes
// past either end of a buffer changes a guard band and fails verification; an element it never
// writes keeps the NaN sentinel poison() leaves. Buffers grow (reallocate) when a later plan
// asks for more under the same name, so device pointers are valid until the next ensure().
#include <cuda.h>

#include <cstdint>
#include <map>
#include <string>

#include "gpu/device_buffer.hpp"

namespace fusetune::reference { class GpuReference; }

namespace fusetune::worker {

inline constexpr size_t kGuardBytes = 64 * 1024;
inline constexpr uint32_t kGuardWord = 0xA5C3E1F7u;
// A quiet NaN with a payload: an element a candidate never writes stays NaN and fails.
inline constexpr uint32_t kSentinelWord = 0x7FC0DEADu;

class BufferPool {
 public:
  // `fill` provides the device-side fills and checks (and must outlive the pool).
  explicit BufferPool(reference::GpuReference& fill) : fill_(&fill) {}

  // At least `bytes` (guard bands on both sides) under `name`, armed and ready.
  CUdeviceptr ensure(const std::string& name, size_t bytes, CUstream s);
  [[nodiscard]] CUdeviceptr ptr(const std::string& name) const;
  [[nodiscard]] size_t bytes(const std::string& name) const;
  // Fills the buffer with the NaN sentinel.
  void poison(const std::string& name, CUstream s);
  // Names of buffers one of whose guard bands changed ("" when none); re-arms them.
  [[nodiscard]] std::string check_guards(CUstream s);
  // Frees everything (device memory for the next problem).
  void clear() { bufs_.clear(); }

 private:
  struct Entry {
    gpu::DeviceBuffer mem;  // [guard][data: bytes][guard]
    size_t bytes = 0;
    [[nodiscard]] CUdeviceptr data() const { return mem.ptr() + kGuardBytes; }
  };
  reference::GpuReference* fill_;
  std::map<std::string, Entry> bufs_;
};

}  // namespace fusetune::worker
