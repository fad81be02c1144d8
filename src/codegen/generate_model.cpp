// The candidates of a version-2 problem (any problem that is not conv2d chain form), as PyTorch
// eager runs it:
//   unfused  the vendor main operator (cuBLASLt GEMM or cuDNN N-d conv graph, with its bias),
//            then one kernel per stage from render_stage_program (fp32), out of place
//   cudnn    the floor: the main operator alone (its output verified against the main op's own
//            reference; never a winner)
//   epilogue `epilogue.stages`: as unfused, with every run of elementwise ops of one shape in one
//            kernel (one pass over the value instead of one per op); made only where it saves one
// Values ping-pong between flat scratch buffers: a value's buffer is free again after the last
// kernel that reads it (a named value lives until its last use), the output gets its own buffer
// of the output's shape, and value 0 (the main output) is row-major (N, K, [O,] P, Q) or
// ([B,] M, N) as the stage kernels read it.
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "codegen/generate.hpp"
#include "codegen/generate_parts.hpp"
#include "codegen/model_buffers.hpp"
#include "codegen/stage_source.hpp"
#include "common/error.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {

namespace {

Step main_step(const spec::Problem& p, const MainBuffers& m, BufferRef out) {
  if (p.is_conv()) {
    ConvNdStep c;
    c.main = p.main;
    c.layout = spec::Layout::nchw;
    c.in = m.x;
    c.filters = m.w;
    c.out = out;
    c.bias = m.bias;
    return Step{c, true};
  }
  GemmStep g;
  g.gemm = p.gemm;
  g.linear = p.main == spec::MainKind::linear;
  g.a = m.x;
  g.b = m.w;
  g.out = out;
  g.bias = m.bias;
  return Step{g, true};
}

void require_model_problem(const spec::Problem& p) {
  if (p.is_conv2d_chain())
    throw InputError("generate_model_variants: a conv2d chain problem takes generate_variants' candidates");
  if (p.is_conv() && (p.conv.in == spec::Layout::nhwc || p.conv.out == spec::Layout::nhwc))
    throw InputError("version-2 plans are channels-first: a channels-last input or output is not planned yet");
}

std::string_view geom_type(const StageGeom& g) {
  switch (g.index()) {
    case 0: return "ft_st_ew_geom";
    case 1: return "ft_st_rows_geom";
    case 2: return "ft_st_pool_geom";
    case 3: return "ft_st_group_geom";
    case 4: return "ft_st_chain_geom";
    default: return "ft_st_fold_geom";
  }
}

ValueArg geom_arg(const StageGeom& g) {
  ValueArg a;
  a.type = std::string(geom_type(g));
  std::visit(
      [&](const auto& s) {
        a.bytes.resize(sizeof(s));
        std::memcpy(a.bytes.data(), &s, sizeof(s));
      },
      g);
  return a;
}

Variant floor_variant(const spec::Problem& p) {
  Variant v;
  v.candidate = Candidate::cudnn;
  v.design = v.name = p.is_conv() ? "cudnn.conv-nd" : "cublaslt.gemm";
  const MainBuffers m = add_main_inputs(v, p);
  const BufferRef y = add_buffer(v, {"y", BufferKind::scratch, TensorLayout::row_major,
                                     shape_dims(p, p.main_shape(), true), "the main operator's output"});
  v.plan.push_back(main_step(p, m, y));
  v.output = y;
  v.output_layout = spec::Layout::nchw;
  return v;
}

// How a plan's main operator runs: the vendor's step (GemmStep, ConvNdStep), or steps of its own
// added to the variant (fused-gemm's kernels), whose source is appended to the variant's.
using MainSteps = std::function<std::string(Variant&, const MainBuffers&, BufferRef out)>;

// The main step, then `prog`'s kernels: `unfused.stages` (one kernel per stage) or
// `epilogue.stages` (runs of elementwise ops fused, StageOptions::fuse_elementwise).
Variant stages_variant(const spec::Problem& p, const StageProgram& prog, Candidate candidate, const std::string& name,
                       const std::string& design = "", const MainSteps& own_main = {}) {
  Variant v;
  v.candidate = candidate;
  v.name = name;
  v.design = design.empty() ? name : design;
  v.source = prog.kernels.empty() ? std::string() : render_stage_module(prog);
  const MainBuffers m = add_main_inputs(v, p);
  const std::vector<BufferRef> params = add_param_buffers(v, p, prog.param_shapes);
  std::vector<BufferRef> extras, scratch;
  for (size_t j = 0; j < p.input_shapes.size(); ++j) {
    Buffer b{fmt::format("input{}", j + 1), BufferKind::extra, TensorLayout::row_major, shape_dims(p, p.input_shapes[j]),
             fmt::format("extra input {}", j + 1)};
    b.index = int(j);
    extras.push_back(add_buffer(v, std::move(b)));
  }
  for (size_t i = 0; i < prog.scratch_elems.size(); ++i)
    scratch.push_back(add_buffer(v, {fmt::format("stats{}", i), BufferKind::scratch, TensorLayout::row_major,
                                     {{"elems", prog.scratch_elems[i]}}, "statistics or partials of a stage"}));

  // Liveness: the last kernel reading each value (the output lives to the end).
  const size_t nvalues = prog.value_shapes.size();
  std::vector<int> last_read(nvalues, -1);
  for (size_t k = 0; k < prog.kernels.size(); ++k)
    for (const StageArg& a : prog.kernels[k].args)
      if (a.kind == StageArgKind::value && !a.written) last_read.at(size_t(a.index)) = int(k);
  last_read.at(size_t(prog.output_value)) = int(prog.kernels.size());

  // Value -> buffer. The output has its own buffer of its shape; the others share flat pool
  // buffers ("t0", "t1", ...), each as large as the largest value it holds.
  std::vector<std::optional<BufferRef>> value_buffer(nvalues);
  struct Pool {
    BufferRef ref;
    int free_after = -1;  // the index of the kernel after which it holds nothing live
  };
  std::vector<Pool> pool;
  const auto place = [&](int value, int at_kernel) -> BufferRef {
    const spec::Shape& shape = prog.value_shapes.at(size_t(value));
    if (value == prog.output_value) {
      const bool main = value == 0;
      return add_buffer(v, {"y", BufferKind::scratch, TensorLayout::row_major, shape_dims(p, shape, main),
                            "the problem's output"});
    }
    const int64_t n = spec::elems(shape);
    for (Pool& b : pool) {
      if (b.free_after < at_kernel) {
        Buffer& buf = v.buffers[b.ref];
        if (buf.dims[0].second < n) buf.dims[0].second = n;
        b.free_after = last_read[size_t(value)];
        return b.ref;
      }
    }
    const BufferRef r = add_buffer(v, {fmt::format("t{}", pool.size()), BufferKind::scratch, TensorLayout::row_major,
                                       {{"elems", n}}, "an intermediate value (buffers ping-pong)"});
    pool.push_back({r, last_read[size_t(value)]});
    return r;
  };
  // Value 0 is written by the main step, before kernel 0.
  value_buffer[0] = place(0, -1);
  if (own_main)
    v.source += own_main(v, m, *value_buffer[0]);
  else
    v.plan.push_back(main_step(p, m, *value_buffer[0]));

  double bytes = 0;
  for (size_t ki = 0; ki < prog.kernels.size(); ++ki) {
    const StageKernel& sk = prog.kernels[ki];
    KernelStep k;
    k.name = sk.name;
    k.launch = sk.launch;
    for (const StageArg& a : sk.args) {
      if (a.written) k.writes.push_back(k.args.size());
      switch (a.kind) {
        case StageArgKind::value: {
          auto& slot = value_buffer.at(size_t(a.index));
          if (a.written) {
            if (slot) throw Error(ExitCode::failure, fmt::format("{}: value {} written twice", sk.name, a.index));
            slot = place(a.index, int(ki));
          } else if (!slot) {
            throw Error(ExitCode::failure, fmt::format("{}: value {} read before it is written", sk.name, a.index));
          }
          k.args.emplace_back(*slot);
          break;
        }
        case StageArgKind::param: k.args.emplace_back(params.at(size_t(a.index))); break;
        case StageArgKind::input: k.args.emplace_back(extras.at(size_t(a.index))); break;
        case StageArgKind::scratch: k.args.emplace_back(scratch.at(size_t(a.index))); break;
        case StageArgKind::null: k.args.emplace_back(NullArg{}); break;
        case StageArgKind::geometry: k.args.emplace_back(geom_arg(a.geom)); break;
      }
    }
    bytes += sk.bytes;
    v.plan.push_back(Step{std::move(k), true});
  }
  if (!value_buffer.at(size_t(prog.output_value)))
    throw Error(ExitCode::failure, "unfused.stages: no kernel writes the problem's output");
  v.output = *value_buffer[size_t(prog.output_value)];
  v.output_layout = spec::Layout::nchw;
  v.kernel_bytes = bytes;
  return v;
}

// cuBLASLt's epilogue for a first op it has (after the bias, before the store), else none.
std::optional<GemmActivation> lt_activation(const std::vector<spec::Stage>& stages) {
  if (stages.empty() || stages.front().kind != spec::StageKind::op) return std::nullopt;
  switch (stages.front().op.kind) {
    case spec::OpKind::relu: return GemmActivation::relu;
    case spec::OpKind::gelu_tanh: return GemmActivation::gelu_tanh;  // cuBLASLt's GELU is the tanh form
    default: return std::nullopt;
  }
}

// The main step of a cublaslt-fused variant: the problem's GEMM with cuBLASLt's activation and
// the heuristic's algorithm of rank `algo`.
MainSteps lt_main(const spec::Problem& p, GemmActivation activation, int algo) {
  return [&p, activation, algo](Variant& v, const MainBuffers& m, BufferRef y) {
    Step s = main_step(p, m, y);
    GemmStep& g = std::get<GemmStep>(s.op);
    g.activation = activation;
    g.algo = algo;
    v.plan.push_back(std::move(s));
    return std::string();
  };
}

}  // namespace

