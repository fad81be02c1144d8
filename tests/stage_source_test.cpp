// The stage kernels of the `unfused` candidate (codegen/stage_source.hpp), GPU-free: for specs
// covering every stage kind and main operator, the program renders in both precisions, every
// distinct kernel source compiles with NVRTC for sm_90 without spills, launches stay within
// CUDA's limits up to KernelBench-sized shapes, every argument names a buffer that exists when
// the kernel runs, the geometry describes the shapes it claims, and no spec text but numbers
// reaches the source.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "codegen/op_render.hpp"
#include "codegen/stage_source.hpp"
#include "gpu/compiler.hpp"
#include "reference/model_data.hpp"
#include "reference/model_reference.hpp"
#include "reference/op_math.hpp"
#include "spec/parser.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {
namespace {

using spec::StageKind;

// The v2 examples of docs/spec-language.md and README.md, shapes at KernelBench's size (the
// first has 2^27 output elements), the awkward corners, and version 1's chain form.
const std::vector<std::string>& example_specs() {
  static const std::vector<std::string> specs = {
      "conv2d(n=128,c=64,h=128,w=128,k=128,r=3) | min(0.5) | add(param[k]) | mul(2.0)",
      "conv2d(n=64,c=64,h=256,w=256,k=128,r=3) | mul(2.0) | reduce_min(channel)",
      "conv2d(n=1,c=16,h=31,w=7,k=3,r=3,pad=1,dilation=2x1) | sub(1.5, x) | leaky_relu | reduce_mean | sigmoid",
      "conv_transpose3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3,stride=2,pad=1,out_pad=1) | as x0 | add(param[k]) | "
      "add(x0) | mul(x0) | add(x0)",
      "conv_transpose3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3,stride=2,pad=1,out_pad=1) | batch_norm | softmax(1) | "
      "max_pool3d(2) | avg_pool3d(kernel=3,stride=2,pad=1) | group_norm(8) | instance_norm(affine=true) | "
      "layer_norm(3) | logsumexp(1) | reduce_sum(all,keepdim=false)",
      "conv_transpose3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3,stride=2,pad=1,out_pad=1) | reduce_max(all) | exp",
      "linear(m=1024,k=8192,n=8192) | reduce_sum(1) | reduce_max(1) | reduce_mean(1) | logsumexp(1) | logsumexp(1)",
      "conv_transpose2d(n=16,c=64,h=512,w=512,k=128,r=3) | reduce_mean(2,3) | add(param[k]) | logsumexp(1) | "
      "reduce_sum(2,3,keepdim=false) | mul(10)",
      "linear(m=1024,k=8192,n=8192) | layer_norm(1,affine=false) | add(input1) | mul(input1)",
      "linear(m=1024,k=8192,n=8192) | softmax(-1) | log_softmax(0) | softmax(0)",
      "conv3d(n=128,c=3,d=16,h=32,w=32,k=16,r=3) | group_norm(8) | reduce_mean(1,2,3,4,keepdim=false)",
      "conv_transpose2d(n=128,c=64,h=32,w=32,k=64,r=4,stride=2,pad=1) | max_pool2d(2) | hardtanh | reduce_mean(2,3) | "
      "tanh",
      "linear(m=128,k=32768,n=32768) | sigmoid | as s | mul(s)",
      "matmul(batch=4,m=8,k=16,n=32,trans_b=true) | add(input1) | mul(input1)",
      "linear(m=64,k=32,n=16) | as a | sigmoid | mul(a)",
      "conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | reduce_mean(2,3,keepdim=false)",
      "conv3d(n=2,c=3,d=4,h=8,w=8,k=4,r=3) | logsumexp(1)",
      "linear(m=64,k=32,n=16) | softmax(-1)",
      "conv2d(n=1,c=1,h=9,w=9,k=2,r=2) | max_pool2d(2)",
      "conv2d(n=1,c=1,h=9,w=9,k=2,r=2) | avg_pool2d(kernel=3,stride=2,pad=1)",
      "conv2d(n=1,c=1,h=9,w=9,k=2,r=2) | adaptive_avg_pool2d(1)",
      "conv2d(n=8,c=3,h=8,w=8,k=4,r=3) | batch_norm",
      "conv2d(n=8,c=3,h=8,w=8,k=8,r=3) | group_norm(4)",
      "conv2d(n=8,c=3,h=8,w=8,k=8,r=3) | instance_norm",
      "linear(m=64,k=32,n=16) | layer_norm(1)",
      "linear(m=64,k=32,n=16) | clamp(-1,1) | softplus(2, 10) | leaky_relu(0.2) | hardtanh(-2,2) | gelu | gelu_tanh | "
      "silu | mish | hardswish | hardsigmoid | abs | neg | square | sqrt | log | exp | relu | div(3) | rdiv(param[k]) | "
      "max(param[1]) | min(-0.25)",
      "linear(m=8,k=4,n=4096) | max_pool1d(3,stride=2,pad=1) | avg_pool1d(kernel=2,count_include_pad=false)",
      // Few long rows: split reductions and statistics (small enough for the host emulation).
      "linear(m=32768,k=2,n=4) | batch_norm | reduce_mean(0) | relu",
      "linear(m=40000,k=2,n=3) | as a | reduce_max(0) | sub(a) | reduce_min(all) | neg",
      "matmul(batch=2,m=200,k=2,n=120) | layer_norm(2) | group_norm(1) | reduce_sum(all,keepdim=false)",
      // 2^30 elements: 64-bit indices.
      "matmul(batch=4,m=16384,k=64,n=16384) | add(param[k]) | softmax(-1) | batch_norm | max_pool1d(2) | "
      "reduce_sum(all)",
  };
  return specs;
}

// The 33 specs of tests/data/model_reference_torch.txt (its `spec` lines), PyTorch-checked.
std::vector<std::string> torch_specs() {
  std::ifstream in(std::string(FUSETUNE_SOURCE_DIR) + "/tests/data/model_reference_torch.txt");
  std::vector<std::string> specs;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("spec ", 0) == 0) specs.push_back(line.substr(5));
  }
  return specs;
}

