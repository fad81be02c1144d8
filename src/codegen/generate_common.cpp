// Source sections and transforms shared by the candidates.
#include "codegen/generate_parts.hpp"

namespace fusetune::codegen {

TransposeConfig x_to_nhwc(const Shape& s) {
  TransposeConfig t = default_transpose("ft_transform_nchw_to_nhwc", "x (N, C, H*W) -> x_nhwc (N, H*W, C)", s.n, s.c, s.hw);
  t.param_prefix = "tr";
  return t;
}

TransposeConfig w_to_krsc(const Shape& s) {
  return default_transpose("ft_transform_kcrs_to_krsc", "w (K, C, R*S) -> w_krsc (K, R*S, C), cuDNN's NHWC filters",
                           s.k, s.c, s.rs);
}

TransposeConfig nhwc_to_nchw(const Shape& s, const std::string& what) {
  return default_transpose("ft_to_nchw", what, s.n, s.pq, s.k);
}

TransposeConfig nchw_to_nhwc(const Shape& s, const std::string& what) {
  return default_transpose("ft_to_nhwc", what, s.n, s.k, s.pq);
}

ChanLayout chan_layout(const Shape& s) { return ChanLayout{s.k, s.conv_bias}; }

std::string epilogue_chain_code(const spec::Problem& problem, const Shape& s) {
  const ChanLayout chan = chan_layout(s);
  if (!problem.reduce) return render_chain_function("ft_chain", problem.pre, chan);
  return render_chain_function("ft_chain_pre", problem.pre, chan) +
         render_chain_function("ft_chain_post", problem.post, chan) + render_reduce_functions(*problem.reduce, s.k);
}

void add_params(Variant& v, SourceBuilder& b, const std::vector<std::pair<std::string, int64_t>>& params) {
  for (const auto& [name, value] : params) {
    v.params.emplace_back(name, value);
    b.param(name, value);
  }
}

}  // namespace fusetune::codegen
