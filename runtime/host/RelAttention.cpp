//===- RelAttention.cpp - Reference XLNet relative attention --------------===//
//
// For every (b, t, n): scores over the K keys from the content (ac),
// position (bd, with XLNet's rel_shift in closed form) and segment (ef)
// terms, masked with -1e30, softmax in double, optional dropatt, then the
// weighted sum of the values. Parallelised over (b, t, n).
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace xlnetc::rt::host {

namespace {

double dot(const double *a, const float *b, int64_t n) {
  double s = 0.0;
  for (int64_t h = 0; h < n; ++h)
    s += a[h] * double(b[h]);
  return s;
}

} // namespace

Status relAttention(const RelAttentionArgs &a, Tensor &out) {
  int64_t B = a.q->shape[0], T = a.q->shape[1], N = a.q->shape[2],
          H = a.q->shape[3];
  int64_t K = a.k->shape[1];
  int64_t S = a.segMat->shape[1];
  int64_t P = a.kR->shape[0], R = a.kR->shape[1];
  const int64_t *rows = a.rows ? a.rows->i64() : nullptr;

  // 1. Validate the query rows (they come from data).
  if (rows)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        if (rows[b * T + t] < -1 || rows[b * T + t] >= S)
          return Status::error(fmt::format(
              "query row {} at b={}, t={} is outside [-1, {})",
              rows[b * T + t], b, t, S));

  const float *q = a.q->f32(), *k = a.k->f32(), *v = a.v->f32();
  const float *kR = a.kR->f32(), *segEmb = a.segEmbed->f32();
  const float *rw = a.rwBias->f32(), *rr = a.rrBias->f32(),
              *rs = a.rsBias->f32();
  const uint8_t *segMat = a.segMat->b8(), *mask = a.mask->b8();
  float *o = out.f32();
  const bool drop = a.dropatt > 0.0;
  const uint64_t key = dropoutKey(a.seed, a.dropoutSite);
  const float dropRate = float(a.dropatt);
  const double dropScale = drop ? 1.0 / (1.0 - double(dropRate)) : 1.0;

#pragma omp parallel if (worthThreads(B * T * N * K * H))
  {
    std::vector<double> qw(static_cast<size_t>(H)), qr(qw), qs(qw);
    std::vector<double> score(static_cast<size_t>(K)), acc(static_cast<size_t>(H));
#pragma omp for collapse(3) schedule(static)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t n = 0; n < N; ++n) {
          float *orow = o + ((b * T + t) * N + n) * H;
          int64_t i = rows ? rows[b * T + t] : t;
          if (i < 0) {
            std::fill(orow, orow + H, 0.0f);
            continue;
          }
          int64_t p = b / (B / P);
          // 2. Biased queries and the two segment scores.
          const float *qv = q + ((b * T + t) * N + n) * H;
          for (int64_t h = 0; h < H; ++h) {
            qw[h] = double(qv[h]) + double(rw[n * H + h]);
            qr[h] = double(qv[h]) + double(rr[n * H + h]);
            qs[h] = double(qv[h]) + double(rs[n * H + h]);
          }
          double ef0 = dot(qs.data(), segEmb + (0 * N + n) * H, H);
          double ef1 = dot(qs.data(), segEmb + (1 * N + n) * H, H);
          // 3. Scores; bd reads k_r at S - i + j (XLNet's rel_shift).
          const uint8_t *segRow = segMat + (b * S + i) * K;
          const uint8_t *maskRow = mask + (b * S + i) * K;
          double mx = -INFINITY;
          for (int64_t j = 0; j < K; ++j) {
            double ac = dot(qw.data(), k + ((b * K + j) * N + n) * H, H);
            int64_t r = S - i + j;
            double bd = dot(qr.data(), kR + ((p * R + r) * N + n) * H, H);
            double ef = segRow[j] ? ef1 : ef0;
            score[j] = (ac + bd + ef) * a.scale - 1e30 * double(maskRow[j]);
            mx = std::max(mx, score[j]);
          }
          // 4. Softmax in double, then optional dropatt.
          double sum = 0.0;
          for (int64_t j = 0; j < K; ++j) {
            score[j] = std::exp(score[j] - mx);
            sum += score[j];
          }
          std::fill(acc.begin(), acc.end(), 0.0);
          uint64_t base = uint64_t(((b * T + t) * N + n) * K);
          for (int64_t j = 0; j < K; ++j) {
            double prob = score[j] / sum;
            if (drop)
              prob = dropoutKeep(key, base + uint64_t(j), dropRate)
                         ? prob * dropScale
                         : 0.0;
            const float *vv = v + ((b * K + j) * N + n) * H;
            for (int64_t h = 0; h < H; ++h)
              acc[h] += prob * double(vv[h]);
          }
          for (int64_t h = 0; h < H; ++h)
            orow[h] = float(acc[h]);
        }
  }
  return Status::ok();
}

} // namespace xlnetc::rt::host
