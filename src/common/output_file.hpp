#pragma once
// Writing what fusetune produces (dumps, exports, JSON reports) so that a failed write is never
// silent and never leaves a partial file behind:
//   - a regular file (or a new one) is written to a temporary file in the same folder, flushed,
//     fsync'ed and closed with every result checked, then renamed over the target: the old file
//     stays untouched until the new one is complete;
//   - a target that exists and is not a regular file (/dev/stdout, a pipe, /dev/full) is written
//     to directly, every byte checked: fusetune never replaces something it did not create;
//   - "-" means standard output.
// Any failure is an Error with exit code 1 and one line naming the path and the system's words.
#include <string>
#include <string_view>

namespace fusetune {

void write_output_file(const std::string& path, std::string_view bytes);

// Writes to standard output, checking the result (a full disk or a closed pipe behind stdout).
void write_stdout(std::string_view bytes);

// Flushes standard output and reports whether everything written to it arrived ("" when it
// did, else the reason): main() turns a failure into exit 1, so `fusetune query > /dev/full`
// does not succeed silently.
[[nodiscard]] std::string finish_stdout();

}  // namespace fusetune
