// The plans of version-2 problems (codegen::generate_model_variants), GPU-free: for every
// problem of KernelBench level 2 that from-torch maps (docs/from-torch-kernelbench.md), the
// PyTorch-checked specs of tests/data/model_reference_torch.txt and a few corners, the `unfused`
// plan and its floor pass check_variant; every step reads only inputs or buffers written before;
// each stage kernel reads the buffer that holds the value it names at that point (ping-pong and
// named values kept alive); sizes match shapes; by-value arguments are the geometry's bytes; the
// JSON round-trips; every distinct kernel compiles with NVRTC for sm_90 (each name once: names are
// content-derived). generate_variants still refuses these problems, as `tune` does.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/generate.hpp"
#include "codegen/model_buffers.hpp"
#include "codegen/stage_source.hpp"
#include "codegen/variant_check.hpp"
#include "codegen/variant_json.hpp"
#include "common/error.hpp"
#include "gpu/compiler.hpp"
#include "gpu/device_limits.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {
namespace {

const gpu::DeviceLimits& limits() {
  static const gpu::DeviceLimits l = *gpu::limits_for_arch("sm_90");
  return l;
}

// The mapped rows of docs/from-torch-kernelbench.md's table: "| 2 | name | mapped | `spec` |",
// the spec's pipes escaped as \|.
std::vector<std::string> kernelbench_specs() {
  std::ifstream in(std::string(FUSETUNE_SOURCE_DIR) + "/docs/from-torch-kernelbench.md");
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.find("| mapped | `") == std::string::npos) continue;
    const size_t a = line.find('`') + 1;
    const size_t b = line.find('`', a);
    std::string spec;
    for (size_t i = a; i < b; ++i)
      if (!(line[i] == '\\' && i + 1 < b && line[i + 1] == '|')) spec.push_back(line[i]);
    out.push_back(spec);
  }
  return out;
}

std::vector<std::string> torch_specs() {
  std::ifstream in(std::string(FUSETUNE_SOURCE_DIR) + "/tests/data/model_reference_torch.txt");
  std::vector<std::string> specs;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("spec ", 0) == 0) specs.push_back(line.substr(5));
  return specs;
}

// Corners: groups on conv2d with a chain epilogue, a batched transposed matmul with a second
// input, a value named and used after a reduction, no epilogue at all, every pool kind.
const std::vector<std::string> kCorners = {
    "conv2d(n=2,c=8,h=9,w=9,k=8,r=3,groups=4) | relu | add(param[k])",
    "matmul(batch=4,m=8,k=16,n=32,trans_a=true,trans_b=true) | add(input1) | mul(input1)",
    "linear(m=40,k=2,n=3) | as a | reduce_max(0) | sub(a) | reduce_min(all) | neg",
    "conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3)",
    "linear(m=8,k=4,n=4096) | max_pool1d(3,stride=2,pad=1) | avg_pool1d(kernel=2,count_include_pad=false)",
    "conv2d(n=1,c=1,h=9,w=9,k=2,r=2,groups=1) | as x0 | adaptive_avg_pool2d(1) | add(x0) | softmax(1) | "
    "log_softmax(1)",
};

struct Case {
  std::string text;
  spec::Problem problem;
};

// Every parsable spec that is not conv2d chain form, each problem once.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> out;
    std::set<std::string> seen;
    std::vector<std::string> texts = kernelbench_specs();
    for (const auto& s : torch_specs()) texts.push_back(s);
    for (const auto& s : kCorners) texts.push_back(s);
    for (const std::string& t : texts) {
      spec::Problem p = spec::parse(t);
      if (p.is_conv2d_chain() || !seen.insert(t).second) continue;
      out.push_back({t, std::move(p)});
    }
    return out;
  }();
  return all;
}

TEST(ModelPlans, CoverKernelBenchAndEveryMainAndStageKind) {
  EXPECT_GE(kernelbench_specs().size(), 90u);
  EXPECT_GE(cases().size(), 60u);
  std::set<int> mains, stages;
  for (const Case& c : cases()) {
    mains.insert(int(c.problem.main));
    for (const spec::Stage& st : general_epilogue(c.problem).stages) stages.insert(int(st.kind));
  }
  EXPECT_EQ(mains.size(), 6u);
  EXPECT_EQ(stages.size(), 8u);
}

