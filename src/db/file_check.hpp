#pragma once
// Looks at a database file before anything opens it for writing, so that a file that is
// not ours (random bytes, someone else's SQLite database, a newer fusetune's database, a
// damaged one) is refused with one clear line and never modified.
#include <string>

namespace fusetune::db {

struct FileCheck {
  bool fresh = false;  // missing, empty, or an SQLite file without tables: gets the schema
  int version = 0;     // user_version of one of ours (1..kSchemaVersion)
  bool empty_file = false;  // a file of zero bytes (fresh too): Database::open refuses it
};

// Throws InputError (exit 2) naming the file and the fault. Opens the file read-only, if at
// all. `role` names the file in messages: "tuning database", "database to merge".
FileCheck check_database_file(const std::string& path, const std::string& role = "tuning database");

}  // namespace fusetune::db
