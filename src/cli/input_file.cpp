#include "cli/input_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::cli {

std::string read_input_file(const std::string& path, std::string_view what) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& why) {
    return InputError(fmt::format("cannot read {} {}: {}", what, path, why));
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::not_found) throw refuse("no such file");
  if (ec) throw refuse(ec.message());
  if (st.type() == fs::file_type::directory) throw refuse("it is a directory, not a file");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw refuse(std::strerror(errno));
  std::string bytes{std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
  if (f.bad()) throw refuse(std::strerror(errno));
  return bytes;
}

}  // namespace fusetune::cli
