//===- xlnetc_k_attention_fused.cuh - Fused relative attention --*- C++ -*-===//
//
// The fused relative attention forward (design/cuda.md §5, issue 7 part C):
// ac + rel-shifted bd + ef, scale, the COMPACT masks, online softmax, dropatt
// and ·V in one kernel that never writes a score or a probability to global
// memory — only the output and the per-row log-sum-exp the backward will
// recompute from. Assumes xlnetc_prelude.cuh and xlnetc_k_attention.cuh
// (xl_attn_position, xl_attn_drop_factor) were included first.
//
// Compact masks (docs/DataPipeline.md "The compact form of perm_mask"):
// instead of the dense [B,S,K] seg_mat and mask, the kernel reads
//   seg_id   i64 [B,S]       key_seg(j) = 0 for the mlen = K - S memory
//                            columns, seg_id[b, j - mlen] after;
//                            ef uses seg_embed[seg_id[b,i] != key_seg(j)];
//   perm_rank i64 [B,2,S]    row 0 the query ranks, row 1 the key ranks:
//                            memory columns are visible, key j >= mlen is
//                            masked when query_rank[i] <= key_rank[j-mlen],
//                            except that without HAS_ROWS (the content
//                            stream) a position always sees itself.
// This is exactly attn_mask(perm_mask) and rel_segment of docs/Plan.md when
// perm_mask[b,i,j] = query_rank[b,i] <= key_rank[b,j].
//
// Work: one tile = BQ query rows of one (b, n), tiles in a grid-stride loop
// over blockIdx.x (b, n, query tile). Keys go by in tiles of BK = 32, one
// warp lane per key: the tile's K and V rows are staged in shared memory;
// each score is (ac + bd + ef) * scale - 1e30 * masked with ac and bd dots
// over H in double (the host's precision; the tensor-core bf16 path is issue
// 8), bd reading k_r[p, S - i + j] (XLNet's rel_shift); then, per row, a warp
// updates the running max m and sum l (fixed shuffle trees: deterministic)
// and the row's output accumulator o (double) is rescaled and increased by
// Σ_j p_j·factor_j·v_j, factor_j the dropatt keep factor of element
// ((b·T + t)·N + n)·K + j (bit-identical to the host's mask). At the end
// out = o / l and lse = m + log(l). A fully masked row gives the uniform
// average of v (-1e30 absorbs the scores), a padding slot (rows < 0) zeros
// and lse 0. No atomics; the result does not depend on gridDim.
//
// Dynamic shared memory (bytes), with BQ rows per tile and BK = 32:
//   8 * (BQ*H + BQ*BK + 7*BQ) + 4 * (2*BQ*H + 2*BK*H)
// (37.8 KiB for BQ 16, H 64.)
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ATTENTION_FUSED_CUH
#define XLNETC_K_ATTENTION_FUSED_CUH

