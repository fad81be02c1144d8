#pragma once
// Reads a file the user named (a spec list, a dump), refusing with one line and exit 2 what
// could never be one: a missing file, a directory, a FIFO or a device (/dev/zero never ends,
// a FIFO without a writer never answers), or one past `limit` bytes. The limit is enforced
// while reading (at most limit + 1 bytes are read), so a file that grows, or one that lies
// about its size (/proc), cannot make fusetune hold more than that.
#include <cstddef>
#include <string>
#include <string_view>

namespace fusetune {

// The file's bytes; InputError "cannot read <what> <path>: <why>". `what` names the file's
// role ("the dump", "the spec file") in messages.
[[nodiscard]] std::string read_bounded_file(const std::string& path, std::string_view what, size_t limit);

}  // namespace fusetune
