// Version-2 problems on the GPU through the worker's Session (issue 43, item 2): the floor
// (`cublaslt.gemm` / `cudnn.conv-nd`, the main operator alone) and `unfused.stages` (the main
// operator, then one kernel per stage) of codegen::generate_model_variants must verify on every
// draw against the float64 reference (the main operator's terms on the GPU, the stages on the
// CPU: reference::model_reference_with_terms, chosen by InputDraws for these problems), under
// tf32 and fp32; a planted wrong stage -- the plan of the
// same problem with `| add(0.05)` after it, a shifted value -- must fail verification; and `tune`
// end to end gives such a problem a verified winner. Skips with the reason without a GPU.
//
// Run: build/gpu_model_steps_test (or ctest -L gpu -R GpuModelSteps).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/variant.hpp"
#include "common/error.hpp"
#include "common/math_mode.hpp"
#include "gpu/device.hpp"
#include "gpu/driver_api.hpp"
#include "protocol/protocol.hpp"
#include "spec/canonical.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"
#include "tune/compile_all.hpp"
#include "tune/tuner.hpp"
#include "worker/model_inputs.hpp"
#include "worker/session.hpp"

namespace fusetune {
namespace {

using protocol::Status;

// A linear problem (cuBLASLt, a chain epilogue) and a conv3d one (a cuDNN graph, a group norm and
// an extra input): small, so the reference's CPU stages take milliseconds.
const char* const kLinear = "linear(m=64,k=32,n=16) | relu";
int64_t param(const codegen::Variant& v, const std::string& name) {
  for (const auto& [n, value] : v.params)
    if (n == name) return value;
  return -1;
}

const char* const kConv3d = "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | add(input1)";

class GpuModelSteps : public testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!gpu::driver_available(&why)) GTEST_SKIP() << "no GPU: " << why;
    limits_ = gpu::query_device(0).limits;
    dir_ = ::testing::TempDir() + "gpu_model_steps." + std::to_string(getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  static protocol::SetupRequest setup(const std::string& spec, MathMode math) {
    protocol::SetupRequest s;
    s.problem = spec::canonical(spec::parse(spec));
    s.math = math;
    s.device = 0;
    return s;
  }

  // The variant's kernels compiled for this GPU, as the tuner's compile stage writes them; "" when
  // it has none (the floor).
  std::string cubin_for(const codegen::Variant& v, MathMode math) {
    if (v.source.empty()) return "";
    tune::CompileAllOptions o;
    o.arch = limits_.arch_flag();
    o.strict_fp32 = math == MathMode::fp32;
    const protocol::VariantResult r = tune::compile_variant(v, limits_, o);
    EXPECT_EQ(r.status, Status::ok) << v.name << ": " << r.reason << "\n" << r.log_excerpt;
    const std::string path = dir_ + "/" + v.name + ".cubin";
    std::ofstream f(path, std::ios::binary);
    const std::string& image = r.compile.cubin.empty() ? r.compile.ptx : r.compile.cubin;
    f.write(image.data(), std::streamsize(image.size()));
    return path;
  }

  protocol::RunReply run(worker::Session& s, const codegen::Variant& v, MathMode math) {
    protocol::RunRequest req;
    req.variant = v;
    req.cubin_path = cubin_for(v, math);
    req.time = true;
    req.timing.min_reps = 3;
    req.timing.max_reps = 5;
    req.timing.max_seconds = 0.2;
    return s.run(req);
  }

  // The variants tune generates under `math` (fp32: fused-gemm's 3xTF32 design).
  std::vector<codegen::Variant> generate(const spec::Problem& p, MathMode math) const {
    codegen::GenerateOptions o;
    o.strict_fp32 = math == MathMode::fp32;
    return codegen::generate_model_variants(p, limits_, o);
  }

  // Whether the plan's main operator is the vendor's (a GEMM or conv step), whose implementation
  // the reply names; fused-gemm and fused-conv.halo.stages compute it in kernels of their own.
  static bool vendor_main(const codegen::Variant& v) {
    return std::any_of(v.plan.begin(), v.plan.end(), [](const codegen::Step& s) {
      return s.kind() == codegen::StepKind::gemm || s.kind() == codegen::StepKind::conv_nd;
    });
  }

  // A cublaslt-fused variant asking for an algorithm rank past what cuBLASLt's heuristic offers
  // for this GEMM: recorded as failed with that reason, as tune records it; not a wrong result.
  static bool beyond_the_heuristic(const codegen::Variant& v, const protocol::RunReply& r) {
    if (v.candidate != codegen::Candidate::cublaslt_fused || r.status == Status::ok) return false;
    EXPECT_NE(r.reason.find("none of rank"), std::string::npos) << v.name << ": " << r.reason;
    EXPECT_NE(v.plan.at(0).gemm().algo, 0) << v.name << ": rank 0 is the heuristic's first choice";
    std::cout << "  " << v.name << ": " << r.reason << "\n";
    return true;
  }

  // Every variant of `spec` verifies (and is timed) under `math`.
  void expect_all_verify(const std::string& spec, MathMode math) {
    SCOPED_TRACE(spec + " under " + std::string(math_mode_name(math)));
    worker::Session session(setup(spec, math));
    const std::vector<codegen::Variant> variants = generate(spec::parse(spec), math);
    ASSERT_GE(variants.size(), 2u);
    for (const codegen::Variant& v : variants) {
      const protocol::RunReply r = run(session, v, math);
      if (beyond_the_heuristic(v, r)) continue;
      EXPECT_EQ(r.status, Status::ok) << v.name << ": " << r.reason;
      EXPECT_TRUE(r.timed) << v.name;
      EXPECT_GT(r.time.median_ms, 0.0) << v.name;
      EXPECT_LE(r.error.worst_ratio, 1.0) << v.name;
      if (math == MathMode::tf32) {
        EXPECT_LE(r.error.rel_l2, r.error.rel_l2_limit) << v.name;
      }
      if (vendor_main(v)) {
        EXPECT_FALSE(r.convs.empty()) << v.name << ": the main operator's implementation is named";
      }
      for (const std::string& note : r.notes) std::cout << "  note: " << note << "\n";
      std::cout << "  " << v.name << ": " << r.time.median_ms << " ms, worst element " << r.error.worst_ratio
                << " of its bound, rel-L2 " << r.error.rel_l2 << " (limit " << r.error.rel_l2_limit << ")"
                << (r.convs.empty() ? "" : ", " + r.convs.front()) << "\n";
    }
  }

  // The variants of `spec` that `keep` selects (fusetune's own main-operator kernels: no vendor
  // implementation to name) verify under `math`, in both math modes; at least one per mode.
  void expect_own_kernels_verify(const std::string& spec, const std::function<bool(const codegen::Variant&)>& keep) {
    for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
      SCOPED_TRACE(spec + " under " + std::string(math_mode_name(math)));
      worker::Session session(setup(spec, math));
      int ran = 0;
      for (const codegen::Variant& v : generate(spec::parse(spec), math)) {
        if (!keep(v)) continue;
        const protocol::RunReply r = run(session, v, math);
        ++ran;
        EXPECT_EQ(r.status, Status::ok) << v.name << ": " << r.reason;
        EXPECT_LE(r.error.worst_ratio, 1.0) << v.name;
        std::cout << "  " << v.name << ": " << r.time.median_ms << " ms, worst element " << r.error.worst_ratio
                  << " of its bound, rel-L2 " << r.error.rel_l2 << " (limit " << r.error.rel_l2_limit << ")\n";
      }
      EXPECT_GT(ran, 0);
    }
  }