#include "xlnetc_k_attention.cuh"

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BQ, int BK, int BLOCK>
XL_DEVICE void xl_rel_attention_fused(
    const float *XL_RESTRICT q, const float *XL_RESTRICT k,
    const float *XL_RESTRICT v, const float *XL_RESTRICT kR,
    const float *XL_RESTRICT segEmb, const float *XL_RESTRICT rw,
    const float *XL_RESTRICT rr, const float *XL_RESTRICT rs,
    const xl_i64 *XL_RESTRICT segId, const xl_i64 *XL_RESTRICT permRank,
    const xl_i64 *XL_RESTRICT rows, float *XL_RESTRICT out,
    float *XL_RESTRICT lse, int *status, xl_i64 site,
    unsigned long long seed) {
  static_assert(BK == 32, "one warp lane per key of a tile");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: multiple of 32");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  constexpr xl_i64 MLEN = K - S, NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;
  constexpr int kWarps = BLOCK / 32;
  const double scale = __longlong_as_double(static_cast<long long>(SCALE_BITS));
  const double kNegInf = -__longlong_as_double(0x7ff0000000000000ll);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const xl_u64 key = xl_dropout_key(seed, site);

  XL_DYN_SMEM(double, smem);
  double *o = smem;                 // [BQ][H]
  double *sc = o + BQ * H;          // [BQ][BK] scores, then p * factor
  double *ef = sc + BQ * BK;        // [BQ][2]
  double *mrow = ef + 2 * BQ;       // [BQ] running max
  double *lrow = mrow + BQ;         // [BQ] running sum
  double *alpha = lrow + BQ;        // [BQ] rescale of this key tile
  xl_i64 *pos = reinterpret_cast<xl_i64 *>(alpha + BQ); // [BQ] position
  xl_i64 *qrank = pos + BQ;                               // [BQ]
  float *qw = reinterpret_cast<float *>(qrank + BQ);      // [BQ][H]
  float *qr = qw + BQ * H;                                // [BQ][H]
  float *kt = qr + BQ * H;                                // [BK][H]
  float *vt = kt + BK * H;                                // [BK][H]

  for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
    const xl_i64 t0 = (tile % kQTiles) * BQ;
    const int n = static_cast<int>((tile / kQTiles) % N);
    const xl_i64 b = tile / kQTiles / N;
    const xl_i64 p = b / (B / P);
    __syncthreads(); // the previous tile is done with shared memory

    // 1. The tile's rows: positions, query ranks, biased queries, ef.
    for (int r = threadIdx.x; r < BQ; r += BLOCK) {
      const xl_i64 t = t0 + r;
      const xl_i64 i =
          t < T ? xl_attn_position<T, S, HAS_ROWS>(rows, b, t, status, n == 0)
                : -1;
      pos[r] = i;
      qrank[r] = i >= 0 ? permRank[(b * 2) * S + i] : 0;
      mrow[r] = kNegInf;
      lrow[r] = 0.0;
      double e0 = 0.0, e1 = 0.0;
      if (t < T) {
        const float *qrow = q + ((b * T + t) * N + n) * H;
        for (int h = 0; h < H; ++h) {
          const double s = static_cast<double>(qrow[h]) +
                           static_cast<double>(rs[n * H + h]);
          e0 += s * static_cast<double>(segEmb[n * H + h]);
          e1 += s * static_cast<double>(segEmb[NH + n * H + h]);
        }
      }
      ef[2 * r] = e0;
      ef[2 * r + 1] = e1;
    }
    for (int e = threadIdx.x; e < BQ * H; e += BLOCK) {
      const int r = e / H, h = e % H;
      const xl_i64 t = t0 + r;
      const float qv = t < T ? q[((b * T + t) * N + n) * H + h] : 0.0f;
      qw[e] = qv + rw[n * H + h];
      qr[e] = qv + rr[n * H + h];
      o[e] = 0.0;
    }

    // 2. Key tiles.
    for (xl_i64 j0 = 0; j0 < K; j0 += BK) {
      __syncthreads(); // the rows are ready; the last tile's V is consumed
      for (int e = threadIdx.x; e < BK * H; e += BLOCK) {
        const int c = e / H, h = e % H;
        const xl_i64 j = j0 + c;
        const xl_i64 at = ((b * K + j) * N + n) * H + h;
        kt[e] = j < K ? k[at] : 0.0f;
        vt[e] = j < K ? v[at] : 0.0f;
      }
      __syncthreads();
      for (int e = threadIdx.x; e < BQ * BK; e += BLOCK) {
        const int r = e / BK, c = e % BK;
        const xl_i64 j = j0 + c, i = pos[r];
        double s = kNegInf; // not a key of this row
        if (j < K && i >= 0) {
          const float *krow = kR + ((p * R + (S - i + j)) * N + n) * H;
          double ac = 0.0, bd = 0.0;
          for (int h = 0; h < H; ++h) {
            ac += static_cast<double>(qw[r * H + h]) *
                  static_cast<double>(kt[c * H + h]);
            bd += static_cast<double>(qr[r * H + h]) *
                  static_cast<double>(krow[h]);
          }
          bool masked = false, differ;
          const xl_i64 segI = segId[b * S + i];
          if (j < MLEN) {
            differ = segI != 0;
          } else {
            const xl_i64 jj = j - MLEN;
            masked = qrank[r] <= permRank[(b * 2 + 1) * S + jj];
            if (!HAS_ROWS && jj == i)
              masked = false; // the content stream sees itself
            differ = segI != segId[b * S + jj];
          }
          s = (ac + bd + ef[2 * r + (differ ? 1 : 0)]) * scale -
              (masked ? 1e30 : 0.0);
        }
        sc[e] = s;
      }
      __syncthreads();
      // Online softmax: a warp per row, a lane per key.
      for (int r = warp; r < BQ; r += kWarps) {
        const xl_i64 j = j0 + lane;
        const bool valid = j < K && pos[r] >= 0;
        const double s = sc[r * BK + lane];
        const double tileMax =
            xl_warp_reduce(valid ? s : kNegInf, XlMaxOp());
        const double mOld = mrow[r];
        const double mNew = mOld > tileMax ? mOld : tileMax;
        const double e = valid ? exp(s - mNew) : 0.0;
        const double tileSum = xl_warp_sum(e);
        const xl_i64 t = t0 + r;
        const double factor =
            valid ? xl_attn_drop_factor<DROP_BITS>(
                        key, static_cast<xl_u64>(((b * T + t) * N + n) * K + j))
                  : 0.0;
        sc[r * BK + lane] = e * factor;
        if (lane == 0) {
          const double a = mOld == kNegInf ? 0.0 : exp(mOld - mNew);
          alpha[r] = a;
          lrow[r] = lrow[r] * a + tileSum;
          mrow[r] = mNew;
        }
      }
      __syncthreads();
      for (int e = threadIdx.x; e < BQ * H; e += BLOCK) {
        const int r = e / H, h = e % H;
        double acc = o[e] * alpha[r];
        for (int c = 0; c < BK; ++c)
          acc += sc[r * BK + c] * static_cast<double>(vt[c * H + h]);
        o[e] = acc;
      }
    }
    __syncthreads();

    // 3. out = o / l, lse = m + log(l); zeros for padding slots.
    for (int e = threadIdx.x; e < BQ * H; e += BLOCK) {
      const int r = e / H, h = e % H;
      const xl_i64 t = t0 + r;
      if (t < T)
        out[((b * T + t) * N + n) * H + h] =
            pos[r] < 0 ? 0.0f : static_cast<float>(o[e] / lrow[r]);
    }
    if (lse)
      for (int r = threadIdx.x; r < BQ; r += BLOCK) {
        const xl_i64 t = t0 + r;
        if (t < T)
          lse[(b * T + t) * N + n] =
              pos[r] < 0 ? 0.0f : static_cast<float>(mrow[r] + log(lrow[r]));
      }
  }
}

#endif // XLNETC_K_ATTENTION_FUSED_CUH
