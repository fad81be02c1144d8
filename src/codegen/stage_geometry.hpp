#pragma once
// The launch shapes and geometry structs of the stage kernels (kernel_templates/stages/
// stage_kernels.cu): strides of broadcast operands, iteration spaces with mergeable dims folded,
// the rows of reductions and norm statistics. Used only by codegen/stage_source.cpp, which renders
// a problem's stages; kept apart so each file has one job.
#include <cstdint>
#include <limits>
#include <vector>

#include "codegen/stage_source.hpp"
#include "spec/problem.hpp"

namespace fusetune::codegen::stage_detail {

using spec::Shape;

constexpr int64_t kBlock = 256;     // FT_ST_BLOCK
constexpr int64_t kRowBlock = 512;  // FT_ST_ROW_BLOCK
// Rows at least this long get a block each (a tree over 512 threads); shorter ones a thread each,
// where neighbouring threads' rows are usually neighbours in memory (a reduction over channels).
constexpr int64_t kBlockRowLen = 256;
// Fewer rows than this (a block each would leave SMs idle), each at least kSplitLen long: split
// into chunks of at least kSplitChunk elements, about kSplitBlocks blocks in all (~8 per SM of an
// H100 or H200).
constexpr int64_t kSplitRows = 256;
constexpr int64_t kSplitLen = 16384;
constexpr int64_t kSplitChunk = 4096;
constexpr int64_t kSplitBlocks = 1024;
constexpr int64_t kMaxGrid = std::numeric_limits<int32_t>::max();  // grid.x limit
// Kernels touching a buffer this large index in 64 bits (FT_ST_INDEX_64, stage_kernels.cu).
constexpr int64_t kIndex64From = int64_t(1) << 30;

[[nodiscard]] int64_t ceil_div(int64_t a, int64_t b);
[[nodiscard]] uint32_t grid_for(int64_t items, int64_t per_block);
[[nodiscard]] std::vector<int64_t> dense_strides(const Shape& s);
// Elementwise geometry over `out`, reading x of shape `x` and up to two operands (null: absent,
// stride 0).
[[nodiscard]] StageEwGeom ew_geom(const Shape& out, const Shape& x, const Shape* a0, const Shape* a1);
// A run's geometry over `out` (x and every operand read through broadcast strides; nullptr: absent).
[[nodiscard]] StageChainGeom chain_geom(const Shape& out, const Shape& x, const std::vector<const Shape*>& operands);
// A fold's geometry: the prologue's operands read over `in` (slots 0..), the epilogue's over
// `out` (the slots after them).
[[nodiscard]] StageFoldGeom fold_geom(const Shape& in, const Shape& out, const std::vector<const Shape*>& pro,
                                      const std::vector<const Shape*>& epi);
// Rows over `in`: the dims in `reduced` make a row; the others, in order, number the rows.
[[nodiscard]] StageRowsGeom rows_geom(const Shape& in, const std::vector<bool>& reduced, double eps = 0.0);
[[nodiscard]] std::vector<bool> dims_mask(size_t rank, const std::vector<int>& dims);

// The rows of a norm's statistics (model_stages.cpp's norm_groups): the shape they are taken
// over, and which of its dims make a row.
struct NormView {
  Shape view;
  std::vector<bool> reduced;
};
[[nodiscard]] NormView norm_view(const Shape& in, const spec::Stage& st);
// Element i of the normed value belongs to row (i / div) % mod.
[[nodiscard]] StageGroupGeom norm_groups(const Shape& in, const spec::Stage& st);

}  // namespace fusetune::codegen::stage_detail
