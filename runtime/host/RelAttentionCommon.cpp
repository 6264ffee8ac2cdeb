//===- RelAttentionCommon.cpp - Shared parts of rel_attention -------------===//

#include "runtime/host/RelAttentionCommon.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace xlnetc::rt::host::relattn {

Operands::Operands(const RelAttentionArgs &a)
    : B(a.q->shape[0]), T(a.q->shape[1]), N(a.q->shape[2]), H(a.q->shape[3]),
      K(a.k->shape[1]), S(a.segMat->shape[1]), P(a.kR->shape[0]),
      R(a.kR->shape[1]), NH(N * H), q(a.q->f32()), k(a.k->f32()), v(a.v->f32()),
      kR(a.kR->f32()), segEmb(a.segEmbed->f32()), rw(a.rwBias->f32()),
      rr(a.rrBias->f32()), rs(a.rsBias->f32()),
      segMat(a.segMat->dtype == DType::Bool ? a.segMat->b8() : nullptr),
      mask(a.mask->dtype == DType::Bool ? a.mask->b8() : nullptr),
      segId(a.segMat->dtype == DType::I64 ? a.segMat->i64() : nullptr),
      permRank(a.mask->dtype == DType::I64 &&
                       isPermRankShape(a.mask->shape[1], a.mask->shape[2], S)
                   ? a.mask->i64()
                   : nullptr),
      permBits(a.mask->dtype == DType::I64 && !permRank ? a.mask->i64()
                                                        : nullptr),
      W(permBitsWords(S)),
      rows(a.rows ? a.rows->i64() : nullptr),
      scale(a.scale), drop(a.dropatt > 0.0),
      dropKey(dropoutKey(a.seed, a.dropoutSite)), dropRows(a.dropRows), dropRate(float(a.dropatt)),
      dropScale(a.dropatt > 0.0 ? 1.0 / (1.0 - double(float(a.dropatt)))
                                : 1.0) {}

Status Operands::checkRows() const {
  if (rows)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        if (rows[b * T + t] < -1 || rows[b * T + t] >= S)
          return Status::error(
              fmt::format("query row {} at b={}, t={} is outside [-1, {})",
                          rows[b * T + t], b, t, S));
  return Status::ok();
}

void BlockScores::compute(const Operands &o, int64_t b_, int64_t n_,
                          int64_t t0_, int64_t t1_) {
  prepare(o, b_, n_, t0_, t1_);
  const int64_t M = t1 - t0, H = o.H, K = o.K, NH = o.NH;
  if (W == 0 || M == 0 || K == 0 || H == 0)
    return;
  const float *kb = o.k + (b * K * o.N + n) * H; // [K, H], stride NH
  const float *krw =
      o.kR + ((o.copy(b) * o.R + r0) * o.N + n) * H; // [W, H], stride NH
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(M), blasint(K),
              blasint(H), 1.0f, qw.data(), blasint(H), kb, blasint(NH), 0.0f,
              ac.data(), blasint(K));
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(M), blasint(W),
              blasint(H), 1.0f, qr.data(), blasint(H), krw, blasint(NH), 0.0f,
              bd.data(), blasint(W));
}

void BlockScores::prepare(const Operands &o, int64_t b_, int64_t n_,
                          int64_t t0_, int64_t t1_) {
  b = b_, n = n_, t0 = t0_, t1 = t1_;
  const int64_t M = t1 - t0, H = o.H, K = o.K, NH = o.NH;
  acStride = K;
  qw.resize(size_t(M * H));
  qr.resize(size_t(M * H));
  ac.resize(size_t(M * K));

  // 1. The window of k_r rows: S - i + j over the block's positions i.
  int64_t iMin = o.S, iMax = -1;
  for (int64_t t = t0; t < t1; ++t) {
    int64_t i = o.position(b, t);
    if (i >= 0) {
      iMin = std::min(iMin, i);
      iMax = std::max(iMax, i);
    }
  }
  r0 = iMax < 0 ? 0 : o.S - iMax;
  W = iMax < 0 ? 0 : K + iMax - iMin;
  bd.resize(size_t(M * W));

  // 2. Biased queries (float, as GEMM operands; compute() then forms the
  //    two products).
  const float *qb = o.q + ((b * o.T + t0) * o.N + n) * H; // [M, H], stride NH
  const float *rw = o.rw + n * H, *rr = o.rr + n * H;
  for (int64_t t = 0; t < M; ++t)
    for (int64_t h = 0; h < H; ++h) {
      qw[size_t(t * H + h)] = qb[t * NH + h] + rw[h];
      qr[size_t(t * H + h)] = qb[t * NH + h] + rr[h];
    }
}

float *BlockScores::rowOperands(const Operands &o, int64_t t, double *qs, uint8_t *masked,
                               uint8_t *differ, double &ef0, double &ef1) {
  const int64_t H = o.H;
  const int64_t i = o.position(b, t);
  // ef: two numbers per row, (q + r_s_bias) · seg_embed[0/1, n], in double.
  const float *qv = o.q + ((b * o.T + t) * o.N + n) * H;
  const float *rs = o.rs + n * H;
  const float *se0 = o.segEmb + (0 * o.N + n) * H;
  const float *se1 = o.segEmb + (1 * o.N + n) * H;
  ef0 = ef1 = 0.0;
  vecKernels().segTermRow(qv, rs, se0, se1, H, qs, ef0, ef1);
  o.maskRow(b, i, masked);
  o.differRow(b, i, differ);
  // bd reads k_r at S - i + j (XLNet's rel_shift).
  return bd.data() + (t - t0) * W + (o.S - i - r0);
}

float *BlockScores::softmaxRow(const Operands &o, int64_t t, double *qs,
                              uint8_t *masked, uint8_t *differ, float *prob) {
  double ef0 = 0.0, ef1 = 0.0;
  float *bdShifted = rowOperands(o, t, qs, masked, differ, ef0, ef1);
  ScoreRow row{ac.data() + (t - t0) * o.K, bdShifted, differ, masked, float(ef0),
               float(ef1), float(o.scale), o.K};
  vecKernels().scoreSoftmax(row, prob);
  return bdShifted;
}

void Operands::maskRow(int64_t b, int64_t i, uint8_t *out) const {
  if (mask) {
    std::copy(mask + (b * S + i) * K, mask + (b * S + i + 1) * K, out);
    return;
  }
  const int64_t mlen = K - S;
  std::fill(out, out + mlen, uint8_t(0)); // memory columns are visible
  uint8_t *o = out + mlen;
  if (permBits) {
    const int64_t *bits = permBits + (b * S + i) * W;
    for (int64_t jj = 0; jj < S; ++jj)
      o[jj] = permBit(bits, jj);
  } else {
    vecKernels().rankMaskRow(permRank[(b * 2) * S + i], permRank + (b * 2 + 1) * S, S, o);
  }
  if (!rows)
    o[i] = 0; // the content stream sees itself
}

void Operands::differRow(int64_t b, int64_t i, uint8_t *out) const {
  if (segMat) {
    std::copy(segMat + (b * S + i) * K, segMat + (b * S + i + 1) * K, out);
    return;
  }
  const int64_t mlen = K - S, segI = segId[b * S + i];
  std::fill(out, out + mlen, uint8_t(segI != 0)); // memory counts as segment 0
  vecKernels().segDifferRow(segI, segId + b * S, S, out + mlen);
}

} // namespace xlnetc::rt::host::relattn
