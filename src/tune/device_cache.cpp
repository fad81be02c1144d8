#include "tune/device_cache.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/fnv1a.hpp"
#include "common/output_file.hpp"
#include "db/schema.hpp"

namespace fusetune::tune {

namespace fs = std::filesystem;

namespace {

constexpr int kFormat = 1;
constexpr size_t kMaxFileBytes = 1 << 20;  // /proc text files and a device description: a few KB

std::optional<std::string> read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  text.assign(std::istreambuf_iterator<char>(in), {});
  if (text.size() > kMaxFileBytes) text.resize(kMaxFileBytes);
  return text;
}

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? fmt::format("={}", v) : " unset";
}

// Every path under `dir`, sorted (the MIG instances show as folders there).
std::string tree_listing(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
       !ec && it != end; it.increment(ec))
    names.push_back(fs::relative(it->path(), dir, ec).string());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += n + "\n";
  return out;
}

}  // namespace

std::string device_cache_key(const fs::path& proc_root, int ordinal, const std::string& worker_exe) {
  const fs::path nv = proc_root / "driver" / "nvidia";
  const auto version = read_text(nv / "version");
  const auto boot = read_text(proc_root / "sys" / "kernel" / "random" / "boot_id");
  if (!version || !boot) return "";
  std::string key = fmt::format("fusetune device cache {}\nboot {}", kFormat, *boot);
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) key += fmt::format("host {}\n", host);
  key += fmt::format("device {}\nCUDA_VISIBLE_DEVICES{}\nCUDA_DEVICE_ORDER{}\n", ordinal,
                     env_text("CUDA_VISIBLE_DEVICES"), env_text("CUDA_DEVICE_ORDER"));
  key += "driver " + *version;
  std::vector<fs::path> gpus;
  std::error_code ec;
  for (fs::directory_iterator it(nv / "gpus", ec), end; !ec && it != end; it.increment(ec)) gpus.push_back(it->path());
  std::sort(gpus.begin(), gpus.end());
  for (const auto& g : gpus) key += fmt::format("gpu {}\n{}", g.filename().string(), read_text(g / "information").value_or("?\n"));
  key += "capabilities\n" + tree_listing(nv / "capabilities");
  // The worker's own code turns the driver's answers into the description (limits, names).
  struct stat st {};
  const fs::path exe = fs::weakly_canonical(worker_exe, ec);
  if (::stat(exe.c_str(), &st) != 0) return "";
  key += fmt::format("worker {} {} {}.{:09d}\n", exe.string(), st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
  return key;
}

fs::path device_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return fs::path(x) / "fusetune" / "devices";
  if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".cache" / "fusetune" / "devices";
  return {};
}

std::optional<nlohmann::json> load_cached_device(const fs::path& dir, const std::string& key) {
  if (dir.empty() || key.empty()) return std::nullopt;
  try {
    const auto text = read_text(dir / fmt::format("{:016x}.json", fnv1a64(key)));
    if (!text || text->size() >= kMaxFileBytes) return std::nullopt;
    auto j = nlohmann::json::parse(*text);
    if (j.at("format") != kFormat || j.at("key") != key) return std::nullopt;
    auto device = j.at("device");
    if (!device.is_object() || !device.contains("limits") || !device.at("limits").is_object() ||
        !device.contains("name"))
      return std::nullopt;
    return device;
  } catch (const std::exception&) {
    return std::nullopt;  // not ours, or damaged: the worker answers instead
  }
}

void store_cached_device(const fs::path& dir, const std::string& key, const nlohmann::json& device) {
  if (dir.empty() || key.empty()) return;
  try {
    fs::create_directories(dir);
    const nlohmann::json j = {{"format", kFormat}, {"key", key}, {"device", device}};
    write_output_file((dir / fmt::format("{:016x}.json", fnv1a64(key))).string(), j.dump());
  } catch (const std::exception&) {
    // A cache: a failed write costs a worker's start next time, nothing else.
  }
}

}  // namespace fusetune::tune