// Which value each buffer holds as the plan runs: a kernel must find the value it reads where
// the plan put it, so a ping-pong buffer is never overwritten while a later step still needs it.
void check_dataflow(const Case& c, const Variant& v, const StageProgram& prog) {
  ASSERT_EQ(v.plan.size(), prog.kernels.size() + 1);
  const Step& main = v.plan[0];
  ASSERT_TRUE(main.kind() == (c.problem.is_conv() ? StepKind::conv_nd : StepKind::gemm));
  const BufferRef main_out = main.writes().at(0);
  EXPECT_GE(v.buffer(main_out).floats(), c.problem.main_out_elems());
  std::map<BufferRef, int> holds{{main_out, 0}};
  for (size_t i = 0; i < prog.kernels.size(); ++i) {
    const StageKernel& sk = prog.kernels[i];
    const KernelStep& k = v.plan[i + 1].kernel();
    SCOPED_TRACE(k.name);
    EXPECT_EQ(k.name, sk.name);
    EXPECT_EQ(k.launch.grid, sk.launch.grid);
    EXPECT_EQ(k.launch.block, sk.launch.block);
    ASSERT_EQ(k.args.size(), sk.args.size());
    std::vector<std::pair<BufferRef, int>> written;
    for (size_t a = 0; a < sk.args.size(); ++a) {
      const StageArg& s = sk.args[a];
      const KernelArg& arg = k.args[a];
      const bool writes = std::find(k.writes.begin(), k.writes.end(), a) != k.writes.end();
      EXPECT_EQ(writes, s.written) << "argument " << a;
      switch (s.kind) {
        case StageArgKind::value: {
          ASSERT_TRUE(arg_buffer(arg)) << "argument " << a;
          const BufferRef r = *arg_buffer(arg);
          EXPECT_GE(v.buffer(r).floats(), spec::elems(prog.value_shapes.at(size_t(s.index))));
          if (s.written) {
            written.emplace_back(r, s.index);
          } else {
            ASSERT_TRUE(holds.count(r)) << "reads " << v.buffer(r).name << " before it is written";
            EXPECT_EQ(holds[r], s.index) << v.buffer(r).name << " no longer holds value " << s.index;
          }
          break;
        }
        case StageArgKind::param:
          ASSERT_TRUE(arg_buffer(arg));
          EXPECT_EQ(v.buffer(arg).kind, BufferKind::param);
          EXPECT_EQ(v.buffer(arg).index, s.index);
          EXPECT_EQ(v.buffer(arg).floats(), spec::elems(prog.param_shapes.at(size_t(s.index))));
          break;
        case StageArgKind::input:
          ASSERT_TRUE(arg_buffer(arg));
          EXPECT_EQ(v.buffer(arg).kind, BufferKind::extra);
          EXPECT_EQ(v.buffer(arg).floats(), spec::elems(c.problem.input_shapes.at(size_t(s.index))));
          break;
        case StageArgKind::scratch:
          ASSERT_TRUE(arg_buffer(arg));
          EXPECT_EQ(v.buffer(arg).kind, BufferKind::scratch);
          EXPECT_EQ(v.buffer(arg).floats(), prog.scratch_elems.at(size_t(s.index)));
          break;
        case StageArgKind::null: EXPECT_TRUE(std::holds_alternative<NullArg>(arg)) << "argument " << a; break;
        case StageArgKind::geometry: {
          ASSERT_TRUE(std::holds_alternative<ValueArg>(arg)) << "argument " << a;
          const ValueArg& val = std::get<ValueArg>(arg);
          std::visit(
              [&](const auto& g) {
                ASSERT_EQ(val.bytes.size(), sizeof(g));
                EXPECT_EQ(std::memcmp(val.bytes.data(), &g, sizeof(g)), 0);
              },
              s.geom);
          EXPECT_NE(sk.source.find(val.type), std::string::npos) << val.type;
          break;
        }
      }
    }
    // A kernel never writes a buffer it reads (out of place, as eager).
    for (const auto& [r, value] : written) {
      for (BufferRef read : v.plan[i + 1].reads()) EXPECT_NE(read, r) << "in place on " << v.buffer(r).name;
      holds[r] = value;
    }
  }
  EXPECT_EQ(holds.at(v.output), prog.output_value);
}

