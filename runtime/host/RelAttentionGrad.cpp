//===- RelAttentionGrad.cpp - Backward of XLNet relative attention --------===//
//
// The gradient of relAttention (RelAttention.cpp) with respect to q, k, v,
// k_r, seg_embed and the three relative biases. Like flash-attention's
// backward it stores no probabilities: the softmax of every query row is
// recomputed from the operands. Per (batch row b, head n), with T query
// rows, K keys and R = K + S relative positions:
//
//   AC  = (q + r_w_bias) · kᵀ              [T,K]  sgemm
//   BD  = (q + r_r_bias) · k_r[r0:r0+W]ᵀ   [T,W]  sgemm; bd[t,j] = BD[t,
//         S-i+j - r0], [r0, r0+W) the k_r rows the positions read
//   (both with the softmax: RelAttentionCommon.h, shared with the forward)
//   DP  = dout · vᵀ                        [T,K]  sgemm
//   per row (VecKernels.h, fp32 with sums in double): s, softmax P,
//     dropatt factors d, A = P·d, dP' = DP·d,
//     c_j = scale · P_j (dP'_j - Σ_l P_l dP'_l)
//   dv  = Aᵀ · dout,  dk = Cᵀ · (q + r_w_bias),  dq_w = C · k
//   dBD[t, S-i+j - r0] = c_j,  dq_r = dBD · k_r[r0:r0+W],
//   dk_r[r0:r0+W] += dBDᵀ · (q + r_r_bias)
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
// so this kernel zeroes c_j wherever the mask is set (dense or compact).
//
// Parallel over heads: dq[b,t,n], dk[b,:,n], dv[b,:,n], dk_r[p,:,n],
// dseg_embed[:,n] and the biases [n] are all indexed by n, so one task per
// head writes disjoint memory. The contractions over keys and query rows
// are sgemms (as every GEMM of the runtime); Σ P·dP, the softmax's sum
// and the sums over rows and batch rows (biases, seg_embed, dk_r) accumulate
// in double, in a fixed order: the result does not depend on the thread
// count.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/RelAttentionCommon.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace xlnetc::rt::host {

