//===- Kernels.h - Reference host kernels, one per plan op -----*- C++ -*-===//
//
// One clear fp32 reference function per op of docs/Plan.md. GEMMs go through
// OpenBLAS; everything else is a plain loop nest parallelised with OpenMP.
// Reductions (softmax sums, layer-norm statistics, losses, sums over rows,
// norms) accumulate in double so the results match a float64 reference to
// ~1e-6 relative. Forward kernels live in Kernels.cpp and RelAttention.cpp,
// backward kernels in Backward.cpp and RelAttentionGrad.cpp, the optimizer
// in Optimizer.cpp.
//
// Preconditions: operands have the dtypes and shapes verifyStepTypes()
// accepts, and `out` is allocated with the output shape. Errors that depend
// on data (an id out of range, a non one-hot row) come back as a Status;
// the executor prefixes them with the step.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_KERNELS_H
#define XLNETC_RUNTIME_HOST_KERNELS_H

#include "runtime/plan/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/host/DropoutHash.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace xlnetc::rt::host {

/// Whether a loop over `work` elements is worth an OpenMP team: below this,
/// waking the threads (which then spin against OpenBLAS's) costs more than
/// the loop. Measured on 2 cores: the tiny model's step went from 57 ms to
/// a few ms with it.
inline bool worthThreads(int64_t work) { return work >= (int64_t(1) << 16); }

/// Elements per task of an elementwise kernel split across threads (a
/// VecKernels call each; big enough to amortise the call, small enough to
/// balance two cores).
constexpr int64_t kElementChunk = 16384;

/// f(begin, length) over [0, n) in chunks of kElementChunk, the chunks split
/// across OpenMP threads when the work is worth it (elementwise kernels).
template <typename F> void forEachChunk(int64_t n, F f) {
#pragma omp parallel for if (worthThreads(n))
  for (int64_t c = 0; c < n; c += kElementChunk)
    f(c, std::min(kElementChunk, n - c));
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// out[b,s] = table[ids[b,s]]; an id outside [0, V) is an error.
Status embedding(const Tensor &ids, const Tensor &table, Tensor &out);

/// Every row of out [B,NP,D] is mask_emb [1,1,D].
void maskEmbedding(const Tensor &maskEmb, Tensor &out);

/// out [P,R,D]: sin/cos of pos = klen - r (copy 0) or -klen + r (copy 1),
/// clipped to [-clamp_len, clamp_len] when clamp_len > 0.
void relPosEncoding(int64_t klen, int64_t clampLen, Tensor &out);

/// out[b,i,j] = seg[b,i] != key_seg(j), key_seg = 0 for memory columns.
void relSegment(const Tensor &segId, int64_t mlen, Tensor &out);

/// out[b,i,j] = 0 for j < mlen, perm_mask[b,i,j-mlen] > 0 after; the content
/// stream additionally opens out[b,i,mlen+i].
void attnMask(const Tensor &permMask, int64_t mlen, MaskStream stream,
              Tensor &out);

/// out[b,r] = column of the single 1 in target_mapping[b,r], -1 for an
/// all-zero row; anything else is an error naming b, the row and the value.
Status targetPositions(const Tensor &targetMapping, Tensor &out);

/// out[b] = [mems[:, b] ; h[b]] (mems time-major [M,B,D]).
void memConcat(const Tensor &mems, const Tensor &h, Tensor &out);

/// out [L,B,D] = last L rows of concat(mems, h[:, :reuse_len] time-major);
/// `mems` may be null (M = 0).
void memCache(const Tensor *mems, const Tensor &h, int64_t reuseLen,
              Tensor &out);

/// y = act(x · op(w) + bias) with x viewed as [Mx, Kx] (its last k_rank
/// dims are Kx) and w as [Kx, Nw] or, with transpose_w, [Nw, Kx].
/// The matrix view of a gemm: x is [M, K] (its last k_rank dims are K) and
/// the y-like tensor `y` (the output, or dy) is [M, N] over the same leading
/// dims.
struct GemmView {
  int64_t M = 1, K = 1, N = 1;
};
GemmView gemmView(const std::vector<int64_t> &xShape, int kRank,
                  const std::vector<int64_t> &yShape);
inline GemmView gemmView(const Tensor &x, int kRank, const Tensor &y) {
  return gemmView(x.shape, kRank, y.shape);
}

/// `init` (may be null; same numel as out): out = init + the product
/// (plus bias, then act), summed in the GEMM (the host executor's
/// accumulate fusion, HostFusion.h).
void gemm(const Tensor &x, const Tensor &w, const Tensor *bias, int kRank,
          bool transposeW, Activation act, Tensor &out, const Tensor *init = nullptr);

/// C [M, N] = op(A) · op(B), then C = act(C + bias) (bias [N], may be null),
/// row-major with leading dimensions lda, ldb, ldc: single-threaded sgemms
/// on blocks of C split across OpenMP threads (by rows or by columns,
/// whichever packs less twice). With `init` ([M, N], leading dimension ldc;
/// may be null) each block of C starts as init's and the sgemm adds to it
/// (beta 1): C = init + op(A) · op(B), without the zeroing pass OpenBLAS
/// makes for beta 0. gemm() and gemmWgrad() run on it.
void blockedSgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                  int64_t ldc, const float *bias, Activation act,
                  const float *init = nullptr);

