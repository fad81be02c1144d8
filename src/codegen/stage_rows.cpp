// The rows kernels of the stage renderer (stage_renderer.hpp): reductions, logsumexp, softmax and
// norm statistics, a thread or a block per row, few long rows split into chunks (a split kernel
// writing partials, a combine folding them); and the pieces of a norm both its unfused and its
// folded kernels take (the statistics' rows and scratch, the affine arguments).
#include <algorithm>
#include <string>

#include "codegen/stage_renderer.hpp"

namespace fusetune::codegen::stage_detail {

// A rows kernel reading the current value: thread per row or block per row by the row length;
// few long rows of a reduction or norm statistics split over several blocks (two kernels).
void Renderer::rows_kernel(int i, const spec::Stage& st, const StageRowsGeom& g, StageArg dst, double moved) {
  const RowsMode mode = rows_mode(st);
  if (splits(mode, g)) {
    split_rows_kernels(i, mode, g, dst);
    return;
  }
  const bool block = block_rows(g);
  const KernelId id = kernel_id(std::string("ft_st_rows_") + (block ? "block_" : "thread_") + mode.name,
                                std::max(g.rows * g.len, 2 * g.rows));
  const std::string& name = id.name;
  const std::string code = std::string(block ? "FT_DEFINE_STAGE_ROWS_BLOCK(" : "FT_DEFINE_STAGE_ROWS_THREAD(") + name +
                           ", " + mode.macro + ", " + id.index + ")\n";
  add(i, name, code, rows_launch(g), {value_arg(current_), dst, geom_arg(g)}, moved);
}

bool Renderer::splits(const RowsMode& mode, const StageRowsGeom& g) {
  return mode.splits && g.rows < kSplitRows && g.len >= kSplitLen;
}

LaunchConfig Renderer::rows_launch(const StageRowsGeom& g) {
  return block_rows(g) ? launch(uint32_t(std::min(g.rows, kMaxGrid)), uint32_t(kRowBlock))
                       : launch(grid_for(g.rows, kBlock), uint32_t(kBlock));
}

Renderer::Split Renderer::split(const RowsMode& mode, StageRowsGeom g) {
  // About kSplitBlocks blocks in all, each chunk at least kSplitChunk long; recounted from the
  // chunk length so that no chunk is empty.
  g.chunks = std::min(ceil_div(g.len, kSplitChunk), ceil_div(kSplitBlocks, g.rows));
  g.chunk_len = ceil_div(g.len, g.chunks);
  g.chunks = ceil_div(g.len, g.chunk_len);
  const int64_t per_chunk = mode.stats ? 3 : 1;
  Split s;
  s.g = g;
  s.part = int(prog_.scratch_elems.size());
  prog_.scratch_elems.push_back(g.rows * g.chunks * per_chunk);
  s.part_bytes = double(g.rows * g.chunks * per_chunk * prog_.elem_bytes);
  return s;
}

Renderer::NormStats Renderer::norm_stats(const spec::Stage& st, const Shape& in) {
  const NormView v = norm_view(in, st);
  NormStats s;
  s.g = rows_geom(v.view, v.reduced, st.eps);
  s.scratch = int(prog_.scratch_elems.size());
  prog_.scratch_elems.push_back(2 * s.g.rows);
  s.bytes = double(2 * s.g.rows * prog_.elem_bytes);
  return s;
}

Renderer::Affine Renderer::affine(const spec::Stage& st) const {
  Affine a;
  for (int p : {st.weight_param, st.bias_param}) {
    if (st.affine && p >= 0) {
      a.args.push_back(kind_arg(StageArgKind::param, p));
      a.bytes += bytes(prog_.param_shapes.at(size_t(p)));
      (p == st.weight_param ? a.w : a.b) = &prog_.param_shapes.at(size_t(p));
    } else {
      a.args.push_back(kind_arg(StageArgKind::null, -1));
    }
  }
  return a;
}

void Renderer::split_rows_kernels(int i, const RowsMode& mode, const StageRowsGeom& rows, StageArg dst) {
  const auto [g, part, part_bytes] = split(mode, rows);
  const double out_bytes = double((mode.stats ? 2 : 1) * g.rows * prog_.elem_bytes);
  const int64_t largest = g.rows * g.len;

  const KernelId split = kernel_id(std::string("ft_st_rows_split_") + mode.name, largest);
  add(i, split.name,
      "FT_DEFINE_STAGE_ROWS_SPLIT(" + split.name + ", " + mode.macro + ", " + split.index + ")\n",
      launch(uint32_t(std::min(g.rows * g.chunks, kMaxGrid)), uint32_t(kRowBlock)),
      {value_arg(current_), scratch_arg(part, true), geom_arg(g)}, double(largest * prog_.elem_bytes) + part_bytes);
  const KernelId combine = kernel_id(std::string("ft_st_rows_combine_") + mode.name, largest);
  add(i, combine.name,
      "FT_DEFINE_STAGE_ROWS_COMBINE(" + combine.name + ", " + mode.macro + ", " + combine.index + ")\n",
      launch(grid_for(g.rows, kBlock), uint32_t(kBlock)), {scratch_arg(part, false), dst, geom_arg(g)},
      part_bytes + out_bytes);
}

}  // namespace fusetune::codegen::stage_detail
