// ft_tf32_bits (kernel_templates/ft_tf32.cuh, compiled here as host code), the integer TF32
// rounding of the fused-conv halo design, against rounding done the long way: the two TF32
// neighbours of a float and the nearer of them in float64, ties away from zero, which is what
// the PTX ISA says cvt.rna.tf32.f32 does. Every 4093rd fp32 bit pattern of both signs, every
// tie and every neighbour of a tie in the exponents where rounding carries into the exponent,
// subnormals, the largest floats (which round to infinity), infinities and NaNs.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel_templates/ft_tf32.cuh"

namespace {

// Round f to the 10-bit mantissa of TF32 by comparing distances in float64.
uint32_t reference_tf32(uint32_t u) {
  const float f = std::bit_cast<float>(u);
  if (std::isnan(f)) return u;  // checked separately: NaN in, NaN out
  if (std::isinf(f)) return u;
  const uint32_t down = u & 0xffffe000u;  // toward zero (sign-magnitude)
  const uint32_t up = down + 0x2000u;     // away from zero; may carry into the exponent or to inf
  const double lo = std::fabs(double(std::bit_cast<float>(down)));
  // past the largest finite TF32 the upper neighbour is 2^128 (rounding as if the exponent were
  // unbounded, then overflowing to infinity, as IEEE rounding does)
  const bool overflows = (up & 0x7fffffffu) == 0x7f800000u;
  const double hi = overflows ? std::ldexp(1.0, 128) : std::fabs(double(std::bit_cast<float>(up)));
  const double a = std::fabs(double(f));
  if (a - lo < hi - a) return down;
  return up;  // nearer to up, or a tie: away from zero
}

void expect_rounds(uint32_t u) {
  const uint32_t got = ft_tf32_bits(u);
  const float f = std::bit_cast<float>(u);
  if (std::isnan(f)) {
    ASSERT_TRUE(std::isnan(std::bit_cast<float>(got))) << std::hex << u;
    ASSERT_TRUE(std::isnan(std::bit_cast<float>(got & 0xffffe000u))) << std::hex << u << ": the top 19 bits lose the NaN";
    return;
  }
  ASSERT_EQ(got, reference_tf32(u)) << std::hex << "bits 0x" << u << " (" << f << ")";
  ASSERT_EQ(got & 0x1fffu, 0u) << std::hex << u << ": low 13 bits left";
}

TEST(Tf32Rounding, MatchesNearestTiesAwayOnASweepOfEveryExponent) {
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4093) expect_rounds(uint32_t(u));
}

TEST(Tf32Rounding, TiesAndTheirNeighboursRoundAwayFromZero) {
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e = 0; e < 255; ++e)
      for (uint32_t top : {0u, 0x7fe000u, 0x3fe000u, 0x12345u << 13}) {
        const uint32_t base = sign | (e << 23) | (top & 0x7fe000u);
        for (uint32_t low : {0u, 1u, 0xfffu, 0x1000u, 0x1001u, 0x1fffu}) expect_rounds(base | low);
      }
  // A tie rounds up in magnitude: 1 + 2^-11 -> 1 + 2^-10, -(1 + 2^-11) -> -(1 + 2^-10).
  EXPECT_EQ(ft_tf32_bits(0x3f801000u), 0x3f802000u);
  EXPECT_EQ(ft_tf32_bits(0xbf801000u), 0xbf802000u);
  EXPECT_EQ(ft_tf32_bits(0x3f800fffu), 0x3f800000u);
}

TEST(Tf32Rounding, EdgesOfTheRange) {
  const uint32_t inf = 0x7f800000u, ninf = 0xff800000u;
  EXPECT_EQ(ft_tf32_bits(inf), inf);
  EXPECT_EQ(ft_tf32_bits(ninf), ninf);
  EXPECT_EQ(ft_tf32_bits(0u), 0u);
  EXPECT_EQ(ft_tf32_bits(0x80000000u), 0x80000000u);
  EXPECT_EQ(ft_tf32_bits(0x7f7fffffu), inf);   // FLT_MAX rounds to infinity, as cvt.rna does
  EXPECT_EQ(ft_tf32_bits(0xff7fffffu), ninf);
  EXPECT_EQ(ft_tf32_bits(0x00000001u), 0u);    // the smallest subnormal
  EXPECT_EQ(ft_tf32_bits(0x007fffffu), 0x00800000u);  // the largest subnormal carries to the smallest normal
  for (uint32_t nan : {0x7fc00000u, 0x7fffffffu, 0x7f800001u, 0xffffffffu, 0xff800001u, 0x7fbfe000u}) expect_rounds(nan);
}

}  // namespace
