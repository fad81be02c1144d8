#include "codegen/stage_source.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "codegen/op_render.hpp"
#include "codegen/source_builder.hpp"
#include "common/error.hpp"
#include "common/fnv1a.hpp"
#include "reference/render_double.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen {
namespace {

using spec::Shape;
using spec::StageKind;

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

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint32_t grid_for(int64_t items, int64_t per_block) {
  return uint32_t(std::clamp<int64_t>(ceil_div(items, per_block), 1, kMaxGrid));
}

std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Strides that read a tensor of shape `a` broadcast to `out` (aligned at the last dim): 0 on the
// dims `a` lacks or has as 1.
std::vector<int64_t> broadcast_strides(const Shape& a, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  const std::vector<int64_t> dense = dense_strides(a);
  const size_t lead = out.size() - a.size();
  for (size_t d = 0; d < a.size(); ++d) st[lead + d] = a[d] == 1 ? 0 : dense[d];
  return st;
}

// Dims of one iteration space with a stride per tensor: size-1 dims dropped, then neighbours
// merged where every tensor steps through them as through one dim.
struct Dims {
  std::vector<int64_t> ext;
  std::vector<std::vector<int64_t>> strides;  // [tensor][dim]
};
Dims simplify(const std::vector<int64_t>& ext, const std::vector<std::vector<int64_t>>& strides) {
  Dims out{{}, std::vector<std::vector<int64_t>>(strides.size())};
  for (size_t d = 0; d < ext.size(); ++d) {
    if (ext[d] == 1) continue;
    bool merge = !out.ext.empty();
    for (size_t t = 0; merge && t < strides.size(); ++t) merge = out.strides[t].back() == strides[t][d] * ext[d];
    if (merge) {
      out.ext.back() *= ext[d];
      for (size_t t = 0; t < strides.size(); ++t) out.strides[t].back() = strides[t][d];
    } else {
      out.ext.push_back(ext[d]);
      for (size_t t = 0; t < strides.size(); ++t) out.strides[t].push_back(strides[t][d]);
    }
  }
  if (out.ext.size() > size_t(kStageMaxRank)) {
    throw InputError("stage kernels: more than " + std::to_string(kStageMaxRank) + " dims after merging");
  }
  return out;
}

template <size_t N>
void fill(std::array<int64_t, N>& dst, const std::vector<int64_t>& src) {
  std::copy(src.begin(), src.end(), dst.begin());
}

// Elementwise geometry over `out`, reading x of shape `x` and up to two operands (empty shape
// vectors for absent ones read nothing: stride 0).
StageEwGeom ew_geom(const Shape& out, const Shape& x, const Shape* a0, const Shape* a1) {
  const Dims d = simplify(out, {broadcast_strides(x, out), a0 ? broadcast_strides(*a0, out) : std::vector<int64_t>(out.size(), 0),
                                a1 ? broadcast_strides(*a1, out) : std::vector<int64_t>(out.size(), 0)});
  StageEwGeom g;
  g.rank = int64_t(d.ext.size());
  g.total = spec::elems(out);
  fill(g.ext, d.ext);
  fill(g.sx, d.strides[0]);
  fill(g.sa0, d.strides[1]);
  fill(g.sa1, d.strides[2]);
  return g;
}

// Rows over `in`: the dims in `reduced` make a row; the others, in order, number the rows.
StageRowsGeom rows_geom(const Shape& in, const std::vector<bool>& reduced, double eps = 0.0) {
  const std::vector<int64_t> st = dense_strides(in);
  std::vector<int64_t> kext, kstr, rext, rstr;
  for (size_t d = 0; d < in.size(); ++d) {
    (reduced[d] ? rext : kext).push_back(in[d]);
    (reduced[d] ? rstr : kstr).push_back(st[d]);
  }
  const Dims k = simplify(kext, {kstr});
  const Dims r = simplify(rext, {rstr});
  StageRowsGeom g;
  g.rows = spec::elems(kext);
  g.len = spec::elems(rext);
  g.nk = int64_t(k.ext.size());
  g.nr = int64_t(r.ext.size());
  g.chunks = 1;
  g.chunk_len = g.len;
  fill(g.kext, k.ext);
  fill(g.kstr, k.strides[0]);
  fill(g.rext, r.ext);
  fill(g.rstr, r.strides[0]);
  g.eps = eps;
  return g;
}

std::vector<bool> dims_mask(size_t rank, const std::vector<int>& dims) {
  std::vector<bool> m(rank, false);
  for (int d : dims) m[size_t(d)] = true;
  return m;
}

// The rows of a norm's statistics (model_stages.cpp's norm_groups): the shape they are taken
// over, and which of its dims make a row.
struct NormView {
  Shape view;
  std::vector<bool> reduced;
};
NormView norm_view(const Shape& in, const spec::Stage& st) {
  const size_t rank = in.size();
  NormView v{in, std::vector<bool>(rank, false)};
  switch (st.norm) {
    case spec::NormKind::batch:
      for (size_t d = 0; d < rank; ++d) v.reduced[d] = d != 1;
      break;
    case spec::NormKind::group:
      v.view = {in[0], st.groups, spec::elems(in) / (in[0] * st.groups)};
      v.reduced = {false, false, true};
      break;
    case spec::NormKind::instance:
      for (size_t d = 2; d < rank; ++d) v.reduced[d] = true;
      break;
    case spec::NormKind::layer:
      for (size_t d = rank - size_t(st.norm_dims); d < rank; ++d) v.reduced[d] = true;
      break;
  }
  return v;
}

// Element i of the normed value belongs to row (i / div) % mod.
StageGroupGeom norm_groups(const Shape& in, const spec::Stage& st) {
  const int64_t total = spec::elems(in);
  int64_t inner = 1;  // elements after the row-numbering dims
  switch (st.norm) {
    case spec::NormKind::batch:
      inner = total / (in[0] * in[1]);
      return {inner, in[1]};
    case spec::NormKind::group: return {total / (in[0] * st.groups), in[0] * st.groups};
    case spec::NormKind::instance:
      inner = total / (in[0] * in[1]);
      return {inner, in[0] * in[1]};
    case spec::NormKind::layer:
      for (size_t d = in.size() - size_t(st.norm_dims); d < in.size(); ++d) inner *= in[d];
      return {inner, total / inner};
  }
  return {};
}

// ---- sources ---------------------------------------------------------------------------------

const char* precision_suffix(StagePrecision p) {
  switch (p) {
    case StagePrecision::fp32: return "f32";
    case StagePrecision::fp64: return "f64";
  }
  return "";
}

std::string hex16(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A complete source: the element type's math, stage_kernels.cu, the size checks of the
// geometry structs, then each kernel's code (its functor, its instantiation line), in order.
std::string module_source(StagePrecision precision, const std::string& title, const std::vector<const StageKernel*>& kernels) {
  SourceBuilder b("", title, "unfused");
  switch (precision) {
    case StagePrecision::fp32:
      b.defines("element type", "#define FT_STAGE_DOUBLE 0\n");
      b.template_file("ft_common.cuh");
      break;
    case StagePrecision::fp64:
      b.defines("element type", "#define FT_STAGE_DOUBLE 1\n");
      b.template_file("ref_math.cu");
      break;
  }
  b.template_file("stages/stage_kernels.cu");
  b.code("geometry layout (src/codegen/stage_source.hpp mirrors it)",
         "static_assert(sizeof(ft_st_ew_geom) == " + std::to_string(sizeof(StageEwGeom)) +
             ", \"ft_st_ew_geom\");\n"
             "static_assert(sizeof(ft_st_rows_geom) == " + std::to_string(sizeof(StageRowsGeom)) +
             ", \"ft_st_rows_geom\");\n"
             "static_assert(sizeof(ft_st_pool_geom) == " + std::to_string(sizeof(StagePoolGeom)) +
             ", \"ft_st_pool_geom\");\n"
             "static_assert(sizeof(ft_st_group_geom) == " + std::to_string(sizeof(StageGroupGeom)) +
             ", \"ft_st_group_geom\");\n");
  for (const StageKernel* k : kernels) {
    b.code(k->name, k->code);
    b.kernel(k->name);
  }
  return b.str();
}

// The op for the elementwise kernel: tensor operands (parameters, named values, inputs) become
// chan[slot] reads, the slot being the operand's position, so the op renders through the one
// renderer of each precision (op_render.hpp's for fp32; render_double.hpp's float64 twin).
spec::Op slotted_op(const spec::Op& op) {
  spec::Op local = op;
  for (size_t i = 0; i < local.args.size(); ++i) {
    if (!local.args[i].scalar()) local.args[i] = spec::Operand{true, 0.0, int(i)};
  }
  return local;
}

// "add(value 0)": the op for a comment, without any spec text but numbers (as fp32 literals).
std::string op_comment(const spec::Op& op) {
  std::string s(spec::op_info(op.kind).name);
  if (op.args.empty()) return s;
  s += "(";
  for (size_t i = 0; i < op.args.size(); ++i) {
    const spec::Operand& a = op.args[i];
    if (i > 0) s += ", ";
    if (a.value_index >= 0) s += "named value " + std::to_string(a.value_index);
    else if (a.input_index >= 0) s += "input " + std::to_string(a.input_index);
    else if (a.per_channel) s += "param " + std::to_string(a.param_index);
    else s += fp32_literal(a.value);
  }
  return s + ")";
}

std::string op_expression(const spec::Op& op, StagePrecision precision) {
  const spec::Op local = slotted_op(op);
  switch (precision) {
    case StagePrecision::fp32: return render_op_expr(local, "v", ChanLayout{1, false});
    case StagePrecision::fp64: {
      // render_double_op indexes chan by the chain layout; a bias-less problem with K = 1 makes
      // parameter i slot i.
      spec::Problem slots;
      slots.conv.k = 1;
      slots.conv.bias = false;
      slots.num_params = 2;
      return reference::render_double_op(slots, local);
    }
  }
  return {};
}

// The rows kernel's mode: the FT_ST_MODE_* macro and the kernel name's part.
struct RowsMode {
  const char* macro;
  const char* name;
  bool splits = false;  // has the split form (partials per chunk, then a combine)
  bool stats = false;   // norm statistics: 2 outputs per row, 3 partials per chunk
};
RowsMode rows_mode(const spec::Stage& st) {
  switch (st.kind) {
    case StageKind::reduce:
      switch (st.reduce) {
        case spec::ReduceKind::min: return {"FT_ST_MODE_MIN", "min", true};
        case spec::ReduceKind::max: return {"FT_ST_MODE_MAX", "max", true};
        case spec::ReduceKind::sum: return {"FT_ST_MODE_SUM", "sum", true};
        case spec::ReduceKind::mean: return {"FT_ST_MODE_MEAN", "mean", true};
      }
      break;
    case StageKind::logsumexp: return {"FT_ST_MODE_LOGSUMEXP", "logsumexp"};
    case StageKind::softmax: return {"FT_ST_MODE_SOFTMAX", "softmax"};
    case StageKind::log_softmax: return {"FT_ST_MODE_LOG_SOFTMAX", "log_softmax"};
    case StageKind::norm: return {"FT_ST_MODE_NORM_STATS", "norm_stats", true, true};
    case StageKind::op:
    case StageKind::pool:
    case StageKind::name: break;
  }
  throw InputError("stage kernels: no rows mode for this stage");
}

StageArg value_arg(int id, bool written = false, int named = -1) {
  StageArg a;
  a.kind = StageArgKind::value;
  a.index = id;
  a.written = written;
  a.named = named;
  return a;
}
StageArg kind_arg(StageArgKind kind, int index) {
  StageArg a;
  a.kind = kind;
  a.index = index;
  return a;
}
StageArg scratch_arg(int index, bool written) {
  StageArg a = kind_arg(StageArgKind::scratch, index);
  a.written = written;
  return a;
}
StageArg geom_arg(StageGeom g) {
  StageArg a;
  a.kind = StageArgKind::geometry;
  a.geom = g;
  return a;
}

// Renders the program stage by stage, tracking the current value.
class Renderer {
 public:
  Renderer(const spec::Problem& problem, StagePrecision precision) : precision_(precision) {
    const GeneralEpilogue general = general_epilogue(problem);
    general_ = problem;
    general_.pre.clear();
    general_.post.clear();
    general_.reduce.reset();
    general_.stages = general.stages;
    general_.param_shapes = general.param_shapes;
    general_.num_params = int(general.param_shapes.size());
    shapes_ = spec::epilogue_shapes(general_, &named_shapes_);
    for (const Shape& s : shapes_) {
      if (s.size() > size_t(kStageMaxRank)) {
        throw InputError("stage kernels: a value of rank " + std::to_string(s.size()) + " (at most " +
                         std::to_string(kStageMaxRank) + ")");
      }
    }
    prog_.precision = precision;
    prog_.elem_bytes = precision == StagePrecision::fp32 ? 4 : 8;
    prog_.stages = general.stages;
    prog_.param_shapes = general.param_shapes;
    prog_.value_shapes = {shapes_[0]};
  }

  StageProgram run() {
    for (size_t i = 0; i < general_.stages.size(); ++i) stage(int(i));
    prog_.output_value = current_;
    return std::move(prog_);
  }

 private:
  double bytes(const Shape& s) const { return double(spec::elems(s)) * double(prog_.elem_bytes); }

  int new_value(const Shape& s) {
    prog_.value_shapes.push_back(s);
    return int(prog_.value_shapes.size()) - 1;
  }

  // A kernel's name and index type: names end in the index width and the precision ("..._f32",
  // "..._i64_f64"), so a name says everything its source depends on.
  struct KernelId {
    std::string name;
    std::string index;  // the IDX argument of the FT_DEFINE_STAGE_* macros
  };
  KernelId kernel_id(const std::string& base, int64_t largest_buffer) const {
    const bool i64 = largest_buffer >= kIndex64From;
    return {base + (i64 ? "_i64_" : "_") + precision_suffix(precision_), i64 ? "long long" : "int"};
  }

  void add(int stage, const std::string& name, const std::string& code, LaunchConfig launch,
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

  static LaunchConfig launch(uint32_t grid, uint32_t block) {
    LaunchConfig l;
    l.grid = {grid, 1, 1};
    l.block = {block, 1, 1};
    return l;
  }

  // A tensor operand's buffer and shape.
  std::pair<StageArg, Shape> operand(const spec::Operand& a) const {
    const Shape shape = spec::operand_shape(general_, a, named_shapes_);
    if (a.value_index >= 0) return {value_arg(prog_.named_values.at(size_t(a.value_index)), false, a.value_index), shape};
    if (a.input_index >= 0) return {kind_arg(StageArgKind::input, a.input_index), shape};
    return {kind_arg(StageArgKind::param, a.param_index), shape};
  }

  void stage(int i) {
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
        const NormView v = norm_view(in, st);
        const StageRowsGeom g = rows_geom(v.view, v.reduced, st.eps);
        const int scratch = int(prog_.scratch_elems.size());
        prog_.scratch_elems.push_back(2 * g.rows);
        const double stats_bytes = double(2 * g.rows * prog_.elem_bytes);
        rows_kernel(i, st, g, scratch_arg(scratch, true), bytes(in) + stats_bytes);
        // The apply kernel.
        std::vector<StageArg> args{value_arg(current_), scratch_arg(scratch, false)};
        double moved = 2 * bytes(in) + stats_bytes;
        const Shape* ws = nullptr;
        const Shape* bs = nullptr;
        for (int p : {st.weight_param, st.bias_param}) {
          if (st.affine && p >= 0) {
            args.push_back(kind_arg(StageArgKind::param, p));
            moved += bytes(prog_.param_shapes.at(size_t(p)));
            (p == st.weight_param ? ws : bs) = &prog_.param_shapes.at(size_t(p));
          } else {
            args.push_back(kind_arg(StageArgKind::null, -1));
          }
        }
        const int dst = new_value(out);
        args.push_back(value_arg(dst, true));
        // x and out are dense and alike: the apply reads x[i] itself; only w and b use strides.
        args.push_back(geom_arg(ew_geom(in, in, ws, bs)));
        args.push_back(geom_arg(norm_groups(in, st)));
        int64_t largest = spec::elems(in);
        for (const Shape* p : {ws, bs}) largest = std::max(largest, p ? spec::elems(*p) : 0);
        const KernelId id = kernel_id("ft_st_norm_apply", largest);
        const std::string& name = id.name;
        add(i, name, "FT_DEFINE_STAGE_NORM_APPLY(" + name + ", " + id.index + ")\n", launch(grid_for(spec::elems(in), kBlock), uint32_t(kBlock)),
            std::move(args), moved);
        current_ = dst;
        return;
      }
    }
  }

  // A rows kernel reading the current value: thread per row or block per row by the row length;
  // few long rows of a reduction or norm statistics split over several blocks (two kernels).
  void rows_kernel(int i, const spec::Stage& st, const StageRowsGeom& g, StageArg dst, double moved) {
    const RowsMode mode = rows_mode(st);
    if (mode.splits && g.rows < kSplitRows && g.len >= kSplitLen) {
      split_rows_kernels(i, mode, g, dst);
      return;
    }
    const bool block = g.len >= kBlockRowLen;
    const KernelId id = kernel_id(std::string("ft_st_rows_") + (block ? "block_" : "thread_") + mode.name,
                                  std::max(g.rows * g.len, 2 * g.rows));
    const std::string& name = id.name;
    const std::string code = std::string(block ? "FT_DEFINE_STAGE_ROWS_BLOCK(" : "FT_DEFINE_STAGE_ROWS_THREAD(") + name +
                             ", " + mode.macro + ", " + id.index + ")\n";
    const LaunchConfig l = block ? launch(uint32_t(std::min(g.rows, kMaxGrid)), uint32_t(kRowBlock))
                                 : launch(grid_for(g.rows, kBlock), uint32_t(kBlock));
    add(i, name, code, l, {value_arg(current_), dst, geom_arg(g)}, moved);
  }

  void split_rows_kernels(int i, const RowsMode& mode, StageRowsGeom g, StageArg dst) {
    // About kSplitBlocks blocks in all, each chunk at least kSplitChunk long; recounted from the
    // chunk length so that no chunk is empty.
    g.chunks = std::min(ceil_div(g.len, kSplitChunk), ceil_div(kSplitBlocks, g.rows));
    g.chunk_len = ceil_div(g.len, g.chunks);
    g.chunks = ceil_div(g.len, g.chunk_len);
    const bool stats = mode.stats;
    const int64_t per_chunk = stats ? 3 : 1;
    const int part = int(prog_.scratch_elems.size());
    prog_.scratch_elems.push_back(g.rows * g.chunks * per_chunk);
    const double part_bytes = double(g.rows * g.chunks * per_chunk * prog_.elem_bytes);
    const double out_bytes = double((stats ? 2 : 1) * g.rows * prog_.elem_bytes);
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

  StagePrecision precision_;
  spec::Problem general_;
  std::vector<Shape> shapes_;
  std::vector<Shape> named_shapes_;
  StageProgram prog_;
  int current_ = 0;
};

}  // namespace

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

StageProgram render_stage_program(const spec::Problem& problem, StagePrecision precision) {
  return Renderer(problem, precision).run();
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
