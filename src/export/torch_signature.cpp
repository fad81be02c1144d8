#include "export/torch_signature.hpp"

#include <fmt/format.h>

#include "export/python_literal.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/presets.hpp"

namespace fusetune::exporter {
namespace {

// The preset whose canonical form equals the problem's, if any: `conv2d(...) | mul(2.0)` typed
// by hand matches kernelbench-32 as well as --preset does.
std::string matching_preset(const spec::Problem& problem) {
  const std::string want = spec::canonical(problem);
  for (const auto& name : spec::preset_names()) {
    if (spec::canonical(spec::parse(*spec::preset_spec(name))) == want) return name;
  }
  return "";
}

std::string py_int(int64_t v) { return fmt::format("{}", v); }

// A scalar operand of the epilogue, by position (the preset's structure is fixed by the match).
std::string scalar(const spec::Problem& p, size_t op) { return py_float(p.pre.at(op).args.at(0).value); }

}  // namespace

TorchSignature torch_signature(const spec::Problem& p) {
  TorchSignature sig;
  sig.preset = matching_preset(p);
  const spec::Conv& c = p.conv;
  if (sig.preset == "kernelbench-31") {
    // Model(in_channels, out_channels, kernel_size, constant_value, bias_shape, scaling_factor):
    // conv -> min(constant_value) -> + bias (bias_shape) -> * scaling_factor
    sig.init_args = {{"in_channels", py_int(c.c)},          {"out_channels", py_int(c.k)},
                     {"kernel_size", py_int(c.r)},          {"constant_value", scalar(p, 0)},
                     {"bias_shape", py_tuple({c.k, 1, 1})}, {"scaling_factor", scalar(p, 2)}};
    sig.param_names = {"bias"};
  } else if (sig.preset == "kernelbench-32") {
    // Model(in_channels, out_channels, kernel_size, scale_factor): conv -> * scale_factor -> min over channels
    sig.init_args = {{"in_channels", py_int(c.c)},
                     {"out_channels", py_int(c.k)},
                     {"kernel_size", py_int(c.r)},
                     {"scale_factor", scalar(p, 0)}};
  } else {
    for (int i = 0; i < p.num_params; ++i) sig.param_names.push_back(fmt::format("param{}", i));
  }
  return sig;
}

}  // namespace fusetune::exporter
