//===- xlnetc_emu_numeric.h - bf16/f16 as the GPU rounds --------*- C++ -*-===//
//
// The 16-bit storage types of the same-source prelude on the host, with
// conversions that give the same bits as the GPU instructions the prelude
// uses on the device:
//
//   float -> bf16   cvt.rn.bf16.f32   round to nearest even; NaN -> 0x7fff
//   float -> f16    cvt.rn.f16.f32    round to nearest even, subnormals kept,
//                                     overflow -> inf; NaN -> 0x7fff
//   bf16 -> float   shift left by 16  exact
//   f16 -> float    cvt.f32.f16       exact; NaN -> 0x7fffffff
//
// (The NaN results are the canonical NaNs that CUDA's own host fallbacks in
// cuda_bf16.hpp / cuda_fp16.hpp produce.) Plain C++, no emulator state: the
// runtime's GEMM emulation may include it on its own.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_NUMERIC_H
#define XLNETC_EMU_NUMERIC_H

#include <cstdint>
#include <cstring>

// Everything below is private to the kernel object that includes it (see
// xlnetc_emu.cuh, "Linking").
#pragma GCC visibility push(hidden)

/// 32-bit register word as the PTX fragments use it.
typedef unsigned int u32;


/// An IEEE binary16 value as its bits (same layout as the GPU side's xl_f16).
struct xl_f16 {
  unsigned short x;
};

namespace xl::numeric {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// float -> bf16 bits, round to nearest even (cvt.rn.bf16.f32).
inline unsigned short floatToBf16Bits(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return 0x7fff;
  // Adding 0x7fff plus the lowest kept bit rounds half to even; a carry out
  // of the mantissa correctly bumps the exponent (up to infinity).
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<unsigned short>(u >> 16);
}

/// float -> f16 bits, round to nearest even (cvt.rn.f16.f32).
inline unsigned short floatToF16Bits(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t u = x & 0x7fffffffu;
  if (u > 0x7f800000u)
    return 0x7fff;
  if (u >= 0x477ff000u) // >= 65520 (halfway above 65504): rounds to infinity
    return static_cast<unsigned short>(sign | 0x7c00u);
  if (u >= 0x38800000u) { // a normal f16 (>= 2^-14)
    // Rebias the exponent (127 -> 15) and round the 13 dropped bits.
    uint32_t rounded = u + 0xfffu + ((u >> 13) & 1u);
    return static_cast<unsigned short>(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (u <= 0x33000000u) // <= 2^-25: rounds to zero (2^-25 is a tie to even 0)
    return static_cast<unsigned short>(sign);
  // A subnormal f16: the value in units of 2^-24 is m * 2^(e - 126).
  uint32_t e = u >> 23;
  uint32_t m = (u & 0x7fffffu) | 0x800000u;
  uint32_t shift = 126 - e; // 14..24
  uint32_t q = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u)))
    ++q;
  return static_cast<unsigned short>(sign | q);
}

/// bf16 bits -> float (exact).
inline float bf16BitsToFloat(unsigned short h) {
  return bitsFloat(static_cast<uint32_t>(h) << 16);
}

/// f16 bits -> float (exact; NaN -> 0x7fffffff as cvt.f32.f16 gives).
inline float f16BitsToFloat(unsigned short h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return bitsFloat(mant ? 0x7fffffffu : (sign | 0x7f800000u));
  if (exp == 0) {
    float v = static_cast<float>(mant) * 0x1p-24f; // exact: mant < 2^10
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

} // namespace xl::numeric

/// A bfloat16 value as its bits (same layout as the GPU side's xl_bf16): a
/// buffer of them reads and writes like a float buffer (exact loads, stores
/// rounded to nearest even).
struct xl_bf16 {
  unsigned short x;
  xl_bf16() = default;
  xl_bf16(float f) : x(xl::numeric::floatToBf16Bits(f)) {}
  xl_bf16(double d) : xl_bf16(static_cast<float>(d)) {}
  // A bf16 is made from a value, never from its bits: xl_bf16{bits} would
  // convert the integer (set .x for bits).
  xl_bf16(int) = delete;
  xl_bf16(unsigned) = delete;
  xl_bf16(short) = delete;
  xl_bf16(unsigned short) = delete;
  xl_bf16(long) = delete;
  xl_bf16(unsigned long) = delete;
  xl_bf16(long long) = delete;
  xl_bf16(unsigned long long) = delete;
  operator float() const { return xl::numeric::bf16BitsToFloat(x); }
};

/// float -> bf16, round to nearest even.
inline xl_bf16 xl_float2bf16(float f) { return xl_bf16(f); }
/// bf16 -> float (exact).
inline float xl_bf162float(xl_bf16 h) {
  return xl::numeric::bf16BitsToFloat(h.x);
}
/// float -> f16, round to nearest even.
inline xl_f16 xl_float2f16(float f) {
  return xl_f16{xl::numeric::floatToF16Bits(f)};
}
/// f16 -> float (exact).
inline float xl_f162float(xl_f16 h) { return xl::numeric::f16BitsToFloat(h.x); }

/// Two floats rounded to bf16 in one 32-bit word, `lo` in bits 0-15: the
/// element order of an mma A/B fragment register (cvt.rn.bf16x2.f32).
inline u32 xl_pack_bf16x2(float lo, float hi) {
  return static_cast<u32>(xl::numeric::floatToBf16Bits(lo)) |
         (static_cast<u32>(xl::numeric::floatToBf16Bits(hi)) << 16);
}
/// The f16 twin of xl_pack_bf16x2 (cvt.rn.f16x2.f32).
inline u32 xl_pack_f16x2(float lo, float hi) {
  return static_cast<u32>(xl::numeric::floatToF16Bits(lo)) |
         (static_cast<u32>(xl::numeric::floatToF16Bits(hi)) << 16);
}

#pragma GCC visibility pop

#endif // XLNETC_EMU_NUMERIC_H