TEST(ModelPlans, AreSoundAndRoundTrip) {
  size_t fused_count = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.text);
    std::vector<Variant> vs = generate_model_variants(c.problem, limits());
    // fused-gemm's plans are tests/fused_gemm_compile_test.cpp's, fused-conv.halo.stages' are
    // tests/fused_conv_stages_test.cpp's
    // cublaslt-fused's are CublasLtFusedPlans' below
    std::erase_if(vs, [](const Variant& v) {
      return v.candidate == Candidate::fused_gemm || v.candidate == Candidate::fused_conv ||
             v.candidate == Candidate::cublaslt_fused;
    });
    ASSERT_TRUE(vs.size() == 2u || vs.size() == 3u) << vs.size();
    const Variant& unfused = vs[0];
    const Variant& floor = vs[1];
    EXPECT_EQ(unfused.candidate, Candidate::unfused);
    EXPECT_EQ(unfused.role(), Role::baseline);
    EXPECT_EQ(floor.role(), Role::floor);
    EXPECT_TRUE(unfused.model_plan());
    EXPECT_TRUE(floor.model_plan());
    for (const Variant& v : vs) {
      SCOPED_TRACE(v.name);
      EXPECT_EQ(check_variant(v, c.problem), "");
      // The output's shape, row-major.
      spec::Shape dims;
      for (const auto& d : v.output_buffer().dims) dims.push_back(d.second);
      EXPECT_EQ(dims, v.role() == Role::floor ? c.problem.main_shape() : spec::out_shape(c.problem));
      const nlohmann::json j = to_json(v);
      const Variant back = variant_from_json(nlohmann::json::parse(j.dump()));
      EXPECT_EQ(to_json(back), j);
      EXPECT_EQ(check_variant(back, c.problem), "");
    }
    // The floor is the main step alone, on the same inputs.
    ASSERT_EQ(floor.plan.size(), 1u);
    EXPECT_TRUE(floor.source.empty());
    const StageProgram prog = render_stage_program(c.problem, StagePrecision::fp32);
    check_dataflow(c, unfused, prog);
    if (HasFatalFailure()) return;
    double bytes = 0;
    for (const StageKernel& k : prog.kernels) bytes += k.bytes;
    EXPECT_DOUBLE_EQ(unfused.kernel_bytes, bytes);
    if (!prog.kernels.empty()) {
      EXPECT_EQ(unfused.source, render_stage_module(prog));
    }
    // epilogue.stages: where a run of elementwise ops fuses, the same plan with fewer kernels,
    // each value still where the next kernel reads it, and less traffic.
    if (vs.size() == 3u) {
      ++fused_count;
      const Variant& fused = vs[2];
      EXPECT_EQ(fused.candidate, Candidate::epilogue);
      EXPECT_EQ(fused.role(), Role::solution);
      EXPECT_EQ(fused.name, "epilogue.stages");
      const StageProgram fprog =
          render_stage_program(c.problem, StagePrecision::fp32, StageOptions{.fuse_elementwise = true});
      EXPECT_LT(fprog.kernels.size(), prog.kernels.size());
      check_dataflow(c, fused, fprog);
      if (HasFatalFailure()) return;
      EXPECT_LT(fused.kernel_bytes, unfused.kernel_bytes);
    }
  }
  std::printf("[ model    ] epilogue.stages fuses a run of elementwise ops in %zu of %zu problems\n", fused_count,
              cases().size());
  EXPECT_GT(fused_count, cases().size() / 3);
}