/// Applies `act` to one value in double: the float64 reference the kernels'
/// fp32 activations (VecKernels.h) are tested against.
float activate(Activation act, float x);

/// The operands of rel_attention(_grad) (docs/Plan.md); rows may be null.
/// The masks are dense (segMat, mask: bool [B,S,K]) or compact (segMat =
/// seg_id i64 [B,S], mask = perm_rank i64 [B,2,S] or perm_bits i64
/// [B,S,ceil(S/64)] of runtime/PermMask.h: key j >= mlen masked when
/// perm_mask[i, j - mlen], memory columns visible, and without rows — the
/// content stream — a position sees itself); the dtype and shape tell which.
struct RelAttentionArgs {
  const Tensor *q, *k, *v, *kR, *segEmbed, *rwBias, *rrBias, *rsBias,
      *segMat, *mask, *rows;
  double scale = 1.0;
  double dropatt = 0.0;
  int64_t dropoutSite = 0;
  uint64_t seed = 0;
  DropoutRows dropRows; // the dropatt index's batch row is global (DropoutHash.h)
};

/// Two-term relative attention with XLNet's rel_shift (bd uses
/// k_r[p, S - i + j]). Dropatt index of prob[b,t,n,j] is
/// ((b*T + t)*N + n)*K + j, b the global row (args.dropRows). A rows entry outside [-1, S) is an error.
/// `keepProbs` (may be null; B·N·T·K floats): also writes the softmax
/// probabilities before dropatt there, at ((b*N + n)*T + t)*K + j (0 for a
/// padding row), for relAttentionGrad.
Status relAttention(const RelAttentionArgs &args, Tensor &out, float *keepProbs = nullptr);

/// out = LayerNorm(x + residual) over the last dim (biased variance).
void addLayerNorm(const Tensor &x, const Tensor &residual,
                  const Tensor &gamma, const Tensor &beta, double eps,
                  Tensor &out);

/// Inverted dropout; rate 0 is an exact copy. Element index = flat index,
/// its batch row made global by `rows` (DropoutHash.h globalIndex);
/// `rowElems` the elements of a batch row, 0 for a tensor without a batch
/// dimension.
void dropout(const Tensor &x, double rate, int64_t site, uint64_t seed,
             const DropoutRows &rows, int64_t rowElems, Tensor &out);
/// The rowElems of a tensor whose outer dimension is the batch.
inline int64_t batchRowElems(const Tensor &x) {
  return x.shape.empty() || x.shape[0] == 0 ? 0 : x.numel() / x.shape[0];
}

/// ptl = logsumexp(logits) - logits[target]; loss = Σ ptl·mask / Σ mask
/// (0/0 = NaN when the mask is all zero, as the formula says). A target
/// outside [0, V) is an error.
Status lmLoss(const Tensor &logits, const Tensor &target,
              const Tensor &targetMask, Tensor &loss, Tensor &perTokenLoss);

//===----------------------------------------------------------------------===//
// Backward kernels (docs/Plan.md "Backward ops"), runtime/host/Backward.cpp
//===----------------------------------------------------------------------===//

/// out [V,D] = zeros, then out[ids[b,s]] += dout[b,s]; an id outside [0, V)
/// is an error (nothing is written then). Each table row is summed in double
/// over its occurrences in id order, so the result does not depend on the
/// thread count. `init` (may be null; [V, D]): out starts as init and each
/// touched row gets init + its float sum (the add it replaces, HostFusion.h).
Status embeddingGrad(const Tensor &ids, const Tensor &dout, Tensor &out,
                     const Tensor *init = nullptr);

/// out [1,1,D] = Σ over the rows of dout [B,NP,D], in double.
void maskEmbeddingGrad(const Tensor &dout, Tensor &out);

/// out [B,S,D] = dout[:, K-S:] of dout [B,K,D] (the gradient of mem_concat's
/// h; the memory part is dropped).
void memConcatGrad(const Tensor &dout, Tensor &out);

/// out = act(x) elementwise (the standalone activation op).
void applyActivation(const Tensor &x, Activation act, Tensor &out);

/// act'(x) for one value, computed in double: none 1, relu 1 for x > 0 else
/// 0, gelu_tanh and gelu_erf their exact derivatives (the float64 reference
/// of the kernels' fp32 VecKernels::activationGrad).
double activateGrad(Activation act, float x);

/// dx = dy · act'(x) elementwise, x the pre-activation.
void activationGrad(const Tensor &dy, const Tensor &x, Activation act,
                    Tensor &out);

