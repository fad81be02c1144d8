#include "codegen/planted.hpp"

#include "codegen/embedded_templates.hpp"
#include "common/error.hpp"

namespace fusetune::codegen {

namespace {

bool wants(const std::string& which, const std::string& word) {
  size_t pos = 0;
  while (pos <= which.size()) {
    const size_t end = std::min(which.find(',', pos), which.size());
    if (which.substr(pos, end - pos) == word) return true;
    pos = end + 1;
  }
  return false;
}

const Variant* first_with_prefix(const std::vector<Variant>& real, const std::string& prefix) {
  for (const auto& v : real)
    if (v.name.rfind(prefix, 0) == 0) return &v;
  return nullptr;
}

// A copy of `base` whose last kernel step runs `kernel` from planted.cu instead.
Variant replace_last_kernel(const Variant& base, const std::string& kernel, const std::string& name) {
  Variant v = base;
  v.name = name;
  v.params = {{"planted", 1}};
  v.source = std::string(template_source("planted.cu"));
  // The planted source holds only the planted kernel: earlier kernel steps of the plan
  // (transforms) would not be found in it, so keep the cuDNN steps and the last kernel only.
  std::vector<Step> plan;
  for (size_t i = 0; i < base.plan.size(); ++i) {
    const auto& st = base.plan[i];
    if (st.kind == StepKind::cudnn_conv) plan.push_back(st);
  }
  for (auto it = base.plan.rbegin(); it != base.plan.rend(); ++it) {
    if (it->kind != StepKind::kernel) continue;
    Step st = *it;
    st.kernel_name = kernel;
    st.launch.grid = {1, 1, 1};
    st.launch.block = {32, 1, 1};
    st.launch.smem_bytes = 0;
    plan.push_back(st);
    break;
  }
  v.plan = plan;
  return v;
}

}  // namespace

std::vector<Variant> planted_variants(const std::vector<Variant>& real, const std::string& which) {
  std::vector<Variant> out;
  if (which.empty()) return out;
  const Variant* nchw = first_with_prefix(real, "epilogue.nchw");
  if (nchw == nullptr) throw InputError("planted variants need an NCHW epilogue variant to copy");
  if (wants(which, "wrong")) {
    for (const char* prefix : {"epilogue.nchw", "epilogue.nhwc"}) {
      const Variant* base = first_with_prefix(real, prefix);
      if (base == nullptr || base->plan.empty()) continue;
      Variant v = *base;
      v.name = base->name + ".planted-wrong";
      v.params.emplace_back("plant_channel_shift", 1);
      // A parameter like any other: a #define ahead of the whole source.
      v.source = "#define FT_PLANT_CHANNEL_SHIFT 1\n" + base->source;
      out.push_back(std::move(v));
    }
  }
  if (wants(which, "fault")) out.push_back(replace_last_kernel(*nchw, "ft_planted_fault", "epilogue.planted-fault"));
  if (wants(which, "hang")) out.push_back(replace_last_kernel(*nchw, "ft_planted_hang", "epilogue.planted-hang"));
  return out;
}

}  // namespace fusetune::codegen
