#include "codegen/variant_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "codegen/model_buffers.hpp"
#include "codegen/stage_source.hpp"
#include "reference/problem_data.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen {

namespace {

constexpr size_t kMaxBuffers = 64;
constexpr size_t kMaxSteps = 64;
constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxParams = 64;
constexpr size_t kMaxSourceBytes = size_t(8) << 20;
constexpr int64_t kMaxParamValue = int64_t(1) << 40;
constexpr size_t kMaxRank = 6;             // the per-stage kernels' FT_ST_MAX_RANK
constexpr size_t kMaxValueBytes = 4096;   // a by-value kernel argument (CUDA allows 4 KiB of parameters)
constexpr uint32_t kMaxSmem = 232448;  // 227 KiB: the largest opt-in shared memory of any GPU we target

using Dims = std::vector<std::pair<std::string, int64_t>>;

Dims input_dims(const spec::Conv& c, spec::Layout l) {
  if (l == spec::Layout::nhwc) return {{"N", c.n}, {"H", c.h}, {"W", c.w}, {"C", c.c}};
  return {{"N", c.n}, {"C", c.c}, {"H", c.h}, {"W", c.w}};
}

bool conv_input_ok(const Buffer& b, const spec::Conv& c, spec::Layout l) {
  return b.layout == (l == spec::Layout::nhwc ? TensorLayout::nhwc : TensorLayout::nchw) && b.dims == input_dims(c, l);
}

bool conv_output_ok(const Buffer& b, const spec::Conv& c, spec::Layout l) {
  const bool nhwc = l == spec::Layout::nhwc;
  const Dims d = nhwc ? Dims{{"N", c.n}, {"P", c.p()}, {"Q", c.q()}, {"K", c.k}}
                      : Dims{{"N", c.n}, {"K", c.k}, {"P", c.p()}, {"Q", c.q()}};
  return b.layout == (nhwc ? TensorLayout::nhwc : TensorLayout::nchw) && b.dims == d;
}

bool filters_ok(const Buffer& b, const spec::Conv& c, spec::Layout l) {
  if (l == spec::Layout::nhwc)
    return b.layout == TensorLayout::krsc && b.dims == Dims{{"K", c.k}, {"R", c.r}, {"S", c.s}, {"C", c.c}};
  return b.layout == TensorLayout::kcrs && b.dims == Dims{{"K", c.k}, {"C", c.c}, {"R", c.r}, {"S", c.s}};
}

std::string check_launch(const KernelStep& k) {
  const auto& g = k.launch.grid;
  const auto& b = k.launch.block;
  if (g[0] < 1 || g[0] > 2147483647u || g[1] < 1 || g[1] > 65535 || g[2] < 1 || g[2] > 65535)
    return fmt::format("kernel {} has grid ({}, {}, {})", k.name, g[0], g[1], g[2]);
  if (b[0] < 1 || b[1] < 1 || b[2] < 1 || k.launch.threads() > 1024 || b[2] > 64)
    return fmt::format("kernel {} has block ({}, {}, {})", k.name, b[0], b[1], b[2]);
  if (k.launch.smem_bytes > kMaxSmem) return fmt::format("kernel {} asks for {} B of shared memory", k.name, k.launch.smem_bytes);
  return "";
}

std::string check_buffer(const Buffer& b, const spec::Problem& p) {
  const spec::Conv& c = p.conv;
  if (!is_identifier(b.name)) return fmt::format("buffer name '{}' is not an identifier", b.name.substr(0, 64));
  const size_t max_rank = b.layout == TensorLayout::row_major ? kMaxRank : 4;
  if (b.dims.empty() || b.dims.size() > max_rank) return fmt::format("buffer {} has {} dimensions", b.name, b.dims.size());
  for (const auto& [n, v] : b.dims) {
    if (!is_identifier(n, 16)) return fmt::format("buffer {} names a dimension '{}'", b.name, n.substr(0, 16));
    if (v < 0 || v > kMaxParamValue) return fmt::format("buffer {} has an extent {} out of range", b.name, v);
  }
  if (b.what.size() > 500) return fmt::format("buffer {} has a description of {} bytes", b.name, b.what.size());
  const int64_t largest = std::max({c.input_elems(), c.weight_elems(), c.conv_out_elems()});
  switch (b.kind) {
    case BufferKind::input:
      if (!conv_input_ok(b, c, c.in)) return fmt::format("input buffer {} is not the problem's input", b.name);
      return "";
    case BufferKind::filters:
      if (!filters_ok(b, c, spec::Layout::nchw)) return fmt::format("filters buffer {} is not (K, C, R, S)", b.name);
      return "";
    case BufferKind::channels:
      if (b.floats() != reference::chan_elems(p))
        return fmt::format("channels buffer {} holds {} floats, the problem has {}", b.name, b.floats(),
                           reference::chan_elems(p));
      return "";
    case BufferKind::scratch:
      // Every scratch buffer is an intermediate of one pass over the problem: none is larger.
      if (b.floats() < 1 || b.floats() > largest)
        return fmt::format("scratch buffer {} holds {} floats (1 to {} allowed for this problem)", b.name, b.floats(),
                           largest);
      return "";
    case BufferKind::weights:
    case BufferKind::bias:
    case BufferKind::param:
    case BufferKind::extra:
      return fmt::format("buffer {} is of kind {}, which only version-2 plans use", b.name, buffer_kind_name(b.kind));
  }
  return "unknown buffer kind";
}

// Kernel arguments: buffers in the table, by-value structs of a sane size, written ones buffers.
std::string check_kernel_args(const KernelStep& k, size_t buffers) {
  if (k.args.empty() || k.args.size() > kMaxArgs) return fmt::format("{} arguments", k.args.size());
  for (const KernelArg& a : k.args) {
    if (const auto r = arg_buffer(a)) {
      if (*r >= buffers) return "names a buffer outside the table";
    } else if (const ValueArg* val = std::get_if<ValueArg>(&a)) {
      if (!is_identifier(val->type, 64)) return "passes a by-value argument whose type is not an identifier";
      if (val->bytes.empty() || val->bytes.size() > kMaxValueBytes || val->bytes.size() % 8 != 0)
        return fmt::format("passes a by-value {} of {} bytes", val->type, val->bytes.size());
    }
  }
  std::set<size_t> w;
  for (size_t a : k.writes)
    if (a >= k.args.size() || !w.insert(a).second || !arg_buffer(k.args[a])) return "bad list of written arguments";
  return "";
}

// ---- version-2 problems: one dense row-major tensor per buffer ----

using spec::Shape;

Shape dims_of(const Buffer& b) {
  Shape s;
  for (const auto& d : b.dims) s.push_back(d.second);
  return s;
}

// param_shapes: the general form's (a chain-form epilogue's parameter is (1, K, 1, ...)).
std::string check_model_buffer(const Buffer& b, const spec::Problem& p, const std::vector<Shape>& param_shapes,
                               int64_t largest) {
  if (!is_identifier(b.name)) return fmt::format("buffer name '{}' is not an identifier", b.name.substr(0, 64));
  if (b.layout != TensorLayout::row_major) return fmt::format("buffer {} is not row-major", b.name);
  // Rank 0 is a scalar (a reduction over everything without keepdim): one float.
  if (b.dims.size() > kMaxRank) return fmt::format("buffer {} has {} dimensions", b.name, b.dims.size());
  for (const auto& [n, v] : b.dims) {
    if (!is_identifier(n, 16)) return fmt::format("buffer {} names a dimension '{}'", b.name, n.substr(0, 16));
    if (v < 0 || v > kMaxParamValue) return fmt::format("buffer {} has an extent {} out of range", b.name, v);
  }
  if (b.what.size() > 500) return fmt::format("buffer {} has a description of {} bytes", b.name, b.what.size());
  const auto want = [&](const Shape& s, const char* what) {
    return dims_of(b) == s ? std::string()
                           : fmt::format("{} buffer {} is {}, {} is {}", buffer_kind_name(b.kind), b.name,
                                         spec::shape_text(dims_of(b)), what, spec::shape_text(s));
  };
  switch (b.kind) {
    case BufferKind::input: return want(main_input_shape(p), "the main operator's input");
    case BufferKind::weights: return want(main_weight_shape(p), "its weight");
    case BufferKind::bias:
      if (!main_has_bias(p)) return fmt::format("bias buffer {}: the main operator has no bias", b.name);
      return want({p.channels()}, "its bias");
    case BufferKind::param:
      if (b.index < 0 || size_t(b.index) >= param_shapes.size())
        return fmt::format("param buffer {} names parameter {} of {}", b.name, b.index, param_shapes.size());
      return want(param_shapes[size_t(b.index)], "the parameter");
    case BufferKind::extra:
      if (b.index < 0 || size_t(b.index) >= p.input_shapes.size())
        return fmt::format("extra buffer {} names input {} of {}", b.name, b.index, p.input_shapes.size());
      return want(p.input_shapes[size_t(b.index)], "the extra input");
    case BufferKind::scratch:
      if (b.floats() < 1 || b.floats() > largest)
        return fmt::format("scratch buffer {} holds {} floats (1 to {} allowed for this problem)", b.name, b.floats(),
                           largest);
      return "";
    case BufferKind::filters:
    case BufferKind::channels:
      return fmt::format("buffer {} is of kind {}, which only conv2d chain plans use", b.name,
                         buffer_kind_name(b.kind));
  }
  return "unknown buffer kind";
}

// check_variant for a problem that is not conv2d chain form.
std::string check_model_variant(const Variant& v, const spec::Problem& p) {
  const auto fail = [&](const std::string& what) { return fmt::format("variant {}: {}", v.name, what); };
  int64_t largest = std::max(spec::elems(main_input_shape(p)), spec::elems(main_weight_shape(p)));
  for (const Shape& s : spec::epilogue_shapes(p)) largest = std::max(largest, spec::elems(s));
  // fused-gemm's packed W: under 3xTF32 two parts, N padded to a 256-wide tile and K to 32.
  if (!p.is_conv()) {
    const auto up = [](int64_t a, int64_t b) { return (a + b - 1) / b * b; };
    largest = std::max(largest, 2 * up(p.gemm.n, 256) * up(p.gemm.k, 32));
  }
  std::set<std::string> names;
  const std::vector<Shape> param_shapes = general_epilogue(p).param_shapes;
  for (const auto& b : v.buffers) {
    if (std::string e = check_model_buffer(b, p, param_shapes, largest); !e.empty()) return fail(e);
    if (!names.insert(b.name).second) return fail(fmt::format("two buffers named {}", b.name));
  }
  std::vector<bool> written(v.buffers.size(), false);
  const auto in_range = [&](BufferRef r) { return r < v.buffers.size(); };
  const auto is = [&](BufferRef r, BufferKind k) { return v.buffer(r).kind == k; };
  const int64_t main_out = p.main_out_elems();
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const Step& st = v.plan[i];
    const std::string where = fmt::format("step {}", i + 1);
    switch (st.kind()) {
      case StepKind::cudnn_conv:
      case StepKind::cudnn_graph:
        return fail(where + " is a conv2d chain step; this problem is not conv2d chain form");
      case StepKind::gemm: {
        const GemmStep& g = st.gemm();
        if (!in_range(g.a) || !in_range(g.b) || !in_range(g.out) || (g.bias && !in_range(*g.bias)))
          return fail(where + " names a buffer outside the table");
        if (p.is_conv()) return fail(where + " is a GEMM, the problem's main operator a conv");
        const spec::Gemm& q = p.gemm;
        if (g.linear != (p.main == spec::MainKind::linear) || g.gemm.batch != q.batch || g.gemm.m != q.m ||
            g.gemm.k != q.k || g.gemm.n != q.n || g.gemm.trans_a != q.trans_a || g.gemm.trans_b != q.trans_b ||
            g.gemm.bias != q.bias)
          return fail(where + ": the GEMM is not the problem's");
        if (!is(g.a, BufferKind::input) || !is(g.b, BufferKind::weights))
          return fail(where + ": the GEMM's operands are not the input and the weights");
        if (g.bias.has_value() != q.bias || (g.bias && !is(*g.bias, BufferKind::bias)))
          return fail(where + ": the GEMM's bias is not the problem's bias buffer");
        if (g.algo < 0 || g.algo > GemmStep::kMaxAlgo)
          return fail(fmt::format("{}: cuBLASLt algorithm rank {} is outside 0-{}", where, g.algo, GemmStep::kMaxAlgo));
        if (v.buffer(g.out).floats() != main_out)
          return fail(fmt::format("{}: GEMM output {} is not the main output's size", where, v.buffer(g.out).name));
        break;
      }
      case StepKind::conv_nd: {
        const ConvNdStep& c = st.conv_nd();
        if (!in_range(c.in) || !in_range(c.filters) || !in_range(c.out) || (c.bias && !in_range(*c.bias)))
          return fail(where + " names a buffer outside the table");
        if (!p.is_conv() || c.main != p.main) return fail(where + ": the conv is not the problem's main operator");
        if (c.layout != spec::Layout::nchw) return fail(where + ": conv layout (channels-first only)");
        if (!is(c.in, BufferKind::input) || !is(c.filters, BufferKind::weights))
          return fail(where + ": the conv's operands are not the input and the weights");
        if (c.bias.has_value() != p.conv.bias || (c.bias && !is(*c.bias, BufferKind::bias)))
          return fail(where + ": the conv's bias is not the problem's bias buffer");
        if (v.buffer(c.out).floats() != main_out)
          return fail(fmt::format("{}: conv output {} is not the main output's size", where, v.buffer(c.out).name));
        break;
      }
      case StepKind::kernel: {
        const KernelStep& k = st.kernel();
        if (!is_identifier(k.name, 128)) return fail(where + ": kernel name is not an identifier");
        if (std::string e = check_launch(k); !e.empty()) return fail(e);
        if (std::string e = check_kernel_args(k, v.buffers.size()); !e.empty()) return fail(where + ": " + e);
        break;
      }
    }
    for (BufferRef r : st.reads())
      if (is(r, BufferKind::scratch) && !written[r])
        return fail(fmt::format("{} reads {} before any step writes it", where, v.buffer(r).name));
    for (BufferRef r : st.writes()) {
      if (!is(r, BufferKind::scratch))
        return fail(fmt::format("{} writes {}, an input of the problem", where, v.buffer(r).name));
      written[r] = true;
    }
  }
  if (!in_range(v.output)) return fail("output buffer outside the table");
  if (!written[v.output]) return fail(fmt::format("no step writes the output buffer {}", v.output_buffer().name));
  if (v.output_layout != spec::Layout::nchw) return fail("output layout (v2 outputs are row-major, 'nchw')");
  const Shape want = v.role() == Role::floor ? p.main_shape() : spec::out_shape(p);
  if (dims_of(v.output_buffer()) != want)
    return fail(fmt::format("output buffer {} is {}, the {} is {}", v.output_buffer().name,
                            spec::shape_text(dims_of(v.output_buffer())),
                            v.role() == Role::floor ? "main output" : "problem's output", spec::shape_text(want)));
  if (!std::isfinite(v.kernel_bytes) || v.kernel_bytes < 0) return fail("kernel_bytes is not a finite size");
  return "";
}


}  // namespace

