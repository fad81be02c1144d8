#pragma once
// NVRTC's results kept on disk, so that a re-tune, or another problem that generates the same
// kernel source, compiles nothing (issue 11). One JSON file per entry in `dir`, named by a hash
// of its key and holding the whole key (the NVRTC version, the exact option list and the source
// itself): a hash collision is a miss, never another kernel's CUBIN. A file that does not parse
// or does not match is a miss, replaced by the next store. Only successful compiles are kept; a
// cached CUBIN is verified against the reference like any other before it can win.
// Thread safe: entries are written whole (a temporary file renamed over the name).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "protocol/variant_result.hpp"

namespace fusetune::tune {

class CompileCache {
 public:
  explicit CompileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  // The stored figures (CUBIN, PTX, registers, ...) of `source` compiled with `options` by this
  // NVRTC, or nullopt.
  [[nodiscard]] std::optional<protocol::CompileFigures> find(const std::string& source,
                                                   const std::vector<std::string>& options) const;

  // Keeps a successful compile. A failure to write (full disk, read-only folder) is ignored: the
  // cache only saves time.
  void store(const std::string& source, const std::vector<std::string>& options, const protocol::CompileFigures& c) const;

  [[nodiscard]] const std::filesystem::path& dir() const { return dir_; }

 private:
  [[nodiscard]] std::filesystem::path entry(const std::string& source, const std::vector<std::string>& options) const;
  std::filesystem::path dir_;
};

// The default place: beside the tuning database (`<db dir>/compile-cache`).
[[nodiscard]] std::filesystem::path compile_cache_dir_for(const std::string& db_path);

}  // namespace fusetune::tune
