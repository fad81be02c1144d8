#include "codegen/stage_geometry.hpp"

#include <algorithm>
#include <array>

#include "common/error.hpp"
#include "spec/shape_rules.hpp"

namespace fusetune::codegen::stage_detail {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

uint32_t grid_for(int64_t items, int64_t per_block) {
  return uint32_t(std::clamp<int64_t>(ceil_div(items, per_block), 1, kMaxGrid));
}

std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

namespace {

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

}  // namespace

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

StageChainGeom chain_geom(const Shape& out, const Shape& x, const std::vector<const Shape*>& operands) {
  if (operands.size() > size_t(kStageChainOperands)) throw InputError("stage kernels: a run with too many operands");
  std::vector<std::vector<int64_t>> strides = {broadcast_strides(x, out)};
  for (size_t j = 0; j < size_t(kStageChainOperands); ++j) {
    const Shape* a = j < operands.size() ? operands[j] : nullptr;
    strides.push_back(a ? broadcast_strides(*a, out) : std::vector<int64_t>(out.size(), 0));
  }
  const Dims d = simplify(out, strides);
  StageChainGeom g;
  g.rank = int64_t(d.ext.size());
  g.total = spec::elems(out);
  fill(g.ext, d.ext);
  fill(g.sx, d.strides[0]);
  for (size_t j = 0; j < size_t(kStageChainOperands); ++j) fill(g.sa[j], d.strides[j + 1]);
  return g;
}

StageFoldGeom fold_geom(const Shape& in, const Shape& out, const std::vector<const Shape*>& pro,
                        const std::vector<const Shape*>& epi) {
  if (pro.size() + epi.size() > size_t(kStageChainOperands)) throw InputError("stage kernels: a fold with too many operands");
  // Each side's dims simplified with its own operands (x dense over `in`, the output dense over `out`).
  const StageChainGeom p = chain_geom(in, in, pro);
  const StageChainGeom e = chain_geom(out, out, epi);
  StageFoldGeom g;
  g.in_rank = p.rank;
  g.out_rank = e.rank;
  g.pro_slots = int64_t(pro.size());
  g.in_ext = p.ext;
  g.out_ext = e.ext;
  for (size_t j = 0; j < pro.size(); ++j) g.sa[j] = p.sa[j];
  for (size_t j = 0; j < epi.size(); ++j) g.sa[pro.size() + j] = e.sa[j];
  return g;
}

// Rows over `in`: the dims in `reduced` make a row; the others, in order, number the rows.
StageRowsGeom rows_geom(const Shape& in, const std::vector<bool>& reduced, double eps) {
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

}  // namespace fusetune::codegen::stage_detail
