//===- xlnetc_k_loss.cuh - LM loss and embedding gradients ------*- C++ -*-===//
//
// lm_loss, lm_loss_grad, embedding_grad and mask_embedding_grad
// (docs/Plan.md), matching runtime/host/Kernels.cpp and Backward.cpp.
// Assumes xlnetc_prelude.cuh was included first; conventions and the status
// protocol in xlnetc_k_common.cuh. No floating-point atomics: every sum has
// a fixed order that depends on the template parameters only, so results
// are bitwise the same for any gridDim.x.
//
// lm_loss (two launches of one template, PHASE 0 then 1):
//   PHASE 0: rows of logits [B*NP, V] in a grid-stride loop over blockIdx.x;
//            thread t takes columns t, t + BLOCK, ...; the row max is a
//            block max (exact), sum exp(l - max) a double block sum in a
//            fixed tree; ptl[row] = float(max + log(sum) - l[target]) and
//            the double row loss goes to workspace[row];
//   PHASE 1: block 0 sums Σ rowloss·mask and Σ mask in double (thread t the
//            rows t, t + BLOCK, ..., then the tree); loss = num / den (NaN
//            for an all-zero mask, as on the host).
//   Workspace: B*NP doubles.
//
// lm_loss_grad (one launch, no workspace): every block first computes
// Σ mask (double, fixed order: the same bits in every block), then takes
// rows in a grid-stride loop: max, Σ exp in double, and writes
// dlogits = exp(l - max)·w/Σ (minus w at the target), w = mask/Σ mask,
// recomputing exp (no stored probabilities). Rows with w = 0 are zeros.
// The Σ mask costs B*NP loads per block: negligible next to a row of V.
//
// embedding_grad (two launches, PHASE 0 then 1), ids [B,S], dout [B,S,D]:
//   PHASE 0: block 0 alone (other blocks return) builds a stable counting
//            sort of the N = B*S positions by id in the int workspace:
//              offsets [V+1]  first slot of each id's group (offsets[V] = the
//                             number of valid positions)
//              cursor  [V]    scratch (counts, then fill cursors)
//              order   [N]    positions grouped by id, each group in
//                             position order
//            Counts use integer atomics (order-free); the placement walks
//            the positions in tiles of BLOCK, a position's rank inside its
//            tile being the number of earlier tile slots with the same id,
//            so the order is exactly the host's stable sort. O(N) shared
//            loads per thread.
//   PHASE 1: vocab rows in a grid-stride loop over blockIdx.x, threads over
//            the D columns: out[v, d] = Σ over the group of v, in order, of
//            dout[pos, d] in double (zeros for ids that do not occur): the
//            host's order and precision, so the result is bitwise the host's.
//   Workspace: 2*V + 1 + B*S ints.
//
// mask_embedding_grad (one launch, no workspace): out[d] = Σ over the ROWS
// rows of dout[r, d] in row order, in double (the host's sumRows order), a
// grid-stride loop over columns.
//
// Status codes (defined with the others in xlnetc_k_common.cuh):
//
//   code                        [1]  [2]   [3]                 [4]
//   XL_ERR_EMBEDDING_ID    (1)  b    s     id, low 32 bits     id, high 32
//   XL_ERR_LM_TARGET       (9)  b    slot  target, low 32 bits target, high 32
//
// A row with a bad target (or a bad id) is left unwritten; its workspace
// row loss is NaN.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_LOSS_CUH
#define XLNETC_K_LOSS_CUH

#include "xlnetc_k_common.cuh"



/// Reports a target outside [0, V) at flat row `row` (b = row / NP).
template <xl_i64 NP>
XL_DEVICE void xl_report_lm_target(int *status, xl_i64 row, xl_i64 t) {
  xl_report_error(status, XL_ERR_LM_TARGET, static_cast<int>(row / NP),
                  static_cast<int>(row % NP),
                  static_cast<int>(static_cast<xl_u64>(t) & 0xffffffffull),
                  static_cast<int>(static_cast<xl_u64>(t) >> 32));
}