std::vector<std::string> all_specs() {
  std::vector<std::string> specs = example_specs();
  for (const std::string& s : torch_specs()) specs.push_back(s);
  return specs;
}

int params_of(const StageKernel& k) {
  // x or partials, out or partials, geometry
  if (k.name.rfind("ft_st_op_", 0) == 0) return 5;          // x, a0, a1, out, geometry
  if (k.name.rfind("ft_st_norm_apply_", 0) == 0) return 7;  // x, stats, w, b, out, geometry, groups
  return 3;                                                // x, out, geometry
}

TEST(StageSource, TorchSpecsAreAllThere) { EXPECT_EQ(torch_specs().size(), 33u); }

TEST(StageSource, EveryStageKindAndMainOperatorIsCovered) {
  std::set<int> kinds, mains;
  for (const std::string& text : all_specs()) {
    const spec::Problem p = spec::parse(text);
    mains.insert(int(p.main));
    for (const spec::Stage& st : general_epilogue(p).stages) kinds.insert(int(st.kind));
  }
  EXPECT_EQ(mains.size(), 6u);
  EXPECT_EQ(kinds.size(), 8u);
}

// Launch shapes, argument lists and geometry against the program's values.
void check_program(const std::string& text, const spec::Problem& p, const StageProgram& prog) {
  SCOPED_TRACE(text);
  ASSERT_FALSE(prog.value_shapes.empty());
  EXPECT_EQ(prog.value_shapes[0], p.main_shape());
  EXPECT_EQ(prog.value_shapes.at(size_t(prog.output_value)), spec::out_shape(p));
  std::set<int> existing{0};
  std::set<int> scratch_written;
  std::map<int, int> stage_input;
  for (const StageKernel& k : prog.kernels) {
    SCOPED_TRACE(k.name);
    const LaunchConfig& l = k.launch;
    EXPECT_GE(l.block[0], 32u);
    EXPECT_LE(l.threads(), 1024u);
    EXPECT_EQ(l.threads() % 32, 0u);
    EXPECT_GE(l.grid[0], 1u);
    EXPECT_LE(l.grid[0], 2147483647u);
    EXPECT_LE(l.grid[1], 65535u);
    EXPECT_LE(l.grid[2], 65535u);
    EXPECT_GT(k.bytes, 0);
    ASSERT_EQ(int(k.args.size()), params_of(k));
    int written = -1, read = -1, scratch_read = -1;
    for (const StageArg& a : k.args) {
      switch (a.kind) {
        case StageArgKind::value:
          ASSERT_GE(a.index, 0);
          ASSERT_LT(a.index, int(prog.value_shapes.size()));
          if (a.written) {
            EXPECT_FALSE(existing.count(a.index)) << "value " << a.index << " written twice";
            written = a.index;
          } else {
            EXPECT_TRUE(existing.count(a.index)) << "value " << a.index << " read before it exists";
            if (read < 0) read = a.index;
          }
          if (a.named >= 0) {
            ASSERT_LT(a.named, int(prog.named_values.size()));
            EXPECT_EQ(prog.named_values[size_t(a.named)], a.index);
          }
          break;
        case StageArgKind::param:
          EXPECT_GE(a.index, 0);
          EXPECT_LT(a.index, int(prog.param_shapes.size()));
          break;
        case StageArgKind::input:
          EXPECT_GE(a.index, 0);
          EXPECT_LT(a.index, int(p.input_shapes.size()));
          break;
        case StageArgKind::scratch:
          ASSERT_GE(a.index, 0);
          ASSERT_LT(a.index, int(prog.scratch_elems.size()));
          if (a.written) {
            scratch_written.insert(a.index);
          } else {
            EXPECT_TRUE(scratch_written.count(a.index)) << "scratch " << a.index << " read before it is written";
            if (scratch_read < 0) scratch_read = a.index;
          }
          break;
        case StageArgKind::null:
        case StageArgKind::geometry: break;
      }
    }
    // The value the stage reads (a combine kernel reads its split kernel's partials instead).
    if (read >= 0) stage_input[k.stage] = read;
    ASSERT_TRUE(stage_input.count(k.stage)) << "a stage's first kernel reads the current value";
    const spec::Shape& in = prog.value_shapes[size_t(stage_input[k.stage])];
    // The geometry describes the buffers it claims.
    for (const StageArg& a : k.args) {
      if (a.kind != StageArgKind::geometry) continue;
      if (const auto* g = std::get_if<StageEwGeom>(&a.geom)) {
        ASSERT_GE(written, 0);
        EXPECT_EQ(g->total, spec::elems(prog.value_shapes[size_t(written)]));
        int64_t e = 1;
        for (int64_t d = 0; d < g->rank; ++d) e *= g->ext[size_t(d)];
        EXPECT_EQ(e, g->total);
      } else if (const auto* r = std::get_if<StageRowsGeom>(&a.geom)) {
        EXPECT_EQ(r->rows * r->len, spec::elems(in));
        if (written >= 0 && k.name.find("softmax") == std::string::npos && k.name.find("_split_") == std::string::npos) {
          EXPECT_EQ(r->rows, spec::elems(prog.value_shapes[size_t(written)]));
        }
        if (k.name.find("norm_stats") != std::string::npos) {
          EXPECT_GT(r->eps, 0.0);
        }
        // Chunks cover the row, none empty.
        EXPECT_GE(r->chunks, 1);
        EXPECT_GE(r->chunks * r->chunk_len, r->len);
        EXPECT_LT((r->chunks - 1) * r->chunk_len, r->len);
        if (k.name.find("_split_") != std::string::npos) {
          ASSERT_GE(scratch_written.size(), 1u);
          EXPECT_GT(r->chunks, 1);
          EXPECT_EQ(int64_t(k.launch.grid[0]), r->rows * r->chunks);
        }
      } else if (const auto* pg = std::get_if<StagePoolGeom>(&a.geom)) {
        ASSERT_GE(written, 0);
        EXPECT_EQ(pg->total, spec::elems(prog.value_shapes[size_t(written)]));
        EXPECT_EQ(spec::elems(in) % (pg->in[0] * pg->in[1] * pg->in[2]), 0);
      } else if (const auto* gg = std::get_if<StageGroupGeom>(&a.geom)) {
        ASSERT_GE(scratch_read, 0);
        EXPECT_EQ(2 * gg->mod, prog.scratch_elems[size_t(scratch_read)]);
      }
    }
    if (written >= 0) existing.insert(written);
  }
  EXPECT_TRUE(existing.count(prog.output_value));
}