std::vector<Variant> generate_cublaslt_fused(const spec::Problem& problem) {
  if (problem.is_conv()) return {};
  std::vector<Variant> out;
  const StageOptions fuse{.fuse_elementwise = true};
  // The heuristic's next choices, the epilogue as the stage kernels run it.
  const StageProgram all = render_stage_program(problem, StagePrecision::fp32, fuse);
  for (int a = 1; a <= 3; ++a)
    out.push_back(stages_variant(problem, all, Candidate::cublaslt_fused, fmt::format("cublaslt-fused.a{}", a),
                                 "cublaslt-fused", lt_main(problem, GemmActivation::none, a)));
  // The first op in cuBLASLt's epilogue: the stages of the problem without it. Safe to drop: the
  // op reads the main output alone, and no later stage can name that value (only a `name` stage
  // defines one, and it would come first).
  spec::Problem rest = general_form(problem);  // a chain's ops as stages; less the first below
  if (const std::optional<GemmActivation> act = lt_activation(rest.stages)) {
    rest.stages.erase(rest.stages.begin());
    const StageProgram after = render_stage_program(rest, StagePrecision::fp32, fuse);
    for (int a = 0; a <= 3; ++a) {
      const std::string name = fmt::format("cublaslt-fused.{}.a{}", gemm_activation_name(*act), a);
      // `problem`, not `rest`: the buffers (parameters, extra inputs) are the problem's.
      out.push_back(stages_variant(problem, after, Candidate::cublaslt_fused, name, "cublaslt-fused",
                                   lt_main(problem, *act, a)));
    }
  }
  return out;
}

