#include "codegen/planted.hpp"

#include <fmt/format.h>

#include "codegen/designs.hpp"
#include "templates/embedded_templates.hpp"
#include "common/error.hpp"

namespace fusetune::codegen {

namespace {

bool wants(const std::string& which, const std::string& word) {
  size_t pos = 0;
  while (pos <= which.size()) {
    const size_t end = std::min(which.find(',', pos), which.size());
    const std::string item = which.substr(pos, end - pos);
    if (item == word) return true;
    if (item == "subtle" && (word == "bias" || word == "row" || word == "reduce" || word == "twice" || word == "tap"))
      return true;
    pos = end + 1;
  }
  return false;
}

// The first variant of each epilogue design.
std::vector<const Variant*> design_heads(const std::vector<Variant>& real) {
  std::vector<const Variant*> out;
  for (const auto& v : real) {
    if (v.candidate != Candidate::epilogue) continue;
    bool seen = false;
    for (const Variant* h : out) seen = seen || h->design == v.design;
    if (!seen) out.push_back(&v);
  }
  return out;
}

const KernelStep& last_kernel(const Variant& v) {
  for (auto it = v.plan.rbegin(); it != v.plan.rend(); ++it)
    if (it->kind() == StepKind::kernel) return it->kernel();
  throw Error(ExitCode::failure, "planted: " + v.name + " has no kernel step");
}

// A copy of `base` with `#define FT_PLANT_<macro> 1` ahead of its source: a parameter like any other.
Variant with_define(const Variant& base, const std::string& word, const std::string& macro) {
  Variant v = base;
  v.design = base.design + ".planted";
  v.name = base.name + ".planted-" + word;
  v.params.emplace_back("plant_" + word, 1);
  v.source = fmt::format("#define FT_PLANT_{} 1\n{}", macro, base.source);
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
          if (a == w) a = wp;
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
  const auto heads = design_heads(real);
  const Variant* nchw = nullptr;
  for (const Variant* h : heads)
    if (h->design == "epilogue.nchw") nchw = h;
  for (const Variant* h : heads) {
    const bool transposing_store = last_kernel(*h).name == "ft_epilogue_pointwise_nhwc";
    if (wants(which, "wrong")) out.push_back(with_define(*h, "wrong", "CHANNEL_SHIFT"));
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
