//===- BFloat16.h - bfloat16 conversions on the host -----------*- C++ -*-===//
//
// The host's side of the bf16 storage type (the device's is xl_bf16 in
// runtime/device/prelude/xlnetc_prelude.cuh, written with the same rule):
// a bfloat16 is the top 16 bits of an f32, rounded to nearest even; NaN stays
// a (quiet) NaN.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_BFLOAT16_H
#define XLNETC_RUNTIME_BFLOAT16_H

#include <cstdint>
#include <cstring>

namespace xlnetc::rt {

/// The bf16 nearest to `f` (ties to even).
inline uint16_t bf16FromFloat(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a NaN
    return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

/// The f32 value of a bf16 (exact).
inline float floatFromBf16(uint16_t h) {
  uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// `f` rounded to bf16 and back.
inline float roundToBf16(float f) { return floatFromBf16(bf16FromFloat(f)); }

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_BFLOAT16_H