bool is_identifier(const std::string& s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  const auto alpha = [](char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_'; };
  if (!alpha(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char ch) { return alpha(ch) || (ch >= '0' && ch <= '9'); });
}

bool is_variant_name(const std::string& s) {
  if (s.empty() || s.size() > 200) return false;
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
           ch == '.' || ch == '-';
  });
}

std::string check_variant(const Variant& v, const spec::Problem& p) {
  if (!is_variant_name(v.name)) return "variant name is empty, too long or has characters other than [A-Za-z0-9_.-]";
  if (!is_variant_name(v.design)) return fmt::format("variant {}: design name is not a name", v.name);
  const auto fail = [&](const std::string& what) { return fmt::format("variant {}: {}", v.name, what); };
  if (v.params.size() > kMaxParams) return fail(fmt::format("{} parameters", v.params.size()));
  for (const auto& [n, val] : v.params) {
    if (!is_identifier(n, 32)) return fail(fmt::format("parameter name '{}' is not an identifier", n.substr(0, 32)));
    if (val < -kMaxParamValue || val > kMaxParamValue) return fail(fmt::format("parameter {} = {} out of range", n, val));
  }
  if (v.source.size() > kMaxSourceBytes) return fail(fmt::format("source of {} bytes", v.source.size()));
  if (v.buffers.empty() || v.buffers.size() > kMaxBuffers) return fail(fmt::format("{} buffers", v.buffers.size()));
  if (!p.is_conv2d_chain()) {
    if (v.plan.empty() || v.plan.size() > kMaxSteps) return fail(fmt::format("{} plan steps", v.plan.size()));
    return check_model_variant(v, p);
  }
  std::set<std::string> names;
  for (const auto& b : v.buffers) {
    if (std::string e = check_buffer(b, p); !e.empty()) return fail(e);
    if (!names.insert(b.name).second) return fail(fmt::format("two buffers named {}", b.name));
  }
  if (v.plan.empty() || v.plan.size() > kMaxSteps) return fail(fmt::format("{} plan steps", v.plan.size()));

  const spec::Conv& c = p.conv;
  std::vector<bool> written(v.buffers.size(), false);
  const auto in_range = [&](BufferRef r) { return r < v.buffers.size(); };
  for (size_t i = 0; i < v.plan.size(); ++i) {
    const Step& st = v.plan[i];
    const std::string where = fmt::format("step {}", i + 1);
    switch (st.kind()) {
      case StepKind::cudnn_conv: {
        const ConvStep& cs = st.conv();
        if (!in_range(cs.in) || !in_range(cs.filters) || !in_range(cs.out) || (cs.bias && !in_range(*cs.bias)))
          return fail(where + " names a buffer outside the table");
        if (cs.layout != spec::Layout::nchw && cs.layout != spec::Layout::nhwc) return fail(where + ": conv layout");
        if (!conv_input_ok(v.buffer(cs.in), c, cs.layout))
          return fail(fmt::format("{}: conv input {} is not the input in the conv's layout", where, v.buffer(cs.in).name));
        if (!filters_ok(v.buffer(cs.filters), c, cs.layout))
          return fail(fmt::format("{}: conv filters {} do not fit the conv's layout", where, v.buffer(cs.filters).name));
        if (!conv_output_ok(v.buffer(cs.out), c, cs.layout))
          return fail(fmt::format("{}: conv output {} is not conv-output shaped", where, v.buffer(cs.out).name));
        if (cs.bias && (v.buffer(*cs.bias).kind != BufferKind::channels || !c.bias))
          return fail(where + ": conv bias is not the channels buffer of a problem with a bias");
        break;
      }
      case StepKind::cudnn_graph: {
        const GraphStep& g = st.graph();
        if (!in_range(g.in) || !in_range(g.filters) || !in_range(g.out) || (g.chan && !in_range(*g.chan)))
          return fail(where + " names a buffer outside the table");
        if (g.in_layout != spec::Layout::nchw && g.in_layout != spec::Layout::nhwc)
          return fail(where + ": graph input layout");
        if (!conv_input_ok(v.buffer(g.in), c, g.in_layout))
          return fail(fmt::format("{}: graph input {} is not the input in its layout", where, v.buffer(g.in).name));
        if (!filters_ok(v.buffer(g.filters), c, spec::Layout::nhwc))
          return fail(fmt::format("{}: graph filters {} are not KRSC", where, v.buffer(g.filters).name));
        const int64_t channels = g.epilogue && p.reduce ? 1 : c.k;
        const Buffer& o = v.buffer(g.out);
        // One channel (after the reduction) lies the same in NCHW: such a buffer is accepted too.
        const bool nhwc_ok = o.layout == TensorLayout::nhwc &&
                             o.dims == Dims{{"N", c.n}, {"P", c.p()}, {"Q", c.q()}, {channels == c.k ? "K" : "C", channels}};
        const bool one_channel_ok = channels == 1 && c.k != 1 && o.layout == TensorLayout::nchw &&
                                    o.dims == Dims{{"N", c.n}, {"C", 1}, {"P", c.p()}, {"Q", c.q()}};
        if (!nhwc_ok && !one_channel_ok)
          return fail(fmt::format("{}: graph output {} is not (N, P, Q, {}) channels-last", where, o.name, channels));
        if (g.chan && v.buffer(*g.chan).kind != BufferKind::channels)
          return fail(where + ": the graph's per-channel operands are not the channels buffer");
        if (!g.chan && (c.bias || (g.epilogue && p.num_params > 0)))
          return fail(where + ": the graph needs the channels buffer (conv bias or per-channel operands)");
        break;
      }
      case StepKind::kernel: {
        const KernelStep& k = st.kernel();
        if (!is_identifier(k.name, 128)) return fail(where + ": kernel name is not an identifier");
        if (std::string e = check_launch(k); !e.empty()) return fail(e);
        if (std::string e = check_kernel_args(k, v.buffers.size()); !e.empty()) {
          // The wording these tests and messages have always had.
          if (e.starts_with("names")) return fail(where + " " + e);
          return fail(where + ": " + e);
        }
        break;
      }
      case StepKind::gemm:
      case StepKind::conv_nd:
        return fail(where + " is a version-2 step; this problem is conv2d chain form");
    }
    for (BufferRef r : st.reads()) {
      const Buffer& b = v.buffer(r);
      if (b.kind == BufferKind::scratch && !written[r])
        return fail(fmt::format("{} reads {} before any step writes it", where, b.name));
    }
    for (BufferRef r : st.writes()) {
      if (v.buffer(r).kind != BufferKind::scratch)
        return fail(fmt::format("{} writes {}, an input of the problem", where, v.buffer(r).name));
      written[r] = true;
    }
  }
  if (!in_range(v.output)) return fail("output buffer outside the table");
  if (!written[v.output]) return fail(fmt::format("no step writes the output buffer {}", v.output_buffer().name));
  if (v.output_layout != spec::Layout::nchw && v.output_layout != spec::Layout::nhwc) return fail("output layout");
  const int64_t want = v.role() == Role::floor ? c.conv_out_elems() : p.out_elems();
  if (v.output_buffer().floats() != want)
    return fail(fmt::format("output buffer {} holds {} floats, the {} has {}", v.output_buffer().name,
                            v.output_buffer().floats(), v.role() == Role::floor ? "conv output" : "problem's output",
                            want));
  if (!std::isfinite(v.kernel_bytes) || v.kernel_bytes < 0) return fail("kernel_bytes is not a finite size");
  return "";
}

}  // namespace fusetune::codegen
