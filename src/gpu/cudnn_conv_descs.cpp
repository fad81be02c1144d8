#include "gpu/cudnn_conv_descs.hpp"

#include <fmt/format.h>

#include "common/error.hpp"

namespace fusetune::gpu {

CudnnConvDescs::CudnnConvDescs(const spec::Conv& conv_spec, spec::Layout layout)
    : CudnnConvDescs(checked_conv(conv_spec), layout, Checked{}) {}

CudnnConvDescs::CudnnConvDescs(const spec::Conv& conv_spec, spec::Layout layout, Checked)
    : x(layout, conv_spec.n, conv_spec.c, conv_spec.h, conv_spec.w),
      w(layout, conv_spec.k, conv_spec.c, conv_spec.r, conv_spec.s),
      // y is described from the spec's P, Q, which is what the tuner sized its buffers with.
      y(layout, conv_spec.n, conv_spec.k, conv_spec.p(), conv_spec.q()),
      bias(layout, 1, conv_spec.k, 1, 1),
      conv(conv_spec) {
  check_output_dims(conv.output_dims(x, w), conv_spec);
}

const spec::Conv& checked_conv(const spec::Conv& c) {
  const auto require = [](bool ok, const char* what, int64_t value) {
    if (!ok) throw InputError(fmt::format("convolution {} = {} is out of range", what, value));
  };
  require(c.n >= 1, "n", c.n);
  require(c.c >= 1, "c", c.c);
  require(c.h >= 1, "h", c.h);
  require(c.w >= 1, "w", c.w);
  require(c.k >= 1, "k", c.k);
  require(c.r >= 1, "r", c.r);
  require(c.s >= 1, "s", c.s);
  require(c.stride_h >= 1, "stride_h", c.stride_h);
  require(c.stride_w >= 1, "stride_w", c.stride_w);
  require(c.dil_h >= 1, "dilation_h", c.dil_h);
  require(c.dil_w >= 1, "dilation_w", c.dil_w);
  require(c.pad_h >= 0, "pad_h", c.pad_h);
  require(c.pad_w >= 0, "pad_w", c.pad_w);
  // An empty output would otherwise reach cuDNN as an anonymous BAD_PARAM. Compare extents
  // rather than test p() <= 0: p()'s division truncates toward zero, so a window one row too
  // large with stride 2 gives p() == 1.
  const int64_t window_h = c.dil_h * (c.r - 1) + 1;
  const int64_t window_w = c.dil_w * (c.s - 1) + 1;
  if (window_h > c.h + 2 * c.pad_h || window_w > c.w + 2 * c.pad_w) {
    throw InputError(fmt::format("convolution output is empty: the dilated {}x{} filter window exceeds the "
                                 "padded {}x{} input",
                                 window_h, window_w, c.h + 2 * c.pad_h, c.w + 2 * c.pad_w));
  }
  return c;
}

void check_output_dims(const std::array<int, 4>& nkpq, const spec::Conv& conv) {
  if (nkpq[0] != conv.n || nkpq[1] != conv.k || nkpq[2] != conv.p() || nkpq[3] != conv.q()) {
    throw Error(ExitCode::failure,
                fmt::format("cuDNN's convolution output ({}, {}, {}, {}) differs from the spec's ({}, {}, {}, {})",
                            nkpq[0], nkpq[1], nkpq[2], nkpq[3], conv.n, conv.k, conv.p(), conv.q()));
  }
}

}  // namespace fusetune::gpu
