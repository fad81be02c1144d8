#pragma once
// Reads a file the user named (a dump to import), refusing what is not a readable regular
// file with one line and exit 2: a directory, a missing file, one without read permission.
// (std::ifstream opens a directory on Linux and then reads nothing, which looked like an
// empty dump.)
#include <string>
#include <string_view>

namespace fusetune::cli {

// The file's bytes; InputError "cannot read <what> <path>: <why>".
[[nodiscard]] std::string read_input_file(const std::string& path, std::string_view what);

}  // namespace fusetune::cli
