#include "codegen/stage_source.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "common/fnv1a.hpp"
#include "codegen/op_render.hpp"
#include "codegen/stage_renderer.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen {
namespace stage_detail {

using spec::StageKind;

Renderer::Renderer(const spec::Problem& problem, StagePrecision precision, StageOptions options)
    : precision_(precision), options_(options) {
  if (options.fuse_elementwise && precision != StagePrecision::fp32)
    throw InputError("stage kernels: fused elementwise runs are rendered in fp32 only");
  general_ = general_form(problem);
  shapes_ = spec::epilogue_shapes(general_, &named_shapes_);
  for (const Shape& s : shapes_) {
    if (s.size() > size_t(kStageMaxRank)) {
      throw InputError("stage kernels: a value of rank " + std::to_string(s.size()) + " (at most " +
                       std::to_string(kStageMaxRank) + ")");
    }
  }
  prog_.precision = precision;
  prog_.elem_bytes = precision == StagePrecision::fp32 ? 4 : 8;
  prog_.stages = general_.stages;
  prog_.param_shapes = general_.param_shapes;
  prog_.value_shapes = {shapes_[0]};
}

StageProgram Renderer::run() {
  const int n = int(general_.stages.size());
  for (int i = 0; i < n;) {
    if (!options_.fuse_elementwise) {
      stage(i++);
      continue;
    }
    // A run of elementwise ops [i, end), perhaps empty, then perhaps a kernel that can take it
    // as its prologue and the run after it as its epilogue.
    const int end = run_end(i);
    if (end < n && foldable(end)) {
      const int epi_end = run_end(end + 1, kStageChainOperands - tensor_operands(i, end));
      if (end > i || epi_end > end + 1) {
        fold(i, end, epi_end);
        i = epi_end;
        continue;
      }
    }
    if (end - i >= 2) chain(i, end);
    else stage(i);
    i = std::max(end, i + 1);
  }
  prog_.output_value = current_;
  return std::move(prog_);
}

// The end of the run of fusable stages from i: elementwise ops that keep the value's shape, with
// `budget` tensor operands at most among them (i itself when it is none).
int Renderer::run_end(int i, int budget) const {
  int operands = 0;
  int j = i;
  for (; j < int(general_.stages.size()); ++j) {
    const spec::Stage& st = general_.stages[size_t(j)];
    if (st.kind != StageKind::op || shapes_[size_t(j)] != shapes_[size_t(j) + 1]) break;
    const int tensors = tensor_operands(j, j + 1);
    if (operands + tensors > budget) break;
    operands += tensors;
  }
  return j;
}



// Stages [first, last), elementwise ops of one shape, as one kernel: the ops applied in order to
// each element in registers, their tensor operands numbered across the run (chan[slot]).
void Renderer::chain(int first, int last) {
  const Shape& shape = shapes_[size_t(first)];
  std::vector<StageArg> args{value_arg(current_)};
  std::vector<Shape> operand_shapes;
  double moved = 2 * bytes(shape);
  int64_t largest = spec::elems(shape);
  std::string comment, body;
  for (int s = first; s < last; ++s) {
    spec::Op local = general_.stages[size_t(s)].op;
    for (auto& a : local.args) {
      if (a.scalar()) continue;
      auto [arg, ashape] = operand(a);
      args.push_back(arg);
      moved += bytes(ashape);
      largest = std::max(largest, spec::elems(ashape));
      a = spec::Operand{true, 0.0, int(operand_shapes.size())};
      operand_shapes.push_back(ashape);
    }
    comment += (s > first ? " | " : "") + op_comment(general_.stages[size_t(s)].op);
    body += "    v = " + render_op_expr(local, "v", ChanLayout{1, false}) + ";\n";
  }
  std::vector<const Shape*> present;
  for (const Shape& a : operand_shapes) present.push_back(&a);
  while (args.size() < size_t(1 + kStageChainOperands)) args.push_back(kind_arg(StageArgKind::null, -1));
  const KernelId id = kernel_id("ft_st_chain_" + hex16(fnv1a64(comment + "\n" + body)), largest);
  const std::string functor = id.name + "_fn";
  const std::string code = "// " + comment + "\nstruct " + functor +
                           " {\n  __device__ ft_st_t operator()(ft_st_t v, const ft_st_t* chan) const {\n"
                           "    const int k = 0;  // the operand slot's offset\n    (void)k;\n    (void)chan;\n" +
                           body + "    return v;\n  }\n};\nFT_DEFINE_STAGE_CHAIN(" + id.name + ", " + functor + ", " +
                           id.index + ")\n";
  const int dst = new_value(shape);
  args.push_back(value_arg(dst, true));
  args.push_back(geom_arg(chain_geom(shape, shape, present)));
  add(first, id.name, code, launch(grid_for(spec::elems(shape), kBlock), uint32_t(kBlock)), std::move(args), moved);
  current_ = dst;
}

StagePoolGeom Renderer::pool_geom(const spec::Stage& st, const Shape& in, const Shape& out) {
  const auto nd = size_t(st.pool_dims);
  StagePoolGeom g;
  g.in = {1, 1, 1}, g.out = {1, 1, 1}, g.k = {1, 1, 1}, g.s = {1, 1, 1}, g.p = {0, 0, 0};
  for (size_t j = 0; j < nd; ++j) {
    const size_t t = 3 - nd + j;
    g.in[t] = in[in.size() - nd + j];
    g.out[t] = out[out.size() - nd + j];
    g.k[t] = st.window[j], g.s[t] = st.stride[j], g.p[t] = st.pad[j];
  }
  g.total = spec::elems(out);
  g.count_include_pad = st.count_include_pad ? 1 : 0;
  return g;
}

int Renderer::new_value(const Shape& s) {
  prog_.value_shapes.push_back(s);
  return int(prog_.value_shapes.size()) - 1;
}

Renderer::KernelId Renderer::kernel_id(const std::string& base, int64_t largest_buffer) const {
  const bool i64 = largest_buffer >= kIndex64From;
  return {base + (i64 ? "_i64_" : "_") + precision_suffix(precision_), i64 ? "long long" : "int"};
}

void Renderer::add(int stage, const std::string& name, const std::string& code, LaunchConfig launch,
                   std::vector<StageArg> args, double moved) {
  StageKernel k;
  k.stage = stage;
  k.name = name;
  k.code = code;
  k.source = module_source(precision_, name, {&k});
  k.launch = launch;
  k.args = std::move(args);
  k.bytes = moved;
  prog_.kernels.push_back(std::move(k));
}

LaunchConfig Renderer::launch(uint32_t grid, uint32_t block) {
  LaunchConfig l;
  l.grid = {grid, 1, 1};
  l.block = {block, 1, 1};
  return l;
}

// A tensor operand's buffer and shape.
std::pair<StageArg, Shape> Renderer::operand(const spec::Operand& a) const {
  const Shape shape = spec::operand_shape(general_, a, named_shapes_);
  if (a.value_index >= 0) return {value_arg(prog_.named_values.at(size_t(a.value_index)), false, a.value_index), shape};
  if (a.input_index >= 0) return {kind_arg(StageArgKind::input, a.input_index), shape};
  return {kind_arg(StageArgKind::param, a.param_index), shape};
}

void Renderer::stage(int i) {
  const spec::Stage& st = general_.stages[size_t(i)];
  const Shape& in = shapes_[size_t(i)];
  const Shape& out = shapes_[size_t(i) + 1];
  switch (st.kind) {
    case StageKind::name: prog_.named_values.push_back(current_); return;
    case StageKind::op: {
      std::vector<StageArg> args{value_arg(current_)};
      std::vector<Shape> shapes(2);
      std::vector<bool> present(2, false);
      double moved = bytes(in) + bytes(out);
      if (st.op.args.size() > 2) throw InputError("stage kernels: an op with more than two operands");
      for (size_t j = 0; j < 2; ++j) {
        if (j < st.op.args.size() && !st.op.args[j].scalar()) {
          auto [arg, shape] = operand(st.op.args[j]);
          args.push_back(arg);
          shapes[j] = shape;
          present[j] = true;
          moved += bytes(shape);
        } else {
          args.push_back(kind_arg(StageArgKind::null, -1));
        }
      }
      const std::string expr = op_expression(st.op, precision_);
      const std::string comment = op_comment(st.op);
      int64_t largest = std::max(spec::elems(in), spec::elems(out));
      for (size_t j = 0; j < 2; ++j) largest = std::max(largest, present[j] ? spec::elems(shapes[j]) : 0);
      const KernelId id = kernel_id("ft_st_op_" + hex16(fnv1a64(comment + "\n" + expr)), largest);
      const std::string& name = id.name;
      const std::string functor = name + "_fn";
      const std::string code = "// " + comment + "\nstruct " + functor +
                               " {\n  __device__ ft_st_t operator()(ft_st_t v, const ft_st_t* chan) const {\n"
                               "    const int k = 0;  // the operand slot's offset\n    (void)k;\n    (void)chan;\n"
                               "    return " + expr + ";\n  }\n};\nFT_DEFINE_STAGE_ELEMENTWISE(" + name + ", " +
                               functor + ", " + id.index + ")\n";
      const int dst = new_value(out);
      args.push_back(value_arg(dst, true));
      args.push_back(geom_arg(ew_geom(out, in, present[0] ? &shapes[0] : nullptr, present[1] ? &shapes[1] : nullptr)));
      add(i, name, code, launch(grid_for(spec::elems(out), kBlock), uint32_t(kBlock)), std::move(args), moved);
      current_ = dst;
      return;
    }
    case StageKind::reduce:
    case StageKind::logsumexp:
    case StageKind::softmax:
    case StageKind::log_softmax: {
      const StageRowsGeom g = rows_geom(in, dims_mask(in.size(), st.dims));
      const int dst = new_value(out);
      rows_kernel(i, st, g, value_arg(dst, true), bytes(in) + bytes(out));
      current_ = dst;
      return;
    }
    case StageKind::pool: {
      const bool is_max = st.pool == spec::PoolKind::max;
      const StagePoolGeom g = pool_geom(st, in, out);
      const KernelId id = kernel_id(std::string("ft_st_pool_") + (is_max ? "max" : "avg"), spec::elems(in));
      const std::string& name = id.name;
      const int dst = new_value(out);
      add(i, name, "FT_DEFINE_STAGE_POOL(" + name + ", " + (is_max ? "true" : "false") + ", " + id.index + ")\n",
          launch(grid_for(g.total, kBlock), uint32_t(kBlock)), {value_arg(current_), value_arg(dst, true), geom_arg(g)},
          bytes(in) + bytes(out));
      current_ = dst;
      return;
    }
    case StageKind::norm: {
      const NormStats stats = norm_stats(st, in);
      rows_kernel(i, st, stats.g, scratch_arg(stats.scratch, true), bytes(in) + stats.bytes);
      // The apply kernel.
      const Affine aff = affine(st);
      std::vector<StageArg> args{value_arg(current_), scratch_arg(stats.scratch, false)};
      args.insert(args.end(), aff.args.begin(), aff.args.end());
      const double moved = 2 * bytes(in) + stats.bytes + aff.bytes;
      const int dst = new_value(out);
      args.push_back(value_arg(dst, true));
      // x and out are dense and alike: the apply reads x[i] itself; only w and b use strides.
      args.push_back(geom_arg(ew_geom(in, in, aff.w, aff.b)));
      args.push_back(geom_arg(norm_groups(in, st)));
      int64_t largest = spec::elems(in);
      for (const Shape* p : {aff.w, aff.b}) largest = std::max(largest, p ? spec::elems(*p) : 0);
      const KernelId id = kernel_id("ft_st_norm_apply", largest);
      const std::string& name = id.name;
      add(i, name, "FT_DEFINE_STAGE_NORM_APPLY(" + name + ", " + id.index + ")\n", launch(grid_for(spec::elems(in), kBlock), uint32_t(kBlock)),
          std::move(args), moved);
      current_ = dst;
      return;
    }
  }
}

}  // namespace stage_detail

