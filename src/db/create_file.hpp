#pragma once
// Creating a database file so that nobody ever sees it half-made: it is built under a temporary
// name in the same folder (schema, shipped records, WAL checkpointed on close) and then linked
// to its name, which fails rather than replace a file another process made meanwhile. A kill
// at any point leaves either no file at the name or a complete database, never the empty file
// SQLite makes when it opens a new path (issue 42: such a file, or one a full disk left, was
// taken for a new database by the next command, and so was anyone's empty file).
#include <functional>
#include <string>

#include "db/connection.hpp"

namespace fusetune::db {

// Builds `path` with `fill` (run on a read-write connection to the temporary file). Returns
// false when another process created `path` first (its file is kept, this one discarded).
// Throws SqliteError from `fill`, InputError when the folder refuses the temporary file.
bool create_database_file(const std::string& path, const std::function<void(const Connection&)>& fill);

}  // namespace fusetune::db
