#include "db/schema.hpp"

#include <cctype>

#include <fmt/format.h>

#include "db/embedded_db_files.hpp"
#include "db/statement.hpp"

namespace fusetune::db {

std::string_view schema_sql() { return embedded_db_files().at("schema.sql"); }

std::string normalize_schema_sql(std::string_view sql) {
  std::string out;
  bool pending_space = false;
  for (size_t i = 0; i < sql.size(); ++i) {
    const char c = sql[i];
    if (c == '\'') {  // a string literal: copied verbatim, '' is an escaped quote
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      const size_t end = sql.find('\'', i + 1);
      const size_t stop = end == std::string_view::npos ? sql.size() : end + 1;
      out.append(sql.substr(i, stop - i));
      i = stop - 1;
    } else if (c == '-' && i + 1 < sql.size() && sql[i + 1] == '-') {
      const size_t eol = sql.find('\n', i);
      i = eol == std::string_view::npos ? sql.size() : eol;
      pending_space = true;
    } else if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      pending_space = true;
    } else {
      if (pending_space && !out.empty()) out += ' ';
      pending_space = false;
      out += c;
    }
  }
  return out;
}

void create_schema(const Connection& conn) {
  conn.exec(schema_sql());
  conn.exec(fmt::format("PRAGMA application_id = {}; PRAGMA user_version = {}", kApplicationId, kSchemaVersion));
}

std::vector<TableInfo> tables_of(const Connection& conn) {
  std::vector<TableInfo> tables;
  // rowid order is creation order; sqlite_* are SQLite's own tables.
  Statement list(conn,
                 "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                 "ORDER BY rowid");
  while (list.step()) tables.push_back(TableInfo{list.column_text(0), {}});
  for (auto& t : tables) {
    Statement cols(conn, "SELECT name, type FROM pragma_table_info(?1) ORDER BY cid");
    cols.bind(1, t.name);
    while (cols.step()) t.columns.push_back({cols.column_text(0), cols.column_text(1)});
  }
  return tables;
}

const std::vector<TableInfo>& current_tables() {
  static const std::vector<TableInfo> kTables = [] {
    const Connection mem = Connection::open(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    create_schema(mem);
    return tables_of(mem);
  }();
  return kTables;
}

}  // namespace fusetune::db