// epilogue.stages folds a run of elementwise ops into the rows, pooling or norm kernel after it
// (its prologue) and the run after such a kernel into it (its epilogue): the kernels each problem
// should get, their traffic below unfused.stages', the operand slots shared by both sides (at
// most four: what is left over runs as a kernel of its own), and the split forms (few long rows:
// the prologue in the split kernel, the epilogue in the combine).
TEST(ModelPlans, ElementwiseRunsFoldIntoRowsPoolAndNormKernels) {
  struct Want {
    const char* spec;
    std::vector<std::string> kernels;  // name prefixes, in launch order
  };
  const std::vector<Want> wants = {
      {"linear(m=64,k=32,n=16) | group_norm(4) | hardtanh(-2,2)",
       {"ft_st_rows_thread_norm_stats", "ft_st_fold_norm_apply_"}},
      {"linear(m=64,k=32,n=16) | mul(param[k]) | batch_norm", {"ft_st_fold_rows_thread_norm_stats_", "ft_st_fold_norm_apply_"}},
      {"conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | sub(0.5) | tanh | sub(0.2) | avg_pool2d(2)", {"ft_st_fold_pool_avg_"}},
      {"conv2d(n=2,c=4,h=10,w=10,k=8,r=3,groups=2) | tanh | mul(2) | add(param[k]) | max_pool2d(2) | clamp(0,1)",
       {"ft_st_fold_pool_max_"}},
      {"linear(m=64,k=32,n=300) | softmax(1) | add(param[1]) | mul(2) | sigmoid", {"ft_st_fold_rows_block_softmax_"}},
      {"linear(m=64,k=32,n=16) | gelu | reduce_mean(1) | tanh", {"ft_st_fold_rows_thread_mean_"}},
      // five tensor operands: the prologue's three and one of the epilogue's fit; the last op runs alone
      {"linear(m=64,k=32,n=16) | add(param[k]) | mul(param[k]) | add(param[k]) | group_norm(4) | mul(param[k]) | "
       "add(param[k])",
       {"ft_st_fold_rows_thread_norm_stats_", "ft_st_fold_norm_apply_", "ft_st_op_"}},
      // a name ends the run: the named value is written
      {"linear(m=64,k=32,n=16) | relu | as a | layer_norm(1) | add(a)", {"ft_st_op_", "ft_st_rows_thread_norm_stats", "ft_st_fold_norm_apply_"}},
      // few long rows: split; the prologue in the split kernel, the epilogue in the combine
      {"linear(m=16384,k=4,n=16) | relu | reduce_sum(0) | mul(2)",
       {"ft_st_fold_rows_split_sum_", "ft_st_fold_rows_combine_sum_"}},
      {"linear(m=16384,k=4,n=16) | mul(param[k]) | batch_norm | relu",
       {"ft_st_fold_rows_split_norm_stats_", "ft_st_fold_rows_combine_norm_stats_", "ft_st_fold_norm_apply_"}},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.spec);
    const spec::Problem p = spec::parse(w.spec);
    const StageProgram unfused = render_stage_program(p, StagePrecision::fp32);
    const StageProgram fused = render_stage_program(p, StagePrecision::fp32, StageOptions{.fuse_elementwise = true});
    ASSERT_EQ(fused.kernels.size(), w.kernels.size());
    for (size_t i = 0; i < w.kernels.size(); ++i)
      EXPECT_TRUE(fused.kernels[i].name.starts_with(w.kernels[i])) << fused.kernels[i].name << " is not " << w.kernels[i];
    EXPECT_LT(fused.kernels.size(), unfused.kernels.size());
    double fb = 0, ub = 0;
    for (const StageKernel& k : fused.kernels) fb += k.bytes;
    for (const StageKernel& k : unfused.kernels) ub += k.bytes;
    EXPECT_LT(fb, ub);
    EXPECT_EQ(fused.value_shapes.at(size_t(fused.output_value)), spec::out_shape(p));
    // every fold's kernel names its fold geometry and at most four operand slots
    for (const StageKernel& k : fused.kernels) {
      if (k.code.find("_FOLD(") == std::string::npos) continue;
      const auto fg = std::find_if(k.args.begin(), k.args.end(), [](const StageArg& a) {
        return a.kind == StageArgKind::geometry && std::holds_alternative<StageFoldGeom>(a.geom);
      });
      ASSERT_NE(fg, k.args.end()) << k.name;
      EXPECT_LE(std::get<StageFoldGeom>(fg->geom).pro_slots, kStageChainOperands);
    }
    // and the plan of epilogue.stages runs them (check_dataflow in AreSoundAndRoundTrip)
    const std::vector<Variant> vs = generate_model_variants(p, limits());
    EXPECT_TRUE(std::any_of(vs.begin(), vs.end(), [](const Variant& v) { return v.name == "epilogue.stages"; }));
  }
}

