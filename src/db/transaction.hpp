#pragma once
// A write transaction: BEGIN IMMEDIATE on construction, ROLLBACK on destruction unless
// commit() ran. IMMEDIATE takes the write lock up front (waiting up to the busy timeout),
// so two writers never both hold read snapshots they then try to upgrade, which in WAL
// mode fails at once with SQLITE_BUSY instead of waiting. Deferred (a read snapshot)
// serves readers that need several statements to see one state, such as dump().
#include "db/connection.hpp"

namespace fusetune::db {

class Transaction {
 public:
  enum class Kind { immediate, deferred };
  explicit Transaction(const Connection& conn, Kind kind = Kind::immediate);
  ~Transaction();  // never throws
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  Transaction(Transaction&&) = delete;
  Transaction& operator=(Transaction&&) = delete;

  void commit();

 private:
  const Connection& conn_;
  bool done_ = false;
};

}  // namespace fusetune::db
