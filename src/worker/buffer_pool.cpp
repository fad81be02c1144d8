#include "worker/buffer_pool.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "reference/gpu_reference.hpp"

namespace fusetune::worker {

CUdeviceptr BufferPool::ensure(const std::string& name, size_t bytes, CUstream s) {
  bytes = (bytes + 255) / 256 * 256;  // keep the back guard band 256-byte aligned, like cudaMalloc
  auto it = bufs_.find(name);
  if (it != bufs_.end() && it->second.bytes >= bytes) return it->second.data();
  if (it != bufs_.end()) bufs_.erase(it);  // too small: free before allocating the larger one
  Entry e{gpu::DeviceBuffer(bytes + 2 * kGuardBytes), bytes};
  fill_->fill_u32(e.mem.ptr(), kGuardBytes / 4, kGuardWord, s);
  fill_->fill_u32(e.data() + bytes, kGuardBytes / 4, kGuardWord, s);
  const CUdeviceptr p = e.data();
  bufs_.emplace(name, std::move(e));
  return p;
}

CUdeviceptr BufferPool::ptr(const std::string& name) const {
  auto it = bufs_.find(name);
  if (it == bufs_.end()) throw Error(ExitCode::failure, fmt::format("worker: no buffer '{}'", name));
  return it->second.data();
}

size_t BufferPool::bytes(const std::string& name) const {
  auto it = bufs_.find(name);
  return it == bufs_.end() ? 0 : it->second.bytes;
}

void BufferPool::poison(const std::string& name, CUstream s) {
  auto it = bufs_.find(name);
  if (it == bufs_.end()) return;
  fill_->fill_u32(it->second.data(), it->second.bytes / 4, kSentinelWord, s);
}

std::string BufferPool::check_guards(CUstream s) {
  std::string bad;
  for (auto& [name, e] : bufs_) {
    const CUdeviceptr front = e.mem.ptr(), back = e.data() + e.bytes;
    const bool front_bad = fill_->check_u32(front, kGuardBytes / 4, kGuardWord, s) != 0;
    const bool back_bad = fill_->check_u32(back, kGuardBytes / 4, kGuardWord, s) != 0;
    if (!front_bad && !back_bad) continue;
    bad += fmt::format("{}{} ({})", bad.empty() ? "" : ", ", name,
                       front_bad && back_bad ? "both ends" : front_bad ? "before its start" : "past its end");
    fill_->fill_u32(front, kGuardBytes / 4, kGuardWord, s);  // re-arm for the next run
    fill_->fill_u32(back, kGuardBytes / 4, kGuardWord, s);
  }
  return bad;
}

}  // namespace fusetune::worker
