// `fusetune export`: the stored winner as something to ship: a standalone .cu, PTX, CUBIN, a
// PyTorch module (`torch`, or `kernelbench`: the same with KernelBench's ModelNew), or for a spec
// file from `fusetune from-torch`, a module that patches the model's blocks (`torch-patch`).
// Needs no GPU: everything comes from the database.
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
#include "cli/input_file.hpp"
#include "export/patch_spec.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"

namespace fusetune::cli {

void register_export(CLI::App& app, ExportArgs& args) {
  auto* cmd = app.add_subcommand("export", "write the stored winner as .cu, PTX, CUBIN or a PyTorch module");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--format", args.format, "cu | ptx | cubin | torch | kernelbench | torch-patch")
      ->required()
      ->check(CLI::IsMember({"cu", "ptx", "cubin", "torch", "kernelbench", "torch-patch"}));
  cmd->add_option("--spec-file", args.spec_file,
                  "torch-patch: the spec file `fusetune from-torch` wrote for the model (every block's winner must "
                  "be stored)");
  cmd->add_option("-o,--output", args.output, "file to write (default: stdout)");
  cmd->add_option("--gpu", args.gpu, "winner measured on a GPU whose name contains this text");
  cmd->add_option("--math", args.math, "tf32 | fp32")->check(CLI::IsMember({"tf32", "fp32"}))->capture_default_str();
  cmd->add_option("--db", args.db, "tuning database (default: $FUSETUNE_DB, else $XDG_CACHE_HOME/fusetune/tuning.db)");
  cmd->add_flag("--trust", args.trust,
                "export a winner whose generated code this fusetune cannot trace to itself (README: \"Untrusted "
                "records\")");
}

namespace {

// The newest stored winner for `problem`, checked: the database is input like any other, so the
// record must be sound and its code what this fusetune generates (or the user says they trust
// it) before it becomes a file to compile or load.
db::WinnerRecord checked_winner(db::Database& database, const std::string& path, const spec::Problem& problem,
                                const ExportArgs& args) {
  // Newest first: a measured winner replaces a shipped one for the same environment.
  const auto winners = database.winners(spec::problem_key(problem), args.gpu, args.math);
  if (winners.empty())
    throw NotFoundError(fmt::format("no {} winner stored for {}{} in {}", args.math, spec::canonical(problem),
                                    args.gpu.empty() ? "" : " on a GPU matching '" + args.gpu + "'", path));
  const auto& w = winners.front();
  std::string why = trust::check_winner(w);
  if (why.empty() && !args.trust) {
    const trust::Provenance prov = trust::check_provenance(w);
    if (!prov.traced()) why = prov.why + " (--trust exports it anyway)";
  }
  if (!why.empty()) throw InputError(fmt::format("the stored winner for {} is refused: {}", spec::canonical(problem), why));
  return w;
}

}  // namespace

int run_export(const ExportArgs& args) {
  const bool patch = args.format == "torch-patch";
  if (patch != args.spec_file.has_value())
    throw InputError(patch ? "--format torch-patch needs --spec-file FILE (written by fusetune from-torch)"
                           : "--spec-file is for --format torch-patch; the other formats export one problem");
  if (patch && (args.problem.spec || args.problem.preset))
    throw InputError("--format torch-patch takes its problems from --spec-file, not a SPEC or --preset");
  const std::string path = args.db.empty() ? db::default_db_path() : args.db;
  std::string text;
  db::WinnerRecord w;
  if (patch) {
    const auto specs = exporter::read_patch_spec(read_input_file(*args.spec_file, "the spec file"), *args.spec_file);
    auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
    std::vector<exporter::PatchBlock> blocks;
    for (const auto& s : specs)
      blocks.push_back({s.listed.line, s.listed.problem, checked_winner(database, path, s.listed.problem, args),
                        s.block_json});
    text = exporter::export_torch_patch(blocks, *args.spec_file);
    if (args.output.empty() || args.output == "-") {
      write_stdout(text);
    } else {
      write_output_file(args.output, text);
      fmt::print(stderr, "fusetune: wrote {} ({} bytes): {} block(s) of {}\n", text::printable(args.output),
                 text.size(), blocks.size(), text::printable(*args.spec_file));
    }
    return 0;
  }
  const auto problem = spec::resolve_problem(args.problem.spec, args.problem.preset);
  auto database = db::Database::open(path, db::OpenOptions{.read_only = true});
  w = checked_winner(database, path, problem, args);

  if (args.format == "cu") text = exporter::export_cu(problem, w);
  else if (args.format == "ptx") text = exporter::export_ptx(problem, w);
  else if (args.format == "cubin") text = exporter::export_cubin(problem, w);
  else if (args.format == "kernelbench") text = exporter::export_torch(problem, w, exporter::TorchFlavor::kernelbench);
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