  // The unfused plan (or, `fused`, epilogue.stages's, whose last run then ends in the shift) of
  // `spec | add(0.05)` run for `spec`: every output shifted by 0.05.
  void expect_shift_fails(const std::string& spec, MathMode math, bool fused = false) {
    SCOPED_TRACE(spec + " under " + std::string(math_mode_name(math)) + (fused ? ", epilogue.stages" : ""));
    const spec::Problem shifted = spec::parse(spec + " | add(0.05)");
    const codegen::Candidate want = fused ? codegen::Candidate::epilogue : codegen::Candidate::unfused;
    const auto variants = generate(shifted, math);
    const auto it = std::find_if(variants.begin(), variants.end(), [&](const auto& v) { return v.candidate == want; });
    ASSERT_NE(it, variants.end());
    codegen::Variant planted = *it;
    planted.name = planted.design = planted.design + ".planted-shift";
    worker::Session session(setup(spec, math));
    const protocol::RunReply r = run(session, planted, math);
    EXPECT_EQ(r.status, Status::wrong_result) << r.reason;
    EXPECT_FALSE(r.reason.empty());
    EXPECT_GT(r.error.worst_ratio, 1.0);
    std::cout << "  planted shift: " << protocol::status_name(r.status) << ": " << r.reason << "\n";
  }

