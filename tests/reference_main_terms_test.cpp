// GPU-free: the version-2 main operator's float64 terms on the GPU
// (kernel_templates/ref_main_any.cu rendered by reference/main_terms_source.cpp) compile with
// NVRTC for sm_90 for every main-operator kind, without spills; its chunks cover every output
// once; and the stages run from given terms (model_reference_with_terms) give exactly
// model_reference_with_bounds when the terms are the CPU's own. That the GPU's terms equal the
// CPU's is gpu_main_terms_test's job.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "reference/gpu_main_terms.hpp"
#include "reference/gpu_sources.hpp"
#include "reference/main_terms_source.hpp"
#include "reference/model_bounds.hpp"
#include "reference/model_data.hpp"
#include "reference/model_main.hpp"
#include "spec/parser.hpp"
#include "worker/model_answer.hpp"

namespace fusetune::reference {
namespace {

// One problem of every main-operator kind and option the kernel branches on (the same shapes
// gpu_main_terms_test compares with the CPU).
const char* const kEveryKind[] = {
    "conv2d(n=2,c=6,h=13,w=11,k=9,r=3,s=2,stride=2,pad=1,dilation=2,groups=3) | relu",
    "conv3d(n=2,c=4,d=5,h=6,w=7,k=6,r=3,stride=1,pad=1,groups=2) | relu",
    "conv_transpose2d(n=2,c=4,h=5,w=6,k=3,r=3,stride=2,pad=1,out_pad=1) | relu",
    "conv_transpose3d(n=1,c=4,d=3,h=4,w=3,k=6,r=3,stride=2,pad=1,out_pad=1,groups=2) | relu",
    "linear(m=37,k=45,n=29,bias=true) | relu",
    "matmul(batch=3,m=19,k=33,n=17) | relu",
    "matmul(batch=3,m=19,k=33,n=17,trans_a=true) | relu",
    "matmul(batch=2,m=21,k=18,n=35,trans_b=true) | relu",
    "matmul(batch=2,m=16,k=16,n=16,trans_a=true,trans_b=true) | relu",
};

void expect_no_spills(const gpu::CompileResult& r, const std::string& name, const std::string& kernel) {
  ASSERT_TRUE(r.ok()) << name << ":\n" << r.log;
  EXPECT_NE(std::find(r.kernel_names.begin(), r.kernel_names.end(), kernel), r.kernel_names.end()) << name;
  EXPECT_EQ(r.spill_stores, 0) << name << ":\n" << r.log;
  EXPECT_EQ(r.spill_loads, 0) << name << ":\n" << r.log;
  EXPECT_EQ(r.stack_bytes, 0) << name << ":\n" << r.log;
  std::printf("  %-90s %7.1f ms  %3d registers\n", name.c_str(), r.compile_ms, r.registers);
}

TEST(MainTermsSource, EveryKindCompilesWithoutSpills) {
  for (const char* text : kEveryKind) {
    const spec::Problem p = spec::parse(text);
    const std::string src = render_reference_main_source(p);
    EXPECT_NE(src.find(p.is_conv() ? "#define FT_MA_KIND FT_MA_KIND_CONV" : "#define FT_MA_KIND FT_MA_KIND_GEMM"),
              std::string::npos)
        << text;
    expect_no_spills(compile_main_terms(p, "sm_90"), text, reference_main_kernel(p));
  }
}

TEST(MainTermsSource, TransposesAreRenderedAsTheCpuReadsThem) {
  // linear's W (N, K) is B with trans_b; its trans_a is never set
  const std::string linear = render_reference_main_source(spec::parse("linear(m=4,k=8,n=2)"));
  EXPECT_NE(linear.find("#define FT_MA_TRANS_A 0\n"), std::string::npos);
  EXPECT_NE(linear.find("#define FT_MA_TRANS_B 1\n"), std::string::npos);
  const std::string mm = render_reference_main_source(spec::parse("matmul(batch=2,m=4,k=8,n=2,trans_a=true)"));
  EXPECT_NE(mm.find("#define FT_MA_TRANS_A 1\n"), std::string::npos);
  EXPECT_NE(mm.find("#define FT_MA_TRANS_B 0\n"), std::string::npos);
  EXPECT_NE(mm.find("#define FT_MA_BATCH 2LL\n"), std::string::npos);
  const std::string ct = render_reference_main_source(
      spec::parse("conv_transpose3d(n=1,c=4,d=3,h=4,w=3,k=6,r=3,stride=2,pad=1,out_pad=1,groups=2)"));
  EXPECT_NE(ct.find("#define FT_MA_TRANSPOSED 1\n"), std::string::npos);
  EXPECT_NE(ct.find("#define FT_MA_GROUPS 2LL\n"), std::string::npos);
}

TEST(MainTermsSource, TheTemplateCompilesOnItsOwn) {
  gpu::CompileOptions opt;
  opt.arch = "sm_90";
  opt.strict_fp32 = true;
  // alone, it includes ft_conv_taps.cuh from its folder, as nvcc would (rendered: pasted in)
  opt.extra.push_back(std::string("-I") + FUSETUNE_SOURCE_DIR + "/kernel_templates");
  expect_no_spills(gpu::compile_cuda(reference_template("ref_main_any.cu"), "ref_main_any.cu", opt), "ref_main_any.cu",
                   "ft_ref_main_conv");
}

// Every output once, in order; a GEMM chunk is whole row tiles of one batch each.
void expect_cover(const spec::Problem& p, int64_t room) {
  SCOPED_TRACE(std::to_string(room));
  const std::vector<MainTermsChunk> chunks = main_terms_chunks(p, room);
  int64_t next = 0;
  for (const MainTermsChunk& c : chunks) {
    EXPECT_EQ(c.out_begin, next);
    EXPECT_GT(c.outputs, 0);
    EXPECT_LE(c.outputs, room);
    next = c.out_begin + c.outputs;
    if (!p.is_conv()) {
      EXPECT_EQ(c.out_begin % p.gemm.n, 0);
    }
  }
  EXPECT_EQ(next, p.main_out_elems());
}

TEST(MainTermsSource, ChunksCoverEveryOutputOnce) {
  const spec::Problem conv = spec::parse("conv3d(n=2,c=4,d=5,h=6,w=7,k=6,r=3,pad=1)");
  for (int64_t room : {int64_t(1), int64_t(7), int64_t(1000), conv.main_out_elems(), int64_t(1) << 40})
    expect_cover(conv, std::min(room, conv.main_out_elems()));
  // M = 19: tiles of 16 and 3 rows per batch, never one across two batches
  const spec::Problem mm = spec::parse("matmul(batch=3,m=19,k=33,n=17)");
  for (int64_t room : {int64_t(16 * 17), int64_t(33 * 17), int64_t(40 * 17), mm.main_out_elems()})
    expect_cover(mm, room);
  const std::vector<MainTermsChunk> one_tile = main_terms_chunks(mm, 16 * 17);
  ASSERT_EQ(one_tile.size(), 6u);
  EXPECT_EQ(one_tile[1].out_begin, 16 * 17);
  EXPECT_EQ(one_tile[1].outputs, 3 * 17);  // the batch's last 3 rows
  EXPECT_EQ(one_tile[2].out_begin, 19 * 17);
}

TEST(MainTermsSource, NoRoomForOneTileSaysBothNumbers) {
  try {
    (void)main_terms_chunks(spec::parse("linear(m=64,k=8,n=100)"), 1000);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("1600"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("1000"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)main_terms_chunks(spec::parse("conv2d(n=1,c=1,h=4,w=4,k=1,r=3)"), 0), InputError);
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

void expect_same(const BoundedReference& a, const BoundedReference& b) {
  EXPECT_TRUE(same_bits(a.values, b.values));
  EXPECT_EQ(a.bound, b.bound);
  EXPECT_EQ(a.var, b.var);
}

// The stages from the CPU's own terms are the CPU reference, bit for bit; the input and weight
// are not read (empty here).
TEST(ModelReferenceWithTerms, TheCpusOwnTermsGiveTheCpuReference) {
  for (const char* text : {
           "linear(m=16,k=24,n=12,bias=true) | relu | mul(2.0)",
           "conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | max_pool2d(2)",
           "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | add(input1)",
           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | as a | add(param[k]) | add(a)",
           "matmul(batch=4,m=8,k=16,n=32,trans_a=true,trans_b=true) | softmax(2)",
           "conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | add(param[k]) | reduce_min(channel)",
       }) {
    SCOPED_TRACE(text);
    const spec::Problem p = spec::parse(text);
    const ModelData d = draw_model_data(p, 5);
    const detail::MainTerms terms = detail::main_terms(p, d);
    ModelData without = d;
    without.input.clear();
    without.weight.clear();
    expect_same(model_reference_with_terms(p, without, terms), model_reference_with_bounds(p, d));
    // model_answers from the same terms: the output as above, the main operator alone as the CPU
    // reference of the problem without its epilogue
    const worker::ModelAnswers a = worker::model_answers(p, d, terms);
    expect_same(a.output, model_reference_with_bounds(p, d));
    ModelData main_data;
    main_data.input = d.input;
    main_data.weight = d.weight;
    main_data.bias = d.bias;
    expect_same(a.main, model_reference_with_bounds(worker::main_op_alone(p), main_data));
  }
}

TEST(ModelReferenceWithTerms, TermsOfAnotherSizeAreRefused) {
  const spec::Problem p = spec::parse("linear(m=16,k=24,n=12) | relu");
  const ModelData d = draw_model_data(p, 5);
  detail::MainTerms terms = detail::main_terms(p, d);
  terms.n.pop_back();
  EXPECT_THROW((void)model_reference_with_terms(p, d, terms), InputError);
  terms = detail::main_terms(spec::parse("linear(m=16,k=24,n=11) | relu"), draw_model_data(spec::parse("linear(m=16,k=24,n=11)"), 5));
  EXPECT_THROW((void)model_reference_with_terms(p, d, terms), InputError);
  ModelData no_params = draw_model_data(spec::parse("linear(m=16,k=24,n=12) | add(param[k])"), 5);
  no_params.params.clear();
  EXPECT_THROW((void)model_reference_with_terms(spec::parse("linear(m=16,k=24,n=12) | add(param[k])"), no_params,
                                                detail::main_terms(p, d)),
               InputError);
}

}  // namespace
}  // namespace fusetune::reference
