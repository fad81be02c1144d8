#include "db/dump.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/lines.hpp"
#include "common/terminal_text.hpp"
#include "db/base64.hpp"
#include "db/dump_rules.hpp"
#include "db/shipped_winners.hpp"
#include "db/schema.hpp"
#include "db/sqlite_check.hpp"
#include "db/statement.hpp"
#include "db/transaction.hpp"

namespace fusetune::db {

namespace {

using Json = nlohmann::ordered_json;

// Dump text quoted in a message: short and printable, whatever the line holds.
std::string shown(std::string_view text) { return text::excerpt(text, 40); }

// What kind of JSON value a field had, for a message (never the value itself: it may be huge).
std::string_view kind_of(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "a number";
    case Json::value_t::binary: return "binary";
    case Json::value_t::discarded: return "nothing";
  }
  return "?";
}

// Refuses a line the JSON parser should never see: longer than kMaxDumpLineBytes, or with
// arrays and objects nested deeper than kMaxDumpDepth (nlohmann's parser is iterative, but
// everything that walks the parsed value afterwards recurses). Brackets inside strings do not
// count; the scan follows JSON's string escapes and nothing else, so for a malformed line it
// may stop early, and the parser then names the fault.
void check_line_limits(std::string_view line, size_t line_no) {
  if (line.size() > kMaxDumpLineBytes) {
    throw InputError(fmt::format("dump line {}: longer than {} MiB ({} bytes)", line_no, kMaxDumpLineBytes >> 20,
                                 line.size()));
  }
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDumpDepth)
        throw InputError(fmt::format("dump line {}: nested deeper than {} levels", line_no, kMaxDumpDepth));
    } else if (c == ']' || c == '}') {
      if (--depth < 0) return;  // unbalanced: not JSON, which the parser reports
    }
  }
}

// nlohmann's parse error without its exception tag, with the text it quotes ("last read:
// '...'") cut short: the token it quotes can be the rest of a multi-megabyte line.
std::string parse_error_text(const Json::exception& e) {
  std::string what = e.what();
  if (const size_t tag = what.find("] "); what.starts_with("[json.exception.") && tag != std::string::npos)
    what.erase(0, tag + 2);
  constexpr std::string_view kQuote = "; last read: '";
  if (const size_t q = what.find(kQuote); q != std::string::npos) {
    std::string quoted = what.substr(q + kQuote.size());
    if (quoted.ends_with('\'')) quoted.pop_back();
    what = what.substr(0, q) + "; last read: '" + shown(quoted) + "'";
  }
  return text::excerpt(what, 200);
}

Json value_to_json(const Statement& s, int col) {
  switch (s.column_type(col)) {
    case SQLITE_NULL:
      return nullptr;
    case SQLITE_INTEGER:
      return s.column_int64(col);
    case SQLITE_FLOAT: {
      const double v = s.column_double(col);
      if (std::isinf(v)) return Json{{"real", v > 0 ? "inf" : "-inf"}};
      return v;
    }
    case SQLITE_TEXT: {
      std::string text = s.column_text(col);
      if (text::is_valid_utf8(text)) return text;
      return Json{{"text_base64", base64_encode(text)}};
    }
    default:  // SQLITE_BLOB
      return Json{{"base64", base64_encode(s.column_blob(col))}};
  }
}

std::string dump_table(const Connection& conn, const TableInfo& table) {
  const TableRule& rule = rule_for(table.name);
  std::vector<std::string> fields, selects, joins;
  const auto expr = [&](std::string_view column) -> std::string {
    const auto refs = references();
    for (size_t i = 0; i < refs.size(); ++i)
      if (refs[i].column == column) return fmt::format("r{}.{}", i, refs[i].parent_key);
    return fmt::format("t.{}", column);
  };
  for (const auto& c : table.columns) {
    if (c.name == "id") continue;  // row ids are local to one database
    const Reference* ref = reference_for_column(c.name);
    fields.push_back(std::string(ref ? ref->field : c.name));
    selects.push_back(expr(c.name));
    if (ref) {
      const size_t i = static_cast<size_t>(ref - references().data());
      // LEFT: a row whose parent is missing (a damaged file) dumps with a null reference,
      // which import refuses, instead of silently vanishing from the dump.
      joins.push_back(fmt::format("LEFT JOIN {} AS r{} ON r{}.id = t.{}", ref->parent, i, i, c.name));
    }
  }
  std::vector<std::string> order;
  for (auto k : rule.key) order.push_back(expr(k));
  Statement s(conn, fmt::format("SELECT {} FROM {} AS t {} ORDER BY {}", fmt::join(selects, ", "), table.name,
                                fmt::join(joins, " "), fmt::join(order, ", ")));
  std::string out;
  while (s.step()) {
    Json row;
    row["table"] = table.name;
    for (size_t i = 0; i < fields.size(); ++i) row[fields[i]] = value_to_json(s, static_cast<int>(i));
    out += row.dump();
    out += '\n';
  }
  return out;
}

