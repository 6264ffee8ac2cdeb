//===- VecKernels.cpp - The host's inner loops, one x86-64 level ---------===//
//
// Compiled once per level (runtime/CMakeLists.txt): XLNETC_VEC_LEVEL names
// the level (baseline, avx2, avx512) and the -march flags come from the
// build. Plain loops with `omp simd`; VecMath.h supplies exp and erfc.
//
// Everything here has internal linkage or lives in the level's namespace,
// and the headers it includes define no out-of-line code it uses (the
// dropout hash is always inlined): a COMDAT copy built for AVX-512 must
// never be what the linker hands to callers on other CPUs
// (test/Runtime/vec-levels-isolated.test checks the objects' symbols).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/DropoutHash.h"
#include "runtime/host/VecKernels.h"
#include "runtime/host/VecMath.h"

#include <algorithm>
#include <cmath>

#if defined(__AVX2__) && !defined(__AVX512DQ__)
// AVX2 has no 64-bit multiply, and GCC 12 leaves the dropout hash's loops
// scalar there (5x the AVX-512 level's time: 21 against 4 ms of
// xlnet-small's step): keepFactors spells the hash out in intrinsics.
#include <immintrin.h>
#define XLNETC_VEC_HASH_AVX2 1
#else
#define XLNETC_VEC_HASH_AVX2 0
#endif

#ifndef XLNETC_VEC_LEVEL
#error "XLNETC_VEC_LEVEL must name the level this file is built for"
#endif

#define XLNETC_VEC_CAT2(a, b) a##b
#define XLNETC_VEC_CAT(a, b) XLNETC_VEC_CAT2(a, b)
#define XLNETC_VEC_STR2(a) #a
#define XLNETC_VEC_STR(a) XLNETC_VEC_STR2(a)

namespace xlnetc::rt::host {
namespace XLNETC_VEC_CAT(vec_, XLNETC_VEC_LEVEL) {
namespace {

using namespace vecmath;

/// The dropout keep factor of element `index`: keep · scale (branch-free;
/// the same decision as dropoutKeep).
inline float keepFactor(uint64_t key, uint64_t index, float rate, float scale) {
  const uint64_t h = splitmix64(key ^ index);
  const float u = float(int32_t(h >> 40)) * (1.0f / 16777216.0f); // < 2^24: exact
  return u >= rate ? scale : 0.0f;
}

#if XLNETC_VEC_HASH_AVX2
/// a · c per 64-bit lane (the low 64 bits of the product, as uint64_t's *):
/// lo(a)·lo(c) + (hi(a)·lo(c) + lo(a)·hi(c)) · 2^32.
inline __m256i mul64(__m256i a, uint64_t c) {
  const __m256i lo = _mm256_set1_epi64x(int64_t(c & 0xffffffffu));
  const __m256i hi = _mm256_set1_epi64x(int64_t(c >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), lo),
                                         _mm256_mul_epu32(a, hi));
  return _mm256_add_epi64(_mm256_mul_epu32(a, lo), _mm256_slli_epi64(cross, 32));
}

/// splitmix64 (DropoutHash.h) on 4 lanes, shifted down to its top 24 bits.
inline __m256i hashTop24(__m256i z) {
  z = _mm256_add_epi64(z, _mm256_set1_epi64x(int64_t(0x9e3779b97f4a7c15ull)));
  z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 30)), 0xbf58476d1ce4e5b9ull);
  z = mul64(_mm256_xor_si256(z, _mm256_srli_epi64(z, 27)), 0x94d049bb133111ebull);
  z = _mm256_xor_si256(z, _mm256_srli_epi64(z, 31));
  return _mm256_srli_epi64(z, 40);
}
#endif

/// f[i] = keepFactor(key, index0 + i, rate, scale) for i < n.
inline void keepFactors(uint64_t key, uint64_t index0, int64_t n, float rate, float scale,
                        float *f) {
  int64_t i = 0;
#if XLNETC_VEC_HASH_AVX2
  const __m256i lanes = _mm256_set_epi64x(3, 2, 1, 0), keys = _mm256_set1_epi64x(int64_t(key));
  const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
  const __m256 unit = _mm256_set1_ps(1.0f / 16777216.0f), rates = _mm256_set1_ps(rate),
               scales = _mm256_set1_ps(scale);
  for (; i + 8 <= n; i += 8) {
    const __m256i at = _mm256_add_epi64(_mm256_set1_epi64x(int64_t(index0 + uint64_t(i))), lanes);
    const __m256i h0 = hashTop24(_mm256_xor_si256(keys, at));
    const __m256i h1 = hashTop24(_mm256_xor_si256(
        keys, _mm256_add_epi64(at, _mm256_set1_epi64x(4))));
    // Each lane's value is below 2^24: its low 32 bits, in index order.
    const __m256i u32 = _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(h0, evens),
                                                  _mm256_permutevar8x32_epi32(h1, evens), 0x20);
    const __m256 u = _mm256_mul_ps(_mm256_cvtepi32_ps(u32), unit); // exact, as keepFactor's
    _mm256_storeu_ps(f + i, _mm256_and_ps(_mm256_cmp_ps(u, rates, _CMP_GE_OQ), scales));
  }
