#include "export/summary.hpp"

#include <fmt/format.h>

#include "codegen/candidates.hpp"
#include "export/winner.hpp"
#include "spec/canonical.hpp"

#ifndef FUSETUNE_VERSION
#define FUSETUNE_VERSION "dev"
#endif

namespace fusetune::exporter {
namespace {

std::string or_unknown(const std::string& s) { return s.empty() ? "?" : one_line(s); }

std::string params_text(const codegen::Variant& v) {
  if (v.params.empty()) return "(none)";
  std::string out;
  for (const auto& [name, value] : v.params) out += fmt::format("{}{}={}", out.empty() ? "" : " ", name, value);
  return out;
}

// "2.75x faster than unfused (4.618 ms: ...)": a baseline that was not timed says so.
std::string versus(double speedup, double baseline_ms, const std::string& name, const std::string& what) {
  if (baseline_ms <= 0 || speedup <= 0) return fmt::format("vs {}: not measured", name);
  return fmt::format("vs {}: {:.2f}x ({} {:.3f} ms: {})", name, speedup, name, baseline_ms, what);
}

// NVRTC's options as stored, without the tuning machine's -I paths (they say nothing here).
std::string options_text(const std::string& options) {
  std::string out;
  size_t pos = 0;
  while (pos < options.size()) {
    const size_t end = std::min(options.find(' ', pos), options.size());
    const std::string opt = options.substr(pos, end - pos);
    if (!opt.empty() && !opt.starts_with("-I")) out += (out.empty() ? "" : " ") + opt;
    pos = end + 1;
  }
  return out.empty() ? "(not recorded)" : one_line(out);
}

}  // namespace

std::vector<std::string> summary_lines(const spec::Problem& problem, const db::WinnerRecord& w,
                                       const codegen::Variant& v) {
  const db::Environment& e = w.env;
  std::vector<std::string> lines;
  // A version-2 plan's main operator is any kind (cuBLASLt's GEMM or cuDNN's N-d conv when tuned).
  const bool model = v.model_plan();
  const char* main_op = model ? "main operator" : "conv";
  lines.push_back(fmt::format("fusetune export of the tuned winner for one {} + epilogue problem", main_op));
  lines.emplace_back("");
  lines.push_back("problem:   " + spec::canonical(problem));
  lines.push_back("key:       " + spec::problem_key(problem));
  // A fused-conv winner computes the conv in its own kernel: no cuDNN conv runs, and its fp32
  // mode is 3xTF32 (fp32 accuracy from TF32 tensor cores), not IEEE fp32 products (issue 42).
  const bool own_conv = codegen::candidate_info(v.candidate).own_conv;
  const char* math_words = w.math == "fp32" ? (own_conv ? "3xTF32 in the fused conv kernel: fp32 accuracy from TF32 "
                                                          "tensor cores, each product split in two TF32 parts"
                                                        : "strict IEEE fp32 products")
                                            : (own_conv ? "TF32 tensor cores in the fused conv kernel"
                                               : model  ? "TF32 tensor cores in the main operator"
                                                        : "TF32 tensor cores in the cuDNN conv");
  lines.push_back(fmt::format("math:      {} ({})", or_unknown(w.math), math_words));
  lines.push_back(fmt::format("GPU:       {} ({}, {} SMs)", or_unknown(e.gpu_name), e.arch(), e.sm_count));
  lines.push_back(fmt::format("software:  driver {} (CUDA), CUDA runtime {}, NVRTC {}, cuDNN {}", or_unknown(e.driver),
                              or_unknown(e.cuda_runtime), or_unknown(e.nvrtc), or_unknown(e.cudnn)));
  lines.push_back(fmt::format("winner:    {} (candidate {})", one_line(v.name), codegen::candidate_name(v.candidate)));
  lines.push_back("params:    " + one_line(params_text(v)));
  lines.push_back(fmt::format("time:      {:.3f} ms median for the whole plan ({}), spread {:.1f}%", w.time_median_ms,
                              own_conv ? "the conv is in it: no cuDNN runs"
                              : model  ? "the main operator included"
                                       : "cuDNN conv included",
                              100.0 * w.time_spread));
  lines.push_back(versus(w.speedup_vs_unfused(), w.unfused_median_ms, "unfused",
                         fmt::format("the vendor's {}, then one kernel per op, as PyTorch eager runs it",
                                     model ? "main operator" : "cuDNN conv")));
  lines.push_back(versus(w.speedup_vs_cudnn(), w.cudnn_median_ms, model ? "floor" : "cudnn",
                         fmt::format("the {} alone, best algorithm: the floor of any {}-then-epilogue design", main_op,
                                     main_op)));
  lines.push_back(std::string(model ? "vendor algorithm: " : "cuDNN algorithm: ") +
                  (w.cudnn_algo.empty() ? std::string("(not recorded)") : one_line(w.cudnn_algo)));
  lines.push_back("NVRTC options:   " + options_text(w.compile_options));
  lines.push_back(fmt::format("tuned:     {} ({})", or_unknown(w.created_at),
                              w.shipped ? "shipped with fusetune's tuning_db/" : "measured by fusetune tune"));
  lines.push_back("generated by fusetune " FUSETUNE_VERSION);
  return lines;
}

std::string comment_block(const std::vector<std::string>& lines, const std::string& prefix) {
  std::string out;
  for (const auto& line : lines) {
    std::string l = prefix + line;
    while (!l.empty() && l.back() == ' ') l.pop_back();
    // A line of a C++ comment ending in a backslash continues onto the next line: free text
    // from a record (a GPU name, an algorithm label) must not swallow the line after it.
    if (!l.empty() && l.back() == '\\') l += " (sic)";
    out += l + "\n";
  }
  return out;
}

}  // namespace fusetune::exporter
