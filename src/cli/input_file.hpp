#pragma once
// Reads a file the user named (a spec file, a dump to import), refusing what is not a readable
// regular file with one line and exit 2: a directory, a missing file, one without read
// permission, a FIFO or a device, or one past its size limit (common/bounded_read.hpp).
#include <cstddef>
#include <string>
#include <string_view>

namespace fusetune::cli {

// A spec file (tune --spec-file, export --spec-file): a model's worth of specs is kilobytes.
inline constexpr size_t kMaxSpecFileBytes = size_t(16) << 20;
// A dump to import: the JSON lines of a database, cubins in base64 included.
inline constexpr size_t kMaxDumpFileBytes = size_t(1) << 30;

// The file's bytes; InputError "cannot read <what> <path>: <why>".
[[nodiscard]] std::string read_input_file(const std::string& path, std::string_view what,
                                          size_t limit = kMaxSpecFileBytes);

}  // namespace fusetune::cli
