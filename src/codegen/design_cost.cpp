#include "codegen/design_cost.hpp"

#include <array>
#include <cstdint>

#include "codegen/designs.hpp"

namespace fusetune::codegen {

namespace {

int64_t round_up(int64_t a, int64_t b) { return (a + b - 1) / b * b; }

int64_t param_or(const Variant& v, std::string_view name, int64_t fallback) {
  for (const auto& [n, value] : v.params)
    if (n == name) return value;
  return fallback;
}

// The GEMM of a fused conv: M = the output pixels, N = K rounded up to the tile width bn,
// K = `gemm_k`; `products` per multiply-add (3xTF32 runs three where TF32 runs one).
double gemm_flop(const spec::Conv& c, const Variant& v, int64_t gemm_k, double products) {
  const int64_t k_pad = round_up(c.k, param_or(v, "bn", 32));
  return 2.0 * products * double(c.n * c.p() * c.q()) * double(k_pad) * double(gemm_k);
}

// fused_conv.cu: the im2col tile, C*R*S rounded up to one 32-wide K tile.
double gather_flop(const spec::Conv& c, const Variant& v) { return gemm_flop(c, v, round_up(c.c * c.r * c.s, 32), 1.0); }

// fused_conv_halo.cu: C rounded up to cp, times R*S rounded up to the 32/cp taps of a K tile.
int64_t halo_k(const spec::Conv& c, const Variant& v) {
  return halo_conv_kg_pad(c.c, c.r * c.s, halo_conv_cp(ParamValues{v.params}));
}
double halo_flop(const spec::Conv& c, const Variant& v) { return gemm_flop(c, v, halo_k(c, v), 1.0); }
double halo_split_flop(const spec::Conv& c, const Variant& v) { return gemm_flop(c, v, halo_k(c, v), 3.0); }

constexpr std::array kTable{
    DesignCost{"fused-conv", &gather_flop},
    DesignCost{"fused-conv.halo", &halo_flop},
    DesignCost{"fused-conv.halo3x", &halo_split_flop},
};

}  // namespace

std::span<const DesignCost> design_cost_table() { return kTable; }

ConvFlopHook conv_flop_hook(const Variant& v) {
  for (const DesignCost& d : kTable)
    if (d.design == v.design) return d.conv_flop;
  return nullptr;
}

}  // namespace fusetune::codegen
