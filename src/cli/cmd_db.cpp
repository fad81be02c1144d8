// `fusetune db dump | import | merge | verify`: move results between machines and check a file.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iterator>

#include "cli/commands.hpp"
#include "cli/input_file.hpp"
#include "common/error.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"

namespace fusetune::cli {

void register_db(CLI::App& app, DbArgs& args) {
  auto* cmd = app.add_subcommand("db", "dump, import, merge or verify a tuning database");
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  cmd->require_subcommand(1, 1);
  auto* dump = cmd->add_subcommand("dump", "write every record as JSON lines (lossless; `db import` reads it)");
  dump->add_option("-o,--output", args.file, "file to write (default: stdout)");
  auto* import = cmd->add_subcommand("import", "add the records of a dump");
  import->add_option("file", args.file, "a file written by `db dump`")->required();
  auto* merge = cmd->add_subcommand("merge", "add the records of another database (newer records win)");
  merge->add_option("other", args.file, "another fusetune database")->required();
  auto* verify = cmd->add_subcommand("verify", "check integrity, schema version and tables");
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
  auto database = db::Database::open(path);
  if (action == "dump") {
    const std::string text = database.dump();
    if (args.file.empty() || args.file == "-") {
      fmt::print("{}", text);
    } else {
      std::ofstream f(args.file, std::ios::binary);
      if (!f) throw InputError(fmt::format("cannot write '{}'", args.file));
      f << text;
    }
    return 0;
  }
  if (action == "import") {
    database.import_dump(read_input_file(args.file, "the dump"));
    fmt::print("imported {} into {}\n", args.file, path);
    return 0;
  }
  if (action == "merge") {
    database.merge_from(args.file);
    fmt::print("merged {} into {}\n", args.file, path);
    return 0;
  }
  const auto report = database.verify();
  for (const auto& p : report.problems) fmt::print("problem: {}\n", text::single_line(p));
  fmt::print("{}: {}\n", text::printable(path), report.ok ? "ok" : "FAILED");
  return report.ok ? 0 : int(ExitCode::failure);
}

}  // namespace fusetune::cli
