//===- Kernels.h - Reference host kernels, one per plan op -----*- C++ -*-===//
//
// One clear fp32 reference function per op of docs/Plan.md. GEMMs go through
// OpenBLAS; everything else is a plain loop nest parallelised with OpenMP.
// Reductions (softmax sums, layer-norm statistics, losses) accumulate in
// double so the results match a float64 reference to ~1e-6 relative.
//
// Preconditions: operands have the dtypes and shapes verifyStepTypes()
// accepts, and `out` is allocated with the output shape. Errors that depend
// on data (an id out of range, a non one-hot row) come back as a Status;
// the executor prefixes them with the step.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_KERNELS_H
#define XLNETC_RUNTIME_HOST_KERNELS_H

#include "runtime/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>

namespace xlnetc::rt::host {

/// Whether a loop over `work` elements is worth an OpenMP team: below this,
/// waking the threads (which then spin against OpenBLAS's) costs more than
/// the loop. Measured on 2 cores: the tiny model's step went from 57 ms to
/// a few ms with it.
inline bool worthThreads(int64_t work) { return work >= (int64_t(1) << 16); }

//===----------------------------------------------------------------------===//
// Dropout hash, shared by every executor
//===----------------------------------------------------------------------===//

/// The splitmix64 finaliser (Steele et al.).
inline uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Per-(step seed, site) key; hashing it first keeps masks of different
/// seeds or sites uncorrelated.
inline uint64_t dropoutKey(uint64_t seed, int64_t site) {
  return splitmix64(seed ^ (uint64_t(site) * 0x9e3779b97f4a7c15ull));
}

/// Whether element `index` is kept: u = top 24 bits of
/// splitmix64(key ^ index) scaled to [0, 1), kept iff u >= rate (as float).
inline bool dropoutKeep(uint64_t key, uint64_t index, float rate) {
  uint64_t h = splitmix64(key ^ index);
  float u = float(h >> 40) * (1.0f / 16777216.0f);
  return u >= rate;
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
void gemm(const Tensor &x, const Tensor &w, const Tensor *bias, int kRank,
          bool transposeW, Activation act, Tensor &out);

/// Applies `act` to one value (exposed for tests).
float activate(Activation act, float x);

/// Operands of rel_attention (see docs/Plan.md); rows may be null.
struct RelAttentionArgs {
  const Tensor *q, *k, *v, *kR, *segEmbed, *rwBias, *rrBias, *rsBias,
      *segMat, *mask, *rows;
  double scale = 1.0;
  double dropatt = 0.0;
  int64_t dropoutSite = 0;
  uint64_t seed = 0;
};

/// Two-term relative attention with XLNet's rel_shift (bd uses
/// k_r[p, S - i + j]). Dropatt index of prob[b,t,n,j] is
/// ((b*T + t)*N + n)*K + j. A rows entry outside [-1, S) is an error.
Status relAttention(const RelAttentionArgs &args, Tensor &out);

/// out = LayerNorm(x + residual) over the last dim (biased variance).
void addLayerNorm(const Tensor &x, const Tensor &residual,
                  const Tensor &gamma, const Tensor &beta, double eps,
                  Tensor &out);

/// Inverted dropout; rate 0 is an exact copy. Element index = flat index.
void dropout(const Tensor &x, double rate, int64_t site, uint64_t seed,
             Tensor &out);

/// ptl = logsumexp(logits) - logits[target]; loss = Σ ptl·mask / Σ mask
/// (0/0 = NaN when the mask is all zero, as the formula says). A target
/// outside [0, V) is an error.
Status lmLoss(const Tensor &logits, const Tensor &target,
              const Tensor &targetMask, Tensor &loss, Tensor &perTokenLoss);

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_KERNELS_H