// cublaslt-fused: for every GEMM problem, the heuristic's algorithms of rank 1-3 before the fused
// stages; where the first op is one cuBLASLt's epilogue has (relu, tanh GELU), ranks 0-3 with it
// in the GEMM step and the stages of the rest. Each plan is sound for the problem, round-trips
// (the activation and rank included), and its kernels read what the stages of the rest read.
TEST(ModelPlans, CublasLtFusedPlans) {
  size_t gemm_problems = 0, with_activation = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.text);
    std::vector<Variant> vs = generate_model_variants(c.problem, limits());
    std::erase_if(vs, [](const Variant& v) { return v.candidate != Candidate::cublaslt_fused; });
    if (c.problem.is_conv()) {
      EXPECT_TRUE(vs.empty());
      continue;
    }
    ++gemm_problems;
    const GeneralEpilogue e = general_epilogue(c.problem);
    const bool first_relu = !e.stages.empty() && e.stages[0].kind == spec::StageKind::op &&
                            (e.stages[0].op.kind == spec::OpKind::relu || e.stages[0].op.kind == spec::OpKind::gelu_tanh);
    with_activation += first_relu;
    ASSERT_EQ(vs.size(), first_relu ? 7u : 3u);
    spec::Problem rest = general_form(c.problem);
    if (first_relu) rest.stages.erase(rest.stages.begin());
    const StageOptions fuse{.fuse_elementwise = true};
    for (size_t i = 0; i < vs.size(); ++i) {
      const Variant& v = vs[i];
      SCOPED_TRACE(v.name);
      EXPECT_EQ(v.design, "cublaslt-fused");
      EXPECT_EQ(v.role(), Role::solution);
      EXPECT_EQ(check_variant(v, c.problem), "");
      const GemmStep& g = v.plan.at(0).gemm();
      const bool act = i >= 3;
      EXPECT_EQ(g.algo, act ? int(i) - 3 : int(i) + 1);
      EXPECT_EQ(g.activation == GemmActivation::none, !act);
      EXPECT_EQ(v.name, act ? fmt::format("cublaslt-fused.{}.a{}", gemm_activation_name(g.activation), g.algo)
                            : fmt::format("cublaslt-fused.a{}", g.algo));
      check_dataflow(c, v, render_stage_program(act ? rest : c.problem, StagePrecision::fp32, fuse));
      if (HasFatalFailure()) return;
      const nlohmann::json j = to_json(v);
      const Variant back = variant_from_json(nlohmann::json::parse(j.dump()));
      EXPECT_EQ(to_json(back), j);
      EXPECT_EQ(back.plan.at(0).gemm().algo, g.algo);
      EXPECT_EQ(back.plan.at(0).gemm().activation, g.activation);
    }
  }
  EXPECT_GE(gemm_problems, 30u);
  EXPECT_GE(with_activation, 1u);  // KernelBench's #63 (relu | div(2))
}

