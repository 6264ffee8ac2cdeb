//===- RelAttention.cpp - Reference XLNet relative attention --------------===//
//
// For every (b, n) and block of query rows: the content (ac) and position
// (bd, with XLNet's rel_shift in closed form) scores as two sgemms, the
// segment term (ef) from two numbers per row, the mask and scale, softmax
// (fp32, VecKernels.h), optional dropatt, then the weighted sum of the values as a third
// sgemm, written straight into the output (RelAttentionCommon.h has the
// scores, shared with the backward).
//
// Parallel over (b, n, block of query rows): every task writes its own
// output rows; each sgemm is single-threaded. The block size is fixed, so
// the result does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/RelAttentionCommon.h"

#include <cblas.h>

#include <algorithm>
#include <vector>

namespace xlnetc::rt::host {

namespace {

/// Query rows per task. With consecutive positions (the content stream) a
/// block reads K + kBlock - 1 rows of k_r rather than all R = K + S, and the
/// block's scores ([kBlock, K] and [kBlock, K + kBlock]) stay in cache.
constexpr int64_t kBlock = 64;

} // namespace

Status relAttention(const RelAttentionArgs &a, Tensor &out, float *keepProbs) {
  const relattn::Operands o(a);
  // 1. Validate the query rows (they come from data).
  if (Status s = o.checkRows(); !s)
    return s;
  const int64_t B = o.B, T = o.T, N = o.N, H = o.H, K = o.K, NH = o.NH;
  float *dst = out.f32();
  if (B == 0 || T == 0 || N == 0 || H == 0)
    return Status::ok();
  if (K == 0) { // no keys: every row is an empty sum
    std::fill(dst, dst + out.numel(), 0.0f);
    return Status::ok();
  }
  const int64_t blocks = (T + kBlock - 1) / kBlock;

#pragma omp parallel if (worthThreads(B * T * N * K * H))
  {
    relattn::BlockScores bs;
    std::vector<double> qs(static_cast<size_t>(H));
    std::vector<float> prob(static_cast<size_t>(K));
    std::vector<uint8_t> masked(static_cast<size_t>(K)), differ(masked);
    const VecKernels &vec = vecKernels();
#pragma omp for collapse(3) schedule(dynamic, 1)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t blk = 0; blk < blocks; ++blk) {
          const int64_t t0 = blk * kBlock, t1 = std::min(T, t0 + kBlock);
          float *ob = dst + ((b * T + t0) * N + n) * H; // [t1-t0, H], stride NH
          // 2. Scores of the block (sgemms), softmax per row (fp32, sums in
          //    double), then dropatt; ac becomes the probabilities A in place.
          bs.compute(o, b, n, t0, t1);
          bool anyPadding = false;
          for (int64_t t = t0; t < t1; ++t) {
            float *aRow = bs.acRow(t);
            float *kept = keepProbs ? keepProbs + ((b * N + n) * T + t) * K : nullptr;
            if (o.position(b, t) < 0) {
              std::fill(aRow, aRow + K, 0.0f);
              if (kept)
                std::fill(kept, kept + K, 0.0f);
              anyPadding = true;
              continue;
            }
            bs.softmaxRow(o, t, qs.data(), masked.data(), differ.data(), prob.data());
            if (kept)
              std::copy(prob.begin(), prob.end(), kept);
            if (o.drop)
              vec.dropRow(prob.data(), aRow, K, o.dropKey, o.dropIndex(b, t, n),
                          o.dropRate, float(o.dropScale));
            else
              std::copy(prob.begin(), prob.end(), aRow);
          }
          // 3. out = A · v, then exact zeros for padding slots.
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                      blasint(t1 - t0), blasint(H), blasint(K), 1.0f,
                      bs.ac.data(), blasint(K), o.v + (b * K * N + n) * H,
                      blasint(NH), 0.0f, ob, blasint(NH));
          if (anyPadding)
            for (int64_t t = t0; t < t1; ++t)
              if (o.position(b, t) < 0)
                std::fill(ob + (t - t0) * NH, ob + (t - t0) * NH + H, 0.0f);
        }
  }
  return Status::ok();
}

} // namespace xlnetc::rt::host
