// Search spaces of the `epilogue` candidate after cuDNN's NCHW convolution.
#include "codegen/designs.hpp"

namespace fusetune::codegen {

// epilogue_pointwise.cu, layout 0: a flat, vectorized pass over y, written in place.
KernelDesign pointwise_nchw_design(const Shape& s, const gpu::DeviceLimits& dev) {
  return pointwise_design(s, dev, kLayoutNchw);
}

// epilogue_reduce.cu: (tile/vec) x csplit threads per block over `tile` pixels of one image.
KernelDesign reduce_nchw_design(const Shape& s, const gpu::DeviceLimits& dev) {
  KernelDesign d{"epilogue.nchw", "epilogue_reduce.cu", "ft_epilogue_reduce", {}};
  ParamSpace& sp = d.space;
  sp.param("layout", "", {kLayoutNchw})
      .param("tile", "t", {32, 64, 128, 256, 512})
      .param("vec", "v", {1, 2, 4})
      .param("cpt", "c", {1, 2, 4, 8})
      .param("csplit", "s", {1, 2, 4, 8})
      .param("stage_chan", "", {stage_chan(s)});
  const int64_t pq = s.pq;
  const int64_t k = s.k;
  const auto threads = [](const ParamValues& v) { return v.at("tile") / v.at("vec") * v.at("csplit"); };
  sp.require("vec must divide P*Q (a vector stays inside one channel row and aligned)",
             [=](const ParamValues& v) { return pq % v.at("vec") == 0; });
  sp.require("threads per block (tile/vec * csplit) must be in [64, 1024]", [=](const ParamValues& v) {
    return threads(v) >= 64 && threads(v) <= 1024;
  });
  sp.require("csplit must not exceed K (each thread row needs a channel)",
             [=](const ParamValues& v) { return v.at("csplit") <= k; });
  sp.require("cpt must not exceed the channels a thread row reduces, ceil(K / csplit)",
             [=](const ParamValues& v) { return v.at("cpt") <= ceil_div(k, v.at("csplit")); });
  sp.require("tile must not be twice P*Q or more (half the block would idle), except the smallest",
             [=](const ParamValues& v) { return v.at("tile") == 32 || v.at("tile") / 2 < pq; });
  const int64_t chan_bytes = staged_chan_bytes(s);
  require_block_fits(sp, dev, threads, [=](const ParamValues& v) {
    return chan_bytes + 4 * (v.at("csplit") - 1) * v.at("tile");  // s_chan + s_part
  });
  const int64_t n = s.n;
  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(n * ceil_div(pq, v.at("tile"))), 1, 1};
    l.block = {uint32_t(v.at("tile") / v.at("vec")), uint32_t(v.at("csplit")), 1};
    return l;
  };
  return d;
}

}  // namespace fusetune::codegen
