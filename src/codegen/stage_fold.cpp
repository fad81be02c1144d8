// The fold of `epilogue.stages` (stage_renderer.hpp): a run of elementwise ops as the prologue
// of the rows, pooling or norm kernel after it and the run after such a kernel as its epilogue
// (kernel_templates/stages/stage_kernels.cu, FT_DEFINE_STAGE_*_FOLD), so neither run makes a pass
// over the value of its own.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/op_render.hpp"
#include "codegen/stage_renderer.hpp"
#include "common/fnv1a.hpp"

namespace fusetune::codegen::stage_detail {

using spec::StageKind;

// Tensor operands of the op stages in [first, last).
int Renderer::tensor_operands(int first, int last) const {
  int n = 0;
  for (int j = first; j < last; ++j) {
    const spec::Stage& st = general_.stages[size_t(j)];
    if (st.kind != StageKind::op) continue;
    n += int(std::count_if(st.op.args.begin(), st.op.args.end(), [](const spec::Operand& a) { return !a.scalar(); }));
  }
  return n;
}

// Stages whose kernels read their input and write their output through ft_st_fold's loader.
bool Renderer::foldable(int j) const {
  switch (general_.stages[size_t(j)].kind) {
    case StageKind::reduce:
    case StageKind::logsumexp:
    case StageKind::softmax:
    case StageKind::log_softmax:
    case StageKind::pool:
    case StageKind::norm: return true;
    case StageKind::op:
    case StageKind::name: return false;
  }
  return false;
}

Renderer::FoldSide Renderer::fold_side(int first, int last, std::vector<StageArg>& args, std::vector<Shape>& shapes,
                                       double& moved) const {
  FoldSide f;
  for (int s = first; s < last; ++s) {
    spec::Op local = general_.stages[size_t(s)].op;
    for (auto& a : local.args) {
      if (a.scalar()) continue;
      auto [arg, ashape] = operand(a);
      args.push_back(arg);
      moved += bytes(ashape);
      a = spec::Operand{true, 0.0, int(shapes.size())};
      shapes.push_back(ashape);
    }
    f.comment += (s > first ? " | " : "") + op_comment(general_.stages[size_t(s)].op);
    f.body += "    v = " + render_op_expr(local, "v", ChanLayout{1, false}) + ";\n";
  }
  return f;
}

// The functor of one side ("ft_st_no_op" when it has no ops) and its code.
std::string Renderer::fold_functor(const std::string& name, const FoldSide& f, std::string& code) {
  if (f.body.empty()) return "ft_st_no_op";
  code += "// " + f.comment + "\nstruct " + name +
          " {\n  __device__ ft_st_t operator()(ft_st_t v, const ft_st_t* chan) const {\n"
          "    const int k = 0;  // the operand slot's offset\n    (void)k;\n    (void)chan;\n" +
          f.body + "    return v;\n  }\n};\n";
  return name;
}

// Stages [first, anchor) as the prologue of stage `anchor`'s kernels and (anchor, last) as
// their epilogue (FT_DEFINE_STAGE_*_FOLD): one read of the value before the prologue, one
// write of the value after the epilogue. A norm's statistics kernel takes the prologue only;
// its apply kernel both.
void Renderer::fold(int first, int anchor, int last) {
  const spec::Stage& st = general_.stages[size_t(anchor)];
  const Shape& in = shapes_[size_t(anchor)];
  const Shape& out = shapes_[size_t(anchor) + 1];
  std::vector<StageArg> slots;
  std::vector<Shape> slot_shapes;
  double operand_bytes = 0;
  const FoldSide pro = fold_side(first, anchor, slots, slot_shapes, operand_bytes);
  const size_t pro_slots = slot_shapes.size();
  double epi_bytes = 0;
  const FoldSide epi = fold_side(anchor + 1, last, slots, slot_shapes, epi_bytes);
  operand_bytes += epi_bytes;
  std::vector<const Shape*> pro_shapes, epi_shapes;
  for (size_t j = 0; j < slot_shapes.size(); ++j) (j < pro_slots ? pro_shapes : epi_shapes).push_back(&slot_shapes[j]);
  while (slots.size() < size_t(kStageChainOperands)) slots.push_back(kind_arg(StageArgKind::null, -1));
  const StageFoldGeom fg = fold_geom(in, out, pro_shapes, epi_shapes);
  int64_t largest = std::max(spec::elems(in), spec::elems(out));
  for (const Shape& a : slot_shapes) largest = std::max(largest, spec::elems(a));
  // Content-derived names: the stage's kind and both sides' ops.
  const std::string tag = hex16(fnv1a64(pro.comment + "\n" + pro.body + "\n|\n" + epi.comment + "\n" + epi.body));
  const auto with_slots = [&](std::vector<StageArg> head, std::vector<StageArg> tail) {
    head.insert(head.end(), slots.begin(), slots.end());
    head.insert(head.end(), tail.begin(), tail.end());
    return head;
  };
  const int dst = new_value(shapes_[size_t(last)]);

  switch (st.kind) {
    case StageKind::pool: {
      const bool is_max = st.pool == spec::PoolKind::max;
      const StagePoolGeom g = pool_geom(st, in, out);
      const KernelId id = kernel_id(std::string("ft_st_fold_pool_") + (is_max ? "max_" : "avg_") + tag, largest);
      std::string code;
      const std::string p = fold_functor(id.name + "_pro", pro, code);
      const std::string e = fold_functor(id.name + "_epi", epi, code);
      code += "FT_DEFINE_STAGE_POOL_FOLD(" + id.name + ", " + (is_max ? "true" : "false") + ", " + id.index + ", " + p +
              ", " + e + ")\n";
      add(first, id.name, code, launch(grid_for(g.total, kBlock), uint32_t(kBlock)),
          with_slots({value_arg(current_)}, {value_arg(dst, true), geom_arg(g), geom_arg(fg)}),
          bytes(in) + bytes(out) + operand_bytes);
      break;
    }
    case StageKind::norm: {
      const NormStats stats = norm_stats(st, in);
      // The statistics kernel(s): the prologue only (its own functor name, the epilogue's
      // operands unread).
      if (pro.body.empty()) {
        rows_kernel(first, st, stats.g, scratch_arg(stats.scratch, true), bytes(in) + stats.bytes);  // as unfused's
      } else {
        folded_rows(first, st, stats.g, pro, FoldSide{}, tag, slots, fg, scratch_arg(stats.scratch, true), largest,
                    bytes(in) + stats.bytes + (operand_bytes - epi_bytes));
      }
      const Affine aff = affine(st);
      std::vector<StageArg> head{value_arg(current_), scratch_arg(stats.scratch, false)};
      head.insert(head.end(), aff.args.begin(), aff.args.end());
      const double moved = 2 * bytes(in) + stats.bytes + operand_bytes + aff.bytes;
      for (const Shape* p : {aff.w, aff.b}) largest = std::max(largest, p ? spec::elems(*p) : 0);
      const KernelId id = kernel_id("ft_st_fold_norm_apply_" + tag, largest);
      std::string code;
      const std::string p = fold_functor(id.name + "_pro", pro, code);
      const std::string e = fold_functor(id.name + "_epi", epi, code);
      code += "FT_DEFINE_STAGE_NORM_APPLY_FOLD(" + id.name + ", " + id.index + ", " + p + ", " + e + ")\n";
      add(first, id.name, code, launch(grid_for(spec::elems(in), kBlock), uint32_t(kBlock)),
          with_slots(head, {value_arg(dst, true), geom_arg(ew_geom(in, in, aff.w, aff.b)),
                            geom_arg(norm_groups(in, st)), geom_arg(fg)}),
          moved);
      break;
    }
    default: {  // reduce, logsumexp, softmax, log_softmax
      const StageRowsGeom g = rows_geom(in, dims_mask(in.size(), st.dims));
      folded_rows(first, st, g, pro, epi, tag, slots, fg, value_arg(dst, true), largest,
                  bytes(in) + bytes(out) + operand_bytes);
      break;
    }
  }
  current_ = dst;
}

// The rows kernel(s) of a fold: one kernel (thread or block per row) with both sides, or, for
// few long rows, the split kernel with the prologue and the combine with the epilogue.
void Renderer::folded_rows(int stage, const spec::Stage& st, StageRowsGeom g, const FoldSide& pro, const FoldSide& epi,
                           const std::string& tag, const std::vector<StageArg>& slots, const StageFoldGeom& fg,
                           StageArg dst, int64_t largest, double moved) {
  const RowsMode mode = rows_mode(st);
  largest = std::max(largest, std::max(g.rows * g.len, 2 * g.rows));
  const auto args = [&](StageArg head, StageArg out, StageGeom geom) {
    std::vector<StageArg> a{head};
    a.insert(a.end(), slots.begin(), slots.end());
    a.push_back(out);
    a.push_back(geom_arg(geom));
    a.push_back(geom_arg(fg));
    return a;
  };
  if (splits(mode, g)) {
    const Split sp = split(mode, g);
    g = sp.g;
    const int part = sp.part;
    const double part_bytes = sp.part_bytes;
    const KernelId split = kernel_id(std::string("ft_st_fold_rows_split_") + mode.name + "_" + tag, largest);
    std::string code;
    const std::string p = fold_functor(split.name + "_pro", pro, code);
    code += "FT_DEFINE_STAGE_ROWS_SPLIT_FOLD(" + split.name + ", " + mode.macro + ", " + split.index + ", " + p + ")\n";
    add(stage, split.name, code, launch(uint32_t(std::min(g.rows * g.chunks, kMaxGrid)), uint32_t(kRowBlock)),
        args(value_arg(current_), scratch_arg(part, true), g), moved + part_bytes);
    const KernelId combine = kernel_id(std::string("ft_st_fold_rows_combine_") + mode.name + "_" + tag, largest);
    std::string ccode;
    if (mode.stats) {
      // Statistics take no epilogue: the plain combine.
      ccode = "FT_DEFINE_STAGE_ROWS_COMBINE(" + combine.name + ", " + mode.macro + ", " + combine.index + ")\n";
      add(stage, combine.name, ccode, launch(grid_for(g.rows, kBlock), uint32_t(kBlock)),
          {scratch_arg(part, false), dst, geom_arg(g)}, part_bytes);
    } else {
      const std::string e = fold_functor(combine.name + "_epi", epi, ccode);
      ccode += "FT_DEFINE_STAGE_ROWS_COMBINE_FOLD(" + combine.name + ", " + mode.macro + ", " + combine.index + ", " + e +
               ")\n";
      add(stage, combine.name, ccode, launch(grid_for(g.rows, kBlock), uint32_t(kBlock)),
          args(scratch_arg(part, false), dst, g), part_bytes);
    }
    return;
  }
  const bool block = block_rows(g);
  const KernelId id = kernel_id(std::string("ft_st_fold_rows_") + (block ? "block_" : "thread_") + mode.name + "_" + tag,
                                largest);
  std::string code;
  const std::string p = fold_functor(id.name + "_pro", pro, code);
  const std::string e = fold_functor(id.name + "_epi", epi, code);
  code += std::string(block ? "FT_DEFINE_STAGE_ROWS_BLOCK_FOLD(" : "FT_DEFINE_STAGE_ROWS_THREAD_FOLD(") + id.name + ", " +
          mode.macro + ", " + id.index + ", " + p + ", " + e + ")\n";
  const LaunchConfig l = rows_launch(g);
  add(stage, id.name, code, l, args(value_arg(current_), dst, g), moved);
}

}  // namespace fusetune::codegen::stage_detail