// The plans' JSON keeps what plans before cublaslt-fused wrote (no activation or algo key for a
// GEMM step at rank 0 without one), reads them back, and refuses a rank or activation it cannot run.
TEST(ModelPlans, GemmStepActivationAndRankInJson) {
  const spec::Problem p = spec::parse("linear(m=64,k=32,n=16) | relu | div(2)");
  const std::vector<Variant> vs = generate_model_variants(p, limits());
  const nlohmann::json unfused = to_json(vs.at(0));
  EXPECT_EQ(unfused.dump().find("\"activation\""), std::string::npos);
  EXPECT_EQ(unfused.dump().find("\"algo\""), std::string::npos);
  const auto lt = std::find_if(vs.begin(), vs.end(), [](const Variant& v) { return v.name == "cublaslt-fused.relu.a2"; });
  ASSERT_NE(lt, vs.end());
  EXPECT_EQ(lt->plan.size(), 2u);  // the GEMM with relu, then div alone
  nlohmann::json j = to_json(*lt);
  nlohmann::json& step = j.at("plan").at(0);
  EXPECT_EQ(step.at("activation"), "relu");
  EXPECT_EQ(step.at("algo"), 2);
  {
    nlohmann::json bad = j;
    bad.at("plan").at(0).at("activation") = "gelu";  // PyTorch's erf GELU: cuBLASLt has none
    EXPECT_THROW((void)variant_from_json(bad), InputError);
  }
  {
    Variant v = *lt;
    std::get<GemmStep>(v.plan[0].op).algo = GemmStep::kMaxAlgo + 1;
    EXPECT_NE(check_variant(v, p).find("algorithm rank"), std::string::npos);
    std::get<GemmStep>(v.plan[0].op).algo = -1;
    EXPECT_NE(check_variant(v, p).find("algorithm rank"), std::string::npos);
  }
  // PyTorch's default GELU is the erf form: cuBLASLt's epilogue does not take it.
  for (const Variant& v : generate_model_variants(spec::parse("linear(m=64,k=32,n=16) | gelu | relu"), limits()))
    EXPECT_EQ(v.name.find("cublaslt-fused.gelu"), std::string::npos) << v.name;
  bool tanh_form = false;
  for (const Variant& v : generate_model_variants(spec::parse("linear(m=64,k=32,n=16) | gelu_tanh"), limits()))
    tanh_form |= v.name == "cublaslt-fused.gelu_tanh.a0" && v.plan.size() == 1u;  // nothing after it
  EXPECT_TRUE(tanh_form);
}

TEST(ModelPlans, MainStepsAreTheProblemsOperator) {
  const spec::Problem lin = spec::parse("linear(m=64,k=32,n=16) | layer_norm(1)");
  const Variant v = generate_model_variants(lin, limits()).at(0);
  const GemmStep& g = v.plan.at(0).gemm();
  EXPECT_TRUE(g.linear);
  EXPECT_EQ(g.gemm.m, 64);
  EXPECT_EQ(g.gemm.k, 32);
  EXPECT_EQ(g.gemm.n, 16);
  ASSERT_TRUE(g.bias);
  EXPECT_EQ(v.buffer(*g.bias).floats(), 16);
  EXPECT_EQ(v.buffer(g.b).dims_text(), "(d0, d1) = (16, 32)");  // nn.Linear's (N, K)

  const spec::Problem ct = spec::parse(
      "conv_transpose3d(n=2,c=4,d=3,h=4,w=5,k=6,r=3,stride=2,pad=1,out_pad=1,groups=2,bias=false) | relu");
  const Variant w = generate_model_variants(ct, limits()).at(0);
  const ConvNdStep& cn = w.plan.at(0).conv_nd();
  EXPECT_EQ(cn.main, spec::MainKind::conv_transpose3d);
  EXPECT_FALSE(cn.bias);
  EXPECT_EQ(w.buffer(cn.filters).dims_text(), "(d0, d1, d2, d3, d4) = (4, 3, 3, 3, 3)");  // (C, K/g, T, R, S)
  EXPECT_EQ(w.buffer(cn.out).floats(), ct.main_out_elems());
}

TEST(ModelPlans, ANamedValueStaysAliveUntilItsLastUse) {
  // x0 is read by the last stage: its buffer must not be reused by the three kernels between.
  const spec::Problem p = spec::parse("linear(m=64,k=32,n=16) | as x0 | relu | sigmoid | tanh | add(x0)");
  const Variant v = generate_model_variants(p, limits()).at(0);
  ASSERT_EQ(v.plan.size(), 5u);
  const BufferRef x0 = v.plan[0].gemm().out;
  for (size_t i = 1; i + 1 < v.plan.size(); ++i)
    for (BufferRef w : v.plan[i].writes()) EXPECT_NE(w, x0) << "step " << i + 1;
  const auto last = v.plan.back().reads();
  EXPECT_NE(std::find(last.begin(), last.end(), x0), last.end());
  // Without the name, three buffers hold the five values (two ping-pong plus the output).
  const spec::Problem q = spec::parse("linear(m=64,k=32,n=16) | relu | sigmoid | tanh | exp");
  const Variant u = generate_model_variants(q, limits()).at(0);
  int scratch = 0;
  for (const Buffer& b : u.buffers) scratch += b.kind == BufferKind::scratch;
  EXPECT_EQ(scratch, 3);
}

