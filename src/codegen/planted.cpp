#include "codegen/planted.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "codegen/designs.hpp"
#include "templates/embedded_templates.hpp"
#include "common/error.hpp"

namespace fusetune::codegen {

namespace {

bool in_group(const std::string& group, const std::string& word) {
  if (group == "subtle") return word == "bias" || word == "row" || word == "reduce" || word == "twice" || word == "tap";
  if (group == "deep") {
    for (const auto& d : kDeepPlants)
      if (word == d.word) return true;
  }
  return false;
}

bool wants(const std::string& which, const std::string& word) {
  size_t pos = 0;
  while (pos <= which.size()) {
    const size_t end = std::min(which.find(',', pos), which.size());
    const std::string item = which.substr(pos, end - pos);
    if (item == word || in_group(item, word)) return true;
    pos = end + 1;
  }
  return false;
}

std::optional<int64_t> param(const Variant& v, const std::string& name) {
  for (const auto& [n, value] : v.params)
    if (n == name) return value;
  return std::nullopt;
}

// The variants the plants are made from: the first variant of each epilogue and fused-conv
// design; for the halo designs also the first with an epilogue warpgroup (its reduction and
// stores are other code), the first whose output channels span more than one column tile
// (where the last tile can be dropped from a reduction) and the first of each other cp (K tiles
// of one tap, or of several below 17 channels: other halo offsets and filter packing), when
// those differ from the first.
std::vector<const Variant*> design_heads(const std::vector<Variant>& real, const spec::Problem& problem) {
  std::vector<const Variant*> out;
  const auto add = [&](const Variant& v) {
    for (const Variant* h : out)
      if (h == &v) return;
    out.push_back(&v);
  };
  std::vector<std::string> seen;
  for (const auto& v : real) {
    if (v.candidate != Candidate::epilogue && v.candidate != Candidate::fused_conv) continue;
    if (std::find(seen.begin(), seen.end(), v.design) != seen.end()) continue;
    seen.push_back(v.design);
    add(v);
    if (v.candidate != Candidate::fused_conv) continue;
    for (const auto& w : real) {
      if (w.design != v.design || param(w, "epi_wg").value_or(0) == 0) continue;
      add(w);
      break;
    }
    for (const auto& w : real) {
      if (w.design != v.design || param(w, "bn").value_or(problem.conv.k) >= problem.conv.k) continue;
      add(w);
      break;
    }
    for (const auto& w : real) {
      if (w.design != v.design || param(w, "cp") == param(v, "cp")) continue;
      add(w);
      break;
    }
  }
  return out;
}

// Whether deep plant `d` applies to variant `v` of `problem` (its bug would change the output).
bool deep_applies(const DeepPlant& d, const Variant& v, const spec::Problem& problem) {
  const spec::Conv& c = problem.conv;
  const bool fused = v.candidate == Candidate::fused_conv;
  const bool split = v.design.starts_with("fused-conv.halo3x");
  const bool halo = v.design.starts_with("fused-conv.halo");
  const bool min_max = problem.reduce && (*problem.reduce == spec::ReduceKind::min || *problem.reduce == spec::ReduceKind::max);
  const std::string w = d.word;
  if (w == "init") return min_max;  // a sum or mean starts from 0 rightly
  if (!fused) return false;
  if (w == "chunk" || w == "edge") return true;
  if (w == "filter") return c.r * c.s > 1;
  // the halo design's previous stage holds the previous tap; the gather design's the previous K tile
  if (w == "stale") return halo ? c.r * c.s > 1 : c.c * c.r * c.s > 32;
  if (w == "trunc") return !split;
  if (w == "split") return split;
  if (w == "lasttile") return problem.reduce && param(v, "bn").value_or(c.k) < c.k;
  return false;
}

const KernelStep& last_kernel(const Variant& v) {
  for (auto it = v.plan.rbegin(); it != v.plan.rend(); ++it)
    if (it->kind() == StepKind::kernel) return it->kernel();
  throw Error(ExitCode::failure, "planted: " + v.name + " has no kernel step");
}

// A copy of `base` with `#define FT_PLANT_<macro> 1` (and `also`'s) ahead of its source: a
// parameter like any other.
Variant with_define(const Variant& base, const std::string& word, const std::string& macro,
                    const char* also = nullptr) {
  Variant v = base;
  v.design = base.design + ".planted";
  v.name = base.name + ".planted-" + word;
  v.params.emplace_back("plant_" + word, 1);
  v.source = fmt::format("#define FT_PLANT_{} 1\n{}{}", macro,
                         also ? fmt::format("#define FT_PLANT_{} 1\n", also) : std::string(), base.source);
  return v;
}

// A copy of `base` whose conv reads filters with one tap zeroed by ft_planted_drop_tap.
Variant with_dropped_tap(const spec::Problem& problem, const Variant& base) {
  Variant v = base;
  v.design = base.design + ".planted";
  v.name = base.name + ".planted-tap";
  v.params.emplace_back("plant_tap", 1);
  v.source = base.source + "\n" + std::string(templates::template_source("planted.cu"));
  const BufferRef w = *v.find_buffer("w");
  const spec::Conv& c = problem.conv;
  v.buffers.push_back({"w_planted", BufferKind::scratch, TensorLayout::kcrs,
                       {{"K", c.k}, {"C", c.c}, {"R", c.r}, {"S", c.s}}, "the filters with one tap zeroed (planted)"});
  const BufferRef wp = BufferRef(v.buffers.size() - 1);
  for (auto& st : v.plan) {
    switch (st.kind()) {
      case StepKind::cudnn_conv:
        if (st.conv().filters == w) st.conv().filters = wp;
        break;
      case StepKind::cudnn_graph:  // reads the KRSC filters a kernel made from w
        break;
      case StepKind::kernel:
        for (auto& a : st.kernel().args)
          if (arg_buffer(a) == w) a = wp;
        break;
      case StepKind::gemm:     // version-2 plans are never planted (generate_variants takes chains only)
      case StepKind::conv_nd:
        break;
    }
  }
  KernelStep drop;
  drop.name = "ft_planted_drop_tap";
  drop.launch.grid = {uint32_t(ceil_div(c.weight_elems(), 256)), 1, 1};
  drop.launch.block = {256, 1, 1};
  drop.args = {w, wp, *v.find_buffer("chan")};
  drop.writes = {1};
  v.plan.insert(v.plan.begin(), Step{drop, false});
  return v;
}

// A copy of `base` whose last kernel step runs `kernel` from planted.cu instead.
Variant replace_last_kernel(const Variant& base, const std::string& kernel, const std::string& name) {
  Variant v = base;
  v.name = name;
  v.design = "epilogue.nchw.planted";
  v.params = {{"planted", 1}};
  v.source = std::string(templates::template_source("planted.cu"));
  // The planted source holds only the planted kernels: earlier kernel steps of the plan
  // (transforms) would not be found in it, so keep the cuDNN steps and the last kernel only.
  std::vector<Step> plan;
  for (const auto& st : base.plan)
    if (st.kind() == StepKind::cudnn_conv) plan.push_back(st);
  Step last{last_kernel(base), true};
  last.kernel().name = kernel;
  last.kernel().launch.grid = {1, 1, 1};
  last.kernel().launch.block = {32, 1, 1};
  last.kernel().launch.smem_bytes = 0;
  plan.push_back(last);
  v.plan = plan;
  return v;
}

}  // namespace

std::vector<Variant> planted_variants(const spec::Problem& problem, const std::vector<Variant>& real,
                                      const std::string& which) {
  std::vector<Variant> out;
  if (which.empty()) return out;
  const auto heads = design_heads(real, problem);
  const Variant* nchw = nullptr;
  for (const Variant* h : heads)
    if (h->design == "epilogue.nchw") nchw = h;
  for (const Variant* h : heads) {
    for (const auto& d : kDeepPlants)
      if (wants(which, d.word) && deep_applies(d, *h, problem)) out.push_back(with_define(*h, d.word, d.macro));
    const bool transposing_store = last_kernel(*h).name == "ft_epilogue_pointwise_nhwc";
    // The epilogues index the bias by the shifted channel; the fused convs index it by k itself
    // (FT_BIAS_K), so there the bias shift goes with it: else a chain with no per-channel parameter
    // (#32's) left the plant a correct kernel (call 112).
    if (wants(which, "wrong"))
      out.push_back(with_define(*h, "wrong", "CHANNEL_SHIFT",
                                h->candidate == Candidate::fused_conv && problem.conv.bias ? "BIAS_SHIFT" : nullptr));
    if (wants(which, "bias") && problem.conv.bias) out.push_back(with_define(*h, "bias", "BIAS_SHIFT"));
    if (wants(which, "row") && !transposing_store) out.push_back(with_define(*h, "row", "SKIP_ROW"));
    if (wants(which, "reduce") && problem.reduce) out.push_back(with_define(*h, "reduce", "SKIP_LAST_CHANNEL"));
    if (wants(which, "twice")) out.push_back(with_define(*h, "twice", "CHAIN_TWICE"));
    if (wants(which, "tap")) out.push_back(with_dropped_tap(problem, *h));
  }
  if (wants(which, "fault") || wants(which, "hang")) {
    if (nchw == nullptr) throw InputError("planted fault/hang variants need an NCHW epilogue variant to copy");
    if (wants(which, "fault")) out.push_back(replace_last_kernel(*nchw, "ft_planted_fault", "epilogue.planted-fault"));
    if (wants(which, "hang")) out.push_back(replace_last_kernel(*nchw, "ft_planted_hang", "epilogue.planted-hang"));
  }
  return out;
}

}  // namespace fusetune::codegen
