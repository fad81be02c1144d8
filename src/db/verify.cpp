#include "db/verify.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "db/records.hpp"
#include "db/schema.hpp"
#include "db/sqlite_check.hpp"
#include "db/statement.hpp"

namespace fusetune::db {

namespace {

void check_integrity(const Connection& conn, std::vector<std::string>& problems) {
  Statement s(conn, "PRAGMA integrity_check(20)");  // the first 20 faults are plenty to judge by
  while (s.step())
    if (const std::string line = s.column_text(0); line != "ok") problems.push_back("integrity: " + line);
}

void check_foreign_keys(const Connection& conn, std::vector<std::string>& problems) {
  // Rows: table, rowid, parent table, foreign key index.
  Statement s(conn, "PRAGMA foreign_key_check");
  int shown = 0, count = 0;
  while (s.step()) {
    if (++count > 20) continue;
    ++shown;
    problems.push_back(fmt::format("{} row {} refers to a missing {} row", s.column_text(0), s.column_int64(1),
                                   s.column_text(2)));
  }
  if (count > shown) problems.push_back(fmt::format("... {} more rows with missing parents", count - shown));
}

void check_version(const Connection& conn, std::vector<std::string>& problems) {
  const auto version = conn.query_int64("PRAGMA user_version");
  if (version != kSchemaVersion)
    problems.push_back(fmt::format("schema version {} (expected {})", version, kSchemaVersion));
  const auto app_id = conn.query_int64("PRAGMA application_id");
  if (app_id != kApplicationId)
    problems.push_back(fmt::format("application_id {} (expected {}: not marked as a fusetune database)", app_id,
                                   kApplicationId));
}

void check_tables(const Connection& conn, std::vector<std::string>& problems) {
  const auto actual = tables_of(conn);
  for (const auto& want : current_tables()) {
    const auto it = std::find_if(actual.begin(), actual.end(), [&](const TableInfo& t) { return t.name == want.name; });
    if (it == actual.end()) {
      problems.push_back(fmt::format("table {} is missing", want.name));
      continue;
    }
    for (const auto& col : want.columns) {
      const auto c = std::find_if(it->columns.begin(), it->columns.end(),
                                  [&](const TableInfo::Column& x) { return x.name == col.name; });
      if (c == it->columns.end()) problems.push_back(fmt::format("column {}.{} is missing", want.name, col.name));
      else if (c->type != col.type)
        problems.push_back(fmt::format("column {}.{} is {} (expected {})", want.name, col.name, c->type, col.type));
    }
    for (const auto& col : it->columns)
      if (std::none_of(want.columns.begin(), want.columns.end(), [&](const auto& x) { return x.name == col.name; }))
        problems.push_back(fmt::format("column {}.{} is not in the schema", want.name, col.name));
  }
  for (const auto& t : actual)
    if (std::none_of(current_tables().begin(), current_tables().end(), [&](const auto& x) { return x.name == t.name; }))
      problems.push_back(fmt::format("table {} is not in the schema", t.name));
}

// winner() and top_results() match on the stored fingerprints: one that disagrees with its
// own fields (a hand edit, a format change) would silently orphan or mismatch records.
void check_fingerprints(const Connection& conn, std::vector<std::string>& problems) {
  Statement s(conn,
              "SELECT fingerprint, hardware_fingerprint, gpu_name, cc_major, cc_minor, sm_count, mem_bytes, driver, "
              "cuda_runtime, nvrtc, cudnn, templates_hash FROM environments ORDER BY id");
  while (s.step()) {
    Environment e;
    e.gpu_name = s.column_text(2);
    e.cc_major = s.column_int(3);
    e.cc_minor = s.column_int(4);
    e.sm_count = s.column_int(5);
    e.mem_bytes = s.column_int64(6);
    e.driver = s.column_text(7);
    e.cuda_runtime = s.column_text(8);
    e.nvrtc = s.column_text(9);
    e.cudnn = s.column_text(10);
    e.templates_hash = s.column_text(11);
    if (e.fingerprint() != s.column_text(0) || e.hardware_fingerprint() != s.column_text(1))
      problems.push_back(fmt::format("environment '{}' does not match its own fields", s.column_text(0)));
  }
}

// Every value of the kind its column declares (issue 42: a dump's "time_median_ms":"NaN" went in
// as text, which reads back as 0 ms): numbers in INTEGER and REAL columns (NULL where the schema
// allows it), text in TEXT columns. SQLite's affinity does not enforce this by itself.
void check_value_kinds(const Connection& conn, std::vector<std::string>& problems) {
  for (const auto& table : current_tables()) {
    for (const auto& col : table.columns) {
      std::string allowed;
      if (col.type == "INTEGER") allowed = "'integer', 'null'";
      else if (col.type == "REAL") allowed = "'real', 'integer', 'null'";
      else if (col.type == "TEXT") allowed = "'text', 'null'";
      else continue;
      const auto count = conn.query_int64(fmt::format("SELECT COUNT(*) FROM {} WHERE typeof({}) NOT IN ({})",
                                                      table.name, col.name, allowed));
      if (count > 0)
        problems.push_back(fmt::format("{} value(s) of {}.{} are not of its type {}", count, table.name, col.name,
                                       col.type));
    }
  }
}

}  // namespace

VerifyReport verify_database(const Connection& conn) {
  VerifyReport report;
  // Each check runs even when an earlier one failed or threw: the report lists everything.
  for (auto check : {check_integrity, check_foreign_keys, check_version, check_tables, check_fingerprints,
                     check_value_kinds}) {
    try {
      check(conn, report.problems);
    } catch (const SqliteError& e) {
      // SQLite's words only: the report reaches users (`db verify`, a refused merge), and the
      // call and source location of a check that could not run would mean nothing to them.
      report.problems.push_back("a check could not run: " + e.reason());
    } catch (const std::exception& e) {
      report.problems.push_back(e.what());
    }
  }
  report.ok = report.problems.empty();
  return report;
}

}  // namespace fusetune::db
