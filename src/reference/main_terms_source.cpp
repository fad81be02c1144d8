#include "reference/main_terms_source.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.hpp"
#include "reference/gpu_sources.hpp"

namespace fusetune::reference {
namespace {

struct Rows {
  int64_t tiles_per_batch = 0, tiles = 0;
};

Rows gemm_rows(const spec::Gemm& g) {
  const int64_t per = (g.m + kMainTermsGemmTile - 1) / kMainTermsGemmTile;
  return {per, per * g.batch};
}

// First (batch, M) row of row tile `tile`, and one past its last.
int64_t tile_row(const spec::Gemm& g, const Rows& r, int64_t tile) {
  return tile / r.tiles_per_batch * g.m + tile % r.tiles_per_batch * kMainTermsGemmTile;
}
int64_t tile_row_end(const spec::Gemm& g, const Rows& r, int64_t tile) {
  return std::min(tile_row(g, r, tile) + kMainTermsGemmTile, tile / r.tiles_per_batch * g.m + g.m);
}

// The few facts the kernel divides or indexes by (a parsed spec has them all; this is for
// hand-built problems in tests and callers that skip the parser).
void check_main(const spec::Problem& p) {
  bool ok = p.main_out_elems() >= 1;
  if (p.is_conv()) {
    const spec::Conv& c = p.conv;
    ok = ok && c.n >= 1 && c.c >= 1 && c.d >= 1 && c.h >= 1 && c.w >= 1 && c.k >= 1 && c.t >= 1 && c.r >= 1 &&
         c.s >= 1 && c.groups >= 1 && c.c % c.groups == 0 && c.k % c.groups == 0 && c.stride_d >= 1 &&
         c.stride_h >= 1 && c.stride_w >= 1 && c.dil_d >= 1 && c.dil_h >= 1 && c.dil_w >= 1;
  } else {
    ok = ok && p.gemm.batch >= 1 && p.gemm.m >= 1 && p.gemm.k >= 1 && p.gemm.n >= 1;
  }
  if (!ok) throw InputError("GPU reference: the main operator has an empty or malformed shape");
}

}  // namespace

const char* reference_main_kernel(const spec::Problem& p) {
  return p.is_conv() ? "ft_ref_main_conv" : "ft_ref_main_gemm";
}

std::string render_conv_shape_defines(const spec::Problem& p) {
  check_main(p);
  if (!p.is_conv()) throw InputError("GPU conv source: the main operator is not a conv");
  std::string src;
  // LL: every extent is a 64-bit constant, so products of them never wrap in int.
  auto define = [&src](const char* name, int64_t v) { src += fmt::format("#define {} {}LL\n", name, v); };
  const spec::Conv& c = p.conv;
  define("FT_MA_N", c.n), define("FT_MA_C", c.c), define("FT_MA_D", c.d), define("FT_MA_H", c.h);
  define("FT_MA_W", c.w), define("FT_MA_K", c.k), define("FT_MA_T", c.t), define("FT_MA_R", c.r);
  define("FT_MA_S", c.s), define("FT_MA_O", c.o()), define("FT_MA_P", c.p()), define("FT_MA_Q", c.q());
  define("FT_MA_STRIDE_D", c.stride_d), define("FT_MA_STRIDE_H", c.stride_h), define("FT_MA_STRIDE_W", c.stride_w);
  define("FT_MA_PAD_D", c.pad_d), define("FT_MA_PAD_H", c.pad_h), define("FT_MA_PAD_W", c.pad_w);
  define("FT_MA_DIL_D", c.dil_d), define("FT_MA_DIL_H", c.dil_h), define("FT_MA_DIL_W", c.dil_w);
  define("FT_MA_GROUPS", c.groups);
  src += fmt::format("#define FT_MA_TRANSPOSED {}\n", c.transposed ? 1 : 0);
  // The conv's loop nest after the shape it reads (the templates include it only when alone).
  src += '\n' + reference_template("ft_conv_taps.cuh") + '\n';
  return src;
}

std::string render_reference_main_source(const spec::Problem& p) {
  check_main(p);
  std::string src = "// GPU reference main operator (float64 terms), rendered by src/reference/main_terms_source.cpp.\n";
  if (p.is_conv()) {
    src += "#define FT_MA_KIND FT_MA_KIND_CONV\n" + render_conv_shape_defines(p);
  } else {
    auto define = [&src](const char* name, int64_t v) { src += fmt::format("#define {} {}LL\n", name, v); };
    const spec::Gemm& g = p.gemm;
    const bool linear = p.main == spec::MainKind::linear;
    src += "#define FT_MA_KIND FT_MA_KIND_GEMM\n";
    define("FT_MA_BATCH", g.batch), define("FT_MA_GM", g.m), define("FT_MA_GK", g.k), define("FT_MA_GN", g.n);
    // linear: x (M, K) is A as is; W (N, K) is B transposed (model_main.cpp's gemm_any)
    src += fmt::format("#define FT_MA_TRANS_A {}\n", !linear && g.trans_a ? 1 : 0);
    src += fmt::format("#define FT_MA_TRANS_B {}\n", linear || g.trans_b ? 1 : 0);
  }
  src += '\n';
  src.append(reference_template("ref_main_any.cu"));
  return src;
}

std::vector<MainTermsChunk> main_terms_chunks(const spec::Problem& p, int64_t max_outputs) {
  check_main(p);
  std::vector<MainTermsChunk> out;
  if (p.is_conv()) {
    const int64_t total = p.main_out_elems();
    if (max_outputs < 1)
      throw InputError(fmt::format("GPU reference: room for {} outputs of the main operator per chunk", max_outputs));
    for (int64_t at = 0; at < total; at += max_outputs) {
      const int64_t n = std::min(max_outputs, total - at);
      out.push_back({at, n, at, n});
    }
    return out;
  }
  const spec::Gemm& g = p.gemm;
  const Rows rows = gemm_rows(g);
  const int64_t tile_outputs = kMainTermsGemmTile * g.n;
  if (std::min(g.m, kMainTermsGemmTile) * g.n > max_outputs)
    throw InputError(fmt::format("GPU reference: one 16-row tile of the main operator has {} outputs, room for {} "
                                 "per chunk",
                                 std::min(g.m, kMainTermsGemmTile) * g.n, max_outputs));
  const int64_t per_chunk = std::max<int64_t>(1, max_outputs / tile_outputs);
  for (int64_t t = 0; t < rows.tiles; t += per_chunk) {
    const int64_t end = std::min(rows.tiles, t + per_chunk);
    const int64_t r0 = tile_row(g, rows, t), r1 = tile_row_end(g, rows, end - 1);
    out.push_back({t, end - t, r0 * g.n, (r1 - r0) * g.n});
  }
  return out;
}

}  // namespace fusetune::reference