using spec::Shape;
using spec::StageKind;
using stage_detail::module_source;
using stage_detail::Renderer;

GeneralEpilogue general_epilogue(const spec::Problem& problem) {
  if (!problem.stages.empty()) return {problem.stages, problem.param_shapes};
  GeneralEpilogue g;
  const Shape main = problem.main_shape();
  Shape per_channel(main.size(), 1);
  per_channel[1] = main[1];
  g.param_shapes.assign(size_t(problem.num_params), per_channel);
  const auto op_stage = [](const spec::Op& op) {
    spec::Stage st;
    st.kind = StageKind::op;
    st.op = op;
    return st;
  };
  for (const spec::Op& op : problem.pre) g.stages.push_back(op_stage(op));
  if (problem.reduce) {
    spec::Stage st;
    st.kind = StageKind::reduce;
    st.reduce = *problem.reduce;
    st.dims = {1};
    st.keepdim = true;
    g.stages.push_back(st);
  }
  for (const spec::Op& op : problem.post) g.stages.push_back(op_stage(op));
  return g;
}

spec::Problem general_form(const spec::Problem& problem) {
  GeneralEpilogue general = general_epilogue(problem);
  spec::Problem p = problem;
  p.pre.clear();
  p.post.clear();
  p.reduce.reset();
  p.stages = std::move(general.stages);
  p.param_shapes = std::move(general.param_shapes);
  p.num_params = int(p.param_shapes.size());
  return p;
}

StageProgram render_stage_program(const spec::Problem& problem, StagePrecision precision, StageOptions options) {
  return Renderer(problem, precision, options).run();
}

std::string render_stage_module(const StageProgram& program) {
  std::vector<const StageKernel*> distinct;
  for (const StageKernel& k : program.kernels) {
    const bool seen = std::any_of(distinct.begin(), distinct.end(), [&](const StageKernel* d) { return d->name == k.name; });
    if (!seen) distinct.push_back(&k);
  }
  return module_source(program.precision, "stage kernels", distinct);
}

}  // namespace fusetune::codegen