  gpu::DeviceLimits limits_;
  std::string dir_;
};

TEST_F(GpuModelSteps, LinearFloorAndUnfusedVerify) {
  for (MathMode math : {MathMode::tf32, MathMode::fp32}) expect_all_verify(kLinear, math);
}

TEST_F(GpuModelSteps, Conv3dFloorAndUnfusedVerify) {
  for (MathMode math : {MathMode::tf32, MathMode::fp32}) expect_all_verify(kConv3d, math);
}

// The other families the worker runs: a transposed conv with a named value, a batched matmul
// with both operands transposed and an extra input, a grouped conv2d with pooling.
TEST_F(GpuModelSteps, MoreFamiliesVerify) {
  for (const char* spec : {
           "conv_transpose3d(n=1,c=2,d=3,h=3,w=3,k=2,r=3,stride=2,pad=1,out_pad=1) | as a | add(param[k]) | add(a)",
           "matmul(batch=4,m=8,k=16,n=32,trans_a=true,trans_b=true) | add(input1) | mul(input1)",
           "conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | max_pool2d(2)",
       })
    expect_all_verify(spec, MathMode::tf32);
}

// epilogue.stages: runs of elementwise ops in one kernel (scalars, per-channel parameters, an
// extra input, a named value as operands), verified like every variant; a shift planted at the
// end of a run fails.
TEST_F(GpuModelSteps, FusedElementwiseRunsVerify) {
  for (const char* spec : {
           "linear(m=64,k=32,n=48) | sub(2) | mul(1.5) | relu",
           "conv_transpose2d(n=2,c=4,h=5,w=5,k=3,r=3,stride=2,pad=1,out_pad=1) | add(param[k]) | clamp(0,1) | "
           "mul(2) | clamp(0,1) | div(2)",
           "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | as a | sigmoid | mul(a) | add(input1) | tanh",
       }) {
    const auto vs = codegen::generate_model_variants(spec::parse(spec), limits_);
    ASSERT_TRUE(std::any_of(vs.begin(), vs.end(), [](const auto& v) { return v.candidate == codegen::Candidate::epilogue; }))
        << spec;
    for (MathMode math : {MathMode::tf32, MathMode::fp32}) expect_all_verify(spec, math);
  }
  expect_shift_fails("linear(m=64,k=32,n=48) | sub(2) | mul(1.5) | relu", MathMode::tf32, true);
}

// fused-gemm (issue 45): the wgmma GEMM with the epilogue fused verifies under both math modes
// (TF32; 3xTF32 under the fp32 rule) on the edges of its tiles -- K not a multiple of 32, N odd,
// M not a multiple of 128, a matmul's B (K, N), parameters without a bias, K tiles fewer and more
// than the stages -- and with a reduction over the features (a logsumexp too), in one block and
// split across blocks.
TEST_F(GpuModelSteps, FusedGemmVariantsVerify) {
  for (const char* spec : {"linear(m=300,k=200,n=191) | add(param[k]) | gelu",
                           "matmul(m=130,k=68,n=96) | relu",
                           "linear(m=200,k=520,n=700,bias=false) | mul(param[k]) | reduce_max(1) | sigmoid",
                           "linear(m=256,k=1024,n=1000) | reduce_sum(1) | mul(0.5)",
                           // one row tile, its features over 64 column splits (KernelBench #56's M = 128)
                           "linear(m=100,k=96,n=4160) | tanh | reduce_max(1)",
                           // general-form epilogues it applies: a logsumexp with a value named after it,
                           // the GEMM's output named and added back
                           "linear(m=200,k=96,n=300) | mul(2) | logsumexp(1) | as a | mish | mul(a)",
                           "linear(m=100,k=64,n=80) | as a | sigmoid | mul(2) | add(a)",
                           // one it cannot take: its GEMM alone, the stage kernels after it
                           "linear(m=256,k=512,n=384) | group_norm(8) | hardtanh(-2,2)"}) {
    expect_own_kernels_verify(spec, [](const codegen::Variant& v) {
      // every tile width and column split, the pipeline's depths on the smallest tile
      return v.candidate == codegen::Candidate::fused_gemm &&
             ((param(v, "bn") == 64 && param(v, "csplit") <= 2) || param(v, "stages") == 3);
    });
  }
}

