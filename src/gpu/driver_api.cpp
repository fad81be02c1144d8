#include "gpu/driver_api.hpp"

#include <dlfcn.h>

#include <atomic>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

// Two-step stringize so a #defined name yields the versioned symbol: "cuMemAlloc_v2".
#define FUSETUNE_STR2(x) #x
#define FUSETUNE_STR(x) FUSETUNE_STR2(x)

namespace fusetune::gpu {
namespace {

struct Loaded {
  DriverApi api;
  std::string error;  // empty when usable
};

std::atomic<const DriverApi*> g_loaded{nullptr};

// Error messages are single lines: the CLI prints them as they are.
std::string one_line(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string result_text(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName == nullptr || api.cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
  if (api.cuGetErrorString == nullptr || api.cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  if (name == nullptr) return fmt::format("CUresult {}", static_cast<int>(r));
  return text == nullptr ? std::string(name) : fmt::format("{}: {}", name, text);
}

template <typename Fn>
bool resolve(void* lib, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol));
  return fn != nullptr;
}

Loaded load() {
  Loaded l;
  // RTLD_LOCAL: keep the driver's symbols out of the global namespace; the handle is never
  // closed, the driver stays mapped for the process's life (unloading it at exit races
  // with its own atexit teardown).
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    l.error = one_line(fmt::format("no NVIDIA driver found (libcuda.so.1 could not be loaded: {}); "
                                   "this command needs a GPU",
                                   err != nullptr ? err : "unknown error"));
    return l;
  }
  DriverApi& api = l.api;
  std::vector<std::string> missing;
#define FUSETUNE_DRIVER_RESOLVE(fn) \
  if (!resolve(lib, FUSETUNE_STR(fn), api.fn)) missing.emplace_back(FUSETUNE_STR(fn));
  FUSETUNE_DRIVER_FUNCTIONS(FUSETUNE_DRIVER_RESOLVE)
#undef FUSETUNE_DRIVER_RESOLVE
  // cuEventElapsedTime_v2 exists from CUDA 12.8 drivers on; older ones export only the
  // unversioned symbol, with the same signature.
  if (api.cuEventElapsedTime == nullptr && resolve(lib, "cuEventElapsedTime", api.cuEventElapsedTime)) {
    std::erase(missing, std::string(FUSETUNE_STR(cuEventElapsedTime)));
  }
  int version = 0;
  if (api.cuDriverGetVersion != nullptr) api.cuDriverGetVersion(&version);
  if (!missing.empty()) {
    l.error = fmt::format("NVIDIA driver too old (CUDA {}.{}): libcuda.so.1 lacks {}; update the driver",
                          version / 1000, version % 1000 / 10, fmt::join(missing, ", "));
    return l;
  }
  if (const CUresult r = api.cuInit(0); r != CUDA_SUCCESS) {
    l.error = one_line(fmt::format("no CUDA GPU found (cuInit: {})", result_text(api, r)));
    return l;
  }
  int count = 0;
  if (const CUresult r = api.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
    l.error = one_line(fmt::format("no CUDA GPU found (cuDeviceGetCount: {})", result_text(api, r)));
  } else if (count == 0) {
    l.error = "no CUDA GPU found (the driver reports 0 devices; check CUDA_VISIBLE_DEVICES)";
  }
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  if (l.error.empty()) g_loaded.store(&l.api, std::memory_order_release);
  return l;
}

}  // namespace

const DriverApi& driver() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw NoGpuError(l.error);
  return l.api;
}

bool driver_available(std::string* why) noexcept {
  try {
    const Loaded& l = loaded();
    if (why != nullptr) *why = l.error;
    return l.error.empty();
  } catch (...) {  // only std::bad_alloc can get here
    if (why != nullptr) why->clear();
    return false;
  }
}

const DriverApi* driver_if_loaded() noexcept { return g_loaded.load(std::memory_order_acquire); }

}  // namespace fusetune::gpu
