#pragma once
// A private temporary directory, removed with everything in it when the object goes.
#include <filesystem>
#include <string>

namespace fusetune {

class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "fusetune");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace fusetune
