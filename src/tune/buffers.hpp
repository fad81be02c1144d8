#pragma once
// Named device buffers of the worker, each followed by a guard band. A candidate that writes
// past the end of a buffer changes its guard band and fails verification.
#include <cstdint>
#include <map>
#include <string>

#include "gpu/device_buffer.hpp"

namespace fusetune::reference { class GpuReference; }

namespace fusetune::tune {

inline constexpr size_t kGuardBytes = 64 * 1024;
inline constexpr uint32_t kGuardWord = 0xA5C3E1F7u;
// A quiet NaN with a payload: an element a candidate never writes stays NaN and fails.
inline constexpr uint32_t kSentinelWord = 0x7FC0DEADu;

class BufferSet {
 public:
  // Allocates `bytes` (+ guard band) under `name` once; later calls return the same buffer.
  CUdeviceptr ensure(const std::string& name, size_t bytes, reference::GpuReference& ref, CUstream s);
  [[nodiscard]] bool has(const std::string& name) const { return bufs_.count(name) != 0; }
  [[nodiscard]] CUdeviceptr ptr(const std::string& name) const;
  [[nodiscard]] size_t bytes(const std::string& name) const;
  // Names of buffers whose guard band changed.
  std::string check_guards(reference::GpuReference& ref, CUstream s);
  void poison(const std::string& name, reference::GpuReference& ref, CUstream s);

 private:
  struct Entry {
    gpu::DeviceBuffer mem;
    size_t bytes = 0;
  };
  std::map<std::string, Entry> bufs_;
};

}  // namespace fusetune::tune