Status relAttentionGrad(const Tensor &dout, const RelAttentionArgs &a,
                        const RelAttentionGrads &g, const float *keptProbs) {
  const relattn::Operands o(a);
  // 1. Validate the query rows (they come from data), as the forward does.
  if (Status s = o.checkRows(); !s)
    return s;
  const int64_t B = o.B, T = o.T, N = o.N, H = o.H, K = o.K, P = o.P, R = o.R;

  // Every gradient is written whole below (dq row by row, dk and dv by
  // sgemms per (b, n), dk_r and the head sums from their accumulators);
  // only an empty problem leaves zeros to write.
  if (B == 0 || T == 0 || N == 0 || H == 0 || K == 0) {
    for (Tensor *t :
         {g.dq, g.dk, g.dv, g.dkR, g.dsegEmbed, g.drwBias, g.drrBias, g.drsBias})
      std::fill(t->f32(), t->f32() + t->numel(), 0.0f);
    return Status::ok();
  }

  const float *k = o.k, *v = o.v, *kR = o.kR, *segEmb = o.segEmb;
  const float *go = dout.f32();
  float *dq = g.dq->f32(), *dk = g.dk->f32(), *dv = g.dv->f32(),
        *dkR = g.dkR->f32(), *dse = g.dsegEmbed->f32(), *drw = g.drwBias->f32(),
        *drr = g.drrBias->f32(), *drs = g.drsBias->f32();
  const int64_t NH = o.NH; // row stride of every [.., N, H] operand
  const blasint ldNH = blasint(NH);

#pragma omp parallel if (worthThreads(B * T * N * K * H))
  {
    // Per-task scratch, reused for every (b, n).
    relattn::BlockScores bs; // qw, qr, AC (becomes A), BD (becomes dBD)
    std::vector<float> dqw(static_cast<size_t>(T * H)), dqr(dqw);
    std::vector<double> dqs(static_cast<size_t>(T * H));
    std::vector<float> dp(static_cast<size_t>(T * K));
    std::vector<float> dkrB(static_cast<size_t>(R * H));
    std::vector<double> accKr(static_cast<size_t>(P * R * H));
    std::vector<float> prob(static_cast<size_t>(K));
    std::vector<uint8_t> masked(static_cast<size_t>(K)), differ(masked);
    std::vector<double> qs(static_cast<size_t>(H));
    const VecKernels &vec = vecKernels();
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
        int64_t p = o.copy(b);
        const float *kb = k + (b * K * N + n) * H;  // [K, H], stride NH
        const float *vb = v + (b * K * N + n) * H;  // [K, H], stride NH
        const float *gb = go + (b * T * N + n) * H; // [T, H], stride NH

        // 2. The score products of all T rows (shared with the forward):
        //    qw, qr, AC [T,K] and BD [T,W] over the k_r window [r0, r0+W)
        //    (not the products when the forward kept the probabilities);
        //    then DP = dout · vᵀ.
        if (keptProbs)
          bs.prepare(o, b, n, 0, T);
        else
          bs.compute(o, b, n, 0, T);
        const int64_t r0 = bs.r0, W = bs.W; // r0 = W = 0: all padding
        const float *krw = kR + ((p * R + r0) * N + n) * H; // [W, H]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, blasint(T),
                    blasint(K), blasint(H), 1.0f, gb, ldNH, vb, ldNH, 0.0f,
                    dp.data(), blasint(K));

        // 3. Per query row: the softmax (recomputed, or the forward's kept
        //    row), then AC's row becomes A = P·d, dp's C and BD's dBD.
        for (int64_t t = 0; t < T; ++t) {
          float *scRow = bs.acRow(t), *dpRow = dp.data() + t * K;
          float *bdRow = bs.bdRow(t);
          double *dqsRow = dqs.data() + t * H;
          int64_t i = o.position(b, t);
          if (i < 0) { // padding slot: output 0, no gradient anywhere
            std::fill(scRow, scRow + K, 0.0f);
            std::fill(dpRow, dpRow + K, 0.0f);
            std::fill(bdRow, bdRow + W, 0.0f);
            std::fill(dqsRow, dqsRow + H, 0.0);
            continue;
          }
          // The row's softmax again, then A = P·d, C over dp and dBD over
          // the row of BD (the shifted window the forward read), and C's
          // sums per segment class (VecKernels::gradRow).
          const float *probRow = prob.data();
          float *bdShift;
          if (keptProbs) {
            double ef0, ef1; // the forward's, not needed again
            bdShift = bs.rowOperands(o, t, qs.data(), masked.data(), differ.data(), ef0, ef1);
            probRow = keptProbs + ((b * N + n) * T + t) * K;
          } else {
            bdShift = bs.softmaxRow(o, t, qs.data(), masked.data(), differ.data(), prob.data());
          }
          std::fill(bdRow, bdRow + W, 0.0f);
          GradRow row{probRow, scRow, dpRow, bdShift, differ.data(),
                      masked.data(), float(o.scale), K, o.drop, o.dropKey,
                      o.dropIndex(b, t, n), o.dropRate, float(o.dropScale)};
          vec.gradRow(row);
          vec.segTermGradRow(row.c0, row.c1, se0, se1, qs.data(), H, dqsRow, accRs.data(),
                             accSe0.data(), accSe1.data());
        }

        // 4. The products back: dv, dk (written once per (b, n)), dq_w,
        //    dq_r, and this batch row's dk_r window, summed over the copy's
        //    batch rows in double.
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(K),
                    blasint(H), blasint(T), 1.0f, bs.ac.data(), blasint(K), gb,
                    ldNH, 0.0f, dv + (b * K * N + n) * H, ldNH);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(K),
                    blasint(H), blasint(T), 1.0f, dp.data(), blasint(K),
                    bs.qw.data(), blasint(H), 0.0f, dk + (b * K * N + n) * H,
                    ldNH);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(T),
                    blasint(H), blasint(K), 1.0f, dp.data(), blasint(K), kb,
                    ldNH, 0.0f, dqw.data(), blasint(H));
        if (W > 0) {
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(T),
                      blasint(H), blasint(W), 1.0f, bs.bd.data(), blasint(W),
                      krw, ldNH, 0.0f, dqr.data(), blasint(H));
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, blasint(W),
                      blasint(H), blasint(T), 1.0f, bs.bd.data(), blasint(W),
                      bs.qr.data(), blasint(H), 0.0f, dkrB.data(), blasint(H));
          vec.accumulate(accKr.data() + (p * R + r0) * H, dkrB.data(), W * H);
        } else { // every row is padding
          std::fill(dqr.begin(), dqr.end(), 0.0f);
        }

        // 5. dq and the bias sums.
        for (int64_t t = 0; t < T; ++t)
          vec.dqRow(dqw.data() + t * H, dqr.data() + t * H, dqs.data() + t * H, H,
                    dq + (b * T * N + n) * H + t * NH, accRw.data(), accRr.data());
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