#endif
#pragma omp simd
  for (int64_t j = i; j < n; ++j)
    f[j] = keepFactor(key, index0 + uint64_t(j), rate, scale);
}

/// Σ x[i] in double. A loop of its own: GCC 12 leaves a loop scalar when
/// it both computes exp (VecMath.h) and sums in double, but vectorises
/// each alone.
inline double sumAsDouble(const float *x, int64_t n) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = 0; i < n; ++i)
    sum += double(x[i]);
  return sum;
}

template <typename F>
inline void mapRows(float *y, int64_t rows, int64_t cols, int64_t ld, const float *bias, F f) {
  for (int64_t r = 0; r < rows; ++r) {
    float *yr = y + r * ld;
    if (bias) {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c)
        yr[c] = f(yr[c] + bias[c]);
    } else {
#pragma omp simd
      for (int64_t c = 0; c < cols; ++c)
        yr[c] = f(yr[c]);
    }
  }
}

void biasActivation(float *y, int64_t rows, int64_t cols, int64_t ld, const float *bias,
                    Activation act) {
  switch (act) {
  case Activation::None:
    if (bias)
      mapRows(y, rows, cols, ld, bias, [](float x) { return x; });
    return;
  case Activation::Relu:
    mapRows(y, rows, cols, ld, bias, [](float x) { return x > 0.0f ? x : 0.0f; });
    return;
  case Activation::GeluTanh:
    mapRows(y, rows, cols, ld, bias, [](float x) { return geluTanh(x); });
    return;
  case Activation::GeluErf:
    mapRows(y, rows, cols, ld, bias, [](float x) { return geluErf(x); });
    return;
  }
}

template <typename F>
inline void mapGrad(const float *dy, const float *x, float *out, int64_t n, F f) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = dy[i] * f(x[i]);
}

void activationGrad(const float *dy, const float *x, float *out, int64_t n,
                    Activation act) {
  switch (act) {
  case Activation::None:
    mapGrad(dy, x, out, n, [](float) { return 1.0f; });
    return;
  case Activation::Relu:
    mapGrad(dy, x, out, n, [](float v) { return v > 0.0f ? 1.0f : 0.0f; });
    return;
  case Activation::GeluTanh:
    mapGrad(dy, x, out, n, [](float v) { return geluTanhGrad(v); });
    return;
  case Activation::GeluErf:
    mapGrad(dy, x, out, n, [](float v) { return geluErfGrad(v); });
    return;
  }
}

void dropout(const float *x, float *out, int64_t n, uint64_t key, uint64_t index0,
             float rate, float scale) {
  // A select, not x · factor: a dropped element is +0 whatever x is (the
  // device's dropout, bit for bit). The factors a block at a time.
  constexpr int64_t kBlock = 512;
  float keep[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    keepFactors(key, index0 + uint64_t(b), m, rate, 1.0f, keep);
#pragma omp simd
    for (int64_t i = 0; i < m; ++i)
      out[b + i] = keep[i] != 0.0f ? x[b + i] * scale : 0.0f;
  }
}

void scoreSoftmax(const ScoreRow &row, float *prob) {
  const int64_t K = row.K;
  const float *ac = row.ac, *bd = row.bd;
  const uint8_t *differ = row.differ, *masked = row.masked;
  const float ef0 = row.ef0, ef1 = row.ef1, scale = row.scale;
  // The masked, scaled scores; 1e30 absorbs any real score, so a masked
  // score is exactly -1e30 (a fully masked row is uniform).
  float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
  for (int64_t j = 0; j < K; ++j) {
    const float s =
        (ac[j] + bd[j] + (differ[j] ? ef1 : ef0)) * scale - (masked[j] ? 1e30f : 0.0f);
    prob[j] = s;
    mx = s > mx ? s : mx;
  }
#pragma omp simd
  for (int64_t j = 0; j < K; ++j)
    prob[j] = expApprox(prob[j] - mx);
  const float inv = float(1.0 / sumAsDouble(prob, K));
#pragma omp simd
  for (int64_t j = 0; j < K; ++j)
    prob[j] *= inv;
}

