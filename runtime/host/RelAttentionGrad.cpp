//===- RelAttentionGrad.cpp - Backward of XLNet relative attention --------===//
//
// The gradient of relAttention (RelAttention.cpp) with respect to q, k, v,
// k_r, seg_embed and the three relative biases. Like flash-attention's
// backward it stores no probabilities: the softmax of every query row is
// recomputed from the operands. Per (batch row b, head n), with T query
// rows, K keys and R = K + S relative positions:
//
//   AC  = (q + r_w_bias) · kᵀ             [T,K]   sgemm
//   BDf = (q + r_r_bias) · k_rᵀ           [T,R]   sgemm; bd[t,j] = BDf[t,
//   S-i+j] DP  = dout · vᵀ                       [T,K]   sgemm per row, in
//   double: s, softmax P, dropatt factors d, A = P·d,
//     dP' = DP·d, c_j = scale · P_j (dP'_j - Σ_l P_l dP'_l)
//   dv  = Aᵀ · dout,  dk = Cᵀ · (q + r_w_bias),  dq_w = C · k
//   dBDf[t, S-i+j] = c_j,  dq_r = dBDf · k_r,  dk_r += dBDfᵀ · (q + r_r_bias)
//   ef: C0/C1 = Σ c_j over keys of segment 0/1, dq_s = C0·seg0 + C1·seg1
//   dq = dq_w + dq_r + dq_s; d r_w_bias = Σ dq_w, d r_r_bias = Σ dq_r,
//   d r_s_bias = Σ dq_s, d seg_embed[s] = Σ C_s · (q + r_s_bias)
//
// Masked scores. The forward computes s = raw · scale - 1e30 · mask in
// double, where 1e30 absorbs raw · scale entirely (half an ulp of 1e30 is
// 2^46 ≈ 7e13, far above any real score): a masked score is exactly -1e30
// whatever q and k are. So the forward does not depend on raw at a
// masked position and its derivative there is 0. In a partially masked row
// this changes nothing (P_j = 0 there); in a fully masked row the forward is
// the uniform average of v, independent of every score, and the correct
// gradient sends nothing to q, k, k_r, seg_embed or the biases (dv still
// gets P·d·dout). Autodiff of the reference (TF) would instead propagate
// P_j (dP_j - Σ P dP) through the uniform row as if the -1e30 shift were not
// absorbed; that is not the derivative of the function docs/Plan.md defines,
// so this kernel zeroes c_j wherever mask[b,i,j] is set.
//
// Parallel over heads: dq[b,t,n], dk[b,:,n], dv[b,:,n], dk_r[p,:,n],
// dseg_embed[:,n] and the biases [n] are all indexed by n, so one task per
// head writes disjoint memory. The contractions over keys and query rows
// are sgemms (as every GEMM of the runtime); the softmax statistics, Σ P·dP,
// and the sums over rows and batch rows (biases, seg_embed, dk_r) accumulate
// in double, in a fixed order: the result does not depend on the thread
// count.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace xlnetc::rt::host {