// epilogue.stages' folds: the run of elementwise ops before a rows, pooling or norm kernel read
// through its prologue, the run after it written through its epilogue (per-channel, per-feature
// and scalar operands, a second input), in each kernel form -- a thread or a block per row, the
// split rows (prologue in the split kernel, epilogue in the combine), pooling, norm statistics
// and apply -- verify under both math modes beside unfused.stages, one pass each saved.
TEST_F(GpuModelSteps, FoldedRunsVerify) {
  for (const char* spec : {
           "linear(m=64,k=32,n=48) | group_norm(4) | hardtanh(-2,2)",
           "linear(m=64,k=32,n=48) | mul(param[k]) | batch_norm | silu",
           "conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | sub(0.5) | tanh | sub(0.2) | avg_pool2d(2)",
           "conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | tanh | mul(2) | add(param[k]) | max_pool2d(2) | clamp(0,1)",
           "linear(m=64,k=32,n=300) | softmax(1) | add(param[1]) | mul(2) | sigmoid",
           "linear(m=64,k=32,n=16) | gelu | reduce_mean(1) | tanh",
           "linear(m=64,k=32,n=16) | layer_norm(1,affine=false) | add(input1) | mul(input1)",
           "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | mul(param[k]) | instance_norm | clamp(-1,1) | mul(param[k])",
           "linear(m=16384,k=4,n=16) | relu | reduce_sum(0) | mul(2)",
           "linear(m=16384,k=4,n=16) | mul(param[k]) | batch_norm | relu",
       }) {
    const auto vs = codegen::generate_model_variants(spec::parse(spec), limits_);
    const auto fused = std::find_if(vs.begin(), vs.end(), [](const auto& v) { return v.name == "epilogue.stages"; });
    ASSERT_NE(fused, vs.end()) << spec;
    EXPECT_NE(fused->source.find("_FOLD("), std::string::npos) << spec;
    for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
      SCOPED_TRACE(std::string(spec) + " under " + std::string(math_mode_name(math)));
      worker::Session session(setup(spec, math));
      for (const codegen::Variant& v : generate(spec::parse(spec), math)) {
        if (v.name != "epilogue.stages" && v.name != "unfused.stages") continue;
        const protocol::RunReply r = run(session, v, math);
        EXPECT_EQ(r.status, Status::ok) << v.name << ": " << r.reason;
        EXPECT_LE(r.error.worst_ratio, 1.0) << v.name;
        std::cout << "  " << v.name << " (" << v.plan.size() - 1 << " kernels): " << r.time.median_ms
                  << " ms, worst element " << r.error.worst_ratio << " of its bound\n";
      }
    }
  }
}

// cublaslt-fused (issue 45, item 1): cuBLASLt's own epilogue (bias, then relu or tanh-GELU) and
// the heuristic's next algorithms, the stages after: every variant verifies in both math modes,
// or is past the heuristic's list (then only a rank above 0); the reply names the algorithm and
// the epilogue that ran.
TEST_F(GpuModelSteps, CublasLtFusedVerify) {
  for (const char* spec : {"linear(m=256,k=512,n=384) | relu | div(2)",
                           "linear(m=128,k=256,n=192,bias=false) | gelu_tanh | mul(2)",
                           "matmul(batch=2,m=64,k=128,n=96) | relu",
                           "linear(m=200,k=96,n=300) | sigmoid | mul(2)"}) {
    for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
      SCOPED_TRACE(std::string(spec) + " under " + std::string(math_mode_name(math)));
      worker::Session session(setup(spec, math));
      int ran = 0;
      for (const codegen::Variant& v : generate(spec::parse(spec), math)) {
        if (v.candidate != codegen::Candidate::cublaslt_fused) continue;
        const protocol::RunReply r = run(session, v, math);
        if (beyond_the_heuristic(v, r)) continue;
        ++ran;
        EXPECT_EQ(r.status, Status::ok) << v.name << ": " << r.reason;
        EXPECT_LE(r.error.worst_ratio, 1.0) << v.name;
        const codegen::GemmStep& g = v.plan.at(0).gemm();
        ASSERT_FALSE(r.convs.empty()) << v.name;
        EXPECT_EQ(r.convs.front().rfind("cublaslt ", 0), 0u) << r.convs.front();
        if (g.activation != GemmActivation::none) {
          EXPECT_NE(r.convs.front().find(fmt::format("epilogue {}", gemm_activation_name(g.activation))), std::string::npos)
              << r.convs.front();
        }
        std::cout << "  " << v.name << ": " << r.time.median_ms << " ms, worst element " << r.error.worst_ratio
                  << " of its bound, rel-L2 " << r.error.rel_l2 << " (limit " << r.error.rel_l2_limit << "), "
                  << r.convs.front() << "\n";
      }
      EXPECT_GE(ran, 1);
    }
  }
}