void dropRow(const float *prob, float *a, int64_t K, uint64_t key, uint64_t index0,
             float rate, float dropScale) {
  keepFactors(key, index0, K, rate, dropScale, a);
#pragma omp simd
  for (int64_t j = 0; j < K; ++j)
    a[j] = prob[j] * a[j];
}

void gradRow(GradRow &g) {
  const int64_t K = g.K;
  const float *prob = g.prob;
  float *a = g.a, *dpc = g.dpc, *dbd = g.dbd;
  const uint8_t *differ = g.differ, *masked = g.masked;
  // 1. A = P·d and dP' = DP·d (d the dropatt factors), Σ P·dP' in double
  //    (the sums in loops of their own, as sumAsDouble's).
  if (g.drop) {
    keepFactors(g.key, g.index0, K, g.rate, g.dropScale, a);
#pragma omp simd
    for (int64_t j = 0; j < K; ++j) {
      const float f = a[j];
      a[j] = prob[j] * f;
      dpc[j] *= f;
    }
  } else {
#pragma omp simd
    for (int64_t j = 0; j < K; ++j)
      a[j] = prob[j];
  }
  double dot = 0.0;
#pragma omp simd reduction(+ : dot)
  for (int64_t j = 0; j < K; ++j)
    dot += double(prob[j]) * double(dpc[j]);
  // 2. c = P (dP' - Σ P dP') · scale, 0 where the mask is set (see
  //    RelAttentionGrad.cpp), its sums per segment class in double.
  const float dotf = float(dot), scale = g.scale;
#pragma omp simd
  for (int64_t j = 0; j < K; ++j) {
    const float c = masked[j] ? 0.0f : prob[j] * (dpc[j] - dotf) * scale;
    dpc[j] = c;
    dbd[j] = c;
  }
  // A loop of its own (GCC 12 vectorises these selects here, not inside
  // the loop above).
  double c0 = 0.0, c1 = 0.0;
#pragma omp simd reduction(+ : c0, c1)
  for (int64_t j = 0; j < K; ++j) {
    const bool other = differ[j] != 0;
    const double c = double(dpc[j]);
    c1 += other ? c : 0.0;
    c0 += other ? 0.0 : c;
  }
  g.c0 = c0;
  g.c1 = c1;
}

double expSum(const float *x, int64_t n, float *e, float &maxOut) {
  float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
  for (int64_t i = 0; i < n; ++i)
    mx = x[i] > mx ? x[i] : mx;
  maxOut = mx;
  // Chunk by chunk, into `e` or (without it) a scratch row: the same sums
  // in the same order either way.
  constexpr int64_t kChunk = 512;
  float tmp[kChunk];
  double sum = 0.0;
  for (int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const int64_t len = n - i0 < kChunk ? n - i0 : kChunk;
    float *out = e ? e + i0 : tmp;
#pragma omp simd
    for (int64_t i = 0; i < len; ++i)
      out[i] = expApprox(x[i0 + i] - mx);
    sum += sumAsDouble(out, len);
  }
  return sum;
}

void adam(const AdamChunk &c) {
  const double b1 = c.beta1, b2 = c.beta2, eps = c.epsilon, lrT = c.lrT,
               wd = c.weightDecay, clip = c.clipFactor;
  const float *ps = c.param, *gs = c.grad, *ms = c.m, *vs = c.v;
  float *po = c.paramOut, *mo = c.mOut, *vo = c.vOut;
  // In place is allowed: element i is read before it is written. fp32, as
  // the official optimizer (TF's Adam on fp32 variables); the per-step
  // scalars come in double.
  const float fb1 = float(b1), fb2 = float(b2), f1b1 = float(1.0 - b1), f1b2 = float(1.0 - b2);
  const float feps = float(eps), flr = float(lrT), fwd = float(wd), fclip = float(clip);
  const bool corrected = c.corrected;
#pragma omp simd
  for (int64_t i = 0; i < c.n; ++i) {
    const float g = gs[i] * fclip;
    const float mi = fb1 * ms[i] + f1b1 * g;
    const float vi = fb2 * vs[i] + f1b2 * g * g;
    const float update = mi / (std::sqrt(vi) + feps);
    const float p = ps[i];
    po[i] = corrected ? p - flr * update : p - flr * (update + fwd * p);
    mo[i] = mi;
    vo[i] = vi;
  }
}

double sumSquares(const float *x, int64_t n) {
  double acc = 0.0;
#pragma omp simd reduction(+ : acc)
  for (int64_t i = 0; i < n; ++i)
    acc += double(x[i]) * double(x[i]);
  return acc;
}