/// The row statistics of a logits row: its max and Σ exp(l - max) in
/// double, both the same in every thread. Called by the whole block.
template <xl_i64 V, int BLOCK, typename T_l, typename T_fscratch>
XL_DEVICE void xl_loss_row_stats(const T_l *l, T_fscratch *fscratch,
                                 double *dscratch, float &mx, double &sum) {
  float m = __int_as_float(0xff800000); // -inf
  for (xl_i64 v = threadIdx.x; v < V; v += BLOCK) {
    const float x = l[v];
    m = m < x ? x : m;
  }
  mx = xl_block_max<BLOCK>(m, fscratch, -__int_as_float(0x7f800000));
  const double dmx = static_cast<double>(mx);
  double s = 0.0;
  for (xl_i64 v = threadIdx.x; v < V; v += BLOCK)
    s += exp(static_cast<double>(l[v]) - dmx);
  sum = xl_block_sum<BLOCK>(s, dscratch);
}

//===----------------------------------------------------------------------===//
// lm_loss
//===----------------------------------------------------------------------===//

/// lm_loss: logits [B,NP,V], target i64 [B,NP], target_mask [B,NP] ->
/// loss [], per_token_loss [B,NP]; two phases (file comment).
template <xl_i64 B, xl_i64 NP, xl_i64 V, int PHASE, int BLOCK, typename T_logits, typename T_targetMask, typename T_loss, typename T_perTokenLoss>
XL_DEVICE void xl_lm_loss(const T_logits *XL_RESTRICT logits,
                          const xl_i64 *XL_RESTRICT target,
                          const T_targetMask *XL_RESTRICT targetMask,
                          T_loss *XL_RESTRICT loss,
                          T_perTokenLoss *XL_RESTRICT perTokenLoss,
                          double *XL_RESTRICT workspace, int *status,
                          XlStepRandom rnd) {
  (void)rnd;
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  constexpr xl_i64 kRows = B * NP;
  XL_SHARED double dscratch[BLOCK / 32];
  XL_SHARED float fscratch[BLOCK / 32];
  if constexpr (PHASE == 0) {
    for (xl_i64 row = blockIdx.x; row < kRows; row += gridDim.x) {
      const xl_i64 t = target[row]; // the same in every thread
      if (t < 0 || t >= V) {
        if (threadIdx.x == 0) {
          xl_report_lm_target<NP>(status, row, t);
          workspace[row] = __longlong_as_double(0x7ff8000000000000ll);
        }
        continue;
      }
      const auto *l = logits + row * V;
      float mx;
      double sum;
      xl_loss_row_stats<V, BLOCK>(l, fscratch, dscratch, mx, sum);
      if (threadIdx.x == 0) {
        const double rl = static_cast<double>(mx) + log(sum) -
                          static_cast<double>(l[t]);
        workspace[row] = rl;
        perTokenLoss[row] = static_cast<float>(rl);
      }
    }
  } else {
    (void)status;
    if (blockIdx.x != 0)
      return;
    double num = 0.0, den = 0.0;
    for (xl_i64 row = threadIdx.x; row < kRows; row += BLOCK) {
      const double m = static_cast<double>(targetMask[row]);
      num += workspace[row] * m;
      den += m;
    }
    num = xl_block_sum<BLOCK>(num, dscratch);
    den = xl_block_sum<BLOCK>(den, dscratch);
    if (threadIdx.x == 0)
      loss[0] = static_cast<float>(num / den);
  }
}

//===----------------------------------------------------------------------===//
// lm_loss_grad
//===----------------------------------------------------------------------===//

