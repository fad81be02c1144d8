#include "db/transaction.hpp"

#include "db/sqlite_check.hpp"

namespace fusetune::db {

Transaction::Transaction(const Connection& conn, Kind kind) : conn_(conn) {
  conn_.exec(kind == Kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
}

Transaction::~Transaction() {
  // Some errors (SQLITE_FULL, SQLITE_IOERR, ...) end the transaction inside SQLite already;
  // a ROLLBACK then would only fail with "no transaction is active".
  if (!done_ && sqlite3_get_autocommit(conn_.get()) == 0) {
    FT_SQLITE_CALL_NOEXCEPT(conn_.get(), sqlite3_exec(conn_.get(), "ROLLBACK", nullptr, nullptr, nullptr));
  }
}

void Transaction::commit() {
  conn_.exec("COMMIT");
  done_ = true;
}

}  // namespace fusetune::db
