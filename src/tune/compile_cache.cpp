#include "tune/compile_cache.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "common/fnv1a.hpp"
#include "common/output_file.hpp"
#include "db/base64.hpp"
#include "db/schema.hpp"
#include "gpu/compiler.hpp"

namespace fusetune::tune {

namespace {

constexpr int kFormat = 1;
constexpr size_t kMaxEntryBytes = size_t(64) << 20;  // a CUBIN + PTX is a few MB at most

std::string key_text(const std::string& source, const std::vector<std::string>& options) {
  std::string key = "nvrtc " + gpu::nvrtc_version() + "\n";
  for (const auto& o : options) key += o + "\n";
  return key + "\n" + source;
}

}  // namespace

std::filesystem::path CompileCache::entry(const std::string& source, const std::vector<std::string>& options) const {
  return dir_ / fmt::format("{:016x}.json", fnv1a64(key_text(source, options)));
}

std::optional<protocol::CompileFigures> CompileCache::find(const std::string& source,
                                                 const std::vector<std::string>& options) const {
  try {
    std::ifstream in(entry(source, options), std::ios::binary);
    if (!in) return std::nullopt;
    std::string text;
    text.assign(std::istreambuf_iterator<char>(in), {});
    if (text.size() > kMaxEntryBytes) return std::nullopt;
    const auto j = nlohmann::json::parse(text);
    if (j.at("format") != kFormat || j.at("key") != key_text(source, options)) return std::nullopt;
    protocol::CompileFigures c;
    c.registers = j.at("registers");
    c.spill_stores = j.at("spill_stores");
    c.spill_loads = j.at("spill_loads");
    c.stack_bytes = j.at("stack_bytes");
    c.smem_bytes = j.at("smem_bytes");
    if (j.contains("kernel_registers")) c.kernel_registers = j.at("kernel_registers").get<std::map<std::string, int>>();
    c.compile_ms = 0;  // nothing was compiled this time
    c.options = j.at("options_text");
    auto cubin = db::base64_decode(j.at("cubin").get<std::string>());
    auto ptx = db::base64_decode(j.at("ptx").get<std::string>());
    if (!cubin || !ptx || (cubin->empty() && ptx->empty())) return std::nullopt;
    c.cubin = std::move(*cubin);
    c.ptx = std::move(*ptx);
    return c;
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable or not ours: compile again
  }
}

void CompileCache::store(const std::string& source, const std::vector<std::string>& options,
                         const protocol::CompileFigures& c) const {
  try {
    std::filesystem::create_directories(dir_);
    const nlohmann::json j = {{"format", kFormat},
                              {"key", key_text(source, options)},
                              {"options_text", c.options},
                              {"registers", c.registers},
                              {"spill_stores", c.spill_stores},
                              {"spill_loads", c.spill_loads},
                              {"stack_bytes", c.stack_bytes},
                              {"smem_bytes", c.smem_bytes},
                              {"kernel_registers", c.kernel_registers},
                              {"compile_ms", c.compile_ms},
                              {"cubin", db::base64_encode(c.cubin)},
                              {"ptx", db::base64_encode(c.ptx)}};
    write_output_file(entry(source, options).string(), j.dump());
  } catch (const std::exception&) {
    // A cache: a failed write costs a compile next time, nothing else.
  }
}

std::filesystem::path compile_cache_dir_for(const std::string& db_path) {
  if (db_path.empty() || db_path == ":memory:") return {};
  return std::filesystem::path(db_path).parent_path() / "compile-cache";
}

}  // namespace fusetune::tune
