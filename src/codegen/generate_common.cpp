// Plan steps and source sections shared by the candidates.
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

Step conv_step(spec::Layout layout, bool with_bias, const std::string& in) {
  Step st;
  st.kind = StepKind::cudnn_conv;
  st.conv_layout = layout;
  st.with_bias = with_bias;
  st.in = in;
  st.out = std::string("y");  // move-assign: GCC 12 -O3 flags the literal assign (-Wrestrict false positive)
  return st;
}

Step kernel_step(const std::string& kernel, const LaunchConfig& launch, std::vector<std::string> args,
                 const std::string& in, const std::string& out, bool timed) {
  Step st;
  st.kind = StepKind::kernel;
  st.kernel_name = kernel;
  st.launch = launch;
  st.args = std::move(args);
  st.in = in;
  st.out = out;
  st.timed = timed;
  return st;
}

Step transpose_step(const TransposeConfig& t, const std::string& in, const std::string& out, bool timed) {
  return kernel_step(t.kernel_name, t.launch(), {in, out}, in, out, timed);
}

TransposeConfig x_to_nhwc(const Shape& s) {
  TransposeConfig t = default_transpose("ft_transform_nchw_to_nhwc", "x (N, C, H*W) -> x_nhwc (N, H*W, C)", s.n, s.c, s.hw);
  t.param_prefix = "tr";
  return t;
}

TransposeConfig w_to_krsc(const Shape& s) {
  return default_transpose("ft_transform_kcrs_to_krsc", "w (K, C, R*S) -> w_krsc (K, R*S, C), cuDNN's NHWC filters",
                           s.k, s.c, s.rs);
}

ChanLayout chan_layout(const Shape& s) { return ChanLayout{s.k, s.conv_bias}; }

std::string epilogue_chain_code(const spec::Problem& problem, const Shape& s) {
  const ChanLayout chan = chan_layout(s);
  if (!problem.reduce) return render_chain_function("ft_chain", problem.pre, chan);
  return render_chain_function("ft_chain_pre", problem.pre, chan) +
         render_chain_function("ft_chain_post", problem.post, chan) + render_reduce_functions(*problem.reduce, s.k);
}

}  // namespace fusetune::codegen
