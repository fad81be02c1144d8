#pragma once
// The one check that keeps an output from replacing the tuning database (issue 42): every path
// a command writes (-o, --json, --csv, --junit, a report, a dump, an export) goes through it
// before any work is done. A path is the database when it names the file itself, its -wal or
// -shm, a symbolic or hard link to any of them, or a file not yet made whose folder and name
// resolve to one of them.
#include <string>

namespace fusetune {

// Whether `a` and `b` name the same file: the same device and inode where both exist, else the
// same path once every symbolic link (dangling ones too) is resolved.
[[nodiscard]] bool same_file(const std::string& a, const std::string& b);

// Throws InputError (exit 2) when `output` would write over the database `db_path` or its
// -wal/-shm. "-" (standard output), an empty path and an in-memory database pass.
void refuse_database_output(const std::string& output, const std::string& db_path);

}  // namespace fusetune