// Imports dump lines one at a time, reusing a prepared INSERT per (table, field set) and
// remembering parent ids; line_ names the line in messages.
class Importer {
 public:
  Importer(const Connection& conn, const ImportOptions& options) : conn_(conn), options_(options) {}

  void row(size_t line, Json&& j) {
    line_ = line;
    if (!j.is_object() || !j.contains("table") || !j["table"].is_string()) fail("expected an object with a \"table\"");
    const std::string table = j["table"].get<std::string>();
    const TableInfo* info = nullptr;
    for (const auto& t : current_tables())
      if (t.name == table) info = &t;
    if (info == nullptr) fail(fmt::format("unknown table '{}'", shown(table)));
    j.erase("table");
    // Only fusetune's own files make a record "shipped with fusetune": a dump's claim holds only
    // for a winner that one of them holds (a sweep's shard merged back), else it is cleared.
    if (table == "winners" && (options_.mark_shipped || j.contains("shipped")))
      j["shipped"] = options_.mark_shipped || (j["shipped"] == 1 && is_shipped_winner(j)) ? 1 : 0;

    std::vector<std::string> columns;
    for (const auto& [field, value] : j.items()) {
      const Reference* ref = reference_for_field(field);
      const std::string column = ref ? std::string(ref->column) : field;
      const bool known = std::any_of(info->columns.begin(), info->columns.end(),
                                     [&](const TableInfo::Column& c) { return c.name == column; });
      if (!known || column == "id" || (ref == nullptr && reference_for_column(column) != nullptr))
        fail(fmt::format("table '{}' has no field '{}'", table, shown(field)));
      columns.push_back(column);
    }
    Statement& insert = insert_for(table, columns);
    insert.reset();
    insert.clear_bindings();
    int index = 1;
    for (const auto& item : j.items()) {
      // Named copies, not a structured binding: clang before 16 cannot capture a binding in a lambda.
      const std::string& field = item.key();
      const auto& value = item.value();
      if (const Reference* ref = reference_for_field(field)) {
        if (!value.is_string()) fail(fmt::format("'{}' must be a string", field));
        insert.bind(index++, parent_id(*ref, value.get<std::string>()));
      } else {
        const auto col = std::find_if(info->columns.begin(), info->columns.end(),
                                      [&](const TableInfo::Column& c) { return c.name == field; });
        check_kind(field, col->type, value);
        bind_value(insert, index++, field, value);
      }
    }
    try {
      insert.step();
    } catch (const SqliteError& e) {
      // A missing NOT NULL field, a failed CHECK, a value too big: the line is at fault. A
      // read-only file, a full disk, another process's lock is not: that error names the
      // database itself, not a line.
      const int primary = e.primary();
      if (primary == SQLITE_CONSTRAINT || primary == SQLITE_MISMATCH || primary == SQLITE_TOOBIG ||
          primary == SQLITE_RANGE)
        fail(shown_reason(e.reason()));
      throw;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(fmt::format("dump line {}: {}", line_, what));
  }

  static std::string shown_reason(const std::string& reason) { return text::excerpt(reason, 120); }

  int64_t parent_id(const Reference& ref, const std::string& key) {
    const auto cache_key = std::string(ref.parent) + '\n' + key;
    if (auto it = ids_.find(cache_key); it != ids_.end()) return it->second;
    Statement s(conn_, fmt::format("SELECT id FROM {} WHERE {} = ?1", ref.parent, ref.parent_key));
    s.bind(1, key);
    if (!s.step())
      fail(fmt::format("{} '{}' is neither in the database nor on an earlier line", ref.parent, shown(key)));
    return ids_[cache_key] = s.column_int64(0);
  }

  // A value of the kind its column declares, as fusetune dumps it (value_to_json): a number
  // is a JSON number in an INTEGER or REAL column (an integer in INTEGER), a string is text in
  // a TEXT column. SQLite's affinity would store "time_median_ms":"NaN" as text, which reads
  // back as 0 ms. Objects and arrays are bind_value's to judge.
  void check_kind(const std::string& field, const std::string& type, const Json& v) const {
    const bool numeric = type == "INTEGER" || type == "REAL";
    if ((numeric && (v.is_string() || v.is_boolean())) || (type == "INTEGER" && v.is_number_float()))
      fail(fmt::format("'{}' has a value of the wrong kind: {} ({} column: a JSON number{})", field, kind_of(v), type,
                       type == "INTEGER" ? " without a fraction" : ""));
    if (type == "TEXT" && (v.is_number() || v.is_boolean()))
      fail(fmt::format("'{}' has a value of the wrong kind: {} (TEXT column: a string)", field, kind_of(v)));
  }

  void bind_value(Statement& s, int index, const std::string& field, const Json& v) {
    if (v.is_null()) {
      s.bind_null(index);
    } else if (v.is_number_unsigned()) {
      if (v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())) fail(fmt::format("'{}' is too large", field));
      s.bind(index, v.get<int64_t>());
    } else if (v.is_number_integer()) {
      s.bind(index, v.get<int64_t>());
    } else if (v.is_number_float()) {
      s.bind(index, v.get<double>());
    } else if (v.is_string()) {
      s.bind(index, v.get_ref<const std::string&>());
    } else if (v.is_object() && v.size() == 1 && v.begin().value().is_string()) {
      const std::string& text = v.begin().value().get_ref<const std::string&>();
      const std::string& kind = v.begin().key();
      if (kind == "base64" || kind == "text_base64") {
        auto bytes = base64_decode(text);
        if (!bytes) fail(fmt::format("'{}' is not valid base64", field));
        if (kind == "base64") s.bind_blob(index, *bytes);
        else s.bind(index, *bytes);
      } else if (kind == "real" && (text == "inf" || text == "-inf")) {
        s.bind(index, text == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
      } else {
        fail(fmt::format("'{}' has an unknown encoding '{}'", field, shown(kind)));
      }
    } else {
      fail(fmt::format("'{}' has a value of the wrong kind: {}", field, kind_of(v)));
    }
  }

  Statement& insert_for(const std::string& table, const std::vector<std::string>& columns) {
    const std::string cache_key = fmt::format("{}({})", table, fmt::join(columns, ","));
    if (auto it = inserts_.find(cache_key); it != inserts_.end()) return it->second;
    const TableRule& rule = rule_for(table);
    std::vector<std::string> params, updates;
    for (size_t i = 0; i < columns.size(); ++i) {
      params.push_back(fmt::format("?{}", i + 1));
      if (std::find(rule.key.begin(), rule.key.end(), columns[i]) == rule.key.end())
        updates.push_back(fmt::format("{0} = excluded.{0}", columns[i]));
    }
    std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) ", table, fmt::join(columns, ", "),
                                  fmt::join(params, ", "), fmt::join(rule.key, ", "));
    if (rule.replace_when.empty() || updates.empty()) {
      sql += "DO NOTHING";
    } else {
      sql += fmt::format("DO UPDATE SET {} WHERE {}", fmt::join(updates, ", "), rule.replace_when);
    }
    return inserts_.emplace(cache_key, Statement(conn_, sql)).first->second;
  }

  const Connection& conn_;
  const ImportOptions& options_;
  size_t line_ = 0;
  std::map<std::string, Statement> inserts_;
  std::map<std::string, int64_t> ids_;
};

}  // namespace

