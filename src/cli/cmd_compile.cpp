// `fusetune compile`: generate every variant of every generated candidate and compile it with
// NVRTC, in parallel on all cores. Needs no GPU: device limits come from the architecture.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/csv.hpp"
#include "cli/format.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "cli/text_fit.hpp"
#include "cli/validators.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "spec/canonical.hpp"
#include "spec/presets.hpp"
#include "spec/support.hpp"
#include "tune/compile_all.hpp"

namespace fusetune::cli {

void register_compile(CLI::App& app, CompileArgs& args) {
  auto* cmd = app.add_subcommand("compile", "generate and compile every variant with NVRTC (no GPU needed)");
  add_problem_args(cmd, args.problem);
  cmd->add_option("--arch", args.arch, "target architecture, e.g. sm_80, sm_90")->capture_default_str();
  cmd->add_option("--math", args.math, "tf32 | fp32 (fp32 compiles with --fmad=false)")
      ->check(CLI::IsMember({"tf32", "fp32"}))
      ->capture_default_str();
  cmd->add_option("--jobs,-j", args.jobs, "parallel compiles (default: all cores)")->check(integer_in(1, kMaxJobs));
  add_output_args(cmd, args.out, "one row per variant");
  cmd->add_flag("-q,--quiet", args.quiet, "no progress on stderr (errors still go there)");
}

int run_compile(const CompileArgs& args) {
  check_output_args(args.out);
  const spec::Problem problem = spec::resolve_problem(args.problem.spec, args.problem.preset);
  spec::require_tunable(problem);
  const auto limits = gpu::limits_for_arch(args.arch);
  if (!limits) throw InputError(fmt::format("unknown --arch '{}' (known: sm_80, sm_86, sm_89, sm_90, sm_100)", args.arch));

  codegen::GenerateOptions gen;
  gen.problem_text = spec::canonical(problem);
  gen.strict_fp32 = args.math == "fp32";
  const auto variants = codegen::generate_variants(problem, *limits, gen);

  Progress progress("compiling", variants.size(), args.quiet ? ProgressMode::quiet : ProgressMode::automatic);
  tune::CompileAllOptions opts;
  opts.arch = args.arch;
  opts.strict_fp32 = args.math == "fp32";
  opts.jobs = args.jobs;
  opts.on_done = [&](const protocol::VariantResult& r) { progress.step(r.variant.name); };
  const auto results = tune::compile_all(variants, *limits, opts);

  size_t failed = 0;
  for (const auto& r : results) failed += r.status != protocol::Status::ok;

  nlohmann::json j = json_document("compile", args.out);
  j["problem"] = gen.problem_text;
  j["key"] = spec::problem_key(problem);
  j["arch"] = args.arch;
  j["math"] = args.math;
  j["variants"] = nlohmann::json::array();
  CsvWriter csv({"candidate", "design", "name", "params", "status", "reason", "registers", "spills", "smem_bytes",
                 "compile_ms"});
  for (const auto& r : results) {
    const bool compiled = !r.variant.source.empty();
    // Figures only where NVRTC produced code: null for a library step and for a failed compile.
    const bool figures = compiled && r.compile.registers >= 0;
    const auto maybe = [&](auto v) { return figures ? nlohmann::json(v) : nlohmann::json(nullptr); };
    nlohmann::json v;
    v["candidate"] = codegen::candidate_name(r.variant.candidate);
    v["design"] = r.variant.design;
    v["name"] = r.variant.name;
    v["params"] = codegen::params_object(r.variant);
    v["status"] = protocol::status_name(r.status);
    v["reason"] = r.reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.reason);
    v["compiled"] = compiled;  // false: a library step (cuDNN) with no generated code
    v["registers"] = maybe(r.compile.registers);
    v["spill_stores"] = maybe(r.compile.spill_stores);
    v["spill_loads"] = maybe(r.compile.spill_loads);
    v["stack_bytes"] = maybe(r.compile.stack_bytes);
    v["smem_bytes"] = maybe(r.compile.smem_bytes);
    v["compile_ms"] = maybe(r.compile.compile_ms);
    csv.add({std::string(codegen::candidate_name(r.variant.candidate)), r.variant.design, r.variant.name,
             v["params"].dump(), std::string(protocol::status_name(r.status)), r.reason,
             figures ? std::to_string(r.compile.registers) : "",
             figures ? std::to_string(r.compile.spill_stores + r.compile.spill_loads) : "",
             figures ? std::to_string(r.compile.smem_bytes) : "", figures ? fmt::format("{:.1f}", r.compile.compile_ms) : ""});
    j["variants"].push_back(std::move(v));
  }
  j["summary"] = {{"total", results.size()}, {"ok", results.size() - failed}, {"failed", failed}};
  write_outputs(args.out, j, csv.text());
  if (args.out.human_on_stdout()) {
    fmt::print("problem  {}\nkey      {}\narch     {}  math {}\n\n", gen.problem_text, spec::problem_key(problem),
               args.arch, args.math);
    // Names and parameters cut, a failure's reason under the table: one row per line in about
    // 120 columns (issue 42: 177, with layouts as numbers).
    Table t({"candidate", "variant", "parameters", "status", "regs", "spills", "smem", "compile ms"});
    std::vector<std::string> reasons;
    for (const auto& r : results) {
      const bool compiled = !r.variant.source.empty();
      if (r.status != protocol::Status::ok)
        reasons.push_back(fmt::format("{}: {}: {}", r.variant.name, protocol::status_name(r.status), r.reason));
      t.add({std::string(codegen::candidate_name(r.variant.candidate)), cut(r.variant.name, 40),
             cut(params_text(r.variant), 36),
             r.status == protocol::Status::ok ? std::string(compiled ? "ok" : "ok (library)")
                                              : std::string(protocol::status_name(r.status)),
             compiled ? std::to_string(r.compile.registers) : "-",
             compiled ? std::to_string(r.compile.spill_stores + r.compile.spill_loads) : "-",
             compiled ? std::to_string(r.compile.smem_bytes) : "-",
             compiled ? fmt::format("{:.0f}", r.compile.compile_ms) : "-"});
    }
    fmt::print("{}\n{} variants: {} ok, {} failed\n", t.render(), results.size(), results.size() - failed, failed);
    for (const auto& line : reasons) fmt::print("{}", labelled_lines(line, 120));
  }
  return failed ? int(ExitCode::failure) : int(ExitCode::ok);
}

}  // namespace fusetune::cli
