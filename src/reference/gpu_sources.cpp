#include "reference/gpu_sources.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "templates/embedded_templates.hpp"
#include "common/error.hpp"
#include "reference/problem_check.hpp"

namespace fusetune::reference {
namespace {

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kMaxGridY = 65535;

}  // namespace

RefConvLaunch ref_conv_launch(const spec::Problem& p, MathMode math) {
  check_problem(p);
  const spec::Conv& c = p.conv;
  RefConvLaunch l;
  // Both rules read the variances (the fp32 rule its dot-product term): 3 x 16 double
  // accumulators, ~124 registers, no spills.
  l.strict = math == MathMode::fp32;
  // A block's channel tile never exceeds K: small K (K = 3) would otherwise spend most of
  // its FMAs and shared memory on channels that do not exist.
  l.channels_per_thread = int(std::min<int64_t>(l.channels_per_thread, c.k));
  // In-image offsets are int in the kernel: (c*H + r*dil_h)*W + s*dil_w and the window
  // origin stay below (C+1) * padded H * padded W.
  const int64_t padded_image = (c.c + 1) * (c.h + 2 * c.pad_h) * (c.w + 2 * c.pad_w);
  if (padded_image > kInt32Max || c.c * c.r * c.s > kInt32Max || c.k > kInt32Max) {
    throw InputError(fmt::format("GPU reference: one input image ({}x{}x{}, pad {}x{}) or filter is too large "
                                 "for 32-bit offsets", c.c, c.h, c.w, c.pad_h, c.pad_w));
  }
  const int64_t tiles = (c.p() * c.q() + l.threads - 1) / l.threads * c.n;
  const int64_t channel_tiles = (c.k + l.channels_per_thread - 1) / l.channels_per_thread;
  if (tiles > kInt32Max || channel_tiles > kMaxGridY) {
    throw InputError(fmt::format("GPU reference: the conv output ({} x {} x {}x{}) is too large for its grid",
                                 c.n, c.k, c.p(), c.q()));
  }
  l.grid_x = uint32_t(tiles);
  l.grid_y = uint32_t(channel_tiles);
  return l;
}

std::string render_reference_conv_source(const spec::Problem& p, MathMode math) {
  const RefConvLaunch l = ref_conv_launch(p, math);
  const spec::Conv& c = p.conv;
  std::string src = "// GPU reference convolution, rendered by src/reference/gpu_sources.cpp.\n";
  auto define = [&src](const char* name, int64_t v) { src += fmt::format("#define {} {}\n", name, v); };
  define("FT_N", c.n);
  define("FT_C", c.c);
  define("FT_H", c.h);
  define("FT_W", c.w);
  define("FT_K", c.k);
  define("FT_R", c.r);
  define("FT_S", c.s);
  define("FT_P", c.p());
  define("FT_Q", c.q());
  define("FT_STRIDE_H", c.stride_h);
  define("FT_STRIDE_W", c.stride_w);
  define("FT_PAD_H", c.pad_h);
  define("FT_PAD_W", c.pad_w);
  define("FT_DIL_H", c.dil_h);
  define("FT_DIL_W", c.dil_w);
  define("FT_REF_THREADS", l.threads);
  define("FT_REF_KT", l.channels_per_thread);
  define("FT_REF_E", l.taps_per_stage);
  define("FT_REF_STRICT", l.strict ? 1 : 0);
  src += "\n";
  src += reference_template("ref_bounds.cuh") + "\n";
  src += reference_template("ref_conv.cu");
  return src;
}

std::string render_reference_compare_source() {
  return "// GPU reference comparison, rendered by src/reference/gpu_sources.cpp.\n" +
         reference_template("ref_bounds.cuh") + "\n" + reference_template("ref_compare.cu");
}

std::string reference_template(const std::string& file_name) {
  return std::string(templates::template_source(file_name));
}

}  // namespace fusetune::reference
