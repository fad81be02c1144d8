#include "cli/smoke.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "codegen/compile_target.hpp"
#include "templates/embedded_templates.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant_json.hpp"
#include "common/terminal_text.hpp"
#include "db/database.hpp"
#include "export/export.hpp"
#include "gpu/compiler.hpp"
#include "gpu/device.hpp"
#include "gpu/cudnn_version.hpp"
#include "gpu/driver_api.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"
#include "tune/compile_all.hpp"
#include "tune/db_bridge.hpp"
#include "common/temp_dir.hpp"
#include "protocol/timing_stats.hpp"
#include "trust/provenance.hpp"
#include "trust/record_check.hpp"
#include "tune/tuner.hpp"

namespace fusetune::cli {

namespace {

using Outcome = SmokeCheck::Outcome;

// A stored winner is exported or run only when its record is sound and its code is this
// fusetune's: a database is input, and a CUBIN is code. One from other kernel templates or
// another NVRTC cannot be checked here and is skipped (a re-tune replaces it); one that claims
// this fusetune's templates but whose code differs has been changed, and fails.
struct Refusal {
  Outcome outcome;
  std::string detail;
};
std::optional<Refusal> refusal(const db::WinnerRecord& w) {
  if (std::string why = trust::check_winner(w); !why.empty()) return Refusal{Outcome::failed, "refused: " + why};
  const trust::Provenance prov = trust::check_provenance(w);
  if (prov.verdict == trust::Provenance::Verdict::untraceable)
    return Refusal{Outcome::skipped, prov.why + "; fusetune tune --force re-tunes it"};
  if (!prov.traced()) return Refusal{Outcome::failed, "refused: " + prov.why};
  return std::nullopt;
}

// Tiny problems that together use every op and every reduction.
const std::vector<std::string> kTinySpecs = {
    "conv2d(n=2,c=3,h=8,w=7,k=5,r=3,pad=1) | add(0.1) | sub(param[k]) | rsub(0.5) | mul(param[k]) | div(1.5) | "
    "rdiv(3) | min(2) | max(-2)",
    "conv2d(n=2,c=3,h=8,w=7,k=5,r=3,pad=1) | clamp(-1,1) | relu | leaky_relu | gelu | gelu_tanh | tanh | sigmoid | silu",
    "conv2d(n=2,c=3,h=8,w=7,k=5,r=3,pad=1) | mish | hardswish | hardsigmoid | hardtanh | softplus | exp | abs | neg | "
    "square | sqrt | add(0.5) | log",
    "conv2d(n=2,c=3,h=9,w=7,k=6,r=3,stride=2) | mul(2) | reduce_min(channel) | add(1)",
    "conv2d(n=2,c=3,h=9,w=7,k=6,r=3,dilation=2) | relu | reduce_max(channel) | sigmoid",
    "conv2d(n=1,c=1,h=9,w=7,k=3,r=3,pad=1) | add(param[k]) | reduce_sum(channel) | mul(0.5)",
    "conv2d(n=2,c=4,h=8,w=8,k=7,r=3,in=nhwc) | tanh | reduce_mean(channel) | abs",
};

// Every kernel template on its own, as `nvcc -c` would see it: the headers it includes are
// written next to it so NVRTC finds them with -I.
SmokeCheck compile_templates(const std::string& arch) {
  SmokeCheck c{fmt::format("templates compile for {}", arch), Outcome::passed, ""};
  TempDir dir("fusetune-smoke");
  for (const auto& [name, text] : templates::embedded_templates()) {
    std::ofstream(dir.path() / name) << text;
  }
  int n = 0;
  for (const auto& [name, text] : templates::embedded_templates()) {
    if (name.size() < 3 || name.substr(name.size() - 3) != ".cu") continue;
    gpu::CompileOptions o;
    o.arch = arch;
    o.extra = {"-I" + dir.path().string()};
    const auto r = gpu::compile_cuda(std::string(text), name, o);
    ++n;
    if (!r.ok()) {
      c.outcome = Outcome::failed;
      c.detail = fmt::format("{}: {}", name, r.log.substr(0, 300));
      return c;
    }
  }
  c.detail = fmt::format("{} templates", n);
  return c;
}

SmokeCheck compile_preset(const std::string& preset, const std::string& arch, unsigned jobs) {
  SmokeCheck c{fmt::format("{} variants compile for {}", preset, arch), Outcome::passed, ""};
  const auto problem = spec::parse(*spec::preset_spec(preset));
  const auto limits = *gpu::limits_for_arch(arch);
  tune::CompileAllOptions o;
  o.arch = arch;
  o.jobs = jobs;
  // tune's variants in both math modes: under --math fp32 a candidate may generate other designs
  // (fused-conv's 3xTF32 instead of its TF32 ones); each name is compiled once
  std::vector<codegen::Variant> variants = codegen::generate_variants(problem, limits);
  std::set<std::string> names;
  for (const auto& v : variants) names.insert(v.name);
  codegen::GenerateOptions strict;
  strict.strict_fp32 = true;
  for (auto& v : codegen::generate_variants(problem, limits, strict))
    if (names.insert(v.name).second) variants.push_back(std::move(v));
  const auto results = tune::compile_all(variants, limits, o);
  size_t failed = 0, spilled = 0;
  std::string first;
  for (const auto& r : results) {
    if (r.status != protocol::Status::ok) {
      ++failed;
      if (first.empty()) first = fmt::format("{}: {}", r.variant.name, r.reason);
    }
    spilled += r.compile.spill_stores + r.compile.spill_loads > 0;
  }
  c.detail = fmt::format("{} variants, {} failed, {} spill", results.size(), failed, spilled);
  if (failed) {
    c.outcome = Outcome::failed;
    c.detail += "; first: " + first;
  }
  return c;
}

bool have_nvcc() { return std::system("command -v nvcc >/dev/null 2>&1") == 0; }

// Paired ratios baseline_i / winner_i over the rounds of one interleaved round set: both ran
// back to back in every round, so drift between rounds cancels in each ratio.
struct Paired {
  double median = 0;  // of the ratios
  double noise = 0;   // (q3 - q1) / median of the ratios
  int faster = 0;     // rounds in which the winner was faster
  int rounds = 0;
};

Paired paired(const protocol::TimeFigures& winner, const protocol::TimeFigures& baseline) {
  Paired p;
  std::vector<double> r;
  for (size_t i = 0; i < std::min(winner.samples.size(), baseline.samples.size()); ++i) {
    if (winner.samples[i] <= 0) continue;
    r.push_back(baseline.samples[i] / winner.samples[i]);
    p.faster += winner.samples[i] < baseline.samples[i];
  }
  p.rounds = int(r.size());
  const auto s = protocol::summarize(r);
  p.median = s.median;
  p.noise = s.spread();
  return p;
}

// A stored winner, re-verified and re-timed interleaved with `unfused` in this run. Each
// criterion is named with the figures and the noise it allows for:
//   verifies    under the math mode's rule, on fresh draws: the worker's (worker/input_draws.cpp,
//               reference::verification_draw), the torch.rand-like one and the signed one, with
//               the rel-L2 limit derived from each (reference/l2_model.hpp), as `tune` verifies
//   beats       faster than unfused in at least 3 of 4 interleaved rounds (a winner that is
//               unfused itself: no slower than unfused by more than the noise, at least 10%)
//   holds       its speedup over unfused no lower than the stored one by more than
//               max(15%, 3x this run's noise + the stored spread): drift between runs, not
//               within one, is what this bound allows for
SmokeCheck check_winner(const db::WinnerRecord& w, const std::string& name, const SmokeOptions& opt) {
  protocol::VariantResult stored;
  try {
    stored = tune::injected_from_winner(w);
  } catch (const InputError& e) {
    return SmokeCheck{name, Outcome::skipped, std::string("cannot be run by this fusetune: ") + e.what()};
  }
  stored.variant.name += ".stored";
  if (opt.stale) {
    // TEST-ONLY: recompile with a delay kernel appended to the plan (correct, but slow).
    auto& v = stored.variant;
    v.source += "\n" + std::string(templates::template_source("planted.cu"));
    const gpu::CompileOptions co = codegen::compile_options(v, w.env.arch(), false);
    const auto cr = gpu::compile_cuda(v.source, v.name, co);
    if (!cr.ok()) throw Error(ExitCode::failure, "stale plant did not compile: " + cr.log.substr(0, 200));
    stored.compile.cubin = cr.cubin;
    codegen::KernelStep delay;
    delay.name = "ft_planted_delay";
    // Reads the output and writes nothing: the stored winner stays correct, only slower.
    delay.args = {v.output, v.output, *v.find_buffer("chan")};
    v.plan.push_back(codegen::Step{delay, true});
  }
  tune::TuneOptions o;
  o.worker_exe = opt.worker_exe;
  o.math = parse_math_mode(w.math).value_or(MathMode::tf32);
  o.floors = false;  // the criteria compare with unfused only
  // The cuDNN algorithms it was tuned with, when the record has them: on small problems cuDNN's
  // search picked algorithms 3.5x apart from one process to the next (H200, 2026-11-30), which
  // moved the winner's speedup with it. A winner from another cuDNN version searches again.
  if (!w.conv_choices.empty() && w.env.cudnn == gpu::cudnn_version_string()) {
    try {
      o.conv_choices = protocol::conv_choices_from_json(nlohmann::json::parse(w.conv_choices));
    } catch (const std::exception&) {
      // Unreadable choices: search as a fresh tune would.
    }
  }
  o.quick = true;    // the figures come from the interleaved rounds
  o.injected = {stored};
  o.on_device = [](const nlohmann::json&) {
    tune::TuneDecision d;
    d.only = {"(baselines only)"};  // no generated variant has this name
    return d;
  };
  const auto rep = tune::run_tune(spec::parse(w.canonical), o);
  const auto it = std::find_if(rep.results.begin(), rep.results.end(),
                               [&](const protocol::VariantResult& r) { return r.variant.name == stored.variant.name; });
  if (it == rep.results.end() || it->status != protocol::Status::ok)
    return SmokeCheck{name, Outcome::failed,
                      it == rep.results.end() ? "not run"
                                              : fmt::format("verifies: FAILED ({}: {})", protocol::status_name(it->status), it->reason)};
  if (!rep.unfused) return SmokeCheck{name, Outcome::failed, "the unfused baseline did not verify"};
  const auto& u = rep.results[*rep.unfused].time;
  const auto& t = it->time;
  const Paired p = paired(t, u);
  const std::string verifies = rep.math == MathMode::tf32
                                   ? fmt::format("verifies (tf32 rule on the torch.rand-like and the signed draw, worst "
                                                 "element at {:.2f} of its bound, rel-L2 at {:.2f} of the limit)",
                                                 it->error.worst_ratio,
                                                 it->error.rel_l2_limit > 0 ? it->error.rel_l2 / it->error.rel_l2_limit : 0.0)
                                   : fmt::format("verifies (fp32 rule, max abs error {:.1e})", it->error.max_abs);
  bool beats = false;
  std::string beats_text;
  if (stored.variant.role() == codegen::Role::baseline) {
    const double floor = 1 - std::max(0.10, 3 * p.noise);
    beats = p.median >= floor;
    beats_text = fmt::format("no slower than unfused: {:.2f}x (needs >= {:.2f}x)", p.median, floor);
  } else {
    beats = 4 * p.faster >= 3 * p.rounds && p.rounds > 0;
    beats_text = fmt::format("faster than unfused in {} of {} interleaved rounds (needs 3 in 4)", p.faster, p.rounds);
  }
  const double stored_speedup = w.speedup_vs_unfused();
  const double tol = std::max(0.15, 3 * p.noise + w.time_spread);
  const bool holds = stored_speedup <= 0 || p.median >= stored_speedup * (1 - tol);
  const std::string holds_text = fmt::format(
      "speedup {:.2f}x over unfused {:.3f} ms (paired median, noise {:.1f}%; stored {:.2f}x, must stay >= {:.2f}x)",
      p.median, u.median_ms, 100 * p.noise, stored_speedup, stored_speedup * (1 - tol));
  const bool ok = beats && holds;
  return SmokeCheck{name, ok ? Outcome::passed : Outcome::failed,
                    fmt::format("{}; {}{}; {}{}", verifies, beats_text, beats ? "" : " FAILED", holds_text,
                                holds ? "" : " FAILED")};
}

}  // namespace

std::vector<SmokeCheck> run_smoke(const SmokeOptions& opt) {
  std::vector<SmokeCheck> checks;
  auto add = [&](SmokeCheck c) {
    if (opt.on_check) opt.on_check(c);
    checks.push_back(std::move(c));
  };
  auto guarded = [&](const std::string& name, const std::function<SmokeCheck()>& fn) {
    try {
      add(fn());
    } catch (const std::exception& e) {
      add({name, Outcome::failed, e.what()});
    }
  };

  auto want = [&](const char* group) { return opt.checks.count(group) != 0; };
  // --- GPU-free: templates, variants, database, exports ---------------------------------
  for (const std::string arch : {"sm_80", "sm_90"}) {
    if (!want("compile")) break;
    guarded("templates compile for " + arch, [&] { return compile_templates(arch); });
    for (const auto& preset : spec::preset_names())
      guarded(preset + " variants compile for " + arch, [&] { return compile_preset(preset, arch, opt.jobs); });
  }

  std::optional<db::Database> database;
  guarded("database opens and migrates", [&] {
    database.emplace(db::Database::open(opt.db_path));
    const auto v = database->verify();
    std::string detail = opt.db_path;
    for (const auto& p : v.problems) detail += "; " + p;
    return SmokeCheck{"database opens and migrates", v.ok ? Outcome::passed : Outcome::failed, detail};
  });
  if (!database) return checks;

  if (want("database")) guarded("database dump round-trips", [&] {
    TempDir dir("fusetune-smoke");
    const std::string text = database->dump();
    // Not loading the shipped records: the copy must hold exactly what the dump holds.
    auto copy = db::Database::open((dir.path() / "roundtrip.db").string(), db::OpenOptions{.load_shipped = false});
    copy.import_dump(text);
    const bool same = copy.dump() == text;
    return SmokeCheck{"database dump round-trips", same ? Outcome::passed : Outcome::failed,
                      fmt::format("{} bytes{}", text.size(), same ? "" : ", the re-dump differs")};
  });

  const auto winners = database->winners(std::nullopt, "", std::nullopt);
  std::vector<std::optional<Refusal>> refused;
  if (want("exports") || want("winners"))
    for (const auto& w : winners) refused.push_back(refusal(w));
  const bool nvcc = have_nvcc();
  for (size_t i = 0; i < winners.size(); ++i) {
    if (!want("exports")) break;
    const auto& w = winners[i];
    const std::string name = fmt::format("export of {} {} ({}) compiles", text::excerpt(w.problem_key, 20),
                                         text::excerpt(w.math, 8), text::excerpt(w.env.gpu_name, 60));
    if (refused[i]) {
      add({name, refused[i]->outcome, refused[i]->detail});
      continue;
    }
    if (!nvcc) {
      add({name, Outcome::skipped, "nvcc not on PATH"});
      continue;
    }
    guarded(name, [&] {
      TempDir dir("fusetune-smoke");
      const auto cu = dir.path() / "winner.cu";
      std::ofstream(cu) << exporter::export_cu(spec::parse(w.canonical), w);
      // The target the winner was tuned with (sm_90a for arch-specific variants).
      const std::string arch = codegen::nvcc_arch_flag(
          codegen::variant_from_json(nlohmann::json::parse(w.variant_json)), w.env.arch());
      const std::string cmd = fmt::format("nvcc {} -c {} -o {} > {} 2>&1", arch, cu.string(),
                                          (dir.path() / "winner.o").string(), (dir.path() / "log").string());
      const bool ok = std::system(cmd.c_str()) == 0;
      std::string log;
      if (!ok) std::getline(std::ifstream(dir.path() / "log"), log);
      return SmokeCheck{name, ok ? Outcome::passed : Outcome::failed, ok ? "nvcc -c ok" : log};
    });
  }

  // --- GPU: tiny problems end to end, stored winners re-verified and re-timed ------------
  std::string why;
  if (!gpu::driver_available(&why)) {
    add({"GPU checks", Outcome::skipped, why});
    return checks;
  }
  for (const auto& s : kTinySpecs) {
    if (!want("gpu-tiny")) break;
    guarded("verify " + s, [&] {
      tune::TuneOptions o;
      o.worker_exe = opt.worker_exe;
      o.quick = true;
      o.retime_rounds = 3;
      o.math = MathMode::tf32;
      o.max_variants = 2;
      const auto rep = tune::run_tune(spec::parse(s), o);
      size_t bad = 0, cudnn_owned = 0;
      std::string first, first_cudnn;
      for (const auto& r : rep.results) {
        if (r.status == protocol::Status::ok) continue;
        // cuDNN's own wrong or refused configurations: caught and recorded, as they must be.
        if (cudnn_owned_failure(rep.results, r)) {
          if (cudnn_owned++ == 0) first_cudnn = fmt::format("{}: {}", r.variant.name, protocol::status_name(r.status));
        } else if (bad++ == 0) {
          first = fmt::format("{}: {}", r.variant.name, r.reason);
        }
      }
      const std::string caught =
          cudnn_owned ? fmt::format("; {} cuDNN configuration{} caught (refused or wrong; first {})", cudnn_owned,
                                    cudnn_owned == 1 ? "" : "s", first_cudnn)
                      : "";
      if (!rep.winner) return SmokeCheck{"verify " + s, Outcome::failed, "no verified winner" + caught};
      return SmokeCheck{"verify " + s, bad == 0 ? Outcome::passed : Outcome::failed,
                        bad ? fmt::format("{} of {} failed; first {}{}", bad, rep.results.size(), first, caught)
                            : fmt::format("{} variants verified{}", rep.results.size() - cudnn_owned, caught)};
    });
  }

  const std::string gpu_name = gpu::query_device(0).name;
  for (size_t i = 0; i < winners.size(); ++i) {
    if (!want("winners")) break;
    const auto& w = winners[i];
    if (w.env.gpu_name != gpu_name) continue;
    const std::string name = fmt::format("stored winner {} {} ({})", text::excerpt(w.problem_key, 20),
                                         text::excerpt(w.math, 8), text::excerpt(w.variant_name, 60));
    if (refused[i]) {
      add({name, refused[i]->outcome, refused[i]->detail});
      continue;
    }
    guarded(name, [&] { return check_winner(w, name, opt); });
  }
  return checks;
}

}  // namespace fusetune::cli
