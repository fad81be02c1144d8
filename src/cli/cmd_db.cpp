// `fusetune db dump | import | merge | verify`: move results between machines and check a file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "cli/output_args.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/output_guard.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "trust/database_check.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::cli {

void register_db(CLI::App& app, DbArgs& args) {
  auto* cmd = app.add_subcommand("db", "dump, import, merge or verify a tuning database");
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  cmd->require_subcommand(1, 1);
  auto* dump = cmd->add_subcommand("dump", "write every record as JSON lines (lossless; `db import` reads it)");
  add_output_option(dump, args.file, "the dump", "standard output");
  auto* import = cmd->add_subcommand("import", "add the records of a dump");
  import->add_option("file", args.file, "a file written by `db dump`")->required();
  auto* merge = cmd->add_subcommand("merge", "add the records of other databases, e.g. a sweep's shards (newer records win)");
  merge->add_option("other", args.others, "other fusetune databases (read only, never changed)")->required();
  for (auto* sub : {import, merge})
    sub->add_flag("--trust", args.trust,
                  "keep winners whose generated code this fusetune cannot trace to itself (docs/database.md: \"Untrusted "
                  "records\")");
  auto* verify = cmd->add_subcommand("verify", "check integrity, schema version, tables and every record");
  for (auto* sub : {dump, import, merge, verify}) sub->add_option("--db", args.db, "tuning database");
  args.action = [cmd]() -> std::string {
    for (const char* name : {"dump", "import", "merge", "verify"})
      if (cmd->got_subcommand(name)) return name;
    return "";
  };
}

int run_db(const DbArgs& args) {
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  const std::string action = args.action ? args.action() : "";
  // Before the database is opened (which may create it): a dump never replaces it, and a file
  // to merge that is the database itself is refused before seconds of record checks.
  if (action == "dump") refuse_database_output(args.file, path);
  if (action == "merge")
    for (const auto& other : args.others)
      if (same_file(other, path))
        throw InputError(fmt::format("database to merge {}: it is the database itself", text::printable(other)));
  // dump and verify only read: a database in a read-only folder still serves them.
  auto database = db::Database::open(path, db::OpenOptions{.read_only = action == "dump" || action == "verify"});
  if (action == "dump") {
    write_output_file(args.file.empty() ? "-" : args.file, database.dump());
    return 0;
  }
  if (action == "import") {
    const std::string text = read_input_file(args.file, "the dump", kMaxDumpFileBytes);
    // Staged in memory and checked whole first: a refused dump leaves the database as it was.
    auto staged = db::Database::open(":memory:", db::OpenOptions{.load_shipped = false});
    staged.import_dump(text);
    if (std::string why = trust::check_records(staged, !args.trust); !why.empty())
      throw InputError(fmt::format("{}: refused: {}", text::printable(args.file), why));
    database.import_dump(text);
    fmt::print("imported {} into {}\n", args.file, path);
    return 0;
  }
  if (action == "merge") {
    // Every file checked before any is merged: a refused one leaves the database as it was.
    for (const auto& other : args.others) {
      if (!std::filesystem::exists(other)) throw InputError(fmt::format("database to merge {}: no such file", other));
      const auto db = db::Database::open(other, db::OpenOptions{.load_shipped = false, .read_only = true});
      if (std::string why = trust::check_records(db, !args.trust); !why.empty())
        throw InputError(fmt::format("database to merge {}: refused: {}", other, why));
    }
    database.merge_from(args.others);
    for (const auto& other : args.others) fmt::print("merged {} into {}\n", other, path);
    return 0;
  }
  auto report = database.verify();
  if (report.ok) {
    // The records themselves, as import would check them: a record that is malformed, or whose
    // code claims this fusetune's templates but differs from what it generates, fails; code from
    // other templates or another NVRTC is only noted (it is what an upgrade leaves behind).
    if (std::string why = trust::check_records(database, false); !why.empty()) report.problems.push_back(why);
    for (const auto& w : database.winners(std::nullopt, "", std::nullopt)) {
      if (!trust::check_winner(w).empty()) continue;
      const trust::Provenance prov = trust::check_provenance(w);
      if (prov.traced()) continue;
      const std::string line = fmt::format("winner {} {} {}: {}", text::excerpt(w.problem_key, 20),
                                           text::excerpt(w.math, 8), text::excerpt(w.variant_name, 60), prov.why);
      if (prov.verdict == trust::Provenance::Verdict::forged)
        report.problems.push_back(line);
      else
        fmt::print("note: {}\n", line);
    }
    report.ok = report.problems.empty();
  }
  for (const auto& p : report.problems) fmt::print("problem: {}\n", text::single_line(p));
  fmt::print("{}: {}\n", text::printable(path), report.ok ? "ok" : "FAILED");
  return report.ok ? 0 : int(ExitCode::failure);
}

}  // namespace fusetune::cli