/// The gradient of the w of the forward gemm with the same k_rank and
/// transpose_w: with x viewed as [Mx, Kx] and dy as [Mx, Nw], out = xᵀ·dy
/// ([Kx, Nw]) or, with transpose_w, dyᵀ·x ([Nw, Kx]). Single-threaded sgemms
/// on blocks of output rows split across OpenMP threads, like gemm().
/// `init` as gemm()'s: out = init + the product.
void gemmWgrad(const Tensor &x, const Tensor &dy, int kRank, bool transposeW,
               Tensor &out, const Tensor *init = nullptr);

/// out[c] = Σ_r dy[r, c] with dy viewed as [numel / n, n], n = out.numel(),
/// in double.
void biasGrad(const Tensor &dy, Tensor &out);

/// Outputs of rel_attention_grad, in the plan's order.
struct RelAttentionGrads {
  Tensor *dq, *dk, *dv, *dkR, *dsegEmbed, *drwBias, *drrBias, *drsBias;
};

/// The gradient of relAttention(args) for the output gradient `dout`
/// [B,T,N,H], with the same dropatt mask (same seed, site and indexing).
/// The softmax is recomputed per query row (no stored probabilities); the
/// products run as sgemms per (b, head), the softmax statistics and the
/// small reductions in double, and OpenMP splits the heads (every gradient
/// is indexed by the head, so this is race-free). Padding rows (rows < 0)
/// contribute nothing. A score whose mask bit is set carries no gradient:
/// the forward subtracts 1e30, which absorbs it (see RelAttentionGrad.cpp).
/// A rows entry outside [-1, S) is an error. `keptProbs` (may be null):
/// what relAttention kept for the same operands, read instead of
/// recomputing the score products and the softmax.
Status relAttentionGrad(const Tensor &dout, const RelAttentionArgs &args,
                        const RelAttentionGrads &grads, const float *keptProbs = nullptr);

/// Gradients of addLayerNorm (statistics recomputed from x + residual):
/// dsum (the gradient of both x and residual), dgamma and dbeta [D]. The
/// sums over rows accumulate in double per fixed block of rows, then over
/// the blocks in order (independent of the thread count).
void addLayerNormGrad(const Tensor &dout, const Tensor &x,
                      const Tensor &residual, const Tensor &gamma, double eps,
                      Tensor &dsum, Tensor &dgamma, Tensor &dbeta);

/// dlogits = (softmax(logits) - onehot(target)) · mask / count, count =
/// Σ mask unless `count` (f32 []) gives it; all zeros when the count is 0. A
/// target outside [0, V) is an error (as in lmLoss).
Status lmLossGrad(const Tensor &logits, const Tensor &target,
                  const Tensor &targetMask, Tensor &dlogits,
                  const Tensor *count = nullptr);

/// out = a + b elementwise.
void add(const Tensor &a, const Tensor &b, Tensor &out);

//===----------------------------------------------------------------------===//
// Optimizer kernels (docs/Plan.md "Optimizer ops"), runtime/host/Optimizer.cpp
//===----------------------------------------------------------------------===//

/// Attributes of lr_schedule.
struct LrScheduleArgs {
  double learningRate = 0.0;
  int64_t warmupSteps = 0;
  int64_t trainSteps = 0;
  double minLrRatio = 0.0;
  LrDecay decay = LrDecay::Poly;
};

/// The learning rate after `step` updates (linear warmup, then poly or cos
/// decay to learning_rate · min_lr_ratio at train_steps), in double.
double scheduledLearningRate(int64_t step, const LrScheduleArgs &args);

/// out [] = scheduledLearningRate(step []); a negative step is an error.
Status lrSchedule(const Tensor &step, const LrScheduleArgs &args, Tensor &out);

/// out [] = sqrt(Σ_i Σ g_i²) in double, summed per fixed chunk and then over
/// the chunks in order (independent of the thread count).
void globalNorm(const std::vector<const Tensor *> &grads, Tensor &out);

/// Attributes of adam_update.
struct AdamArgs {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double clip = 0.0;
  double weightDecay = 0.0;
  bool biasCorrection = true;
};

/// One Adam step (the step's scalars in double, the elementwise update in
/// fp32 as TF's Adam, VecKernels::adam): g = grad · clip / max(grad_norm,
/// clip) (no clipping when clip <= 0), m' and v' the moving moments, then
/// the bias-corrected update (tf.train.AdamOptimizer, t = step + 1) or the
/// uncorrected one with decoupled weight decay (AdamWeightDecayOptimizer).
/// `lr`, `gradNorm` f32 [] and `step` i64 [] are scalars; a negative step is
/// an error. The outputs may be the inputs' own tensors (in place).
Status adamUpdate(const Tensor &param, const Tensor &grad, const Tensor &m,
                  const Tensor &v, const Tensor &lr, const Tensor &gradNorm,
                  const Tensor &step, const AdamArgs &args, Tensor &paramOut,
                  Tensor &mOut, Tensor &vOut);

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_KERNELS_H
