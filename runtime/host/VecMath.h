//===- VecMath.h - fp32 exp and erfc that vectorise ------------*- C++ -*-===//
//
// Branch-free fp32 versions of the transcendental functions the host's
// elementwise kernels need, so that a loop over them vectorises (libm's
// expf/tanhf/erff are calls the compiler cannot vectorise without
// -ffast-math and libmvec). Only +, *, min/max, selects and bit casts.
//
//   expApprox   Cephes expf: Cody-Waite reduction by ln 2, a degree-5
//               polynomial, 2^n through the exponent bits; within 2 ulp of
//               exp on [-87.3, 88], exactly 0 below (a masked score's
//               exp is 0, as the softmax requires), exp(88) above.
//   erfcApprox  Numerical Recipes' erfcc (Chebyshev fit): relative error
//               below 1.2e-7 for every x ≥ 0, so 0.5·x·erfc(-x/√2) keeps
//               its relative accuracy in the tail of GELU.
//
// Header-only: VecKernels.cpp includes it once per x86-64 level.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_VECMATH_H
#define XLNETC_RUNTIME_HOST_VECMATH_H

#include <cstdint>
#include <cstring>

namespace xlnetc::rt::host::vecmath {

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// exp(x) in fp32 (see the file comment).
inline float expApprox(float x) {
  const float hi = 88.0f, lo = -87.3365447504019f; // n stays in [-126, 127]
  const float xc = x > hi ? hi : (x < lo ? lo : x);
  // n = round(x / ln 2) with the 1.5·2^23 trick (exact for |n| < 2^22).
  const float magic = 12582912.0f;
  const float n = (xc * 1.44269504088896341f + magic) - magic;
  // r = x - n·ln 2 in two parts (Cody-Waite), |r| <= ln 2 / 2.
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * r * r + r + 1.0f;
  // 2^n through the exponent bits (n in [-126, 127] after the clamp).
  const float pow2n = bitsToFloat(uint32_t(int32_t(n) + 127) << 23);
  const float y = e * pow2n;
  return x < lo ? 0.0f : y;
}

/// erfc(x) in fp32 (see the file comment).
inline float erfcApprox(float x) {
  const float z = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float ans = t * expApprox(-z * z + p);
  return x >= 0.0f ? ans : 2.0f - ans;
}

constexpr float kSqrt2OverPi = 0.7978845608028654f; // √(2/π)
constexpr float kGeluA = 0.044715f;
constexpr float kInvSqrt2 = 0.7071067811865476f;
constexpr float kInvSqrt2Pi = 0.3989422804014327f; // 1/√(2π)

/// gelu_tanh(x) = 0.5·x·(1 + tanh u) = x·σ(2u), u = √(2/π)(x + 0.044715x³):
/// the sigmoid form keeps the relative accuracy where 1 + tanh u cancels.
inline float geluTanh(float x) {
  const float u = kSqrt2OverPi * (x + kGeluA * x * x * x);
  return x / (1.0f + expApprox(-2.0f * u));
}

/// d gelu_tanh / dx = σ + x·σ(1-σ)·2u', σ = σ(2u), u' = √(2/π)(1 + 3·0.044715x²).
inline float geluTanhGrad(float x) {
  const float u = kSqrt2OverPi * (x + kGeluA * x * x * x);
  const float s = 1.0f / (1.0f + expApprox(-2.0f * u));
  const float du = kSqrt2OverPi * (1.0f + 3.0f * kGeluA * x * x);
  return s + x * s * (1.0f - s) * 2.0f * du;
}

/// gelu_erf(x) = x·Φ(x), Φ(x) = 0.5·erfc(-x/√2).
inline float geluErf(float x) { return 0.5f * x * erfcApprox(-x * kInvSqrt2); }

/// d gelu_erf / dx = Φ(x) + x·φ(x).
inline float geluErfGrad(float x) {
  return 0.5f * erfcApprox(-x * kInvSqrt2) + x * kInvSqrt2Pi * expApprox(-0.5f * x * x);
}

} // namespace xlnetc::rt::host::vecmath

#endif // XLNETC_RUNTIME_HOST_VECMATH_H