TEST(StageSource, ProgramsAreConsistent) {
  for (const std::string& text : all_specs()) {
    const spec::Problem p = spec::parse(text);
    for (StagePrecision prec : {StagePrecision::fp32, StagePrecision::fp64}) {
      check_program(text, p, render_stage_program(p, prec));
    }
  }
}

TEST(StageSource, OneKernelPerStageAsEagerRunsThem) {
  const spec::Problem p = spec::parse(
      "conv2d(n=8,c=3,h=8,w=8,k=8,r=3) | as a | group_norm(4) | add(a) | max_pool2d(2) | softmax(1)");
  const StageProgram prog = render_stage_program(p, StagePrecision::fp32);
  std::vector<std::string> names;
  for (const StageKernel& k : prog.kernels) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ft_st_rows_thread_norm_stats_f32", "ft_st_norm_apply_f32",
                                             names.at(2), "ft_st_pool_max_f32", "ft_st_rows_thread_softmax_f32"}));
  EXPECT_EQ(names[2].rfind("ft_st_op_", 0), 0u);
  EXPECT_EQ(prog.named_values, std::vector<int>{0});
  EXPECT_EQ(prog.value_shapes.size(), 5u);  // main, normed, added, pooled, softmax
  // The residual reads value 0 as named value 0.
  EXPECT_EQ(prog.kernels[2].args[1].kind, StageArgKind::value);
  EXPECT_EQ(prog.kernels[2].args[1].index, 0);
  EXPECT_EQ(prog.kernels[2].args[1].named, 0);
  // The norm's statistics: 2 per (sample, group).
  EXPECT_EQ(prog.scratch_elems, std::vector<int64_t>{2 * 8 * 4});
}

TEST(StageSource, LongRowsGetABlockEach) {
  const spec::Problem p = spec::parse("linear(m=1024,k=64,n=8192) | softmax(-1) | reduce_sum(0)");
  const StageProgram prog = render_stage_program(p, StagePrecision::fp32);
  ASSERT_EQ(prog.kernels.size(), 2u);
  EXPECT_EQ(prog.kernels[0].name, "ft_st_rows_block_softmax_f32");
  EXPECT_EQ(prog.kernels[0].launch.grid[0], 1024u);
  EXPECT_EQ(prog.kernels[0].launch.block[0], 512u);
  EXPECT_EQ(prog.kernels[1].name, "ft_st_rows_block_sum_f32");  // 1024 rows of the column
  const auto& g = std::get<StageRowsGeom>(prog.kernels[1].args[2].geom);
  EXPECT_EQ(g.rows, 8192);
  EXPECT_EQ(g.len, 1024);
  EXPECT_EQ(g.rstr[0], 8192);
}

