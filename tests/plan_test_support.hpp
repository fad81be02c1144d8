#pragma once
// Reading typed plans in tests by buffer and kernel names, as a person reads them.
#include <stdexcept>
#include <string>
#include <vector>

#include "codegen/designs.hpp"
#include "codegen/generate.hpp"
#include "codegen/variant.hpp"

namespace fusetune::codegen::testing {

inline std::string buf(const Variant& v, BufferRef r) { return v.buffer(r).name; }

// A kernel step's name ("" for a conv step).
inline std::string kernel_name(const Step& s) { return s.kind() == StepKind::kernel ? s.kernel().name : ""; }

// A kernel step's arguments by name.
inline std::vector<std::string> arg_names(const Variant& v, const Step& s) {
  std::vector<std::string> out;
  for (const KernelArg& a : s.kernel().args) out.push_back(v.buffer(a).name);
  return out;
}

inline std::string output_name(const Variant& v) { return v.output_buffer().name; }

// The variants of one candidate that generate_variants makes for `problem` on `dev`.
inline std::vector<Variant> candidate_variants(const spec::Problem& problem, Candidate candidate,
                                               const gpu::DeviceLimits& dev) {
  std::vector<Variant> out;
  for (auto& v : generate_variants(problem, dev))
    if (v.candidate == candidate) out.push_back(std::move(v));
  return out;
}

// A parameter of `v` by name; throws when it has none.
inline int64_t param(const Variant& v, const std::string& name) {
  for (const auto& [n, value] : v.params)
    if (n == name) return value;
  throw std::runtime_error(v.name + " has no parameter " + name);
}

// A halo-design variant's channels per tap in a K tile: its cp, or 32 where it has none.
inline int64_t halo_cp(const Variant& v) { return halo_conv_cp(ParamValues{v.params}); }

}  // namespace fusetune::codegen::testing
