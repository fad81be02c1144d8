#include "codegen/variant_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "reference/problem_data.hpp"

namespace fusetune::codegen {

namespace {

constexpr size_t kMaxBuffers = 64;
constexpr size_t kMaxSteps = 64;
constexpr size_t kMaxArgs = 32;
constexpr size_t kMaxParams = 64;
constexpr size_t kMaxSourceBytes = size_t(8) << 20;
constexpr int64_t kMaxParamValue = int64_t(1) << 40;
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

std::string check_buffer(const Buffer& b, const spec::Problem& p) {
  const spec::Conv& c = p.conv;
  if (!is_identifier(b.name)) return fmt::format("buffer name '{}' is not an identifier", b.name.substr(0, 64));
  if (b.dims.empty() || b.dims.size() > 4) return fmt::format("buffer {} has {} dimensions", b.name, b.dims.size());
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
  }
  return "unknown buffer kind";
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
        if (k.args.empty() || k.args.size() > kMaxArgs) return fail(fmt::format("{}: {} arguments", where, k.args.size()));
        for (BufferRef r : k.args)
          if (!in_range(r)) return fail(where + " names a buffer outside the table");
        std::set<size_t> w;
        for (size_t a : k.writes)
          if (a >= k.args.size() || !w.insert(a).second) return fail(where + ": bad list of written arguments");
        break;
      }
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
