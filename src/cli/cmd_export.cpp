// `fusetune export`: the stored winner as something to ship: a standalone .cu, PTX, CUBIN or
// a PyTorch module. Needs no GPU: everything comes from the database.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>

#include "cli/commands.hpp"
#include "common/error.hpp"
#include "common/output_file.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "export/export.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::cli {

void register_export(CLI::App& app, ExportArgs& args) {
  auto* cmd = app.add_subcommand("export", "write the stored winner as .cu, PTX, CUBIN or a PyTorch module");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--format", args.format, "cu | ptx | cubin | torch")
      ->required()
      ->check(CLI::IsMember({"cu", "ptx", "cubin", "torch"}));
  cmd->add_option("-o,--output", args.output, "file to write (default: stdout)");
  cmd->add_option("--gpu", args.gpu, "winner measured on a GPU whose name contains this text");
  cmd->add_option("--math", args.math, "tf32 | fp32")->check(CLI::IsMember({"tf32", "fp32"}))->capture_default_str();
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  cmd->add_flag("--trust", args.trust,
                "export a winner whose generated code this fusetune cannot trace to itself (README: \"Untrusted "
                "records\")");
}

int run_export(const ExportArgs& args) {
  const auto problem = spec::resolve_problem(args.problem.spec, args.problem.preset);
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
  // Newest first: a measured winner replaces a shipped one for the same environment.
  const auto winners = database.winners(spec::problem_key(problem), args.gpu, args.math);
  if (winners.empty())
    throw NotFoundError(fmt::format("no {} winner stored for {}{} in {}", args.math, spec::canonical(problem),
                                    args.gpu.empty() ? "" : " on a GPU matching '" + args.gpu + "'", path));
  const auto& w = winners.front();
  // The database is input like any other: the record is checked, and its code must be what this
  // fusetune generates (or the user says they trust it) before it becomes a file to compile.
  std::string why = trust::check_winner(w);
  if (why.empty() && !args.trust) {
    const trust::Provenance prov = trust::check_provenance(w);
    if (!prov.traced()) why = prov.why + " (--trust exports it anyway)";
  }
  if (!why.empty()) throw InputError(fmt::format("the stored winner for {} is refused: {}", spec::canonical(problem), why));

  std::string text;
  if (args.format == "cu") text = exporter::export_cu(problem, w);
  else if (args.format == "ptx") text = exporter::export_ptx(problem, w);
  else if (args.format == "cubin") text = exporter::export_cubin(problem, w);
  else text = exporter::export_torch(problem, w);

  if (args.output.empty() || args.output == "-") {
    write_stdout(text);
  } else {
    write_output_file(args.output, text);
    fmt::print(stderr, "fusetune: wrote {} ({} bytes): {} measured on {} ({} ms, {:.2f}x vs unfused)\n",
               text::printable(args.output), text.size(), text::printable(w.variant_name),
               text::printable(w.env.gpu_name), w.time_median_ms, w.speedup_vs_unfused());
  }
  return 0;
}

}  // namespace fusetune::cli
