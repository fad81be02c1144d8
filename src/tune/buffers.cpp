#include "tune/buffers.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "reference/gpu_reference.hpp"

namespace fusetune::tune {

CUdeviceptr BufferSet::ensure(const std::string& name, size_t bytes, reference::GpuReference& ref, CUstream s) {
  auto it = bufs_.find(name);
  if (it != bufs_.end()) {
    if (it->second.bytes < bytes)
      throw Error(ExitCode::failure, fmt::format("buffer '{}' is {} bytes, {} needed", name, it->second.bytes, bytes));
    return it->second.mem.ptr();
  }
  bytes = (bytes + 255) / 256 * 256;  // keep every guard band 256-byte aligned, like cudaMalloc
  Entry e{gpu::DeviceBuffer(bytes + kGuardBytes), bytes};
  ref.fill_u32(e.mem.ptr() + bytes, kGuardBytes / 4, kGuardWord, s);
  CUdeviceptr p = e.mem.ptr();
  bufs_.emplace(name, std::move(e));
  return p;
}

CUdeviceptr BufferSet::ptr(const std::string& name) const {
  auto it = bufs_.find(name);
  if (it == bufs_.end()) throw Error(ExitCode::failure, fmt::format("plan names unknown buffer '{}'", name));
  return it->second.mem.ptr();
}

size_t BufferSet::bytes(const std::string& name) const {
  auto it = bufs_.find(name);
  return it == bufs_.end() ? 0 : it->second.bytes;
}

std::string BufferSet::check_guards(reference::GpuReference& ref, CUstream s) {
  std::string bad;
  for (auto& [name, e] : bufs_) {
    if (ref.check_u32(e.mem.ptr() + e.bytes, kGuardBytes / 4, kGuardWord, s) != 0) {
      bad += (bad.empty() ? "" : ", ") + name;
      ref.fill_u32(e.mem.ptr() + e.bytes, kGuardBytes / 4, kGuardWord, s);  // re-arm for the next run
    }
  }
  return bad;
}

void BufferSet::poison(const std::string& name, reference::GpuReference& ref, CUstream s) {
  auto it = bufs_.find(name);
  if (it == bufs_.end()) return;
  ref.fill_u32(it->second.mem.ptr(), it->second.bytes / 4, kSentinelWord, s);
}

}  // namespace fusetune::tune