TEST(StageSource, FewLongRowsAreSplitIntoChunks) {
  // BatchNorm over a 2^27-element conv output: 64 channels of 2^21 elements, 16 chunks each;
  // the sum over everything: one row, 1024 chunks.
  const spec::Problem p = spec::parse(
      "conv_transpose3d(n=16,c=32,d=16,h=32,w=32,k=64,r=3,stride=2,pad=1,out_pad=1) | batch_norm | reduce_sum(all)");
  const StageProgram prog = render_stage_program(p, StagePrecision::fp32);
  std::vector<std::string> names;
  for (const StageKernel& k : prog.kernels) names.push_back(k.name);
  EXPECT_EQ(names, (std::vector<std::string>{"ft_st_rows_split_norm_stats_f32", "ft_st_rows_combine_norm_stats_f32",
                                             "ft_st_norm_apply_f32", "ft_st_rows_split_sum_f32",
                                             "ft_st_rows_combine_sum_f32"}));
  const auto& bn = std::get<StageRowsGeom>(prog.kernels[0].args[2].geom);
  EXPECT_EQ(bn.rows, 64);
  EXPECT_EQ(bn.chunks, 16);
  EXPECT_EQ(bn.chunk_len, int64_t(1) << 17);
  EXPECT_EQ(prog.kernels[0].launch.grid[0], 1024u);
  const auto& all = std::get<StageRowsGeom>(prog.kernels[3].args[2].geom);
  EXPECT_EQ(all.rows, 1);
  EXPECT_EQ(all.chunks, 1024);
  // Scratch: the statistics (2 per channel), their partials (3 per chunk), the sum's partials.
  EXPECT_EQ(prog.scratch_elems, (std::vector<int64_t>{2 * 64, 3 * 64 * 16, 1024}));
}

TEST(StageSource, BuffersOf2To30ElementsIndexIn64Bits) {
  const auto names = [](const std::string& text) {
    std::vector<std::string> out;
    for (const StageKernel& k : render_stage_program(spec::parse(text), StagePrecision::fp32).kernels) {
      out.push_back(k.name);
      const bool i64 = k.name.find("_i64_") != std::string::npos;
      EXPECT_NE(k.code.find(i64 ? ", long long)" : ", int)"), std::string::npos) << k.code;
    }
    return out;
  };
  // (4, 16384, 16384) is 2^30; the sum over all of it leaves one element, but reads 2^30.
  for (const std::string& n : names("matmul(batch=4,m=16384,k=64,n=16384) | relu | reduce_sum(all)")) {
    EXPECT_NE(n.find("_i64_f32"), std::string::npos) << n;
  }
  for (const std::string& n : names("matmul(batch=4,m=16384,k=64,n=16383) | relu | reduce_sum(all)")) {
    EXPECT_EQ(n.find("_i64_"), std::string::npos) << n;
  }
}