/// lm_loss_grad: logits [B,NP,V], target, target_mask [, count] -> dlogits
/// [B,NP,V] (file comment); `count` (null: Σ mask) divides instead of Σ mask.
/// A row with a bad target is reported and left unwritten.
template <xl_i64 B, xl_i64 NP, xl_i64 V, int BLOCK, typename T_logits, typename T_targetMask, typename T_dlogits>
XL_DEVICE void xl_lm_loss_grad(const T_logits *XL_RESTRICT logits,
                               const xl_i64 *XL_RESTRICT target,
                               const T_targetMask *XL_RESTRICT targetMask,
                               const float *XL_RESTRICT count,
                               T_dlogits *XL_RESTRICT dlogits, int *status,
                               XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 kRows = B * NP;
  XL_SHARED double dscratch[BLOCK / 32];
  XL_SHARED float fscratch[BLOCK / 32];
  if (static_cast<xl_i64>(blockIdx.x) >= kRows)
    return; // no rows for this block (uniform over the block)
  double den = 0.0;
  if (count) { // the micro-batches' count (gradient accumulation); uniform
    den = static_cast<double>(*count);
  } else {
    for (xl_i64 row = threadIdx.x; row < kRows; row += BLOCK)
      den += static_cast<double>(targetMask[row]);
    den = xl_block_sum<BLOCK>(den, dscratch);
  }
  for (xl_i64 row = blockIdx.x; row < kRows; row += gridDim.x) {
    const xl_i64 t = target[row];
    if (t < 0 || t >= V) {
      if (threadIdx.x == 0)
        xl_report_lm_target<NP>(status, row, t);
      continue;
    }
    auto *o = dlogits + row * V;
    // d loss / d ptl[row] = mask / Σ mask; no gradient for an all-zero mask.
    const double w =
        den == 0.0 ? 0.0 : static_cast<double>(targetMask[row]) / den;
    if (w == 0.0) {
      for (xl_i64 v = threadIdx.x; v < V; v += BLOCK)
        o[v] = 0.0f;
      continue;
    }
    const auto *l = logits + row * V;
    float mx;
    double sum;
    xl_loss_row_stats<V, BLOCK>(l, fscratch, dscratch, mx, sum);
    const double dmx = static_cast<double>(mx), scale = w / sum;
    for (xl_i64 v = threadIdx.x; v < V; v += BLOCK) {
      const double e = exp(static_cast<double>(l[v]) - dmx);
      o[v] = static_cast<float>(v == t ? e * scale - w : e * scale);
    }
  }
}

//===----------------------------------------------------------------------===//
// embedding_grad, mask_embedding_grad
//===----------------------------------------------------------------------===//

