// The epilogue's op renderings as the GPU runs them: each op's rendered expression
// (codegen::render_op_expr, over kernel_templates/ft_math.cuh) compiled by NVRTC, evaluated on
// the sweep of reference/op_sweep.hpp (every exponent of both signs, 16384 mantissas each,
// subnormals, specials, branch points) and compared with the float64 op on the host. Every
// result must be inside the op's allowance under the TF32 rule (spec::op_info's ulps and xrel), under both
// compile modes (--fmad=false is --math fp32's). Prints the error table docs/op-math.md quotes.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "templates/embedded_templates.hpp"
#include "codegen/op_render.hpp"
#include "gpu/compiler.hpp"
#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/module.hpp"
#include "gpu/stream.hpp"
#include "reference/op_math.hpp"
#include "reference/op_sweep.hpp"
#include "reference/parallel.hpp"
#include "spec/ops.hpp"
#include "gpu_fixture.hpp"

namespace fusetune {
namespace {

std::string op_kernels(const std::vector<spec::Op>& ops) {
  std::string src(templates::template_source("ft_math.cuh"));
  for (size_t i = 0; i < ops.size(); ++i) {
    src += fmt::format(
        "extern \"C\" __global__ void ft_op{}(const float* __restrict__ x, float* __restrict__ y, unsigned n) {{\n"
        "  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{\n"
        "    float v = x[i];\n    v = {};\n    y[i] = v;\n  }}\n}}\n",
        i, codegen::render_op_expr(ops[i], "v", codegen::ChanLayout{}));
  }
  return src;
}

class GpuOpMath : public testing::GpuFixture<::testing::TestWithParam<bool>> {};

TEST_P(GpuOpMath, EveryRenderingIsInsideItsAllowanceOnTheDevice) {
  const bool strict = GetParam();
  const std::vector<spec::Op> ops = reference::op_sweep_ops();
  gpu::CompileOptions o;
  o.arch = arch_;
  o.strict_fp32 = strict;
  const gpu::CompileResult c = gpu::compile_cuda(op_kernels(ops), "op_math.cu", o);
  ASSERT_EQ(c.status, gpu::CompileStatus::ok) << c.log;
  const gpu::Module m(c.cubin);

  const std::vector<float> xs = reference::op_sweep_inputs(16384);
  const auto n = unsigned(xs.size());
  gpu::DeviceBuffer x(xs.size() * sizeof(float)), y(xs.size() * sizeof(float));
  x.copy_from_host(xs.data(), xs.size() * sizeof(float), 0, stream_->get());
  std::printf("%s: %zu inputs per op\n", strict ? "--fmad=false" : "default options", xs.size());
  std::printf("| op | max ulp (results >= 2^-126) | at x | max below 2^-126 (units of 2^-149) | at x | allowance (u) |\n");
  std::printf("| --- | --- | --- | --- | --- | --- |\n");
  for (size_t i = 0; i < ops.size(); ++i) {
    const CUfunction f = m.function(fmt::format("ft_op{}", i));
    gpu::launch_kernel(f, {1024, 1, 1}, {256, 1, 1}, 0, stream_->get(), x.ptr(), y.ptr(), n);
    const std::vector<float> got = y.download<float>(stream_->get());
    // Per-thread summaries over slices, merged: the float64 side is the slow one.
    constexpr int64_t kSlices = 256;
    std::vector<reference::OpErrorSummary> parts(kSlices);
    reference::detail::parallel_for(kSlices, double(xs.size()) / kSlices * 50, [&](int64_t s) {
      for (size_t j = size_t(s) * xs.size() / kSlices; j < size_t(s + 1) * xs.size() / kSlices; ++j) {
        reference::add_result(parts[size_t(s)], ops[i], xs[j], got[j], reference::apply_op(ops[i], double(xs[j]), nullptr));
      }
    });
    reference::OpErrorSummary all;
    all.op = codegen::op_text(ops[i]);
    for (const auto& p : parts) {
      if (p.max_ulps > all.max_ulps) all.max_ulps = p.max_ulps, all.max_at = p.max_at;
      if (p.max_ulps_tiny > all.max_ulps_tiny) all.max_ulps_tiny = p.max_ulps_tiny, all.tiny_at = p.tiny_at;
      if (p.over_bound > 0 && all.over_bound == 0) all.first_over_bound = p.first_over_bound;
      all.over_bound += p.over_bound;
      all.special_mismatches += p.special_mismatches;
      all.count += p.count;
    }
    EXPECT_EQ(all.count, xs.size());
    EXPECT_EQ(all.over_bound, 0u) << all.op << ": " << all.over_bound << " results outside the allowance ("
                                  << all.special_mismatches << " NaN/inf mismatches), first at x = "
                                  << all.first_over_bound;
    std::printf("| %s | %.2f | %.9g | %.1f | %.9g | %s |\n", all.op.c_str(), all.max_ulps, double(all.max_at),
                all.max_ulps_tiny, double(all.tiny_at), reference::allowance_text(ops[i]).c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GpuOpMath, ::testing::Values(false, true),
                         [](const auto& param_info) { return param_info.param ? "FmadOff" : "Default"; });

}  // namespace
}  // namespace fusetune
