#pragma once
// Owns one nvrtcProgram. Move-only: the program must be destroyed exactly once, and the
// destructor never throws (a failed destroy is reported on stderr and otherwise ignored).
#include <nvrtc.h>

#include <string>
#include <vector>

namespace fusetune::gpu {

class NvrtcProgram {
 public:
  // `name` is the file name NVRTC puts in diagnostics ("epilogue.cu(12): error: ...").
  NvrtcProgram(const std::string& source, const std::string& name);
  ~NvrtcProgram();
  NvrtcProgram(NvrtcProgram&& other) noexcept;
  NvrtcProgram& operator=(NvrtcProgram&& other) noexcept;
  NvrtcProgram(const NvrtcProgram&) = delete;
  NvrtcProgram& operator=(const NvrtcProgram&) = delete;

  [[nodiscard]] nvrtcProgram get() const noexcept { return prog_; }

  // Runs the compiler; returns NVRTC's status without throwing so the caller can read the
  // log first (jitify's habit: a failure always carries the compiler's words).
  [[nodiscard]] nvrtcResult compile(const std::vector<std::string>& options);

  // The program log with NVRTC's embedded NUL separators removed (ptxas errors follow a
  // NUL after the ptxas info lines, so a C-string read would silently drop them).
  [[nodiscard]] std::string log() const;
  [[nodiscard]] std::string ptx() const;    // empty when none was produced
  [[nodiscard]] std::string cubin() const;  // ELF bytes; empty for compute_XX targets

 private:
  void reset() noexcept;
  nvrtcProgram prog_ = nullptr;
};

}  // namespace fusetune::gpu
