// fusetune's fallback conv (worker/conv_nd_direct.hpp), the main-operator step where cuDNN's
// graph API builds nothing, against the CPU reference's float64 terms for every conv kind, with
// and without a bias, and with the bias added after by its bias kernel (what runs after cuDNN's
// conv alone where cuDNN refuses the bias in the graph): each output within fp32 accumulation's bound, (n + 2) * 2^-24 * sum |terms|
// (+ the bias's rounding), on fresh random data with the output poisoned (NaN) before the run.
// The call-123 shape (a transposed 3-D conv cuDNN refused) is among them. Skips without a GPU.
//
// Run: build/gpu_conv_nd_direct_test (or ctest -L gpu -R GpuConvNdDirect).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/parser.hpp"
#include "worker/conv_nd_direct.hpp"
#include "gpu_fixture.hpp"

namespace fusetune::worker {
namespace {

class GpuConvNdDirect : public testing::GpuFixture<> {
 protected:
  // bias_after: the conv without its bias, then add_bias (what runs after cuDNN's conv alone).
  void expect_matches_cpu(const std::string& text, bool with_bias, bool bias_after = false) {
    SCOPED_TRACE(text + (with_bias ? (bias_after ? " with the bias added after" : " with bias") : " without bias"));
    const spec::Problem p = spec::parse(text);
    const reference::ModelData data = reference::draw_model_data(p, 29);
    const reference::detail::MainTerms cpu = reference::detail::main_terms(p, data);
    std::vector<float> bias(size_t(p.conv.k));
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = float(i % 7) * 0.25f - 0.75f;  // signed, exact

    gpu::DeviceBuffer x(data.input.size() * 4), w(data.weight.size() * 4), b(bias.size() * 4),
        y(cpu.y.size() * 4 + 64);  // + a guard band
    x.copy_from_host(data.input.data(), data.input.size() * 4);
    w.copy_from_host(data.weight.data(), data.weight.size() * 4);
    b.copy_from_host(bias.data(), bias.size() * 4);
    std::vector<float> out(cpu.y.size() + 16, std::numeric_limits<float>::quiet_NaN());
    y.copy_from_host(out.data(), out.size() * 4);

    const ConvNdDirect conv(p, arch_);
    conv.run(ConvNdBuffers{x.ptr(), w.ptr(), with_bias && !bias_after ? b.ptr() : 0, y.ptr()}, stream());
    if (bias_after) conv.add_bias(y.ptr(), b.ptr(), stream());
    y.copy_to_host(out.data(), out.size() * 4, 0, stream());

    size_t bad = 0;
    const int64_t per_k = p.main_out_elems() / (p.conv.n * p.conv.k);
    for (size_t i = 0; i < cpu.y.size(); ++i) {
      const double bk = with_bias ? bias[(i / size_t(per_k)) % size_t(p.conv.k)] : 0.0;
      const double want = cpu.y[i] + bk;
      const double bound = double(cpu.n[i] + 2) * 0x1p-24 * (cpu.a[i] + std::fabs(bk)) + 1e-30;
      if (!(std::fabs(double(out[i]) - want) <= bound) && ++bad <= 5)
        ADD_FAILURE() << "output " << i << ": " << out[i] << ", the reference " << want << " (bound " << bound << ")";
    }
    EXPECT_EQ(bad, 0u);
    for (size_t i = cpu.y.size(); i < out.size(); ++i) EXPECT_TRUE(std::isnan(out[i])) << "guard word " << i;
  }
};

TEST_F(GpuConvNdDirect, EveryConvKindEqualsTheCpuWithinFp32) {
  for (const char* spec : {
           "conv2d(n=2,c=6,h=13,w=11,k=9,r=3,s=2,stride=2,pad=1,dilation=2,groups=3) | relu",
           "conv3d(n=2,c=4,d=5,h=6,w=7,k=6,r=3,stride=1,pad=1,groups=2) | relu",
           "conv_transpose2d(n=2,c=4,h=5,w=6,k=3,r=3,stride=2,pad=1,out_pad=1) | relu",
           "conv_transpose3d(n=1,c=4,d=3,h=4,w=3,k=6,r=3,stride=2,pad=1,out_pad=1,groups=2) | relu",
           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | relu",  // call 123's
       }) {
    expect_matches_cpu(spec, false);
    expect_matches_cpu(spec, true);
    expect_matches_cpu(spec, true, true);
  }
}

}  // namespace
}  // namespace fusetune::worker