// fused-conv.halo.stages: a version-2 conv2d's conv as the halo fused conv (conv + bias; K tiles
// of 4 taps at C = 8, and of one tap), then the stage kernels, verifies under both math modes: a
// group norm after it (#21, #85's kind), a spatial mean (#67's), an instance norm at C = 64 (#17's).
TEST_F(GpuModelSteps, FusedConvStagesVerify) {
  for (const char* spec : {"conv2d(n=4,c=8,h=34,w=34,k=32,r=3) | add(param[k]) | mul(param[k]) | sigmoid | group_norm(8)",
                           "conv2d(n=4,c=8,h=34,w=34,k=64,r=3) | gelu | reduce_mean(spatial,keepdim=false)",
                           "conv2d(n=2,c=64,h=34,w=34,k=128,r=3) | instance_norm | div(2)"})
    expect_own_kernels_verify(spec, [](const codegen::Variant& v) { return v.candidate == codegen::Candidate::fused_conv; });
}

// Bugs planted inside the fused GEMM must fail verification: a skipped K tile, truncation to TF32,
// a stale pipeline stage, a reduction that drops its last column tile, and (the whole kernel
// right, the problem wrong) the variant of `spec | add(0.05)`.
TEST_F(GpuModelSteps, PlantedFusedGemmBugsFail) {
  const auto planted = [&](const std::string& spec, MathMode math, const std::string& macro,
                           const std::string& source_spec) {
    SCOPED_TRACE(spec + " " + macro);
    const auto vs = generate(spec::parse(source_spec), math);
    const auto it = std::find_if(vs.begin(), vs.end(), [](const auto& v) {
      return v.candidate == codegen::Candidate::fused_gemm && param(v, "bn") == 128 && param(v, "stages") == 4;
    });
    ASSERT_NE(it, vs.end());
    codegen::Variant v = *it;
    if (!macro.empty()) v.source = "#define " + macro + " 1\n" + v.source;
    v.name = v.design = v.name + ".planted-" + (macro.empty() ? std::string("shift") : macro);
    worker::Session session(setup(spec, math));
    const protocol::RunReply r = run(session, v, math);
    EXPECT_EQ(r.status, Status::wrong_result) << r.reason;
    std::cout << "  " << v.name << ": " << protocol::status_name(r.status) << ": " << r.reason << "\n";
  };
  const std::string ew = "linear(m=256,k=1024,n=512) | add(param[k]) | relu";
  const std::string red = "linear(m=256,k=1024,n=512) | reduce_sum(1)";
  for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
    planted(ew, math, "FT_PLANT_SKIP_CHUNK", ew);
    planted(ew, math, "FT_PLANT_STALE_STAGE", ew);
    planted(red, math, "FT_PLANT_DROP_LAST_TILE", red);
    planted(ew, math, "", ew + " | add(0.05)");
  }
  planted(ew, MathMode::tf32, "FT_PLANT_TRUNCATE_TF32", ew);
}

TEST_F(GpuModelSteps, APlantedShiftedStageFailsVerification) {
  for (MathMode math : {MathMode::tf32, MathMode::fp32}) {
    expect_shift_fails(kLinear, math);
    expect_shift_fails(kConv3d, math);
  }
}

// Past 2^27 output values (201M here, 25M an image) with images kept apart: each draw's
// reference covers a block of images (model_inputs.hpp's model_sample_images: one image here),
// the floor and unfused.stages verify against it, and a planted shift still fails (the block is
// compared, not skipped).
constexpr const char* kSampled = "conv2d(n=8,c=4,h=512,w=512,k=96,r=3,pad=1,groups=2) | gelu | group_norm(8) | mul(2)";

TEST_F(GpuModelSteps, PastTheValueLimitABlockOfImagesVerifies) {
  ASSERT_EQ(worker::model_sample_images(spec::parse(kSampled)), 1);
  expect_all_verify(kSampled, MathMode::tf32);
  expect_shift_fails(kSampled, MathMode::tf32);
}

