//===- xlnetc_k_attention_fused.cuh - Fused relative attention --*- C++ -*-===//
//
// The fused relative attention, forward and backward (design/cuda.md §5,
// issue 7 part C). The forward:
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
// perm_mask[b,i,j] = query_rank[b,i] <= key_rank[b,j]. A perm_mask without
// that form comes bit-packed instead (MASK_BITS = 1):
//   perm_bits i64 [B,S,W]    W = ceil(S/64); bit j % 64 of word j / 64 of
//                            row (b, i) is perm_mask[b,i,j] (same rules for
//                            memory columns and the content stream).
//
// Work: one tile = BQ query rows of one (b, n), tiles in a grid-stride loop
// over blockIdx.x (b, n, query tile). Keys go by in tiles of BK = 32, one
// warp lane per key: the tile's K and V rows are staged in shared memory;
// each score is (ac + bd + ef) * scale - 1e30 * masked with ac and bd dots
// over H in double (at least the host's precision: its dots are float
// sgemms; the tensor-core bf16 path is issue 8), bd reading k_r[p, S - i + j] (XLNet's rel_shift); then, per row, a warp
// updates the running max m and sum l (fixed shuffle trees: deterministic)
// and the row's output accumulator o (double) is rescaled and increased by
// Σ_j p_j·factor_j·v_j, factor_j the dropatt keep factor of element
// ((b·T + t)·N + n)·K + j (bit-identical to the host's mask). At the end
// out = o / l and lse = m + log(l). A fully masked row gives the uniform
// average of v (-1e30 absorbs the scores; its lse is about -1e30, which the
// backward reads as "uniform"), a padding slot (rows < 0) zeros and lse 0.
// No atomics; the result does not depend on gridDim.
//
// Dynamic shared memory (bytes), with BQ rows per tile and BK = 32:
//   8 * (BQ*H + BQ*BK + 7*BQ) + 4 * (2*BQ*H + 2*BK*H)
// (36.9 KiB for BQ 16, H 64.)
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ATTENTION_FUSED_CUH
#define XLNETC_K_ATTENTION_FUSED_CUH

#include "xlnetc_k_attention.cuh"

/// The permutation mask's row key of query position i (>= 0) of batch row
/// b, read once per row: its query rank (ranks), or the offset of its first
/// word (bits).
template <xl_i64 S, int MASK_BITS>
XL_DEVICE xl_i64 xl_attn_row_key(const xl_i64 *permMask, xl_i64 b, xl_i64 i) {
  if constexpr (MASK_BITS)
    return (b * S + i) * ((S + 63) / 64);
  else
    return permMask[(b * 2) * S + i];
}

/// The compact-mask rule (file comment) at query position i (>= 0, row key
/// `rowKey` of xl_attn_row_key, segment segI) and key j: whether the key is
/// masked, and whether it is in another segment than the query. `key(jj)`
/// gives a non-memory key's segment id and rank (row 1 of perm_rank; not
/// read with MASK_BITS) — from global memory here, from a staged tile in
/// the tensor-core kernels.
template <xl_i64 K, xl_i64 S, int HAS_ROWS, int MASK_BITS, typename Key>
XL_DEVICE void xl_attn_mask_rule(xl_i64 i, xl_i64 j, xl_i64 rowKey, xl_i64 segI,
                                 Key key, const xl_i64 *permMask, bool &masked,
                                 bool &differ) {
  constexpr xl_i64 MLEN = K - S;
  if (j < MLEN) { // memory: visible, segment 0
    masked = false;
    differ = segI != 0;
    return;
  }
  const xl_i64 jj = j - MLEN;
  xl_i64 keySeg, keyRank;
  key(jj, keySeg, keyRank);
  bool perm;
  if constexpr (MASK_BITS)
    perm = (static_cast<xl_u64>(permMask[rowKey + jj / 64]) >> (jj % 64)) & 1u;
  else
    perm = rowKey <= keyRank;
  // The content stream (no rows) sees itself.
  masked = perm && (HAS_ROWS || jj != i);
  differ = segI != keySeg;
}

/// The compact masks at query position i (>= 0, row key `rowKey`) and key j
/// of batch row b, read from global memory.
template <xl_i64 K, xl_i64 S, int HAS_ROWS, int MASK_BITS>
XL_DEVICE void xl_attn_compact_mask(xl_i64 b, xl_i64 i, xl_i64 j, xl_i64 rowKey,
                                    const xl_i64 *segId,
                                    const xl_i64 *permMask, bool &masked,
                                    bool &differ) {
  xl_attn_mask_rule<K, S, HAS_ROWS, MASK_BITS>(
      i, j, rowKey, segId[b * S + i],
      [&](xl_i64 jj, xl_i64 &seg, xl_i64 &rank) {
        seg = segId[b * S + jj];
        rank = MASK_BITS ? 0 : permMask[(b * 2 + 1) * S + jj];
      },
      permMask, masked, differ);
}