std::string dump_database(const Connection& conn) {
  std::optional<Transaction> snapshot;
  if (sqlite3_get_autocommit(conn.get()) != 0) snapshot.emplace(conn, Transaction::Kind::deferred);
  Json header;
  header["fusetune_dump"] = kDumpFormat;
  header["schema_version"] = conn.query_int64("PRAGMA user_version");
  std::string out = header.dump() + '\n';
  for (const auto& table : current_tables()) out += dump_table(conn, table);
  if (snapshot) snapshot->commit();
  return out;
}

void import_dump(const Connection& conn, std::string_view text, const ImportOptions& options) {
  Importer importer(conn, options);
  bool header_seen = false;
  for_each_line(text, [&](size_t line_no, std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    check_line_limits(line, line_no);
    Json j;
    try {
      j = Json::parse(line);
    } catch (const Json::exception& e) {
      // parse_error, and out_of_range for a number past a double's range (1e4845): both the line's.
      throw InputError(fmt::format("dump line {}: not JSON ({})", line_no, parse_error_text(e)));
    }
    if (!header_seen) {
      const auto number = [&](const char* name) {
        return j.is_object() && j.contains(name) && j[name].is_number_integer() ? j[name].get<int64_t>() : -1;
      };
      if (number("fusetune_dump") != kDumpFormat || number("schema_version") < 0)
        throw InputError(fmt::format("dump line {}: not a fusetune dump (expected {{\"fusetune_dump\":{},...}})",
                                     line_no, kDumpFormat));
      const int64_t version = number("schema_version");
      if (version > kSchemaVersion)
        throw InputError(fmt::format("the dump has schema version {}, newer than this fusetune reads ({})", version,
                                     kSchemaVersion));
      header_seen = true;
      return;
    }
    importer.row(line_no, std::move(j));
  });
  if (!header_seen) throw InputError("the dump is empty (no {\"fusetune_dump\":...} line)");
}

}  // namespace fusetune::db
