#include "codegen/stage_text.hpp"

#include <cstdio>

#include "codegen/op_render.hpp"
#include "codegen/source_builder.hpp"
#include "common/error.hpp"
#include "reference/render_double.hpp"
#include "spec/ops.hpp"

namespace fusetune::codegen::stage_detail {

using spec::StageKind;

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
             ", \"ft_st_group_geom\");\n"
             "static_assert(sizeof(ft_st_chain_geom) == " + std::to_string(sizeof(StageChainGeom)) +
             ", \"ft_st_chain_geom\");\n"
             "static_assert(sizeof(ft_st_fold_geom) == " + std::to_string(sizeof(StageFoldGeom)) +
             ", \"ft_st_fold_geom\");\n");
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

}  // namespace fusetune::codegen::stage_detail
