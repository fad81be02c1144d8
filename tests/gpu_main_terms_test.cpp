// The version-2 main operator's float64 terms on the GPU (reference/gpu_main_terms.hpp,
// kernel_templates/ref_main_any.cu) against the CPU's (reference::detail::main_terms): y, A and B
// within 1e-12 relative (the kernel keeps the CPU's term order and compiles with --fmad=false,
// so they are expected bit for bit; the test prints how many are), n exactly, for small shapes of
// every main-operator kind, for chunked runs, and for inputs past 2^31 elements (64-bit
// indexing). Skips with the reason without a GPU.
//
// Run: build/gpu_main_terms_test (or ctest -L gpu -R GpuMainTerms).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "gpu/context.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "gpu/stream.hpp"
#include "reference/gpu_main_terms.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/parser.hpp"
#include "gpu_fixture.hpp"

namespace fusetune::reference {
namespace {

class GpuMainTerms : public testing::GpuFixture<> {
 protected:
  // Relative difference, 0 where both are 0.
  static double rel(double got, double want) {
    if (got == want) return 0.0;
    return std::fabs(got - want) / std::max(std::fabs(want), 1e-300);
  }

  static bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

  // GPU terms of `data` equal the CPU's: y, A, B within 1e-12 relative, n exactly.
  void expect_same_terms(const spec::Problem& p, const ModelData& data, const std::string& name) {
    SCOPED_TRACE(name);
    const detail::MainTerms cpu = detail::main_terms(p, data);
    const detail::MainTerms gpu = gpu_main_terms(p, data, arch_, stream_->get());
    ASSERT_EQ(gpu.y.size(), cpu.y.size());
    ASSERT_EQ(gpu.n.size(), cpu.n.size());
    size_t identical = 0, bad = 0;
    for (size_t i = 0; i < cpu.y.size(); ++i) {
      const bool ok = rel(gpu.y[i], cpu.y[i]) <= 1e-12 && rel(gpu.a[i], cpu.a[i]) <= 1e-12 &&
                      rel(gpu.b[i], cpu.b[i]) <= 1e-12 && gpu.n[i] == cpu.n[i];
      if (!ok && ++bad <= 5)
        ADD_FAILURE() << "output " << i << ": y " << gpu.y[i] << " vs " << cpu.y[i] << ", A " << gpu.a[i] << " vs "
                      << cpu.a[i] << ", B " << gpu.b[i] << " vs " << cpu.b[i] << ", n " << gpu.n[i] << " vs "
                      << cpu.n[i];
      identical += same_bits(gpu.y[i], cpu.y[i]) && same_bits(gpu.a[i], cpu.a[i]) && same_bits(gpu.b[i], cpu.b[i]);
    }
    EXPECT_EQ(bad, 0u);
    std::cout << "  " << name << ": " << cpu.y.size() << " outputs, " << identical << " bit-identical to the CPU's\n";
  }

  void expect_same_terms(const std::string& spec) {
    const spec::Problem p = spec::parse(spec);
    expect_same_terms(p, draw_model_data(p, 17), spec);
  }

};

TEST_F(GpuMainTerms, EveryConvKindEqualsTheCpu) {
  for (const char* spec : {
           "conv2d(n=2,c=6,h=13,w=11,k=9,r=3,s=2,stride=2,pad=1,dilation=2,groups=3) | relu",
           "conv2d(n=1,c=3,h=7,w=7,k=5,r=1)",
           "conv3d(n=2,c=4,d=5,h=6,w=7,k=6,r=3,stride=1,pad=1,groups=2) | relu",
           "conv_transpose2d(n=2,c=4,h=5,w=6,k=3,r=3,stride=2,pad=1,out_pad=1) | relu",
           "conv_transpose3d(n=1,c=4,d=3,h=4,w=3,k=6,r=3,stride=2,pad=1,out_pad=1,groups=2) | relu",
       })
    expect_same_terms(spec);
}

TEST_F(GpuMainTerms, EveryGemmKindEqualsTheCpu) {
  for (const char* spec : {
           "linear(m=37,k=45,n=29,bias=true) | relu",
           "matmul(batch=3,m=19,k=33,n=17) | relu",
           "matmul(batch=3,m=19,k=33,n=17,trans_a=true) | relu",
           "matmul(batch=2,m=21,k=18,n=35,trans_b=true) | relu",
           "matmul(batch=2,m=16,k=16,n=16,trans_a=true,trans_b=true) | relu",
       })
    expect_same_terms(spec);
}

// Inputs past 2^31 elements: a conv2d whose last output rows read input elements past index 2^31
// (a 70000 x 32768 image, 9.2 GB; a strided, dilated 3x3 window keeps the output small), and a
// linear whose x has 65536 x 32769 elements. Filled with a cheap exact pattern, not drawn: the
// host RNG would take tens of seconds for 2.3e9 values.
TEST_F(GpuMainTerms, InputsPastTwoToThe31Elements) {
  if (double(gpu::device_memory().free_bytes) < 24e9) GTEST_SKIP() << "needs 24 GB of free device memory";
  const auto pattern = [](std::vector<float>& v, int64_t mod) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = float(int64_t(i % uint64_t(mod)) - mod / 2) * 0x1p-10f;
  };
  {
    const spec::Problem p = spec::parse("conv2d(n=1,c=1,h=70000,w=32768,k=2,r=3,stride=128,dilation=64)");
    ModelData d;
    d.input.resize(size_t(p.conv.input_elems()));
    d.weight.resize(size_t(p.conv.weight_elems()));
    d.bias.resize(2, 0.5f);
    pattern(d.input, 1021);
    pattern(d.weight, 7);
    const int64_t last_row = (p.conv.p() - 1) * 128 + 2 * 64;  // the last output row's last tap
    ASSERT_GT(last_row * p.conv.w, int64_t(1) << 31);
    expect_same_terms(p, d, "conv2d over a 2^31+ input");
  }
  {
    const spec::Problem p = spec::parse("linear(m=65536,k=32769,n=1)");
    ModelData d;
    d.input.resize(size_t(65536) * 32769);
    d.weight.resize(32769);
    pattern(d.input, 1021);
    pattern(d.weight, 13);
    ASSERT_GT(int64_t(d.input.size()), int64_t(1) << 31);
    expect_same_terms(p, d, "linear over a 2^31+ input");
  }
}

}  // namespace
}  // namespace fusetune::reference
