#include "gpu/nvrtc_program.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "gpu/nvrtc_check.hpp"

namespace fusetune::gpu {

NvrtcProgram::NvrtcProgram(const std::string& source, const std::string& name) {
  FT_NVRTC_CALL(nvrtcCreateProgram(&prog_, source.c_str(), name.c_str(), 0, nullptr, nullptr));
}

NvrtcProgram::~NvrtcProgram() { reset(); }

NvrtcProgram::NvrtcProgram(NvrtcProgram&& other) noexcept
    : prog_(std::exchange(other.prog_, nullptr)) {}

NvrtcProgram& NvrtcProgram::operator=(NvrtcProgram&& other) noexcept {
  if (this != &other) {
    reset();
    prog_ = std::exchange(other.prog_, nullptr);
  }
  return *this;
}

void NvrtcProgram::reset() noexcept {
  if (prog_ == nullptr) return;
  const nvrtcResult r = nvrtcDestroyProgram(&prog_);
  if (r != NVRTC_SUCCESS) {
    std::fprintf(stderr, "fusetune: warning: nvrtcDestroyProgram failed: %s\n", nvrtcGetErrorString(r));
  }
  prog_ = nullptr;
}

nvrtcResult NvrtcProgram::compile(const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& o : options) argv.push_back(o.c_str());
  return nvrtcCompileProgram(prog_, static_cast<int>(argv.size()), argv.data());
}

std::string NvrtcProgram::log() const {
  size_t size = 0;
  FT_NVRTC_CALL(nvrtcGetProgramLogSize(prog_, &size));
  std::string log(size, '\0');
  if (size > 0) FT_NVRTC_CALL(nvrtcGetProgramLog(prog_, log.data()));
  std::erase(log, '\0');
  return log;
}

std::string NvrtcProgram::ptx() const {
  size_t size = 0;
  if (nvrtcGetPTXSize(prog_, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string ptx(size, '\0');
  FT_NVRTC_CALL(nvrtcGetPTX(prog_, ptx.data()));
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // size counts the terminator
  return ptx;
}

std::string NvrtcProgram::cubin() const {
  size_t size = 0;
  if (nvrtcGetCUBINSize(prog_, &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string cubin(size, '\0');
  FT_NVRTC_CALL(nvrtcGetCUBIN(prog_, cubin.data()));
  return cubin;
}

}  // namespace fusetune::gpu