/// The mean and 1/√(var + eps) of z = x + r, two passes in double.
inline void rowStats(const float *x, const float *r, double eps, int64_t D, double &mean,
                     double &inv) {
  double sum = 0.0;
#pragma omp simd reduction(+ : sum)
  for (int64_t d = 0; d < D; ++d)
    sum += double(x[d] + r[d]);
  mean = sum / double(D);
  const double m = mean;
  double var = 0.0;
#pragma omp simd reduction(+ : var)
  for (int64_t d = 0; d < D; ++d) {
    const double c = double(x[d] + r[d]) - m;
    var += c * c;
  }
  var /= double(D);
  inv = 1.0 / std::sqrt(var + eps);
}

void layerNormRow(const float *x, const float *r, const float *gamma, const float *beta,
                  double eps, int64_t D, float *out) {
  double mean, inv;
  rowStats(x, r, eps, D, mean, inv);
#pragma omp simd
  for (int64_t d = 0; d < D; ++d)
    out[d] = float((double(x[d] + r[d]) - mean) * inv * gamma[d] + beta[d]);
}

void layerNormGradRow(const float *dout, const float *x, const float *r, const float *gamma,
                      double eps, int64_t D, double *xhat, double *pg, double *pb,
                      float *dsum) {
  double mean, inv;
  rowStats(x, r, eps, D, mean, inv);
  double mg = 0.0, mgx = 0.0;
#pragma omp simd reduction(+ : mg, mgx)
  for (int64_t d = 0; d < D; ++d) {
    const double xh = (double(x[d] + r[d]) - mean) * inv;
    const double gy = double(dout[d]) * double(gamma[d]);
    xhat[d] = xh;
    mg += gy;
    mgx += gy * xh;
    pg[d] += double(dout[d]) * xh;
    pb[d] += double(dout[d]);
  }
  mg /= double(D);
  mgx /= double(D);
#pragma omp simd
  for (int64_t d = 0; d < D; ++d)
    dsum[d] = float(inv * (double(dout[d]) * double(gamma[d]) - mg - xhat[d] * mgx));
}

void rankMaskRow(int64_t rankI, const int64_t *rank, int64_t n, uint8_t *out) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    out[j] = uint8_t(rankI <= rank[j]);
}

void segDifferRow(int64_t segI, const int64_t *seg, int64_t n, uint8_t *out) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j)
    out[j] = uint8_t(segI != seg[j]);
}

void segTermRow(const float *q, const float *rs, const float *se0, const float *se1,
                int64_t H, double *qs, double &ef0, double &ef1) {
  double e0 = 0.0, e1 = 0.0;
#pragma omp simd reduction(+ : e0, e1)
  for (int64_t h = 0; h < H; ++h) {
    const double x = double(q[h]) + double(rs[h]);
    qs[h] = x;
    e0 += x * double(se0[h]);
    e1 += x * double(se1[h]);
  }
  ef0 = e0;
  ef1 = e1;
}

void segTermGradRow(double c0, double c1, const float *se0, const float *se1,
                    const double *qs, int64_t H, double *dqs, double *accRs, double *accSe0,
                    double *accSe1) {
#pragma omp simd
  for (int64_t h = 0; h < H; ++h) {
    const double d = c0 * double(se0[h]) + c1 * double(se1[h]);
    dqs[h] = d;
    accRs[h] += d;
    accSe0[h] += c0 * qs[h];
    accSe1[h] += c1 * qs[h];
  }
}

void dqRow(const float *dqw, const float *dqr, const double *dqs, int64_t H, float *dq,
           double *accRw, double *accRr) {
#pragma omp simd
  for (int64_t h = 0; h < H; ++h) {
    const double w = dqw[h], r = dqr[h];
    accRw[h] += w;
    accRr[h] += r;
    dq[h] = float(w + r + dqs[h]);
  }
}

void accumulate(double *acc, const float *x, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    acc[i] += double(x[i]);
}

const VecKernels kTable = {
    XLNETC_VEC_STR(XLNETC_VEC_LEVEL), biasActivation, activationGrad, dropout,
    scoreSoftmax, dropRow, gradRow, expSum, adam, sumSquares, rankMaskRow, segDifferRow,
    segTermRow, segTermGradRow, dqRow, accumulate, layerNormRow, layerNormGradRow,
};

} // namespace
} // namespace XLNETC_VEC_CAT(vec_, XLNETC_VEC_LEVEL)

const VecKernels &XLNETC_VEC_CAT(vecKernels_, XLNETC_VEC_LEVEL)() {
  return XLNETC_VEC_CAT(vec_, XLNETC_VEC_LEVEL)::kTable;
}

} // namespace xlnetc::rt::host