// The unfused plan with its last kernel's element count cut by one image: the last image is never
// written. Draw 0's block is the first image, so only the search of the whole output for the
// verifier's sentinel can fail it -- and must.
TEST_F(GpuModelSteps, PastTheValueLimitAnUnwrittenImageOutsideTheBlockFails) {
  const spec::Problem p = spec::parse(kSampled);
  codegen::Variant planted = codegen::generate_model_variants(p, limits_).at(0);
  ASSERT_EQ(planted.candidate, codegen::Candidate::unfused);
  planted.name = planted.design = "unfused.planted-unwritten";
  codegen::KernelStep& last = planted.plan.back().kernel();
  codegen::ValueArg* geom = nullptr;
  for (auto& a : last.args)
    if (auto* v = std::get_if<codegen::ValueArg>(&a); v && v->type == "ft_st_ew_geom") geom = v;
  ASSERT_NE(geom, nullptr) << "the last stage (mul) is elementwise";
  int64_t total = 0;  // StageEwGeom: rank, then total
  std::memcpy(&total, geom->bytes.data() + 8, 8);
  ASSERT_EQ(total, spec::elems(spec::out_shape(p)));
  total -= total / p.conv.n;
  std::memcpy(geom->bytes.data() + 8, &total, 8);
  worker::Session session(setup(kSampled, MathMode::tf32));
  const protocol::RunReply r = run(session, planted, MathMode::tf32);
  EXPECT_EQ(r.status, Status::wrong_result) << r.reason;
  EXPECT_NE(r.reason.find("unwritten"), std::string::npos) << r.reason;
  std::cout << "  planted unwritten image: " << protocol::status_name(r.status) << ": " << r.reason << "\n";
}

// A problem past the float64 reference's limits (1e13 multiply-adds, 2^27 values) is refused by
// the Session before it draws anything.
TEST_F(GpuModelSteps, PastTheReferencesLimitsTheSessionRefuses) {
  // (softmax over dim 0 mixes the rows, so no block of rows can be checked alone)
  EXPECT_THROW({ worker::Session s(setup("linear(m=65536,k=65536,n=4096) | softmax(0)", MathMode::tf32)); },
               InputError);
  EXPECT_THROW({ worker::Session s(setup("linear(m=16384,k=1,n=16384) | softmax(0)", MathMode::tf32)); }, InputError);
}

// `tune` of `spec` end to end (worker processes, every phase) in tf32, quick, as
// tests/gpu_tune_test.cpp runs conv2d chains.
tune::TuneReport quick_tune(const char* spec, int variant_timeout_s) {
  tune::TuneOptions o;
  o.math = MathMode::tf32;
  o.worker_exe = FUSETUNE_BINARY;
  o.max_variants = 3;
  o.quick = true;
  o.retime_rounds = 3;
  o.variant_timeout_s = variant_timeout_s;
  return tune::run_tune(spec::parse(spec), o);
}

TEST_F(GpuModelSteps, TuneGivesAVerifiedWinner) {
  for (const char* spec : {kLinear, kConv3d}) {
    SCOPED_TRACE(spec);
    const tune::TuneReport r = quick_tune(spec, 60);
    ASSERT_GE(r.results.size(), 2u);
    for (const auto& v : r.results) EXPECT_EQ(v.status, Status::ok) << v.variant.name << ": " << v.reason;
    ASSERT_TRUE(r.winner.has_value());
    EXPECT_NE(r.results[*r.winner].variant.candidate, codegen::Candidate::cudnn);  // the floor is never a winner
    EXPECT_TRUE(r.unfused.has_value());
    EXPECT_TRUE(r.cudnn.has_value());
  }
}

// Full size, past the old CPU-only limit of 2e9 multiply-adds: KernelBench level 2's linear
// 1024 x 8192 x 8192 (6.9e10 multiply-adds, an 8.4M-value output). Its reference is the GPU's
// float64 terms (well under a second each draw) with the stages on the CPU; `tune` gives
// unfused.stages as the verified winner, as above.
TEST_F(GpuModelSteps, FullSizePastTheOldCpuLimitGetsAVerifiedWinner) {
  const tune::TuneReport r = quick_tune("linear(m=1024,k=8192,n=8192) | relu", 120);
  ASSERT_GE(r.results.size(), 2u);
  for (const auto& v : r.results) {
    EXPECT_EQ(v.status, Status::ok) << v.variant.name << ": " << v.reason;
    std::cout << "  " << v.variant.name << ": " << protocol::status_name(v.status) << "\n";
  }
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_NE(r.results[*r.winner].variant.candidate, codegen::Candidate::cudnn);
}

}  // namespace
}  // namespace fusetune