Status relAttentionGrad(const Tensor &dout, const RelAttentionArgs &a,
                        const RelAttentionGrads &g) {
  int64_t B = a.q->shape[0], T = a.q->shape[1], N = a.q->shape[2],
          H = a.q->shape[3];
  int64_t K = a.k->shape[1];
  int64_t S = a.segMat->shape[1];
  int64_t P = a.kR->shape[0], R = a.kR->shape[1];
  const int64_t *rows = a.rows ? a.rows->i64() : nullptr;

  // 1. Validate the query rows (they come from data), as the forward does.
  if (rows)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        if (rows[b * T + t] < -1 || rows[b * T + t] >= S)
          return Status::error(
              fmt::format("query row {} at b={}, t={} is outside [-1, {})",
                          rows[b * T + t], b, t, S));

  for (Tensor *t :
       {g.dq, g.dk, g.dv, g.dkR, g.dsegEmbed, g.drwBias, g.drrBias, g.drsBias})
    std::fill(t->f32(), t->f32() + t->numel(), 0.0f);
  if (B == 0 || T == 0 || N == 0 || H == 0 || K == 0)
    return Status::ok();

  const float *q = a.q->f32(), *k = a.k->f32(), *v = a.v->f32();
  const float *kR = a.kR->f32(), *segEmb = a.segEmbed->f32();
  const float *rw = a.rwBias->f32(), *rr = a.rrBias->f32(),
              *rs = a.rsBias->f32();
  const uint8_t *segMat = a.segMat->b8(), *mask = a.mask->b8();
  const float *go = dout.f32();
  float *dq = g.dq->f32(), *dk = g.dk->f32(), *dv = g.dv->f32(),
        *dkR = g.dkR->f32(), *dse = g.dsegEmbed->f32(), *drw = g.drwBias->f32(),
        *drr = g.drrBias->f32(), *drs = g.drsBias->f32();
  const bool drop = a.dropatt > 0.0;
  const uint64_t key = dropoutKey(a.seed, a.dropoutSite);
  const float dropRate = float(a.dropatt);
  const double dropScale = drop ? 1.0 / (1.0 - double(dropRate)) : 1.0;
  const int64_t NH = N * H; // row stride of every [.., N, H] operand
  const blasint ldNH = blasint(NH);

#pragma omp parallel if (worthThreads(B * T * N * K * H))
  {
    // Per-task scratch, reused for every (b, n).
    std::vector<float> qw(static_cast<size_t>(T * H)), qr(qw), dqw(qw), dqr(qw);
    std::vector<double> dqs(static_cast<size_t>(T * H));
    std::vector<float> sc(static_cast<size_t>(T * K)), dp(sc);
    std::vector<float> bdf(static_cast<size_t>(T * R)),
        dkrB(static_cast<size_t>(R * H));
    std::vector<double> accKr(static_cast<size_t>(P * R * H));
    std::vector<double> prob(static_cast<size_t>(K)), dprob(prob);
    std::vector<double> qs(static_cast<size_t>(H));
    std::vector<double> accRw(static_cast<size_t>(H)), accRr(accRw),
        accRs(accRw), accSe0(accRw), accSe1(accRw);

#pragma omp for schedule(dynamic, 1)
    for (int64_t n = 0; n < N; ++n) {
      std::fill(accRw.begin(), accRw.end(), 0.0);
      std::fill(accRr.begin(), accRr.end(), 0.0);
      std::fill(accRs.begin(), accRs.end(), 0.0);
      std::fill(accSe0.begin(), accSe0.end(), 0.0);
      std::fill(accSe1.begin(), accSe1.end(), 0.0);
      std::fill(accKr.begin(), accKr.end(), 0.0);
      const float *se0 = segEmb + (0 * N + n) * H;
      const float *se1 = segEmb + (1 * N + n) * H;
      for (int64_t b = 0; b < B; ++b) {
        int64_t p = b / (B / P);
        const float *qb = q + (b * T * N + n) * H;   // [T, H], stride NH
        const float *kb = k + (b * K * N + n) * H;   // [K, H], stride NH
        const float *vb = v + (b * K * N + n) * H;   // [K, H], stride NH
        const float *gb = go + (b * T * N + n) * H;  // [T, H], stride NH
        const float *krp = kR + (p * R * N + n) * H; // [R, H], stride NH

        // 2. Biased queries (float, as GEMM operands) and the three products.
        for (int64_t t = 0; t < T; ++t)
          for (int64_t h = 0; h < H; ++h) {
            qw[t * H + h] = qb[t * NH + h] + rw[n * H + h];
            qr[t * H + h] = qb[t * NH + h] + rr[n * H + h];
          }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(T),
                    blasint(K), blasint(H), 1.0f, qw.data(), blasint(H), kb,
                    ldNH, 0.0f, sc.data(), blasint(K));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(T),
                    blasint(R), blasint(H), 1.0f, qr.data(), blasint(H), krp,
                    ldNH, 0.0f, bdf.data(), blasint(R));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(T),
                    blasint(K), blasint(H), 1.0f, gb, ldNH, vb, ldNH, 0.0f,
                    dp.data(), blasint(K));

        // 3. Per query row: recompute the softmax, turn sc into A = P·d,
        //    dp into C and the row of bdf into dBDf.
        for (int64_t t = 0; t < T; ++t) {
          float *scRow = sc.data() + t * K, *dpRow = dp.data() + t * K;
          float *bdRow = bdf.data() + t * R;
          double *dqsRow = dqs.data() + t * H;
          int64_t i = rows ? rows[b * T + t] : t;
          if (i < 0) { // padding slot: output 0, no gradient anywhere
            std::fill(scRow, scRow + K, 0.0f);
            std::fill(dpRow, dpRow + K, 0.0f);
            std::fill(bdRow, bdRow + R, 0.0f);
            std::fill(dqsRow, dqsRow + H, 0.0);
            continue;
          }
          const float *qv = qb + t * NH;
          double ef0 = 0.0, ef1 = 0.0;
          for (int64_t h = 0; h < H; ++h) {
            qs[h] = double(qv[h]) + double(rs[n * H + h]);
            ef0 += qs[h] * double(se0[h]);
            ef1 += qs[h] * double(se1[h]);
          }
          const uint8_t *segRow = segMat + (b * S + i) * K;
          const uint8_t *maskRow = mask + (b * S + i) * K;
          // Scores as in the forward; bd reads BDf at S - i + j.
          const float *bdShift = bdRow + (S - i);
          double mx = -INFINITY;
          for (int64_t j = 0; j < K; ++j) {
            double s = (double(scRow[j]) + double(bdShift[j]) +
                        (segRow[j] ? ef1 : ef0)) *
                           a.scale -
                       1e30 * double(maskRow[j]);
            prob[j] = s;
            mx = std::max(mx, s);
          }
          double sum = 0.0;
          for (int64_t j = 0; j < K; ++j) {
            prob[j] = std::exp(prob[j] - mx);
            sum += prob[j];
          }
          // The forward's dropatt decision for prob[b,t,n,j].
          uint64_t base = uint64_t(((b * T + t) * N + n) * K);
          double dot = 0.0; // Σ_l P_l dP'_l
          for (int64_t j = 0; j < K; ++j) {
            prob[j] /= sum;
            double factor = 1.0;
            if (drop)
              factor = dropoutKeep(key, base + uint64_t(j), dropRate)
                           ? dropScale
                           : 0.0;
            scRow[j] = float(prob[j] * factor);
            dprob[j] = double(dpRow[j]) * factor;
            dot += prob[j] * dprob[j];
          }
          std::fill(bdRow, bdRow + R, 0.0f);
          double c0 = 0.0, c1 = 0.0;
          for (int64_t j = 0; j < K; ++j) {
            // A masked score is exactly -1e30 in the forward: no gradient.
            double c = maskRow[j] ? 0.0 : prob[j] * (dprob[j] - dot) * a.scale;
            dpRow[j] = float(c);
            bdRow[S - i + j] = float(c);
            (segRow[j] ? c1 : c0) += c;
          }
          for (int64_t h = 0; h < H; ++h) {
            dqsRow[h] = c0 * double(se0[h]) + c1 * double(se1[h]);
            accRs[h] += dqsRow[h];
            accSe0[h] += c0 * qs[h];
            accSe1[h] += c1 * qs[h];
          }
        }

        // 4. The products back: dv, dk (written once per (b, n)), dq_w,
        //    dq_r, and this batch row's dk_r, summed over the copy's batch rows
        //    in double.
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(K),
                    blasint(H), blasint(T), 1.0f, sc.data(), blasint(K), gb,
                    ldNH, 0.0f, dv + (b * K * N + n) * H, ldNH);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(K),
                    blasint(H), blasint(T), 1.0f, dp.data(), blasint(K),
                    qw.data(), blasint(H), 0.0f, dk + (b * K * N + n) * H,
                    ldNH);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(T),
                    blasint(H), blasint(K), 1.0f, dp.data(), blasint(K), kb,
                    ldNH, 0.0f, dqw.data(), blasint(H));
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(T),
                    blasint(H), blasint(R), 1.0f, bdf.data(), blasint(R), krp,
                    ldNH, 0.0f, dqr.data(), blasint(H));
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(R),
                    blasint(H), blasint(T), 1.0f, bdf.data(), blasint(R),
                    qr.data(), blasint(H), 0.0f, dkrB.data(), blasint(H));
        double *accKrP = accKr.data() + p * R * H;
        for (int64_t x = 0; x < R * H; ++x)
          accKrP[x] += double(dkrB[x]);

        // 5. dq and the bias sums.
        for (int64_t t = 0; t < T; ++t) {
          float *dqRow = dq + (b * T * N + n) * H + t * NH;
          for (int64_t h = 0; h < H; ++h) {
            double w = dqw[t * H + h], r = dqr[t * H + h];
            accRw[h] += w;
            accRr[h] += r;
            dqRow[h] = float(w + r + dqs[t * H + h]);
          }
        }
      }
      for (int64_t h = 0; h < H; ++h) {
        drw[n * H + h] = float(accRw[h]);
        drr[n * H + h] = float(accRr[h]);
        drs[n * H + h] = float(accRs[h]);
        dse[(0 * N + n) * H + h] = float(accSe0[h]);
        dse[(1 * N + n) * H + h] = float(accSe1[h]);
      }
      for (int64_t p = 0; p < P; ++p)
        for (int64_t r = 0; r < R; ++r)
          for (int64_t h = 0; h < H; ++h)
            dkR[((p * R + r) * N + n) * H + h] =
                float(accKr[(p * R + r) * H + h]);
    }
  }
  return Status::ok();
}

} // namespace xlnetc::rt::host
