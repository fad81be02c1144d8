#pragma once
// The renderer behind render_stage_program (stage_source.hpp): a problem's general-form stages
// walked in order, each becoming kernels of the program. Its work is split by job:
// stage_source.cpp renders one kernel per stage (as eager runs them) and the runs of elementwise
// ops as one kernel of their own; stage_rows.cpp the rows kernels (reductions, norm statistics)
// and a norm's shared pieces; stage_fold.cpp folds the runs into the rows, pooling and norm
// kernels next to them (`epilogue.stages`). Internal to those three files.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "codegen/stage_geometry.hpp"
#include "codegen/stage_source.hpp"
#include "codegen/stage_text.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen::stage_detail {

inline StageArg value_arg(int id, bool written = false, int named = -1) {
  StageArg a;
  a.kind = StageArgKind::value;
  a.index = id;
  a.written = written;
  a.named = named;
  return a;
}
inline StageArg kind_arg(StageArgKind kind, int index) {
  StageArg a;
  a.kind = kind;
  a.index = index;
  return a;
}
inline StageArg scratch_arg(int index, bool written) {
  StageArg a = kind_arg(StageArgKind::scratch, index);
  a.written = written;
  return a;
}
inline StageArg geom_arg(StageGeom g) {
  StageArg a;
  a.kind = StageArgKind::geometry;
  a.geom = g;
  return a;
}

// Renders the program stage by stage, tracking the current value.
class Renderer {
 public:
  Renderer(const spec::Problem& problem, StagePrecision precision, StageOptions options);

  StageProgram run();

 private:
  double bytes(const Shape& s) const { return double(spec::elems(s)) * double(prog_.elem_bytes); }

  // The end of the run of fusable stages from i: elementwise ops that keep the value's shape, with
  // `budget` tensor operands at most among them (i itself when it is none).
  int run_end(int i, int budget = kStageChainOperands) const;

  // Tensor operands of the op stages in [first, last).
  int tensor_operands(int first, int last) const;

  // Stages whose kernels read their input and write their output through ft_st_fold's loader.
  bool foldable(int j) const;

  // One side of a fold: the ops of [first, last) as a functor body, their tensor operands given
  // slots from `slot` on (appended to args and shapes).
  struct FoldSide {
    std::string comment, body;
  };

  FoldSide fold_side(int first, int last, std::vector<StageArg>& args, std::vector<Shape>& shapes,
                     double& moved) const;

  // The functor of one side ("ft_st_no_op" when it has no ops) and its code.
  static std::string fold_functor(const std::string& name, const FoldSide& f, std::string& code);

  // Stages [first, anchor) as the prologue of stage `anchor`'s kernels and (anchor, last) as
  // their epilogue (FT_DEFINE_STAGE_*_FOLD): one read of the value before the prologue, one
  // write of the value after the epilogue. A norm's statistics kernel takes the prologue only;
  // its apply kernel both.
  void fold(int first, int anchor, int last);

  // The rows kernel(s) of a fold: one kernel (thread or block per row) with both sides, or, for
  // few long rows, the split kernel with the prologue and the combine with the epilogue.
  void folded_rows(int stage, const spec::Stage& st, StageRowsGeom g, const FoldSide& pro, const FoldSide& epi,
                   const std::string& tag, const std::vector<StageArg>& slots, const StageFoldGeom& fg, StageArg dst,
                   int64_t largest, double moved);

  // Stages [first, last), elementwise ops of one shape, as one kernel: the ops applied in order to
  // each element in registers, their tensor operands numbered across the run (chan[slot]).
  void chain(int first, int last);

  static StagePoolGeom pool_geom(const spec::Stage& st, const Shape& in, const Shape& out);

  int new_value(const Shape& s);

  // A kernel's name and index type: names end in the index width and the precision ("..._f32",
  // "..._i64_f64"), so a name says everything its source depends on.
  struct KernelId {
    std::string name;
    std::string index;  // the IDX argument of the FT_DEFINE_STAGE_* macros
  };

  KernelId kernel_id(const std::string& base, int64_t largest_buffer) const;

  void add(int stage, const std::string& name, const std::string& code, LaunchConfig launch,
           std::vector<StageArg> args, double moved);

  static LaunchConfig launch(uint32_t grid, uint32_t block);

  // A tensor operand's buffer and shape.
  std::pair<StageArg, Shape> operand(const spec::Operand& a) const;

  void stage(int i);

  // A rows kernel reading the current value: thread per row or block per row by the row length;
  // few long rows of a reduction or norm statistics split over several blocks (two kernels).
  void rows_kernel(int i, const spec::Stage& st, const StageRowsGeom& g, StageArg dst, double moved);

  // Few long rows of a reduction or norm statistics run split: a block per chunk writes partials,
  // then a thread per row folds them (unfused and folded kernels alike).
  static bool splits(const RowsMode& mode, const StageRowsGeom& g);
  // The split's geometry (about kSplitBlocks blocks, chunks at least kSplitChunk long, none empty)
  // and its partials' scratch buffer.
  struct Split {
    StageRowsGeom g;
    int part = -1;  // the partials' scratch buffer
    double part_bytes = 0;
  };
  Split split(const RowsMode& mode, StageRowsGeom g);
  // Thread per row, or block per row for rows of kBlockRowLen or more.
  static bool block_rows(const StageRowsGeom& g) { return g.len >= kBlockRowLen; }
  static LaunchConfig rows_launch(const StageRowsGeom& g);

  // A norm's statistics: their rows over `in` and their scratch buffer (mean, rstd per row).
  struct NormStats {
    StageRowsGeom g;
    int scratch = -1;
    double bytes = 0;  // the scratch's
  };
  NormStats norm_stats(const spec::Stage& st, const Shape& in);
  // The apply kernel's affine arguments (the weight's and bias's buffers, or nulls), their shapes
  // (nullptr when absent) and bytes.
  struct Affine {
    std::vector<StageArg> args;
    const Shape* w = nullptr;
    const Shape* b = nullptr;
    double bytes = 0;
  };
  Affine affine(const spec::Stage& st) const;

  void split_rows_kernels(int i, const RowsMode& mode, const StageRowsGeom& rows, StageArg dst);

  StagePrecision precision_;

  StageOptions options_;

  spec::Problem general_;

  std::vector<Shape> shapes_;

  std::vector<Shape> named_shapes_;

  StageProgram prog_;

  int current_ = 0;
};

}  // namespace fusetune::codegen::stage_detail