std::vector<Variant> generate_model_variants(const spec::Problem& problem, const gpu::DeviceLimits& limits,
                                             const GenerateOptions& options) {
  require_model_problem(problem);
  std::vector<Variant> out;
  const StageProgram unfused = render_stage_program(problem, StagePrecision::fp32);
  out.push_back(stages_variant(problem, unfused, Candidate::unfused, "unfused.stages"));
  out.push_back(floor_variant(problem));
  // Only where fusing saves a kernel: otherwise it is `unfused` under another name.
  const StageProgram fused = render_stage_program(problem, StagePrecision::fp32, StageOptions{.fuse_elementwise = true});
  if (fused.kernels.size() < unfused.kernels.size())
    out.push_back(stages_variant(problem, fused, Candidate::epilogue, "epilogue.stages"));
  for (Variant& v : generate_fused_gemm(problem, limits, options)) out.push_back(std::move(v));
  for (Variant& v : generate_cublaslt_fused(problem)) out.push_back(std::move(v));
  // Where fused-gemm cannot take the epilogue: its GEMM as the main step, the stages after it.
  const StageProgram& after = fused.kernels.size() < unfused.kernels.size() ? fused : unfused;
  for (const ParamValues& point : fused_gemm_main_points(problem, limits, options)) {
    const std::string design = options.strict_fp32 ? "fused-gemm3x.stages" : "fused-gemm.stages";
    const std::string name = fmt::format("{}.n{}", design, point.at("bn"));
    out.push_back(stages_variant(problem, after, Candidate::fused_gemm, name, design,
                                 [&](Variant& v, const MainBuffers& m, BufferRef y) {
                                   return fused_gemm_main(problem, limits, options, point, v, m.x, m.w, m.bias, y);
                                 }));
  }
  // The same for a conv2d: the halo fused conv (its several taps per K tile below 17 channels)
  // as the main step.
  for (const ParamValues& point : fused_conv_main_points(problem, limits, options)) {
    const std::string design = options.strict_fp32 ? "fused-conv.halo3x.stages" : "fused-conv.halo.stages";
    const std::string name = fused_conv_main_name(problem, limits, options, point, design);
    out.push_back(stages_variant(problem, after, Candidate::fused_conv, name, design,
                                 [&](Variant& v, const MainBuffers& m, BufferRef y) {
                                   return fused_conv_main(problem, limits, options, point, v, m.x, m.w, m.bias, y);
                                 }));
  }
  return out;
}

}  // namespace fusetune::codegen