TEST(ModelPlans, TheCheckerCatchesBrokenPlans) {
  const spec::Problem p = spec::parse("linear(m=64,k=32,n=16) | as a | sigmoid | mul(a)");
  const Variant good = generate_model_variants(p, limits()).at(0);
  ASSERT_EQ(check_variant(good, p), "");
  {
    Variant v = good;
    std::swap(v.plan[0], v.plan[1]);  // the first kernel before the GEMM
    EXPECT_NE(check_variant(v, p).find("before any step writes it"), std::string::npos);
  }
  {
    Variant v = good;
    KernelStep& k = v.plan[1].kernel();
    k.args.at(k.writes.at(0)) = *v.find_buffer("x");
    EXPECT_NE(check_variant(v, p).find("an input of the problem"), std::string::npos) << check_variant(v, p);
  }
  {
    Variant v = good;
    std::get<GemmStep>(v.plan[0].op).gemm.n = 17;
    EXPECT_NE(check_variant(v, p).find("not the problem's"), std::string::npos);
  }
  {
    Variant v = good;
    v.plan[1].kernel().writes.push_back(v.plan[1].kernel().args.size() - 1);  // the geometry
    EXPECT_NE(check_variant(v, p).find("written arguments"), std::string::npos);
  }
  {
    Variant v = good;
    v.buffers[*v.find_buffer("w")].dims[0].second = 15;
    EXPECT_NE(check_variant(v, p).find("weights buffer w"), std::string::npos);
  }
  {
    // A v2 step in a conv2d chain plan, and a chain plan's steps in a v2 problem.
    const spec::Problem chain = spec::parse("conv2d(n=1,c=2,h=8,w=8,k=4,r=3) | relu");
    Variant v = good;
    EXPECT_NE(check_variant(v, chain), "");
  }
}

// generate_variants (tune, compile) hands version-2 problems to generate_model_variants, and
// refuses the channels-last ones tune refuses (spec::why_not_tunable).
TEST(ModelPlans, GenerateVariantsTakesThemAndTheModelEntryRefusesChains) {
  const spec::Problem v2 = spec::parse("linear(m=64,k=32,n=16) | relu");
  const std::vector<Variant> got = generate_variants(v2, limits());
  const std::vector<Variant> want = generate_model_variants(v2, limits());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(to_json(got[i]), to_json(want[i]));
  EXPECT_THROW((void)generate_variants(spec::parse("conv3d(n=1,c=2,d=4,h=4,w=4,k=2,r=3,in=nhwc)"), limits()),
               InputError);
  const spec::Problem chain = spec::parse("conv2d(n=1,c=2,h=8,w=8,k=4,r=3) | relu");
  EXPECT_THROW((void)generate_model_variants(chain, limits()), InputError);
}

// tests/gpu_model_steps_test.cpp plants a shifted value by running the plan of `spec | add(0.05)`
// for `spec`: the checker must let it through (same buffers and shapes), so only verification
// can catch it.
TEST(ModelPlans, AShiftedPlanIsSoundForTheUnshiftedProblem) {
  for (const char* spec : {"linear(m=64,k=32,n=16) | relu", "conv3d(n=2,c=3,d=4,h=6,w=6,k=4,r=3) | group_norm(2) | add(input1)"}) {
    const Variant planted = generate_model_variants(spec::parse(std::string(spec) + " | add(0.05)"), limits()).at(0);
    EXPECT_EQ(check_variant(planted, spec::parse(spec)), "") << spec;
  }
}

