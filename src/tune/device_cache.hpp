#pragma once
// The worker's description of a GPU, kept per user between runs, so that a stored answer needs
// no worker at all: on the H200 initialising the CUDA driver (cuInit) took 0.18 s of a stored
// answer's 0.23 (docs/runs/2026-12-03/call53-stored.tar.xz:stored-probe.txt), and the stored winner is
// looked up by the facts it returns.
//
// An entry is only as good as its key, which holds everything that could change what the driver
// would say for this device index without a reboot being noticed: this boot's id and the host
// name, the device index and CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER, the kernel driver's
// version, every GPU's /proc/driver/nvidia/gpus/*/information (model, UUID, bus) and the MIG
// instances under /proc/driver/nvidia/capabilities, and the worker executable (path, size,
// modification time). Without /proc/driver/nvidia there is no key and nothing is cached. A file
// that does not parse or whose key differs is a miss; the next run that starts a worker writes
// the entry again. `tune --force` does not read it, and writes the worker's description.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace fusetune::tune {

// The key for device `ordinal` as the worker `worker_exe` would see it, from `proc_root`
// (normally /proc) and the environment; "" when the NVIDIA kernel driver is not there.
[[nodiscard]] std::string device_cache_key(const std::filesystem::path& proc_root, int ordinal,
                                           const std::string& worker_exe);

// $XDG_CACHE_HOME/fusetune/devices, else $HOME/.cache/fusetune/devices; "" when neither is set.
[[nodiscard]] std::filesystem::path device_cache_dir();

// The stored description for `key`, or nullopt (no entry, another key, damaged).
[[nodiscard]] std::optional<nlohmann::json> load_cached_device(const std::filesystem::path& dir, const std::string& key);

// Keeps `device` under `key`. A failure to write is ignored: the cache only saves time.
void store_cached_device(const std::filesystem::path& dir, const std::string& key, const nlohmann::json& device);

}  // namespace fusetune::tune