TEST(StageSource, BroadcastOperandsReadThroughZeroStrides) {
  // param[k] on (N, K, H, W): dims merge to (N, K, HW) with the parameter's stride 1 on K only.
  const spec::Problem p = spec::parse("conv2d(n=2,c=3,h=8,w=8,k=4,r=3) | add(param[k])");
  const StageProgram prog = render_stage_program(p, StagePrecision::fp32);
  ASSERT_EQ(prog.kernels.size(), 1u);
  const auto& g = std::get<StageEwGeom>(prog.kernels[0].args[4].geom);
  EXPECT_EQ(g.rank, 3);
  EXPECT_EQ((std::vector<int64_t>{g.ext[0], g.ext[1], g.ext[2]}), (std::vector<int64_t>{2, 4, 36}));
  EXPECT_EQ((std::vector<int64_t>{g.sx[0], g.sx[1], g.sx[2]}), (std::vector<int64_t>{144, 36, 1}));
  EXPECT_EQ((std::vector<int64_t>{g.sa0[0], g.sa0[1], g.sa0[2]}), (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(prog.kernels[0].args[1].kind, StageArgKind::param);
  EXPECT_EQ(prog.kernels[0].args[2].kind, StageArgKind::null);
}

TEST(StageSource, NoSpecTextButNumbersReachTheSource) {
  const std::string text =
      "linear(m=4,k=3,n=5) | as residualzq | add(input1) | mul(1e-30) | add(3.4e38) | min(-0.1) | as otherzq | "
      "sub(residualzq) | div(otherzq, x)";
  const spec::Problem p = spec::parse(text);
  for (StagePrecision prec : {StagePrecision::fp32, StagePrecision::fp64}) {
    const StageProgram prog = render_stage_program(p, prec);
    for (const StageKernel& k : prog.kernels) {
      EXPECT_EQ(k.source.find("residualzq"), std::string::npos) << k.source;
      EXPECT_EQ(k.source.find("otherzq"), std::string::npos) << k.source;
      EXPECT_EQ(k.source.find("input1"), std::string::npos) << k.source;
      EXPECT_EQ(k.source.find("linear("), std::string::npos) << k.source;
    }
  }
  // Numbers arrive as literals of their fp32 value (PyTorch applies a Python float to an fp32
  // tensor in fp32): op_render's for fp32, exact doubles of the float for fp64.
  const StageProgram f32 = render_stage_program(p, StagePrecision::fp32);
  EXPECT_NE(f32.kernels.at(1).source.find(fp32_literal(1e-30)), std::string::npos) << f32.kernels.at(1).source;
  EXPECT_NE(f32.kernels.at(2).source.find(fp32_literal(3.4e38)), std::string::npos) << f32.kernels.at(2).source;
  const StageProgram f64 = render_stage_program(p, StagePrecision::fp64);
  EXPECT_NE(f64.kernels.at(2).source.find("e+38"), std::string::npos) << f64.kernels.at(2).source;
}

TEST(StageSource, KernelNamesDeriveFromTheirSource) {
  // One name, one source: the integration may put kernels of several stages in one module.
  std::map<std::string, std::string> by_name;
  for (const std::string& text : all_specs()) {
    const spec::Problem p = spec::parse(text);
    for (StagePrecision prec : {StagePrecision::fp32, StagePrecision::fp64}) {
      for (const StageKernel& k : render_stage_program(p, prec).kernels) {
        const auto [it, inserted] = by_name.emplace(k.name, k.source);
        if (!inserted) {
          EXPECT_EQ(it->second, k.source) << k.name;
        }
      }
    }
  }
}

// ---- a host emulation of the kernels' indexing ----------------------------------------------
// Runs a program the way stage_kernels.cu does -- the same offset decomposition, rows, windows
// and statistics groups, from the same geometry structs -- in double, with op_math's apply_op
// for the rendered op, so the geometry and the argument lists are checked against the float64
// CPU reference without a GPU. (The device arithmetic itself needs the GPU session.)
int64_t emu_offset(int64_t i, int64_t n, const std::array<int64_t, kStageMaxRank>& ext,
                   const std::array<int64_t, kStageMaxRank>& str) {
  if (n == 1) return i * str[0];
  int64_t off = 0;
  for (int64_t d = n - 1; d >= 0; --d) {
    off += (i % ext[size_t(d)]) * str[size_t(d)];
    i /= ext[size_t(d)];
  }
  return off;
}

struct Emulator {
  const StageProgram& prog;
  std::vector<std::vector<double>> values, scratch, params, inputs;

  const std::vector<double>* buffer(const StageArg& a) const {
    switch (a.kind) {
      case StageArgKind::value: return &values.at(size_t(a.index));
      case StageArgKind::param: return &params.at(size_t(a.index));
      case StageArgKind::input: return &inputs.at(size_t(a.index));
      case StageArgKind::scratch: return &scratch.at(size_t(a.index));
      case StageArgKind::null:
      case StageArgKind::geometry: return nullptr;
    }
    return nullptr;
  }
  std::vector<double>& output(const StageArg& a) {
    if (a.kind == StageArgKind::scratch) return scratch.at(size_t(a.index));
    return values.at(size_t(a.index));
  }

  void run(const StageKernel& k) {
    const auto& args = k.args;
    const spec::Stage& st = prog.stages.at(size_t(k.stage));
    if (k.name.rfind("ft_st_op_", 0) == 0) {
      const auto& g = std::get<StageEwGeom>(args[4].geom);
      const std::vector<double>& x = *buffer(args[0]);
      const std::vector<double>* a0 = buffer(args[1]);
      const std::vector<double>* a1 = buffer(args[2]);
      spec::Op local = st.op;
      for (size_t i = 0; i < local.args.size(); ++i) {
        if (!local.args[i].scalar()) local.args[i] = spec::Operand{true, 0.0, int(i)};
      }
      std::vector<double>& out = output(args[3]);
      out.assign(size_t(g.total), 0.0);
      for (int64_t i = 0; i < g.total; ++i) {
        int64_t ox = 0, o0 = 0, o1 = 0, rest = i;
        for (int64_t d = g.rank - 1; d >= 0; --d) {
          const int64_t c = rest % g.ext[size_t(d)];
          rest /= g.ext[size_t(d)];
          ox += c * g.sx[size_t(d)], o0 += c * g.sa0[size_t(d)], o1 += c * g.sa1[size_t(d)];
        }
        const double chan[2] = {a0 ? a0->at(size_t(o0)) : 0.0, a1 ? a1->at(size_t(o1)) : 0.0};
        out[size_t(i)] = reference::apply_op(local, x.at(size_t(ox)), chan);
      }
    } else if (k.name.rfind("ft_st_rows_split_", 0) == 0) {
      const auto& g = std::get<StageRowsGeom>(args[2].geom);
      const std::vector<double>& x = *buffer(args[0]);
      std::vector<double>& part = output(args[1]);
      const bool stats = k.name.find("norm_stats") != std::string::npos;
      part.assign(size_t(g.rows * g.chunks * (stats ? 3 : 1)), 0.0);
      for (int64_t b = 0; b < g.rows * g.chunks; ++b) {
        const int64_t row = b / g.chunks, c = b % g.chunks;
        const int64_t base = emu_offset(row, g.nk, g.kext, g.kstr);
        const int64_t j0 = c * g.chunk_len, j1 = std::min(g.len, j0 + g.chunk_len);
        std::vector<double> v;
        for (int64_t j = j0; j < j1; ++j) v.push_back(x.at(size_t(base + emu_offset(j, g.nr, g.rext, g.rstr))));
        double sum = 0, mx = -INFINITY, mn = INFINITY;
        for (double e : v) sum += e, mx = std::max(mx, e), mn = std::min(mn, e);
        if (stats) {
          const double mean = sum / double(v.size());
          double m2 = 0;
          for (double e : v) m2 += (e - mean) * (e - mean);
          part[size_t(3 * b)] = double(v.size()), part[size_t(3 * b + 1)] = mean, part[size_t(3 * b + 2)] = m2;
        } else {
          part[size_t(b)] = k.name.find("_min_") != std::string::npos   ? mn
                            : k.name.find("_max_") != std::string::npos ? mx
                                                                        : sum;
        }
      }
    } else if (k.name.rfind("ft_st_rows_combine_", 0) == 0) {
      const auto& g = std::get<StageRowsGeom>(args[2].geom);
      const std::vector<double>& part = *buffer(args[0]);
      std::vector<double>& out = output(args[1]);
      const bool stats = k.name.find("norm_stats") != std::string::npos;
      out.assign(size_t(stats ? 2 * g.rows : g.rows), 0.0);
      for (int64_t r = 0; r < g.rows; ++r) {
        if (stats) {
          const double* p = &part.at(size_t(3 * r * g.chunks));
          double n = p[0], mean = p[1], m2 = p[2];
          for (int64_t c = 1; c < g.chunks; ++c) {
            const double nb = p[3 * c], delta = p[3 * c + 1] - mean, nab = n + nb;
            mean += delta * (nb / nab);
            m2 += p[3 * c + 2] + delta * delta * (n * nb / nab);
            n = nab;
          }
          out[size_t(2 * r)] = mean;
          out[size_t(2 * r + 1)] = 1.0 / std::sqrt(m2 / double(g.len) + g.eps);
        } else {
          double acc = part.at(size_t(r * g.chunks));
          for (int64_t c = 1; c < g.chunks; ++c) {
            const double v = part.at(size_t(r * g.chunks + c));
            acc = k.name.find("_min_") != std::string::npos   ? std::min(acc, v)
                  : k.name.find("_max_") != std::string::npos ? std::max(acc, v)
                                                              : acc + v;
          }
          out[size_t(r)] = k.name.find("_mean_") != std::string::npos ? acc / double(g.len) : acc;
        }
      }
    } else if (k.name.rfind("ft_st_rows_", 0) == 0) {
      const auto& g = std::get<StageRowsGeom>(args[2].geom);
      const std::vector<double>& x = *buffer(args[0]);
      std::vector<double>& out = output(args[1]);
      const bool softmax = k.name.find("softmax") != std::string::npos;
      const bool stats = k.name.find("norm_stats") != std::string::npos;
      out.assign(size_t(softmax ? g.rows * g.len : stats ? 2 * g.rows : g.rows), 0.0);
      for (int64_t r = 0; r < g.rows; ++r) {
        const int64_t base = emu_offset(r, g.nk, g.kext, g.kstr);
        std::vector<double> row;
        std::vector<int64_t> at;
        for (int64_t j = 0; j < g.len; ++j) {
          at.push_back(base + emu_offset(j, g.nr, g.rext, g.rstr));
          row.push_back(x.at(size_t(at.back())));
        }
        double sum = 0, mx = -INFINITY, mn = INFINITY;
        for (double v : row) sum += v, mx = std::max(mx, v), mn = std::min(mn, v);
        if (stats) {
          const double mean = sum / double(g.len);
          double ss = 0;
          for (double v : row) ss += (v - mean) * (v - mean);
          out[size_t(2 * r)] = mean;
          out[size_t(2 * r + 1)] = 1.0 / std::sqrt(ss / double(g.len) + g.eps);
        } else if (k.name.find("_min_") != std::string::npos) {
          out[size_t(r)] = mn;
        } else if (k.name.find("_max_") != std::string::npos) {
          out[size_t(r)] = mx;
        } else if (k.name.find("_sum_") != std::string::npos) {
          out[size_t(r)] = sum;
        } else if (k.name.find("_mean_") != std::string::npos) {
          out[size_t(r)] = sum / double(g.len);
        } else {
          double se = 0;
          for (double v : row) se += std::exp(v - mx);
          if (k.name.find("logsumexp") != std::string::npos) {
            out[size_t(r)] = std::log(se) + mx;
          } else {
            const bool log = k.name.find("log_softmax") != std::string::npos;
            for (size_t j = 0; j < row.size(); ++j) {
              out.at(size_t(at[j])) = log ? (row[j] - mx) - std::log(se) : std::exp(row[j] - mx) / se;
            }
          }
        }
      }
    } else if (k.name.rfind("ft_st_pool_", 0) == 0) {
      const auto& g = std::get<StagePoolGeom>(args[2].geom);
      const std::vector<double>& x = *buffer(args[0]);
      std::vector<double>& out = output(args[1]);
      const bool is_max = k.name.find("_max_") != std::string::npos;
      out.assign(size_t(g.total), 0.0);
      const auto window = [](int64_t o, int64_t size, int64_t kk, int64_t s, int64_t p) {
        const int64_t start = o * s - p, end = std::min(start + kk, size + p);
        return std::array<int64_t, 3>{std::max<int64_t>(start, 0), std::min(end, size), end - start};
      };
      for (int64_t o = 0; o < g.total; ++o) {
        const int64_t ow = o % g.out[2], oh = o / g.out[2] % g.out[1], od = o / g.out[2] / g.out[1] % g.out[0];
        const int64_t b = o / g.out[2] / g.out[1] / g.out[0];
        const auto wd = window(od, g.in[0], g.k[0], g.s[0], g.p[0]);
        const auto wh = window(oh, g.in[1], g.k[1], g.s[1], g.p[1]);
        const auto ww = window(ow, g.in[2], g.k[2], g.s[2], g.p[2]);
        double acc = is_max ? -INFINITY : 0.0;
        for (int64_t d = wd[0]; d < wd[1]; ++d)
          for (int64_t h = wh[0]; h < wh[1]; ++h)
            for (int64_t w = ww[0]; w < ww[1]; ++w) {
              const double v = x.at(size_t(b * g.in[0] * g.in[1] * g.in[2] + (d * g.in[1] + h) * g.in[2] + w));
              acc = is_max ? std::max(acc, v) : acc + v;
            }
        const int64_t divisor = g.count_include_pad ? wd[2] * wh[2] * ww[2]
                                                    : (wd[1] - wd[0]) * (wh[1] - wh[0]) * (ww[1] - ww[0]);
        out[size_t(o)] = is_max ? acc : acc / double(divisor);
      }
    } else {
      ASSERT_EQ(k.name.rfind("ft_st_norm_apply_", 0), 0u) << k.name;
      const auto& g = std::get<StageEwGeom>(args[5].geom);
      const auto& gg = std::get<StageGroupGeom>(args[6].geom);
      const std::vector<double>& x = *buffer(args[0]);
      const std::vector<double>& stats = *buffer(args[1]);
      const std::vector<double>* w = buffer(args[2]);
      const std::vector<double>* b = buffer(args[3]);
      std::vector<double>& out = output(args[4]);
      out.assign(size_t(g.total), 0.0);
      for (int64_t i = 0; i < g.total; ++i) {
        const int64_t grp = (i / gg.div) % gg.mod;
        double v = (x.at(size_t(i)) - stats.at(size_t(2 * grp))) * stats.at(size_t(2 * grp + 1));
        if (w) v *= w->at(size_t(emu_offset(i, g.rank, g.ext, g.sa0)));
        if (b) v += b->at(size_t(emu_offset(i, g.rank, g.ext, g.sa1)));
        out[size_t(i)] = v;
      }
    }
  }
};

std::vector<double> to_double(const std::vector<float>& v) { return {v.begin(), v.end()}; }

TEST(StageSource, HostEmulationOfTheKernelsMatchesTheReference) {
  int checked = 0, split = 0;
  for (const std::string& text : all_specs()) {
    const spec::Problem p = spec::parse(text);
    if (p.main_out_elems() > 200000) continue;  // the small ones: the CPU reference's conv is direct
    SCOPED_TRACE(text);
    const reference::ModelData data = reference::draw_model_data(p, 7);
    const std::vector<double> main = reference::main_output(p, data);
    const std::vector<double> want = reference::epilogue_reference(p, data, main, false);
    const StageProgram prog = render_stage_program(p, StagePrecision::fp64);
    Emulator emu{prog, std::vector<std::vector<double>>(prog.value_shapes.size()),
                 std::vector<std::vector<double>>(prog.scratch_elems.size()), {}, {}};
    emu.values[0] = main;
    for (const auto& v : data.params) emu.params.push_back(to_double(v));
    for (const auto& v : data.inputs) emu.inputs.push_back(to_double(v));
    bool splits = false;
    for (const StageKernel& k : prog.kernels) {
      emu.run(k);
      splits |= k.name.find("_split_") != std::string::npos;
    }
    split += splits ? 1 : 0;
    const std::vector<double>& got = emu.values.at(size_t(prog.output_value));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-9 * (1.0 + std::fabs(want[i]))) << "element " << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, 40);
  EXPECT_GE(split, 3);
}

struct Compiled {
  std::string name;
  gpu::CompileResult result;
};

// Every distinct kernel source of every spec, both precisions, with NVRTC on two threads: the
// tuner's options for fp32, the reference kernels' --fmad=false for fp64.
TEST(StageSource, EveryKernelCompilesWithoutSpills) {
  std::map<std::string, std::pair<std::string, StagePrecision>> sources;  // name -> source
  for (const std::string& text : all_specs()) {
    const spec::Problem p = spec::parse(text);
    for (StagePrecision prec : {StagePrecision::fp32, StagePrecision::fp64}) {
      for (const StageKernel& k : render_stage_program(p, prec).kernels) sources.emplace(k.name, std::pair{k.source, prec});
    }
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : sources) names.push_back(name);
  std::vector<Compiled> out(names.size());
  std::atomic<size_t> next{0};
  const auto start = std::chrono::steady_clock::now();
  const auto worker = [&] {
    for (size_t i = next++; i < names.size(); i = next++) {
      const auto& [source, prec] = sources.at(names[i]);
      gpu::CompileOptions opt;
      opt.arch = "sm_90";
      opt.strict_fp32 = prec == StagePrecision::fp64;
      out[i] = Compiled{names[i], gpu::compile_cuda(source, names[i] + ".cu", opt)};
    }
  };
  auto a = std::async(std::launch::async, worker);
  auto b = std::async(std::launch::async, worker);
  a.get();
  b.get();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int max_regs = 0;
  std::set<std::string> families;
  for (const Compiled& c : out) {
    EXPECT_TRUE(c.result.ok()) << c.name << "\n" << c.result.log;
    EXPECT_EQ(c.result.spill_stores, 0) << c.name << "\n" << c.result.log;
    EXPECT_EQ(c.result.spill_loads, 0) << c.name << "\n" << c.result.log;
    EXPECT_EQ(c.result.kernel_names, std::vector<std::string>{c.name});
    max_regs = std::max(max_regs, c.result.registers);
    families.insert(c.name.substr(0, c.name.find('_', 6)));
  }
  // Every kernel family of stage_kernels.cu, in both precisions.
  for (const char* family : {"ft_st_op_", "ft_st_rows_thread_", "ft_st_rows_block_", "ft_st_rows_split_",
                             "ft_st_rows_combine_", "ft_st_pool_max_", "ft_st_pool_avg_", "ft_st_norm_apply_"}) {
    for (const char* sfx : {"f32", "f64"}) {
      bool found = false;
      for (const std::string& n : names) found |= n.rfind(family, 0) == 0 && n.find(sfx) != std::string::npos;
      EXPECT_TRUE(found) << family << "*" << sfx;
    }
  }
  std::printf("[ stages   ] %zu distinct kernel sources compiled by NVRTC in %.1f s on 2 threads, max %d registers\n",
              names.size(), seconds, max_regs);
}

// The template alone, on its sample instantiations (tests/codegen_nvcc_test.cpp covers only the
// top folder of kernel_templates/).
TEST(StageSource, TheTemplateCompilesAloneWithNvcc) {
  if (std::system("nvcc --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "nvcc is not on PATH";
  const std::string obj = ::testing::TempDir() + "stage_kernels_sample.o";
  const std::string cmd = "nvcc -arch=sm_90 -c \"" + std::string(FUSETUNE_SOURCE_DIR) +
                          "/kernel_templates/stages/stage_kernels.cu\" -o \"" + obj + "\" 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::remove(obj.c_str());
}

// A whole program as one module (what a Variant carries), 32- and 64-bit kernels side by side,
// a kernel used by two stages defined once.
TEST(StageSource, AProgramCompilesAsOneModule) {
  const spec::Problem p = spec::parse(
      "matmul(batch=4,m=16384,k=64,n=16384) | relu | as a | reduce_sum(2) | relu | add(a) | relu | softmax(-1) | "
      "max_pool1d(2) | max_pool1d(2)");
  for (StagePrecision prec : {StagePrecision::fp32, StagePrecision::fp64}) {
    const StageProgram prog = render_stage_program(p, prec);
    std::set<std::string> names;
    for (const StageKernel& k : prog.kernels) names.insert(k.name);
    EXPECT_LT(names.size(), prog.kernels.size());  // relu and max_pool1d twice
    gpu::CompileOptions opt;
    opt.strict_fp32 = prec == StagePrecision::fp64;
    const gpu::CompileResult r = gpu::compile_cuda(render_stage_module(prog), "stage_module.cu", opt);
    ASSERT_TRUE(r.ok()) << r.log;
    EXPECT_EQ(r.spill_stores, 0) << r.log;
    EXPECT_EQ(std::set<std::string>(r.kernel_names.begin(), r.kernel_names.end()), names);
  }
}

}  // namespace
}  // namespace fusetune::codegen