TEST(ModelPlans, ByValueArgumentsAndNullsSerialize) {
  const spec::Problem p = spec::parse("conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | group_norm(2) | add(input1)");
  const Variant v = generate_model_variants(p, limits()).at(0);
  const nlohmann::json j = to_json(v);
  bool value = false, null = false;
  for (const auto& st : j.at("plan")) {
    if (st.at("kind") != "kernel") continue;
    for (const auto& a : st.at("args")) {
      null |= a.is_null();
      if (a.is_object()) {
        value = true;
        EXPECT_EQ(a.at("bytes").get<std::string>().size() % 16, 0u);
      }
    }
  }
  EXPECT_TRUE(value);
  EXPECT_TRUE(null);
  EXPECT_EQ(j.at("plan").at(0).at("kind"), "conv_nd");
  nlohmann::json bad = j;
  for (auto& st : bad.at("plan"))
    for (auto& a : st["args"])
      if (a.is_object()) a["bytes"] = "0g";
  EXPECT_THROW((void)variant_from_json(bad), InputError);
}

// Every distinct stage kernel of every plan, on two threads; and two whole modules, as a variant
// carries them.
TEST(ModelPlans, EveryKernelCompilesForSm90) {
  std::map<std::string, std::string> sources;  // name -> standalone source
  std::set<std::string> step_names;
  for (const Case& c : cases()) {
    for (const StageOptions o : {StageOptions{}, StageOptions{.fuse_elementwise = true}})
      for (const StageKernel& k : render_stage_program(c.problem, StagePrecision::fp32, o).kernels)
        sources.emplace(k.name, k.source);
    // every variant's kernels: unfused.stages's and epilogue.stages's (the fused GEMM's and fused
    // conv's main kernels compile in their own tests)
    for (const Variant& v : generate_model_variants(c.problem, limits()))
      for (const Step& st : v.plan)
        if (st.kind() == StepKind::kernel && v.candidate != Candidate::fused_gemm &&
            !st.kernel().name.starts_with("ft_fused_conv"))
          step_names.insert(st.kernel().name);
  }
  for (const std::string& n : step_names) EXPECT_TRUE(sources.count(n)) << n;
  std::vector<std::string> names;
  for (const auto& [name, _] : sources) names.push_back(name);
  std::vector<gpu::CompileResult> out(names.size());
  std::atomic<size_t> next{0};
  const auto worker = [&] {
    for (size_t i = next++; i < names.size(); i = next++) {
      gpu::CompileOptions opt;
      opt.arch = "sm_90";
      out[i] = gpu::compile_cuda(sources.at(names[i]), names[i] + ".cu", opt);
    }
  };
  auto a = std::async(std::launch::async, worker);
  auto b = std::async(std::launch::async, worker);
  a.get();
  b.get();
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_TRUE(out[i].ok()) << names[i] << "\n" << out[i].log;
    EXPECT_EQ(out[i].kernel_names, std::vector<std::string>{names[i]});
  }
  std::printf("[ model    ] %zu distinct stage kernels of %zu problems compiled for sm_90\n", names.size(),
              cases().size());
  for (const char* text : {"conv_transpose3d(n=2,c=4,d=3,h=4,w=5,k=6,r=3) | as a | softmax(1) | group_norm(2) | "
                           "max_pool3d(2) | reduce_sum(all)",
                           "matmul(batch=2,m=20,k=2,n=12) | add(param[k]) | as a | layer_norm(2) | mul(a)"}) {
    const Variant v = generate_model_variants(spec::parse(text), limits()).at(0);
    gpu::CompileOptions opt;
    opt.arch = "sm_90";
    const gpu::CompileResult r = gpu::compile_cuda(v.source, "module.cu", opt);
    ASSERT_TRUE(r.ok()) << text << "\n" << r.log;
    std::set<std::string> want;
    for (const Step& st : v.plan)
      if (st.kind() == StepKind::kernel) want.insert(st.kernel().name);
    EXPECT_EQ(std::set<std::string>(r.kernel_names.begin(), r.kernel_names.end()), want) << text;
  }
}

}  // namespace
}  // namespace fusetune::codegen
