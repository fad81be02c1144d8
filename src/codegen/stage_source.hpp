#pragma once
// The epilogue of any version-2 problem as PyTorch eager runs it: one kernel per stage
// (kernel_templates/stages/stage_kernels.cu), each with its complete NVRTC source, launch shape,
// arguments and bytes moved. Standalone and GPU-free: the `unfused` candidate's integration maps
// a StageProgram onto a Variant plan (value ids onto buffers, StageGeom onto kernel parameters).
//
// Values: value 0 is the main operator's output; each kernel that writes a tensor makes a new
// value (a norm's statistics kernel writes scratch instead). `as NAME` makes no kernel: named
// value j is an alias of the value current at that stage (named_values[j]). Parameters and extra
// inputs are device buffers of the element type, of Problem::param_shapes / input_shapes; a
// value is a dense row-major buffer of its shape.
//
// Chain-form problems are rendered through their general-form equivalent: each pre op a stage,
// the channel reduction a reduce over dim 1 with keepdim, each post op a stage; parameter i has
// the shape (1, K, 1, ...) of the main output's rank.
#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/variant.hpp"
#include "spec/problem.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {

// fp32: the `unfused` candidate's kernels. fp64: the same kernels on doubles, with the ops in
// op_math.cpp's float64 form (reference/render_double.hpp) -- a GPU twin of model_stages.cpp;
// compile it with --fmad=false, as the other reference kernels.
enum class StagePrecision { fp32, fp64 };

inline constexpr int kStageMaxRank = 6;  // FT_ST_MAX_RANK

// Host mirrors of stage_kernels.cu's geometry structs, field for field (8-byte fields only, so
// the layouts agree; every rendered source static_asserts the device sizes against these).
struct StageEwGeom {  // ft_st_ew_geom
  int64_t rank = 0, total = 0;
  std::array<int64_t, kStageMaxRank> ext{}, sx{}, sa0{}, sa1{};
};
struct StageRowsGeom {  // ft_st_rows_geom
  int64_t rows = 0, len = 0, nk = 0, nr = 0, chunks = 1, chunk_len = 0;
  std::array<int64_t, kStageMaxRank> kext{}, kstr{}, rext{}, rstr{};
  double eps = 0.0;
};
struct StagePoolGeom {  // ft_st_pool_geom
  int64_t total = 0;
  std::array<int64_t, 3> in{}, out{}, k{}, s{}, p{};
  int64_t count_include_pad = 0;
};
struct StageGroupGeom {  // ft_st_group_geom
  int64_t div = 1, mod = 1;
};
inline constexpr int kStageChainOperands = 4;  // FT_ST_CHAIN_OPERANDS
struct StageChainGeom {  // ft_st_chain_geom
  int64_t rank = 0, total = 0;
  std::array<int64_t, kStageMaxRank> ext{}, sx{};
  std::array<std::array<int64_t, kStageMaxRank>, kStageChainOperands> sa{};
};
struct StageFoldGeom {  // ft_st_fold_geom
  int64_t in_rank = 0, out_rank = 0, pro_slots = 0;
  std::array<int64_t, kStageMaxRank> in_ext{}, out_ext{};
  std::array<std::array<int64_t, kStageMaxRank>, kStageChainOperands> sa{};
};
static_assert(sizeof(StageEwGeom) == 8 * (2 + 4 * kStageMaxRank));
static_assert(sizeof(StageRowsGeom) == 8 * (6 + 4 * kStageMaxRank + 1));
static_assert(sizeof(StagePoolGeom) == 8 * (1 + 15 + 1));
static_assert(sizeof(StageGroupGeom) == 16);
static_assert(sizeof(StageChainGeom) == 8 * (2 + (2 + kStageChainOperands) * kStageMaxRank));
static_assert(sizeof(StageFoldGeom) == 8 * (3 + (2 + kStageChainOperands) * kStageMaxRank));
using StageGeom = std::variant<StageEwGeom, StageRowsGeom, StagePoolGeom, StageGroupGeom, StageChainGeom, StageFoldGeom>;

// One kernel argument, in the kernel's parameter order.
enum class StageArgKind {
  value,     // a device buffer holding value `index` (read; `written`: the kernel's output)
  param,     // parameter tensor `index`
  input,     // extra input tensor `index`
  scratch,   // scratch buffer `index` (StageProgram::scratch_elems); read, or `written`
  null,      // a null pointer (an operand slot or affine parameter the stage does not use)
  geometry,  // a struct passed by value: `geom`
};
struct StageArg {
  StageArgKind kind = StageArgKind::null;
  int index = -1;
  bool written = false;
  int named = -1;  // value: read as named value `named` (an operand), else -1
  StageGeom geom;  // geometry only
};

struct StageKernel {
  int stage = -1;      // the (general-form) stage it runs
  // extern "C": base, "_i64" when it indexes in 64 bits (a buffer of 2^30 elements or more),
  // precision. Content-derived: one name, one source, so a module holds each name once.
  std::string name;
  std::string source;  // complete: NVRTC (or nvcc -c) compiles it alone
  std::string code;    // its part of `source` after the shared templates (functor, instantiation)
  LaunchConfig launch;
  std::vector<StageArg> args;
  double bytes = 0;    // compulsory traffic: each buffer read or written once
};

struct StageProgram {
  StagePrecision precision = StagePrecision::fp32;
  int64_t elem_bytes = 4;
  std::vector<spec::Stage> stages;              // the general form (chain form converted)
  std::vector<spec::Shape> param_shapes;        // as broadcast against the value they apply to
  std::vector<spec::Shape> value_shapes;        // value id -> shape; [0] the main output
  std::vector<int> named_values;                // named value j -> value id
  std::vector<int64_t> scratch_elems;           // scratch buffer -> elements of the element type
  std::vector<StageKernel> kernels;             // in launch order
  int output_value = 0;                         // the problem's output
};

// How stages become kernels: one per stage as eager runs them, or (fuse_elementwise: the
// `epilogue.stages` design) every run of consecutive elementwise ops that keep the value's shape,
// with at most kStageChainOperands tensor operands among them, in no pass of its own: folded into
// the rows, pooling or norm kernel after it (applied to each element that kernel reads) or before
// it (applied to each element it writes; a norm's statistics excepted), kStageChainOperands tensor
// operands at most per kernel, else as one kernel of its own (FT_DEFINE_STAGE_CHAIN).
struct StageOptions {
  bool fuse_elementwise = false;
};

// Throws spec::ShapeFault / InputError for a problem the shape rules reject or an op without its
// operands; a tensor of rank above kStageMaxRank is an InputError. fuse_elementwise is fp32 only.
[[nodiscard]] StageProgram render_stage_program(const spec::Problem& problem, StagePrecision precision,
                                                StageOptions options = {});

// One source defining every distinct kernel of the program (each name once): what a Variant
// carries as its single source.
[[nodiscard]] std::string render_stage_module(const StageProgram& program);

// The general-form stages and parameter shapes of any problem (chain form converted as above).
struct GeneralEpilogue {
  std::vector<spec::Stage> stages;
  std::vector<spec::Shape> param_shapes;
};
[[nodiscard]] GeneralEpilogue general_epilogue(const spec::Problem& problem);
// The problem itself in the general form: general_epilogue's stages and parameter shapes, no
// chain-form parts.
[[nodiscard]] spec::Problem general_form(const spec::Problem& problem);

}  // namespace fusetune::codegen
