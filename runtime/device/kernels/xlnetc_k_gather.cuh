//===- xlnetc_k_gather.cuh - Embedding, memory and position ops -*- C++ -*-===//
//
// embedding, mask_embedding, mem_concat, mem_concat_grad, mem_cache,
// rel_pos_encoding and target_positions (docs/Plan.md), matching
// runtime/host/Kernels.cpp and Backward.cpp. Assumes xlnetc_prelude.cuh was
// included first; conventions and status codes in xlnetc_k_common.cuh.
//
// The copies are grid-stride loops over the flat OUTPUT elements: a warp
// writes 32 consecutive floats and reads 32 consecutive floats of one source
// row (rows are contiguous in every layout here), so both sides coalesce
// except where a warp straddles two rows. The divisions that recover
// (row, column) from a flat index are by compile-time constants, which the
// compiler turns into multiply-shifts. Copies are bit-exact.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_GATHER_CUH
#define XLNETC_K_GATHER_CUH

#include "xlnetc_k_common.cuh"

/// embedding: out[b,s] = table[ids[b,s]], ids i64 [B,S], table [V,D]. An id
/// outside [0, V) reports XL_ERR_EMBEDDING_ID (b, s, id) and leaves that
/// output row unwritten (the host writes nothing at all on an error).
template <xl_i64 B, xl_i64 S, xl_i64 V, xl_i64 D, int BLOCK, typename T_table, typename T_out>
XL_DEVICE void
xl_embedding(const xl_i64 *XL_RESTRICT ids, const T_table *XL_RESTRICT table,
             T_out *XL_RESTRICT out, int *status, XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 kN = B * S * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step) {
    const xl_i64 r = i / D, d = i - r * D;
    const xl_i64 id = ids[r]; // one id per row: a broadcast load in a warp
    if (id < 0 || id >= V) {
      if (d == 0)
        xl_report_error(
            status, XL_ERR_EMBEDDING_ID, static_cast<int>(r / S),
            static_cast<int>(r % S),
            static_cast<int>(static_cast<xl_u64>(id) & 0xffffffffull),
            static_cast<int>(static_cast<xl_u64>(id) >> 32));
      continue;
    }
    out[i] = table[id * D + d];
  }
}

/// mask_embedding: every row of out [B,NP,D] (ROWS = B*NP) is mask_emb [D].
template <xl_i64 ROWS, xl_i64 D, int BLOCK, typename T_maskEmb, typename T_out>
XL_DEVICE void xl_mask_embedding(const T_maskEmb *XL_RESTRICT maskEmb,
                                 T_out *XL_RESTRICT out,
                                 XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 kN = ROWS * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step)
    out[i] = maskEmb[i % D];
}

/// mem_concat: out[b] = [mems[:, b] ; h[b]], mems time-major [M,B,D], h
/// [B,S,D], out [B,M+S,D].
template <xl_i64 M, xl_i64 B, xl_i64 S, xl_i64 D, int BLOCK, typename T_mems, typename T_h, typename T_out>
XL_DEVICE void xl_mem_concat(const T_mems *XL_RESTRICT mems,
                             const T_h *XL_RESTRICT h, T_out *XL_RESTRICT out,
                             XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 kK = M + S, kN = B * kK * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step) {
    const xl_i64 row = i / D, d = i - row * D;
    const xl_i64 b = row / kK, j = row - b * kK;
    out[i] = j < M ? float(mems[(j * B + b) * D + d]) : float(h[(b * S + (j - M)) * D + d]);
  }
}

/// mem_concat_grad: out[b,s] = dout[b, K-S+s], dout [B,K,D], out [B,S,D];
/// with `init` (not null, [B,S,D]) out = init + that, in f32 and rounded to
/// out's type once — bitwise the plan's `add` of the slice to another
/// gradient of h (the emitter's add-into fusion).
template <xl_i64 B, xl_i64 K, xl_i64 S, xl_i64 D, int BLOCK, typename T_dout,
          typename T_init, typename T_out>
XL_DEVICE void xl_mem_concat_grad(const T_dout *XL_RESTRICT dout,
                                  const T_init *XL_RESTRICT init,
                                  T_out *XL_RESTRICT out,
                                  XlStepRandom rnd) {
  (void)rnd;
  static_assert(S <= K, "mem_concat_grad: S must not exceed K");
  constexpr xl_i64 kN = B * S * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step) {
    const xl_i64 b = i / (S * D), rest = i - b * (S * D);
    const T_out slice = dout[(b * K + (K - S)) * D + rest];
    out[i] = init ? static_cast<T_out>(static_cast<float>(init[i]) + static_cast<float>(slice))
                  : slice;
  }
}

/// mem_cache: out [L,B,D] = the last L rows of concat(mems, h[:, :REUSE]
/// time-major), mems [M,B,D] (ignored, may be null, when M = 0), h [B,S,D].
/// L = min(mem_len, M + REUSE) is the output's leading dim.
template <xl_i64 M, xl_i64 B, xl_i64 S, xl_i64 D, xl_i64 REUSE, xl_i64 L,
          int BLOCK, typename T_mems, typename T_h, typename T_out>
