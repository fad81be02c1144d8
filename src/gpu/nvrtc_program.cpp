#include "gpu/nvrtc_program.hpp"

#include <algorithm>
#include <cstdio>

#include "gpu/nvrtc_check.hpp"

namespace fusetune::gpu {

NvrtcProgram::NvrtcProgram(const std::string& source, const std::string& name) {
  nvrtcProgram prog = nullptr;
  FT_NVRTC_CALL(nvrtcCreateProgram(&prog, source.c_str(), name.c_str(), 0, nullptr, nullptr));
  prog_.reset(prog);
}

void NvrtcProgram::Destroy::operator()(nvrtcProgram prog) const noexcept {
  const nvrtcResult r = nvrtcDestroyProgram(&prog);
  if (r != NVRTC_SUCCESS) {
    std::fprintf(stderr, "fusetune: warning: nvrtcDestroyProgram failed: %s\n", nvrtcGetErrorString(r));
  }
}

nvrtcResult NvrtcProgram::compile(const std::vector<std::string>& options) {
  std::vector<const char*> argv;
  argv.reserve(options.size());
  for (const auto& o : options) argv.push_back(o.c_str());
  return nvrtcCompileProgram(get(), static_cast<int>(argv.size()), argv.data());
}

std::string NvrtcProgram::log() const {
  size_t size = 0;
  FT_NVRTC_CALL(nvrtcGetProgramLogSize(get(), &size));
  std::string log(size, '\0');
  if (size > 0) FT_NVRTC_CALL(nvrtcGetProgramLog(get(), log.data()));
  std::erase(log, '\0');
  return log;
}

std::string NvrtcProgram::ptx() const {
  size_t size = 0;
  if (nvrtcGetPTXSize(get(), &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string ptx(size, '\0');
  FT_NVRTC_CALL(nvrtcGetPTX(get(), ptx.data()));
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();  // size counts the terminator
  return ptx;
}

std::string NvrtcProgram::cubin() const {
  size_t size = 0;
  if (nvrtcGetCUBINSize(get(), &size) != NVRTC_SUCCESS || size == 0) return {};
  std::string cubin(size, '\0');
  FT_NVRTC_CALL(nvrtcGetCUBIN(get(), cubin.data()));
  return cubin;
}

}  // namespace fusetune::gpu
