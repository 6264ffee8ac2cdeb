//===- VecKernels.h - The host's inner loops, built per x86-64 level -*- C++ -*-===//
//
// The elementwise and per-row loops of the host kernels that are not GEMMs:
// bias + activation epilogues and their gradients, the attention's score
// softmax and its backward row, dropout, Adam. They are written once
// (VecKernels.cpp) as plain loops over fp32 with fp32 polynomial exp/erf
// (VecMath.h, no libm calls, so they vectorise) and compiled once per
// x86-64 level (baseline SSE2, AVX2+FMA, AVX-512); vecKernels() picks the
// best the running CPU supports, once. XLNETC_HOST_ISA=baseline|avx2|avx512
// forces one (an unsupported choice is an error at first use, not a crash).
//
// Accuracy: every function is within a few fp32 ulps of the float64
// formula (tests/VecKernels: against double references, on every level this
// CPU runs). Sums that feed a softmax or a gradient reduction accumulate in
// double. A level's result is deterministic: lanes are summed in a fixed
// order, so a step is bitwise reproducible on one machine (different levels
// may differ in the last bits).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_VECKERNELS_H
#define XLNETC_RUNTIME_HOST_VECKERNELS_H

#include "runtime/plan/Plan.h"
#include "runtime/Status.h"

#include <cstdint>
#include <vector>

namespace xlnetc::rt::host {

/// One attention row's scores: s[j] = (ac[j] + bd[j] + ef[differ[j]]) ·
/// scale - 1e30 · masked[j] (bd already shifted by XLNet's rel_shift).
struct ScoreRow {
  const float *ac, *bd;
  const uint8_t *differ, *masked;
  float ef0, ef1, scale;
  int64_t K;
};

/// One attention row of the backward: in prob (the softmax, before
/// dropatt) and dp (dout · vᵀ); out a = prob · d (d the dropatt factors),
/// c = masked ? 0 : prob · (dp · d - Σ prob · dp · d) · scale written over
/// dp and into dbd, and the sums of c over keys of each segment class.
struct GradRow {
  const float *prob;
  float *a, *dpc, *dbd; // a aliases none of prob, dpc, dbd (dropatt writes it first)
  const uint8_t *differ, *masked;
  float scale;
  int64_t K;
  // dropatt: factor(j) = keep(key, index0 + j) · dropScale, 1 when !drop.
  bool drop;
  uint64_t key, index0;
  float rate, dropScale;
  double c0 = 0, c1 = 0; // out
};

/// One Adam update over n elements: the per-step scalars in double, the
/// elementwise update in fp32 (see adamUpdate).
struct AdamChunk {
  const float *param, *grad, *m, *v;
  float *paramOut, *mOut, *vOut;
  int64_t n;
  double clipFactor, beta1, beta2, epsilon, lrT, weightDecay;
  bool corrected;
};

struct VecKernels {
  const char *isa; ///< "baseline", "avx2" or "avx512"
  /// y[r, c] = act(y[r, c] + bias[c]) over rows × cols, row stride ld
  /// (bias may be null).
  void (*biasActivation)(float *y, int64_t rows, int64_t cols, int64_t ld,
                         const float *bias, Activation act);
  /// out[i] = dy[i] · act'(x[i]).
  void (*activationGrad)(const float *dy, const float *x, float *out, int64_t n,
                         Activation act);
  /// out[i] = keep(key, index0 + i) ? x[i] · scale : 0.
  void (*dropout)(const float *x, float *out, int64_t n, uint64_t key, uint64_t index0,
                  float rate, float scale);
  /// prob = softmax(s) of the row (a fully masked row is uniform).
  void (*scoreSoftmax)(const ScoreRow &row, float *prob);
  /// a[j] = prob[j] · keep(key, index0 + j) · dropScale. `a` must not
  /// alias `prob` (the keep factors are written to `a` first).
  void (*dropRow)(const float *prob, float *a, int64_t K, uint64_t key, uint64_t index0,
                  float rate, float dropScale);
  void (*gradRow)(GradRow &row);
  /// The row's max, and Σ exp(x[i] - max) in double (fp32 exps, also
  /// written to e when e is not null): logsumexp = max + log(sum).
  double (*expSum)(const float *x, int64_t n, float *e, float &max);
  void (*adam)(const AdamChunk &c);
  /// Σ x[i]² in double.
  double (*sumSquares)(const float *x, int64_t n);
  // The attention's row loops (RelAttentionCommon.cpp, RelAttentionGrad.cpp).
  /// out[j] = rankI <= rank[j] (a compact perm mask row), or segI !=
  /// seg[j] (a segment row), as 0/1 bytes.
  void (*rankMaskRow)(int64_t rankI, const int64_t *rank, int64_t n, uint8_t *out);
  void (*segDifferRow)(int64_t segI, const int64_t *seg, int64_t n, uint8_t *out);
  /// qs[h] = q[h] + rs[h] in double; returns (q + rs) · se0 and · se1 in
  /// ef0, ef1 (the segment term of one query row).
  void (*segTermRow)(const float *q, const float *rs, const float *se0, const float *se1,
                     int64_t H, double *qs, double &ef0, double &ef1);
  /// The segment term's gradient of one row: dqs[h] = c0 · se0[h] + c1 ·
  /// se1[h]; accRs += dqs, accSe0 += c0 · qs, accSe1 += c1 · qs.
  void (*segTermGradRow)(double c0, double c1, const float *se0, const float *se1,
                         const double *qs, int64_t H, double *dqs, double *accRs,
                         double *accSe0, double *accSe1);
  /// dq[h] = dqw[h] + dqr[h] + dqs[h] (double, stored fp32); accRw +=
  /// dqw, accRr += dqr.
  void (*dqRow)(const float *dqw, const float *dqr, const double *dqs, int64_t H, float *dq,
                double *accRw, double *accRr);
  /// acc[i] += x[i] in double.
  void (*accumulate)(double *acc, const float *x, int64_t n);
  /// One row of add_layer_norm: z = x + r (fp32), its mean and biased
  /// variance in double (two passes), out = (z - mean) · inv · γ + β with
  /// inv = 1 / √(var + eps), in double, stored in fp32.
  void (*layerNormRow)(const float *x, const float *r, const float *gamma, const float *beta,
                       double eps, int64_t D, float *out);
  /// One row of add_layer_norm_grad: the forward's statistics recomputed
  /// the same way, xhat = (z - mean) · inv, gy = dout · γ, dsum = inv ·
  /// (gy - mean(gy) - xhat · mean(gy · xhat)); adds dout · xhat and dout to
  /// the row block's partial sums pg and pb (double). xhat: D doubles of
  /// scratch.
  void (*layerNormGradRow)(const float *dout, const float *x, const float *r,
                           const float *gamma, double eps, int64_t D, double *xhat,
                           double *pg, double *pb, float *dsum);
};

/// The table for the running CPU (or XLNETC_HOST_ISA); an error when the
/// forced level is unknown or this CPU lacks it.
Status selectVecKernels(const VecKernels *&out);
/// The selected table; selectVecKernels must have succeeded once (the host
/// executor calls it before any step), else the baseline.
const VecKernels &vecKernels();

/// Every level this build has and this CPU runs (tests compare them).
std::vector<const VecKernels *> runnableVecKernels();

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_VECKERNELS_H