/// Stages keys j0 .. j0 + TILE of (b, n) into kt and vt ([TILE][H], row-major;
/// zeros past K). Called by the whole block, between barriers.
template <xl_i64 K, int N, int H, int TILE, int BLOCK, typename T_kt, typename T_vt, typename T_k, typename T_v>
XL_DEVICE void xl_attn_stage_keys(T_kt *kt, T_vt *vt, xl_i64 b, int n,
                                  xl_i64 j0, const T_k *k, const T_v *v) {
  for (int e = threadIdx.x; e < TILE * H; e += BLOCK) {
    const int c = e / H, h = e % H;
    const xl_i64 j = j0 + c;
    const xl_i64 at = ((b * K + j) * N + n) * H + h;
    kt[e] = j < K ? float(k[at]) : 0.0f;
    vt[e] = j < K ? float(v[at]) : 0.0f;
  }
}

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BQ, int BK, int BLOCK, int MASK_BITS = 0, typename T_q, typename T_k, typename T_v, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_out, typename T_lse>
XL_DEVICE void xl_rel_attention_fused(
    const T_q *XL_RESTRICT q, const T_k *XL_RESTRICT k,
    const T_v *XL_RESTRICT v, const T_kR *XL_RESTRICT kR,
    const T_segEmb *XL_RESTRICT segEmb, const T_rw *XL_RESTRICT rw,
    const T_rr *XL_RESTRICT rr, const T_rs *XL_RESTRICT rs,
    const xl_i64 *XL_RESTRICT segId, const xl_i64 *XL_RESTRICT permMask,
    const xl_i64 *XL_RESTRICT rows, T_out *XL_RESTRICT out,
    T_lse *XL_RESTRICT lse, int *status, xl_i64 site,
    XlStepRandom rnd) {
  static_assert(BK == 32, "one warp lane per key of a tile");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: multiple of 32");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;
  constexpr int kWarps = BLOCK / 32;
  const double scale = __longlong_as_double(static_cast<long long>(SCALE_BITS));
  const double kNegInf = -__longlong_as_double(0x7ff0000000000000ll);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const XlDropKey key = xl_drop_key(rnd, site, T * N * K);

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
      qrank[r] = i >= 0 ? xl_attn_row_key<S, MASK_BITS>(permMask, b, i) : 0;
      mrow[r] = kNegInf;
      lrow[r] = 0.0;
      double e0 = 0.0, e1 = 0.0;
      if (t < T) {
        const auto *qrow = q + ((b * T + t) * N + n) * H;
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
      const float qv = t < T ? float(q[((b * T + t) * N + n) * H + h]) : 0.0f;
      qw[e] = qv + rw[n * H + h];
      qr[e] = qv + rr[n * H + h];
      o[e] = 0.0;
    }

    // 2. Key tiles.
    for (xl_i64 j0 = 0; j0 < K; j0 += BK) {
      __syncthreads(); // the rows are ready; the last tile's V is consumed
      xl_attn_stage_keys<K, N, H, BK, BLOCK>(kt, vt, b, n, j0, k, v);
      __syncthreads();
      for (int e = threadIdx.x; e < BQ * BK; e += BLOCK) {
        const int r = e / BK, c = e % BK;
        const xl_i64 j = j0 + c, i = pos[r];
        double s = kNegInf; // not a key of this row
        if (j < K && i >= 0) {
          const auto *krow = kR + ((p * R + (S - i + j)) * N + n) * H;
          double ac = 0.0, bd = 0.0;
          for (int h = 0; h < H; ++h) {
            ac += static_cast<double>(qw[r * H + h]) *
                  static_cast<double>(kt[c * H + h]);
            bd += static_cast<double>(qr[r * H + h]) *
                  static_cast<double>(krow[h]);
          }
          bool masked, differ;
          xl_attn_compact_mask<K, S, HAS_ROWS, MASK_BITS>(b, i, j, qrank[r], segId,
                                               permMask, masked, differ);
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
        // Every lane has read mrow[r] before lane 0 overwrites it: shuffles
        // do not order shared memory (racecheck on an H200 saw the hazard).
        __syncwarp();
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

//===----------------------------------------------------------------------===//
// The fused backward
//===----------------------------------------------------------------------===//

/// One row's data of the backward, staged in shared memory per query tile.
/// Scores are recomputed exactly as in the forward; P = exp(s - lse).
template <int BQ, int H> struct XlAttnGradRows {
  double ef[BQ][2]; // (q + r_s_bias) . seg_embed[0/1]
  double lse[BQ];   // the forward's log-sum-exp
  double dot[BQ];   // D = dout . out
  xl_i64 pos[BQ];   // position i (-1: padding or past T)
  xl_i64 qrank[BQ]; // the row key of its permutation mask (xl_attn_row_key)
  float qw[BQ][H];  // q + r_w_bias (rounded to float, as the host)
  float qr[BQ][H];  // q + r_r_bias
  float go[BQ][H];  // dout
};

/// Stages query rows t0 .. t0+BQ of (b, n); called by the whole block.
/// `stats` is the workspace of the backward (per row: lse, D, ...); with
/// WITH_STATS false (the statistics phase itself) lse and D are left 0.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 S, int HAS_ROWS,
          int MASK_BITS, int BQ, int BLOCK, bool WITH_STATS, typename T_q, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_dout>
XL_DEVICE void xl_attn_grad_stage_rows(
    XlAttnGradRows<BQ, H> &g, xl_i64 b, int n, xl_i64 t0, const T_q *q,
    const T_segEmb *segEmb, const T_rw *rw, const T_rr *rr, const T_rs *rs,
    const xl_i64 *permMask, const xl_i64 *rows, const T_dout *dout,
    const double *stats, xl_i64 statStride) {
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  for (int r = threadIdx.x; r < BQ; r += BLOCK) {
    const xl_i64 t = t0 + r;
    const xl_i64 i =
        t < T ? xl_attn_position<T, S, HAS_ROWS>(rows, b, t, nullptr, false)
              : -1;
    g.pos[r] = i;
    g.qrank[r] = i >= 0 ? xl_attn_row_key<S, MASK_BITS>(permMask, b, i) : 0;
    double e0 = 0.0, e1 = 0.0;
    g.lse[r] = 0.0;
    g.dot[r] = 0.0;
    if (i >= 0) {
      const xl_i64 at = ((b * T + t) * N + n) * H;
      for (int h = 0; h < H; ++h) {
        const double qs = static_cast<double>(q[at + h]) +
                          static_cast<double>(rs[n * H + h]);
        e0 += qs * static_cast<double>(segEmb[n * H + h]);
        e1 += qs * static_cast<double>(segEmb[NH + n * H + h]);
      }
      if constexpr (WITH_STATS) {
        const double *st = stats + ((b * T + t) * N + n) * statStride;
        g.lse[r] = st[0];
        g.dot[r] = st[1];
      }
    }
    g.ef[r][0] = e0;
    g.ef[r][1] = e1;
  }
  for (int e = threadIdx.x; e < BQ * H; e += BLOCK) {
    const int r = e / H, h = e % H;
    const xl_i64 t = t0 + r;
    const xl_i64 at = ((b * T + t) * N + n) * H + h;
    const float qv = t < T ? float(q[at]) : 0.0f;
    g.qw[r][h] = qv + rw[n * H + h];
    g.qr[r][h] = qv + rr[n * H + h];
    g.go[r][h] = t < T ? float(dout[at]) : 0.0f;
  }
}

/// The score's pieces for row r of `g` and key j of (b, n): whether it is a
/// real key of the row, masked, in another segment, its A = P·factor and c.
struct XlAttnGradEntry {
  bool valid;
  bool differ;
  double s;      ///< the masked, scaled score
  double dpf;    ///< (dout · v_j) · dropatt factor
  double a;      ///< P_j · dropatt factor (the forward's weight of v_j)
  double c;      ///< d loss / d raw score (0 where masked)
};

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BQ, int MASK_BITS, typename T_kj, typename T_vj, typename T_kR>
XL_DEVICE XlAttnGradEntry xl_attn_grad_entry(
    const XlAttnGradRows<BQ, H> &g, int r, xl_i64 b, int n, xl_i64 t,
    xl_i64 j, const T_kj *kj, const T_vj *vj, const T_kR *kR,
    const xl_i64 *segId, const xl_i64 *permMask, const XlDropKey &key) {
  XlAttnGradEntry e{false, false, 0.0, 0.0, 0.0, 0.0};
  const xl_i64 i = g.pos[r];
  if (i < 0 || j < 0 || j >= K)
    return e;
  e.valid = true;
  const xl_i64 p = b / (B / P);
  const auto *krow = kR + ((p * R + (S - i + j)) * N + n) * H;
  double ac = 0.0, bd = 0.0, dp = 0.0;
  for (int h = 0; h < H; ++h) {
    ac += static_cast<double>(g.qw[r][h]) * static_cast<double>(kj[h]);
    bd += static_cast<double>(g.qr[r][h]) * static_cast<double>(krow[h]);
    dp += static_cast<double>(g.go[r][h]) * static_cast<double>(vj[h]);
  }
  bool masked;
  xl_attn_compact_mask<K, S, HAS_ROWS, MASK_BITS>(b, i, j, g.qrank[r], segId, permMask,
                                       masked, e.differ);
  const double scale = __longlong_as_double(static_cast<long long>(SCALE_BITS));
  const double s = (ac + bd + g.ef[r][e.differ ? 1 : 0]) * scale -
                   (masked ? 1e30 : 0.0);
  // A fully masked row (only masked keys: its lse is about -1e30, which a
  // float cannot hold to the ulp the scores need) is the uniform softmax.
  const double prob =
      g.lse[r] < -1e29 ? 1.0 / static_cast<double>(K) : exp(s - g.lse[r]);
  const double factor = xl_attn_drop_factor<DROP_BITS>(
      key, static_cast<xl_u64>(((b * T + t) * N + n) * K + j));
  e.s = s;
  e.dpf = dp * factor;
  e.a = prob * factor;
  e.c = masked ? 0.0 : prob * (e.dpf - g.dot[r]) * scale;
  return e;
}

/// Stores a bias-column gradient: `v` rounded to the output's type, or with
/// `init` (not null) init[at] + that value in f32, rounded again — bitwise
/// the plan's `add` of the other stream's gradient (the emitter's add-into
/// fusion).
template <typename T_out, typename T_init>
XL_DEVICE void xl_attn_put_sum(T_out *out, const T_init *init, xl_i64 at, double v) {
  const float stored = static_cast<float>(static_cast<T_out>(static_cast<float>(v)));
  out[at] = static_cast<T_out>(init ? static_cast<float>(init[at]) + stored : stored);
}

/// The backward's last phase, shared by the f32 and the tensor-core
/// kernels: column (n, h) of d r_w_bias, d r_r_bias, d r_s_bias and
/// d seg_embed from the row statistics in `workspace` ([lse, D, c0, c1,
/// Σ c·k (H), Σ c·k_r (H)] per row), rows in order, one thread per column
/// (grid-stride over the N·H columns with `block` threads per block). The
/// inits (null: none) are what the results are added to.
template <xl_i64 B, xl_i64 T, int N, int H, typename T_q, typename T_segEmb,
          typename T_rs, typename T_dsegEmbInit, typename T_drwInit,
          typename T_drrInit, typename T_drsInit, typename T_dsegEmb,
          typename T_drw, typename T_drr, typename T_drs>
XL_DEVICE void xl_attn_bias_columns(
    const T_q *XL_RESTRICT q, const T_segEmb *XL_RESTRICT segEmb,
    const T_rs *XL_RESTRICT rs, const double *XL_RESTRICT workspace,
    const T_dsegEmbInit *dsegEmbInit, const T_drwInit *drwInit,
    const T_drrInit *drrInit, const T_drsInit *drsInit, T_dsegEmb *dsegEmb,
    T_drw *drw, T_drr *drr, T_drs *drs, int block) {
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 kStat = 2 * H + 4;
  for (xl_i64 col = static_cast<xl_i64>(blockIdx.x) * block + threadIdx.x; col < NH;
       col += static_cast<xl_i64>(gridDim.x) * block) {
    const int n = static_cast<int>(col / H), h = static_cast<int>(col % H);
    const double se0 = segEmb[col], se1 = segEmb[NH + col];
    double aw = 0.0, ar = 0.0, as = 0.0, ds0 = 0.0, ds1 = 0.0;
    for (xl_i64 b = 0; b < B; ++b)
      for (xl_i64 t = 0; t < T; ++t) {
        const double *st = workspace + ((b * T + t) * N + n) * kStat;
        const double qs = static_cast<double>(q[((b * T + t) * N + n) * H + h]) +
                          static_cast<double>(rs[col]);
        aw += st[4 + h];
        ar += st[4 + H + h];
        as += st[2] * se0 + st[3] * se1;
        ds0 += st[2] * qs;
        ds1 += st[3] * qs;
      }
    xl_attn_put_sum(drw, drwInit, col, aw);
    xl_attn_put_sum(drr, drrInit, col, ar);
    xl_attn_put_sum(drs, drsInit, col, as);
    xl_attn_put_sum(dsegEmb, dsegEmbInit, col, ds0);
    xl_attn_put_sum(dsegEmb, dsegEmbInit, NH + col, ds1);
  }
}

/// The phases of xl_rel_attention_fused_grad (below), one member function
/// each, over the kernel's arguments and the shared memory they share.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BQ, int BLOCK, int MASK_BITS, typename T_dout, typename T_q, typename T_k, typename T_v, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_dq, typename T_dk, typename T_dv, typename T_dkR, typename T_dsegEmb, typename T_drw, typename T_drr, typename T_drs>
struct XlAttnFusedGrad {
  // The kernel's arguments (xl_rel_attention_fused_grad).
  const T_dout *XL_RESTRICT dout;
  const T_q *XL_RESTRICT q;
  const T_k *XL_RESTRICT k;
  const T_v *XL_RESTRICT v;
  const T_kR *XL_RESTRICT kR;
  const T_segEmb *XL_RESTRICT segEmb;
  const T_rw *XL_RESTRICT rw;
  const T_rr *XL_RESTRICT rr;
  const T_rs *XL_RESTRICT rs;
  const xl_i64 *XL_RESTRICT segId;
  const xl_i64 *XL_RESTRICT permMask;
  const xl_i64 *XL_RESTRICT rows;
  T_dq *XL_RESTRICT dq;
  T_dk *XL_RESTRICT dk;
  T_dv *XL_RESTRICT dv;
  T_dkR *XL_RESTRICT dkR;
  T_dsegEmb *XL_RESTRICT dsegEmb;
  T_drw *XL_RESTRICT drw;
  T_drr *XL_RESTRICT drr;
  T_drs *XL_RESTRICT drs;
  double *XL_RESTRICT workspace;
  XlDropKey key; // xl_drop_key(rnd, site, T * N * K)
  // The block's shared memory every phase uses: the staged query rows, and
  // the entries of a tile, each (row, key) computed once per phase by one
  // thread, then summed in order by the threads that own output elements.
  XlAttnGradRows<BQ, H> &g;
  static constexpr int kBK = 32;
  double (&ec)[BQ][kBK];        // c of the entry
  double (&ea)[BQ][kBK];        // A of the entry (PHASE 1)
  unsigned char (&ed)[BQ][kBK]; // the entry's key is in another segment

  static constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  static constexpr xl_i64 kStat = 2 * H + 4;
  static constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;
  static constexpr xl_i64 kKTiles = (K + kBK - 1) / kBK;
  static constexpr int kSlotsQ = (BQ * H + BLOCK - 1) / BLOCK;
  static constexpr int kSlotsK = (kBK * H + BLOCK - 1) / BLOCK;

  /// Row stats: [lse, D, c0, c1, Σ c·k (H), Σ c·k_r (H)] per row
  /// ((b*T + t)*N + n).
  XL_DEVICE double *stats(xl_i64 b, xl_i64 t, int n) const {
    return workspace + ((b * T + t) * N + n) * kStat;
  }
  /// One (row, key) entry of the current query tile (xl_attn_grad_entry).
  XL_DEVICE XlAttnGradEntry entry(int r, xl_i64 b, int n, xl_i64 t, xl_i64 j, const float *kj,
                                  const float *vj) const {
    return xl_attn_grad_entry<B, T, N, H, K, S, P, R, HAS_ROWS, SCALE_BITS, DROP_BITS, BQ,
                              MASK_BITS>(g, r, b, n, t, j, kj, vj, kR, segId, permMask, key);
  }

  /// PHASE 0: the row statistics.
  XL_DEVICE void rowStatistics() {
    // Row statistics: the forward's lse and D = Σ_j P_j·factor_j·(dout·v_j)
    // (= dout · out), by an online pass over the keys as in the forward.
    XL_SHARED float kt[kBK][H];
    XL_SHARED float vt[kBK][H];
    XL_SHARED double ms[BQ], ls[BQ], ds[BQ];
    constexpr int kWarps = BLOCK / 32;
    const double kNegInf = -__longlong_as_double(0x7ff0000000000000ll);
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
      const xl_i64 t0 = (tile % kQTiles) * BQ;
      const int n = static_cast<int>((tile / kQTiles) % N);
      const xl_i64 b = tile / kQTiles / N;
      __syncthreads();
      xl_attn_grad_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, BQ, BLOCK, false>(
          g, b, n, t0, q, segEmb, rw, rr, rs, permMask, rows, dout, nullptr,
          0);
      for (int r = threadIdx.x; r < BQ; r += BLOCK) {
        ms[r] = kNegInf;
        ls[r] = 0.0;
        ds[r] = 0.0;
      }
      for (xl_i64 j0 = 0; j0 < K; j0 += kBK) {
        __syncthreads();
        xl_attn_stage_keys<K, N, H, kBK, BLOCK>(&kt[0][0], &vt[0][0], b, n,
                                                j0, k, v);
        __syncthreads();
        for (int e = threadIdx.x; e < BQ * kBK; e += BLOCK) {
          const int r = e / kBK, c = e % kBK;
          const XlAttnGradEntry x = entry(r, b, n, t0 + r, j0 + c, kt[c], vt[c]);
          ec[r][c] = x.valid ? x.s : kNegInf;
          ea[r][c] = x.dpf;
        }
        __syncthreads();
        for (int r = warp; r < BQ; r += kWarps) {
          const double sv = ec[r][lane];
          const double tileMax = xl_warp_reduce(sv, XlMaxOp());
          const double mOld = ms[r];
          const double mNew = mOld > tileMax ? mOld : tileMax;
          const double e = sv == kNegInf ? 0.0 : exp(sv - mNew);
          const double tileSum = xl_warp_sum(e);
          const double tileDot = xl_warp_sum(e * ea[r][lane]);
          __syncwarp(); // every lane has read ms[r] (see the forward)
          if (lane == 0 && mNew != kNegInf) {
            const double a = mOld == kNegInf ? 0.0 : exp(mOld - mNew);
            ls[r] = ls[r] * a + tileSum;
            ds[r] = ds[r] * a + tileDot;
            ms[r] = mNew;
          }
        }
      }
      __syncthreads();
      for (int r = threadIdx.x; r < BQ; r += BLOCK) {
        const xl_i64 t = t0 + r;
        if (t >= T)
          continue;
        double *st = stats(b, t, n);
        const bool real = g.pos[r] >= 0 && ls[r] > 0.0;
        st[0] = real ? ms[r] + log(ls[r]) : 0.0;
        st[1] = real ? ds[r] / ls[r] : 0.0;
      }
    }
  }

  /// PHASE 1: dq and the per-row statistics, by query tiles.
  XL_DEVICE void queryGradients() {
    XL_SHARED float kt[kBK][H];
    XL_SHARED float vt[kBK][H];
    XL_SHARED double c01[BQ][2];
    for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
      const xl_i64 t0 = (tile % kQTiles) * BQ;
      const int n = static_cast<int>((tile / kQTiles) % N);
      const xl_i64 b = tile / kQTiles / N;
      const xl_i64 p = b / (B / P);
      __syncthreads();
      xl_attn_grad_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, BQ, BLOCK, true>(
          g, b, n, t0, q, segEmb, rw, rr, rs, permMask, rows, dout, workspace,
          kStat);
      for (int r = threadIdx.x; r < BQ; r += BLOCK)
        c01[r][0] = c01[r][1] = 0.0;
      double sk[kSlotsQ], skr[kSlotsQ]; // thread's (r, h): Σ c·k, Σ c·k_r
      for (int x = 0; x < kSlotsQ; ++x)
        sk[x] = skr[x] = 0.0;
      for (xl_i64 j0 = 0; j0 < K; j0 += kBK) {
        __syncthreads();
        xl_attn_stage_keys<K, N, H, kBK, BLOCK>(&kt[0][0], &vt[0][0], b, n,
                                                j0, k, v);
        __syncthreads();
        for (int e = threadIdx.x; e < BQ * kBK; e += BLOCK) {
          const int r = e / kBK, c = e % kBK;
          const XlAttnGradEntry x = entry(r, b, n, t0 + r, j0 + c, kt[c], vt[c]);
          ec[r][c] = x.c;
          ed[r][c] = x.differ ? 1 : 0;
        }
        __syncthreads();
        int slot = 0;
        for (int e = threadIdx.x; e < BQ * H; e += BLOCK, ++slot) {
          const int r = e / H, h = e % H;
          const xl_i64 i = g.pos[r];
          if (i < 0)
            continue;
          double a = sk[slot], ar = skr[slot];
          for (int c = 0; c < kBK && j0 + c < K; ++c) {
            a += ec[r][c] * static_cast<double>(kt[c][h]);
            ar += ec[r][c] * static_cast<double>(
                                 kR[((p * R + (S - i + j0 + c)) * N + n) * H + h]);
          }
          sk[slot] = a;
          skr[slot] = ar;
        }
        for (int r = threadIdx.x; r < BQ; r += BLOCK)
          for (int c = 0; c < kBK; ++c)
            c01[r][ed[r][c]] += ec[r][c];
      }
      __syncthreads();
      int slot = 0;
      for (int e = threadIdx.x; e < BQ * H; e += BLOCK, ++slot) {
        const int r = e / H, h = e % H;
        const xl_i64 t = t0 + r;
        if (t >= T)
          continue;
        const double se0 = segEmb[n * H + h], se1 = segEmb[NH + n * H + h];
        dq[((b * T + t) * N + n) * H + h] = static_cast<float>(
            sk[slot] + skr[slot] + c01[r][0] * se0 + c01[r][1] * se1);
        double *st = stats(b, t, n);
        st[4 + h] = sk[slot];
        st[4 + H + h] = skr[slot];
        if (h == 0) {
          st[2] = c01[r][0];
          st[3] = c01[r][1];
        }
      }
    }
  }

  /// PHASE 2: dk and dv, by key tiles (query rows in order).
  XL_DEVICE void keyGradients() {
    XL_SHARED float kt[kBK][H];
    XL_SHARED float vt[kBK][H];
    for (xl_i64 tile = blockIdx.x; tile < B * N * kKTiles; tile += gridDim.x) {
      const xl_i64 j0 = (tile % kKTiles) * kBK;
      const int n = static_cast<int>((tile / kKTiles) % N);
      const xl_i64 b = tile / kKTiles / N;
      __syncthreads();
      xl_attn_stage_keys<K, N, H, kBK, BLOCK>(&kt[0][0], &vt[0][0], b, n, j0,
                                              k, v);
      double sdk[kSlotsK], sdv[kSlotsK]; // thread's (c, h)
      for (int x = 0; x < kSlotsK; ++x)
        sdk[x] = sdv[x] = 0.0;
      for (xl_i64 t0 = 0; t0 < T; t0 += BQ) {
        __syncthreads();
        xl_attn_grad_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, BQ, BLOCK, true>(
            g, b, n, t0, q, segEmb, rw, rr, rs, permMask, rows, dout,
            workspace, kStat);
        __syncthreads();
        for (int e = threadIdx.x; e < BQ * kBK; e += BLOCK) {
          const int r = e / kBK, c = e % kBK;
          const XlAttnGradEntry x = entry(r, b, n, t0 + r, j0 + c, kt[c], vt[c]);
          ec[r][c] = x.c;
          ea[r][c] = x.a;
        }
        __syncthreads();
        int slot = 0;
        for (int e = threadIdx.x; e < kBK * H; e += BLOCK, ++slot) {
          const int c = e / H, h = e % H;
          double ak = sdk[slot], av = sdv[slot];
          for (int r = 0; r < BQ; ++r) {
            ak += ec[r][c] * static_cast<double>(g.qw[r][h]);
            av += ea[r][c] * static_cast<double>(g.go[r][h]);
          }
          sdk[slot] = ak;
          sdv[slot] = av;
        }
      }
      int slot = 0;
      for (int e = threadIdx.x; e < kBK * H; e += BLOCK, ++slot) {
        const int c = e / H, h = e % H;
        const xl_i64 j = j0 + c;
        if (j < K) {
          dk[((b * K + j) * N + n) * H + h] = static_cast<float>(sdk[slot]);
          dv[((b * K + j) * N + n) * H + h] = static_cast<float>(sdv[slot]);
        }
      }
    }
  }

  /// PHASE 3: dk_r, by tiles of k_r rows.
  XL_DEVICE void kRGradients() {
    // Tile of 32 k_r rows of (p, n); entry (row, rr) is the key
    // j = r0 + rr - S + i that query row reads at k_r row r0 + rr.
    constexpr xl_i64 kPerCopy = B / P;
    constexpr xl_i64 kRTiles = (R + kBK - 1) / kBK;
    for (xl_i64 tile = blockIdx.x; tile < P * N * kRTiles; tile += gridDim.x) {
      const xl_i64 r0 = (tile % kRTiles) * kBK;
      const int n = static_cast<int>((tile / kRTiles) % N);
      const xl_i64 p = tile / kRTiles / N;
      double acc[kSlotsK]; // thread's (rr, h)
      for (int x = 0; x < kSlotsK; ++x)
        acc[x] = 0.0;
      for (xl_i64 bb = 0; bb < kPerCopy; ++bb) {
        const xl_i64 b = p * kPerCopy + bb;
        for (xl_i64 t0 = 0; t0 < T; t0 += BQ) {
          __syncthreads();
          xl_attn_grad_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, BQ, BLOCK, true>(
              g, b, n, t0, q, segEmb, rw, rr, rs, permMask, rows, dout,
              workspace, kStat);
          __syncthreads();
          for (int e = threadIdx.x; e < BQ * kBK; e += BLOCK) {
            const int r = e / kBK, c = e % kBK;
            const xl_i64 i = g.pos[r], j = r0 + c - S + i;
            double cv = 0.0;
            if (i >= 0 && j >= 0 && j < K && r0 + c < R) {
              const auto *kj = k + ((b * K + j) * N + n) * H;
              const auto *vj = v + ((b * K + j) * N + n) * H;
              // k and v straight from global memory (their storage type,
              // not the staged floats entry() takes).
              cv = xl_attn_grad_entry<B, T, N, H, K, S, P, R, HAS_ROWS, SCALE_BITS,
                                      DROP_BITS, BQ, MASK_BITS>(g, r, b, n, t0 + r, j, kj,
                                                                vj, kR, segId, permMask, key)
                       .c;
            }
            ec[r][c] = cv;
          }
          __syncthreads();
          int slot = 0;
          for (int e = threadIdx.x; e < kBK * H; e += BLOCK, ++slot) {
            const int c = e / H, h = e % H;
            double a = acc[slot];
            for (int r = 0; r < BQ; ++r)
              a += ec[r][c] * static_cast<double>(g.qr[r][h]);
            acc[slot] = a;
          }
        }
      }
      int slot = 0;
      for (int e = threadIdx.x; e < kBK * H; e += BLOCK, ++slot) {
        const int c = e / H, h = e % H;
        if (r0 + c < R)
          dkR[((p * R + r0 + c) * N + n) * H + h] = static_cast<float>(acc[slot]);
      }
    }
  }

  /// PHASE 4: the three biases and seg_embed from the row statistics.
  XL_DEVICE void biasColumns() {
    xl_attn_bias_columns<B, T, N, H>(q, segEmb, rs, workspace,
                                     static_cast<const float *>(nullptr),
                                     static_cast<const float *>(nullptr),
                                     static_cast<const float *>(nullptr),
                                     static_cast<const float *>(nullptr), dsegEmb,
                                     drw, drr, drs, BLOCK);
  }
};

/// The fused backward of xl_rel_attention_fused: rel_attention_grad's
/// operands (docs/Plan.md; no saved forward state), five launches of the
/// same template (PHASE 0..4), same arguments, no atomics; every value is
/// summed by one thread (or one warp tree) in a fixed order:
///   PHASE 0  query tiles (grid-stride over (b, n, tile)): each row's
///            softmax statistics, the forward's lse and D = Σ_j P_j·
///            factor_j·(dout·v_j), by an online pass over the keys, to the
///            workspace;
///   PHASE 1  query tiles: recompute each row's probabilities from lse,
///            write dq, and the row's stats to the workspace: c0, c1 (Σ c
///            over keys of the same / another segment), Σ c·k [H],
///            Σ c·k_r [H];
///   PHASE 2  key tiles of 32 (grid-stride over (b, n, tile)): dv_j = Σ_t
///            A_tj dout_t and dk_j = Σ_t c_tj (q + r_w_bias)_t, query rows in
///            order;
///   PHASE 3  k_r rows (grid-stride over (p, n, r)): dk_r[p, r] = Σ over the
///            batch rows of copy p and their query rows of c·(q + r_r_bias)
///            at the key j = r - S + i each row reads there;
///   PHASE 4  the N·H bias columns: d r_w_bias, d r_r_bias, d r_s_bias,
///            d seg_embed from the row stats, rows in order.
/// Arguments: dout, q, k, v, k_r, seg_embed, r_w_bias, r_r_bias, r_s_bias,
/// seg_id, perm_rank (or perm_bits: MASK_BITS), rows, then dq, dk, dv, dk_r, dseg_embed, dr_w_bias,
/// dr_r_bias, dr_s_bias, workspace, status, site, rnd. Workspace:
/// 8 * B*T*N * (2*H + 4) bytes (row statistics; nothing of size S×K). Static
/// shared memory: the staged rows (about 12·BQ·H + 48·BQ bytes), the
/// entries of a tile (17·BQ·32 bytes) and, in PHASES 0-2, a key tile
/// (2·32·H floats): about 37 KiB for BQ 16, H 64 (ptxas: 38016 bytes in
/// PHASE 0; static: the emitter picks BQ
/// so that it stays within 48 KiB, or refuses the head size). Each thread keeps its output
/// elements' sums in registers (BQ·H/BLOCK or 32·H/BLOCK of them).
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BQ, int PHASE, int BLOCK, int MASK_BITS = 0, typename T_dout, typename T_q, typename T_k, typename T_v, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_dq, typename T_dk, typename T_dv, typename T_dkR, typename T_dsegEmb, typename T_drw, typename T_drr, typename T_drs>
XL_DEVICE void xl_rel_attention_fused_grad(
    const T_dout *XL_RESTRICT dout, const T_q *XL_RESTRICT q,
    const T_k *XL_RESTRICT k, const T_v *XL_RESTRICT v,
    const T_kR *XL_RESTRICT kR, const T_segEmb *XL_RESTRICT segEmb,
    const T_rw *XL_RESTRICT rw, const T_rr *XL_RESTRICT rr,
    const T_rs *XL_RESTRICT rs, const xl_i64 *XL_RESTRICT segId,
    const xl_i64 *XL_RESTRICT permMask, const xl_i64 *XL_RESTRICT rows,
    T_dq *XL_RESTRICT dq, T_dk *XL_RESTRICT dk, T_dv *XL_RESTRICT dv,
    T_dkR *XL_RESTRICT dkR, T_dsegEmb *XL_RESTRICT dsegEmb,
    T_drw *XL_RESTRICT drw, T_drr *XL_RESTRICT drr, T_drs *XL_RESTRICT drs,
    double *XL_RESTRICT workspace, int *status, xl_i64 site,
    XlStepRandom rnd) {
  static_assert(PHASE >= 0 && PHASE <= 4, "PHASE is 0..4");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: multiple of 32");
  (void)status;
  using Grad = XlAttnFusedGrad<B, T, N, H, K, S, P, R, HAS_ROWS, SCALE_BITS, DROP_BITS, BQ,
                               BLOCK, MASK_BITS, T_dout, T_q, T_k, T_v, T_kR, T_segEmb, T_rw,
                               T_rr, T_rs, T_dq, T_dk, T_dv, T_dkR, T_dsegEmb, T_drw, T_drr,
                               T_drs>;
  XL_SHARED XlAttnGradRows<BQ, H> g;
  XL_SHARED double ec[BQ][Grad::kBK];
  XL_SHARED double ea[BQ][Grad::kBK];
  XL_SHARED unsigned char ed[BQ][Grad::kBK];
  Grad grad{dout, q,   k,   v,   kR,      segEmb, rw,  rr,  rs,  segId,     permMask,
            rows, dq,  dk,  dv,  dkR,     dsegEmb, drw, drr, drs, workspace,
            xl_drop_key(rnd, site, T * N * K), g, ec, ea, ed};
  if constexpr (PHASE == 0)
    grad.rowStatistics();
  else if constexpr (PHASE == 1)
    grad.queryGradients();
  else if constexpr (PHASE == 2)
    grad.keyGradients();
  else if constexpr (PHASE == 3)
    grad.kRGradients();
  else
    grad.biasColumns();
}

#endif // XLNETC_K_ATTENTION_FUSED_CUH