/// embedding_grad: ids i64 [B,S], dout [B,S,D] -> out [V,D]; two phases and
/// an int workspace of 2*V + 1 + B*S (file comment). An id outside [0, V)
/// reports XL_ERR_EMBEDDING_ID (b, s, id halves) and is left out. With
/// `init` (not null) it writes init + the gradient, rounded as the plan's
/// `add` of the two would be (the tied LM head's gradient: the emitter's
/// add-into fusion).
template <xl_i64 B, xl_i64 S, xl_i64 V, xl_i64 D, int PHASE, int BLOCK, typename T_dout, typename T_init, typename T_out>
XL_DEVICE void xl_embedding_grad(const xl_i64 *XL_RESTRICT ids,
                                 const T_dout *XL_RESTRICT dout,
                                 const T_init *XL_RESTRICT init,
                                 T_out *XL_RESTRICT out, int *workspace,
                                 int *status, XlStepRandom rnd) {
  (void)rnd;
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  constexpr xl_i64 kN = B * S;
  static_assert(kN < 0x7fffffff && V < 0x7fffffff,
                "embedding_grad: positions and ids must fit in int");
  int *offsets = workspace;          // [V + 1]
  int *cursor = workspace + V + 1;   // [V]
  int *order = workspace + 2 * V + 1; // [N]
  if constexpr (PHASE == 0) {
    XL_SHARED int sh[BLOCK];
    if (blockIdx.x != 0)
      return;
    const int tid = threadIdx.x;
    // 1. Counts (integer atomics: the totals do not depend on the order).
    for (xl_i64 v = tid; v < V; v += BLOCK)
      cursor[v] = 0;
    __syncthreads();
    for (xl_i64 p = tid; p < kN; p += BLOCK) {
      const xl_i64 id = ids[p];
      if (id < 0 || id >= V)
        xl_report_error(status, XL_ERR_EMBEDDING_ID, static_cast<int>(p / S),
                        static_cast<int>(p % S),
                        static_cast<int>(static_cast<xl_u64>(id) & 0xffffffffull),
                        static_cast<int>(static_cast<xl_u64>(id) >> 32));
      else
        atomicAdd(&cursor[id], 1);
    }
    __syncthreads();
    // 2. Exclusive scan: thread t owns ids [t*SEG, (t+1)*SEG).
    constexpr xl_i64 kSeg = (V + BLOCK - 1) / BLOCK;
    const xl_i64 v0 = tid * kSeg, v1 = v0 + kSeg < V ? v0 + kSeg : V;
    int local = 0;
    for (xl_i64 v = v0; v < v1; ++v)
      local += cursor[v];
    sh[tid] = local;
    __syncthreads();
    if (tid == 0) {
      int run = 0;
      for (int i = 0; i < BLOCK; ++i) {
        const int c = sh[i];
        sh[i] = run;
        run += c;
      }
      offsets[V] = run;
    }
    __syncthreads();
    int run = sh[tid];
    for (xl_i64 v = v0; v < v1; ++v) {
      const int c = cursor[v];
      offsets[v] = run;
      cursor[v] = run;
      run += c;
    }
    __syncthreads();
    // 3. Stable placement, one tile of BLOCK positions at a time.
    for (xl_i64 base = 0; base < kN; base += BLOCK) {
      const xl_i64 p = base + tid;
      int id = -1;
      if (p < kN) {
        const xl_i64 raw = ids[p];
        if (raw >= 0 && raw < V)
          id = static_cast<int>(raw);
      }
      sh[tid] = id;
      __syncthreads();
      int rank = 0;
      bool last = true;
      if (id >= 0) {
        for (int j = 0; j < BLOCK; ++j) {
          const int o = sh[j];
          rank += (j < tid) & (o == id);
          last = last && !(j > tid && o == id);
        }
        order[cursor[id] + rank] = static_cast<int>(p);
      }
      __syncthreads(); // every read of cursor precedes the updates
      if (id >= 0 && last)
        cursor[id] += rank + 1;
      __syncthreads();
    }
  } else {
    (void)status;
    (void)cursor;
    for (xl_i64 v = blockIdx.x; v < V; v += gridDim.x) {
      const int b = offsets[v], e = offsets[v + 1];
      for (xl_i64 d = threadIdx.x; d < D; d += BLOCK) {
        double acc = 0.0;
        for (int k = b; k < e; ++k)
          acc += static_cast<double>(dout[static_cast<xl_i64>(order[k]) * D + d]);
        // The gradient as stored (T_out), then the add on what was stored.
        const float g = static_cast<float>(static_cast<T_out>(static_cast<float>(acc)));
        out[v * D + d] = init ? static_cast<float>(init[v * D + d]) + g : g;
      }
    }
  }
}

/// mask_embedding_grad: out [1,1,D] = Σ over the ROWS = B*NP rows of dout
/// [B,NP,D], in row order, in double (bitwise the host's sumRows).
template <xl_i64 ROWS, xl_i64 D, int BLOCK, typename T_dout, typename T_out>
XL_DEVICE void xl_mask_embedding_grad(const T_dout *XL_RESTRICT dout,
                                      T_out *XL_RESTRICT out,
                                      XlStepRandom rnd) {
  (void)rnd;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 d = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; d < D;
       d += step) {
    double acc = 0.0;
    for (xl_i64 r = 0; r < ROWS; ++r)
      acc += static_cast<double>(dout[r * D + d]);
    out[d] = static_cast<float>(acc);
  }
}

#endif // XLNETC_K_LOSS_CUH
