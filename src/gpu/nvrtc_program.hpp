#pragma once
// Owns one nvrtcProgram. Move-only: the program must be destroyed exactly once, and the
// destructor never throws (a failed destroy is reported on stderr and otherwise ignored).
#include <nvrtc.h>

#include <string>
#include <vector>

#include "common/unique_handle.hpp"

namespace fusetune::gpu {

class NvrtcProgram {
 public:
  // `name` is the file name NVRTC puts in diagnostics ("epilogue.cu(12): error: ...").
  NvrtcProgram(const std::string& source, const std::string& name);

  [[nodiscard]] nvrtcProgram get() const noexcept { return prog_.get(); }

  // Runs the compiler; returns NVRTC's status without throwing so the caller can read the
  // log first (jitify's habit: a failure always carries the compiler's words).
  [[nodiscard]] nvrtcResult compile(const std::vector<std::string>& options);

  // The program log with NVRTC's embedded NUL separators removed (ptxas errors follow a
  // NUL after the ptxas info lines, so a C-string read would silently drop them).
  [[nodiscard]] std::string log() const;
  [[nodiscard]] std::string ptx() const;    // empty when none was produced
  [[nodiscard]] std::string cubin() const;  // ELF bytes; empty for compute_XX targets

 private:
  struct Destroy {
    void operator()(nvrtcProgram prog) const noexcept;
  };
  UniqueHandle<nvrtcProgram, Destroy> prog_;
};

}  // namespace fusetune::gpu
