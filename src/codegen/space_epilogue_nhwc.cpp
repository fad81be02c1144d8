// Search spaces of the `epilogue` candidate after cuDNN's NHWC convolution (channels-last).
#include "codegen/designs.hpp"

namespace fusetune::codegen {

// epilogue_pointwise.cu, layout 1: y NHWC -> out NHWC in place (the spec allows an NHWC output).
KernelDesign pointwise_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev) {
  return pointwise_design(s, dev, kLayoutNhwc);
}

// epilogue_pointwise_nhwc.cu: tiles of tile_pq pixels x 32 channels through shared memory.
KernelDesign pointwise_nhwc_to_nchw_design(const Shape& s, const gpu::DeviceLimits& dev) {
  KernelDesign d{"epilogue.nhwc", "epilogue_pointwise_nhwc.cu", "ft_epilogue_pointwise_nhwc", {}};
  ParamSpace& sp = d.space;
  sp.param("layout", "", {kLayoutNhwc})
      .param("tile_pq", "t", {32, 64, 128})
      .param("vec", "v", {1, 2, 4})
      .param("ovec", "o", {1, 2, 4})
      .param("block", "b", {128, 256});
  const int64_t k = s.k;
  const int64_t pq = s.pq;
  sp.require("vec must divide K (loads along channels stay inside a pixel and aligned)",
             [=](const ParamValues& v) { return k % v.at("vec") == 0; });
  sp.require("ovec must divide P*Q (stores along pixels stay inside a channel and aligned)",
             [=](const ParamValues& v) { return pq % v.at("ovec") == 0; });
  sp.require("block * vec must not exceed tile_pq * 32 (every thread loads a vector)",
             [](const ParamValues& v) { return v.at("block") * v.at("vec") <= v.at("tile_pq") * 32; });
  sp.require("tile_pq must not be twice P*Q or more (half the tile would idle), except the smallest",
             [=](const ParamValues& v) { return v.at("tile_pq") == 32 || v.at("tile_pq") / 2 < pq; });
  require_block_fits(
      sp, dev, [](const ParamValues& v) { return v.at("block"); },
      [](const ParamValues& v) { return 4 * v.at("tile_pq") * 33; });
  const int64_t n = s.n;
  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(n * ceil_div(pq, v.at("tile_pq")) * ceil_div(k, 32)), 1, 1};
    l.block = {uint32_t(v.at("block")), 1, 1};
    return l;
  };
  return d;
}

// epilogue_reduce_nhwc.cu: `lanes` lanes per pixel, shuffles combine them.
KernelDesign reduce_nhwc_design(const Shape& s, const gpu::DeviceLimits& dev) {
  KernelDesign d{"epilogue.nhwc", "epilogue_reduce_nhwc.cu", "ft_epilogue_reduce_nhwc", {}};
  ParamSpace& sp = d.space;
  sp.param("layout", "", {kLayoutNhwc})
      .param("lanes", "l", {4, 8, 16, 32})
      .param("vec", "v", {1, 2, 4})
      .param("cpt", "c", {1, 2, 4})
      .param("block", "b", {256})
      .param("stage_chan", "", {stage_chan(s)});
  const int64_t k = s.k;
  sp.require("vec must divide K (vectors stay inside a pixel and aligned)",
             [=](const ParamValues& v) { return k % v.at("vec") == 0; });
  sp.require("lanes * vec must be below 2K (else half the lanes idle), except the fewest lanes",
             [=](const ParamValues& v) { return v.at("lanes") == 4 || v.at("lanes") * v.at("vec") / 2 < k; });
  sp.require("cpt must not exceed the loads a lane has, ceil(K / (lanes * vec))",
             [=](const ParamValues& v) { return v.at("cpt") <= ceil_div(k, v.at("lanes") * v.at("vec")); });
  const int64_t chan_bytes = staged_chan_bytes(s);
  require_block_fits(
      sp, dev, [](const ParamValues& v) { return v.at("block"); }, [=](const ParamValues&) { return chan_bytes; });
  const int64_t pixels = s.pixels();
  sp.launch = [=](const ParamValues& v) {
    LaunchConfig l;
    l.grid = {uint32_t(ceil_div(pixels, v.at("block") / v.at("lanes"))), 1, 1};
    l.block = {uint32_t(v.at("block")), 1, 1};
    return l;
  };
  return d;
}

}  // namespace fusetune::codegen
