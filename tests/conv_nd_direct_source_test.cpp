// GPU-free: fusetune's fallback conv (kernel_templates/conv_nd_direct.cu, rendered by
// worker/conv_nd_direct.cpp) compiles with NVRTC for sm_90 for every conv kind the spec has, with
// and without groups, dilation, stride, padding and output padding, without spills; it compiles
// alone too (the template's defaults); a GEMM has no conv to render. That its outputs are right is
// gpu_conv_nd_direct_test's job (against the CPU reference's terms).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "reference/gpu_sources.hpp"
#include "spec/parser.hpp"
#include "worker/conv_nd_direct.hpp"

namespace fusetune::worker {
namespace {

void expect_compiles(const std::string& source, const std::string& name, const std::vector<std::string>& extra = {}) {
  gpu::CompileOptions opt;
  opt.arch = "sm_90";
  opt.extra = extra;
  const gpu::CompileResult r = gpu::compile_cuda(source, "conv_nd_direct.cu", opt);
  ASSERT_TRUE(r.ok()) << name << ":\n" << r.log;
  for (const char* k : {kConvNdDirectKernel, kConvNdAddBiasKernel})
    EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), k), r.kernel_names.end()) << name << ": " << k;
  EXPECT_EQ(r.spill_stores, 0) << name << ":\n" << r.log;
}

TEST(ConvNdDirectSource, EveryConvKindCompilesWithoutSpills) {
  for (const char* spec : {
           "conv2d(n=2,c=6,h=13,w=11,k=9,r=3,s=2,stride=2,pad=1,dilation=2,groups=3) | relu",
           "conv2d(n=1,c=3,h=7,w=7,k=5,r=1,bias=true)",
           "conv3d(n=2,c=4,d=5,h=6,w=7,k=6,r=3,stride=1,pad=1,groups=2) | relu",
           "conv_transpose2d(n=2,c=4,h=5,w=6,k=3,r=3,stride=2,pad=1,out_pad=1) | relu",
           // call 123: cuDNN's graph API offered no engine for this one
           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | relu",
       }) {
    SCOPED_TRACE(spec);
    const std::string src = render_conv_nd_direct_source(spec::parse(spec));
    // the shape first, then the shared loop nest, then the kernel (which then includes nothing)
    EXPECT_LT(src.find("#define FT_MA_TRANSPOSED"), src.find("FT_CONV_TAPS_CUH"));
    EXPECT_LT(src.find("ft_conv_terms(long long img"), src.find("ft_conv_nd_direct("));
    expect_compiles(src, spec);
  }
}

TEST(ConvNdDirectSource, TheTemplateCompilesOnItsOwn) {
  expect_compiles(reference::reference_template("conv_nd_direct.cu"), "conv_nd_direct.cu alone",
                  {std::string("-I") + FUSETUNE_SOURCE_DIR + "/kernel_templates"});
}

TEST(ConvNdDirectSource, AGemmHasNoConvToRender) {
  EXPECT_THROW((void)render_conv_nd_direct_source(spec::parse("linear(m=4,k=8,n=2) | relu")), InputError);
}

}  // namespace
}  // namespace fusetune::worker
