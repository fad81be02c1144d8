#pragma once
// Every record of a database checked at once (trust/record_check.hpp), and every winner's code
// traced to this fusetune (trust/provenance.hpp) unless the user trusts it: what `db import`
// and `db merge` apply to incoming records, staged in memory before anything reaches the
// user's database.
#include <string>

#include "db/database.hpp"

namespace fusetune::trust {

// "" when every record passes; else one line naming the first record that does not and why.
// check_code: also require each winner's code to be this fusetune's (check_provenance).
[[nodiscard]] std::string check_records(const db::Database& db, bool check_code);

}  // namespace fusetune::trust
