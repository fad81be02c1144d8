// `fusetune report`: the database's results for one problem as one self-contained HTML page
// (report/html_report.hpp): every variant against the baseline and the floors.
#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/output_args.hpp"
#include "cli/tune_table.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/output_guard.hpp"
#include "common/terminal_text.hpp"
#include "db/clock.hpp"
#include "db/database.hpp"
#include "report/html_report.hpp"
#include "report/report_data.hpp"
#include "spec/presets.hpp"

namespace fusetune::cli {

void register_report(CLI::App& app, ReportArgs& args) {
  auto* cmd = app.add_subcommand("report", "write an HTML page with plots of every stored variant against the floors");
  add_problem_args(cmd, args.problem);
  add_output_option(cmd, args.output, "the HTML page", args.output);
  cmd->add_option("--math", args.math, "tf32 | fp32")->check(CLI::IsMember({"tf32", "fp32"}))->capture_default_str();
  cmd->add_option("--gpu", args.gpu, "only environments whose GPU name contains this text");
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
}

int run_report(const ReportArgs& args) {
  const auto problem = spec::resolve_problem(args.problem.spec, args.problem.preset);
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  refuse_database_output(args.output, path);  // before any work: a report never replaces the database
  const auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
  const report::ReportData data = report::gather_report(database, problem, args.math, args.gpu);
  const std::string html = report::render_html(
      data, report::PageOptions{.version = FUSETUNE_VERSION, .generated_at = db::utc_now_iso8601(), .param_label = param_display});
  write_output_file(args.output, html);
  // On stderr, as export says it: stdout carries results only (here the page, with -o -).
  if (!is_stdout(args.output))
    fmt::print(stderr, "fusetune: wrote {} ({} KiB): {} {} results for {} on {}\n", text::printable(args.output),
               (html.size() + 1023) / 1024, data.results.size(), data.math, data.key,
               text::printable(data.env ? data.env->gpu_name : std::string("an unknown GPU")));
  return 0;
}

}  // namespace fusetune::cli
