#include "cli/input_file.hpp"

#include "common/bounded_read.hpp"

namespace fusetune::cli {

std::string read_input_file(const std::string& path, std::string_view what, size_t limit) {
  return read_bounded_file(path, what, limit);
}

}  // namespace fusetune::cli