XL_DEVICE void xl_mem_cache(const T_mems *XL_RESTRICT mems,
                            const T_h *XL_RESTRICT h, T_out *XL_RESTRICT out,
                            XlStepRandom rnd) {
  (void)rnd;
  static_assert(L <= M + REUSE && REUSE <= S, "mem_cache: bad lengths");
  // Output row l is row FIRST + l of the concatenation.
  constexpr xl_i64 kFirst = M + REUSE - L, kN = L * B * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step) {
    const xl_i64 row = i / D, d = i - row * D;
    const xl_i64 l = row / B, b = row - l * B;
    const xl_i64 t = kFirst + l;
    if constexpr (M > 0)
      out[i] = t < M ? float(mems[(t * B + b) * D + d]) : float(h[(b * S + (t - M)) * D + d]);
    else
      out[i] = h[(b * S + t) * D + d];
  }
}

/// rel_pos_encoding: out [P,R,D], pos = KLEN - r (copy 0) or -KLEN + r (copy
/// 1), clipped to [-CLAMP, CLAMP] when CLAMP > 0; out[p,r,k] = sin(pos f_k)
/// for k < D/2, cos(pos f_{k-D/2}) after, f_k = 1/10000^(2k/D), all in
/// double like the host. With an odd D the last column is not written
/// (as on the host).
template <xl_i64 P, xl_i64 R, xl_i64 D, xl_i64 KLEN, xl_i64 CLAMP, int BLOCK, typename T_out>
XL_DEVICE void xl_rel_pos_encoding(T_out *XL_RESTRICT out,
                                   XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 kHalf = D / 2, kN = P * R * D;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < kN;
       i += step) {
    const xl_i64 row = i / D, c = i - row * D;
    if (c >= 2 * kHalf)
      continue;
    const xl_i64 p = row / R, r = row - p * R;
    double pos =
        p == 0 ? static_cast<double>(KLEN - r) : static_cast<double>(-KLEN + r);
    if constexpr (CLAMP > 0)
      pos = fmin(fmax(pos, -static_cast<double>(CLAMP)),
                 static_cast<double>(CLAMP));
    const xl_i64 k = c < kHalf ? c : c - kHalf;
    const double invFreq =
        1.0 / pow(10000.0, static_cast<double>(2 * k) / static_cast<double>(D));
    out[i] =
        static_cast<float>(c < kHalf ? sin(pos * invFreq) : cos(pos * invFreq));
  }
}

/// target_positions: out[b,r] (i64) = the column of the single 1 in row
/// target_mapping[b,r] (f32 [B,NP,S]), -1 for an all-zero row. One block per
/// row (grid-stride over rows); the threads scan strided columns (coalesced)
/// and three integer block minima find what the host's left-to-right scan
/// finds first: a value other than 0/1 (XL_ERR_TARGET_VALUE: b, row, value
/// bits, column) or a second 1 (XL_ERR_TARGET_TWO_ONES: b, row, first and
/// second column). An erroneous row's output is left unwritten.
template <xl_i64 B, xl_i64 NP, xl_i64 S, int BLOCK, typename T_targetMapping>
XL_DEVICE void xl_target_positions(const T_targetMapping *XL_RESTRICT targetMapping,
                                   xl_i64 *XL_RESTRICT out, int *status,
                                   XlStepRandom rnd) {
  (void)rnd;
  static_assert(S < 0x7fffffff, "target_positions: S must fit in int");
  XL_SHARED int scratch[BLOCK / 32];
  constexpr int kNone = 0x7fffffff;
  for (xl_i64 row = blockIdx.x; row < B * NP; row += gridDim.x) {
    const float *src = targetMapping + row * S;
    // This thread's first bad column and its two smallest columns holding 1
    // (its columns ascend, so the first two it meets).
    int bad = kNone, one1 = kNone, one2 = kNone;
    for (int s = threadIdx.x; s < S; s += BLOCK) {
      const float v = src[s];
      if (v == 0.0f)
        continue;
      if (v != 1.0f) {
        if (bad == kNone)
          bad = s;
      } else if (one1 == kNone) {
        one1 = s;
      } else if (one2 == kNone) {
        one2 = s;
      }
    }
    const int firstBad = xl_block_min<BLOCK>(bad, scratch);
    const int firstOne = xl_block_min<BLOCK>(one1, scratch);
    // The second smallest 1 overall: the smallest of every thread's second
    // and of the first ones other than the overall first.
    const int secondOne =
        xl_block_min<BLOCK>(one1 == firstOne ? one2 : one1, scratch);
    if (threadIdx.x == 0) {
      const int b = static_cast<int>(row / NP), r = static_cast<int>(row % NP);
      if (firstBad < secondOne) // the scan meets the bad value first
        xl_report_error(status, XL_ERR_TARGET_VALUE, b, r,
                        __float_as_int(src[firstBad]), firstBad);
      else if (secondOne != kNone)
        xl_report_error(status, XL_ERR_TARGET_TWO_ONES, b, r, firstOne,
                        secondOne);
      else
        out[row] = firstOne == kNone ? -1 : firstOne;
    }
  }
}

#endif // XLNETC_K_GATHER_CUH
