//===- xlnetc_k_attention_tc.cuh - Fused attention on tensor cores -*- C++ -*-===//
//
// The fused relative attention on tensor cores (issue 8 §1, design cuda.md
// §5), forward and backward: the same operands, masks, dropatt and results
// as xl_rel_attention_fused / xl_rel_attention_fused_grad
// (xlnetc_k_attention_fused.cuh, whose file comment defines the compact
// masks), with every matrix product a bf16 mma.sync.m16n8k16 with f32
// accumulators, fed by ldmatrix from shared memory. The emitter picks them
// for --precision bf16 (docs/Devices.md "The fused attention on tensor
// cores").
//
// The score tile. A block of WARPS warps (4, 2 or 1: the template argument
// after MASK_BITS, chosen per GPU by the emitter, XlAttnTc) takes 16·WARPS
// query rows of one (b, n), 16 per warp; keys go by in tiles of BK = 64
// (for every WARPS), staged in shared memory as bf16
// (cp.async with zero fill from bf16 storage, converting loads otherwise)
// with their segment ids and ranks, in a pipeline: a tile's v loads while
// its scores are computed, the next tile's k while the rest of the tile
// runs (the k_r band chunks go by plain 16-byte loads, which leave those
// cp.async groups in flight). A warp's 16 × 64 scores
// (xl_attn_tc_scores):
//   ac   (q + r_w)·kᵀ: (H/16)·8 mma;
//   bd   XLNet's rel_shift, row i reads k_r[S - i + j]: the warp's rows need
//        k_r rows S - imax + j0 .. S - imin + j0 + 63, a band of
//        imax - imin + 64 rows. The warp stages it in chunks of CW = 80
//        rows, multiplies (q + r_r)·chunkᵀ (16 × 80), writes the product to
//        shared memory and reads it back skewed: element (r, j) is column
//        S - i_r + j - chunk start. For the content stream (16 consecutive
//        positions) that is one chunk, 1.25× the ac work; the query
//        stream's gathered rows take as many chunks as their positions
//        spread (correct for any positions);
//   s    (ac + bd + ef)·scale - 1e30·masked in f32 (ef: the row's two
//        segment dots), -inf where j is not a key.
// A product's value for one (i, j) does not depend on the tiling (the mma
// sums each element's k in the same order), so every phase below computes
// bitwise the same scores.
//
// Forward (xl_rel_attention_tc): per key tile, scores, the online softmax
// on the fragments (a row lives in a quad of lanes: shuffles 1 and 2, a
// fixed order), dropatt, then P (bf16, straight from the accumulator
// fragments) · v with v through ldmatrix.trans. out = o / l,
// lse = m + log l.
//
// Backward (xl_rel_attention_tc_grad, PHASE 0..4; PHASE 4, the bias
// columns, is the f32 kernel's own code, xl_attn_bias_columns). With
// P = exp(s - lse) (the uniform 1/K in a fully masked row), f the dropatt
// factor, dpf = (dout·v_j)·f, D = Σ_j P·dpf and c = P·(dpf - D)·scale (0
// where masked):
//   PHASE 0  query tiles: lse and D by an online pass (dout·vᵀ on tensor
//            cores) to the workspace;
//   PHASE 1  query tiles: dq = c·k + (c skewed into the band)·k_r +
//            c0·seg_embed[0] + c1·seg_embed[1], and the row statistics (c0,
//            c1, Σ c·k, Σ c·k_r) the bias columns read;
//   PHASE 2  key tiles of BN = 16·WARPS keys (grid-stride over (b, n, key
//            tile)): the block's warps compute P·f and c for a query tile,
//            store them as bf16 in shared memory, then each warp takes 16
//            keys: dv += (P·f)ᵀ·dout and dk += cᵀ·(q + r_w), query rows in
//            order, 16 at a time;
//   PHASE 3  k_r tiles of BN rows (grid-stride over (p, n, tile)): for the
//            batch rows of copy p and their query tiles, each warp
//            recomputes c at the key j = rr - S + i that row i reads at
//            k_r row rr — bd straight from (q + r_r)·k_r tileᵀ, ac and
//            dout·vᵀ over the key window through the same skew — and each
//            warp takes 16 k_r rows: dk_r += cᵀ·(q + r_r);
//   PHASE 4  the N·H bias columns (d r_w_bias, d r_r_bias, d r_s_bias,
//            d seg_embed) from the row statistics, one thread per column
//            (any block size; launched with 128 threads and no dynamic
//            shared memory).
// Arguments: the f32 kernel's, with seven more inputs after `rows`:
// dk_init, dv_init, dk_r_init, dseg_embed_init, dr_w_bias_init,
// dr_r_bias_init, dr_s_bias_init — null, or what the matching gradient is
// added to (the other stream's gradients of what the streams share: the
// emitter's add-into fusion). The workspace is the f32 kernel's row statistics ([lse, D, c0, c1,
// Σ c·k (H), Σ c·k_r (H)] in double per row): nothing of size S×K. No
// atomics; every sum in a fixed order; results do not depend on gridDim.
//
// Precision (the bf16 contract of docs/Devices.md): q + r_w, q + r_r, P·f
// and c are rounded to bf16 for the products; k, v, k_r and dout are read
// as bf16; every sum is f32 (tensor-core accumulators, softmax statistics,
// ef, c0/c1).
//
// Requirements: H a multiple of 16, at most 128. Block: 32·WARPS threads
// (PHASE 4: any). Dynamic shared memory: XlAttnTcSmem<H, WARPS>::kBytes
// (forward) and ::kGradBytes (backward), mirrored by
// target/cuda/AttentionTc.h; over 48 KiB at H 64, which the CUDA device
// opts into per launch. Results are bitwise the same for every WARPS.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ATTENTION_TC_CUH
#define XLNETC_K_ATTENTION_TC_CUH

#include "xlnetc_k_attention_fused.cuh"

/// Tile sizes of the tensor-core attention for a block of WARPS warps: 4
/// (64 query rows per tile), 2 or 1. The emitter picks the most warps whose
/// shared memory fits the GPU's block (target/cuda/AttentionTc.h:
/// attnTcWarps; 4 on sm_80 and sm_90, 2 on the 99-KiB parts at H 64).
/// WARPS changes no result: every value's sums run in the same order
/// whatever it is (the query-tile passes walk keys in tiles of kBK = 64
/// for every WARPS; PHASE 2 and 3 sum over the query rows 16 at a time).
template <int WARPS> struct XlAttnTc {
  static_assert(WARPS == 1 || WARPS == 2 || WARPS == 4, "1, 2 or 4 warps");
  static constexpr int kWarps = WARPS;
  static constexpr int kBlock = 32 * kWarps;
  static constexpr int kBQ = 16 * kWarps; ///< query rows per tile
  /// Keys per tile of the query-tile passes (forward, PHASE 0, 1): the
  /// online softmax's step, so the same for every WARPS.
  static constexpr int kBK = 64;
  /// Keys (PHASE 2) or k_r rows (PHASE 3) per tile: 16 per warp.
  static constexpr int kBN = 16 * kWarps;
  /// Rows of a band (or key window) chunk for tiles of kBK keys: a
  /// content-stream warp's band (kBK + 15 rows) in one chunk. Tiles of kBN
  /// keys take chunks of kBN + 16 rows in the same buffer.
  static constexpr int kCW = kBK + 16;
  static constexpr int kCWP = kCW + 4;    ///< row stride of a chunk's f32 product
  static constexpr int kCWB = kCW + 8;    ///< row stride of c skewed into a chunk
  static constexpr int kLDT = kBK + 8;    ///< row stride of a [BQ][BK] bf16 tile
};

/// A query row of the current tile, in shared memory.
struct XlAttnTcRow {
  xl_i64 pos;  ///< position i (-1: padding or past T)
  xl_i64 rkey; ///< its permutation mask's row key (xl_attn_row_key)
  xl_i64 rseg; ///< its segment id
  float ef[2]; ///< (q + r_s_bias)·seg_embed[0 / 1]
  float lse;   ///< the backward: the forward's log-sum-exp
  float dd;    ///< the backward: D = Σ_j P·dpf
};

/// The shared-memory geometry for head size H and WARPS warps (a struct of
/// constants: NVRTC compiles no unannotated function). Layout, in order: the
/// k and v tiles ([BK][LD] bf16 each; PHASE 2 fills BN rows of them, PHASE 3
/// keeps its k_r tile in the first), the rows (XlAttnTcRow[BQ]), the keys'
/// segment ids and ranks (i64[BK] each), in the backward the P·f and c
/// tiles ([BQ][LDT] bf16 each), then one region per warp: its biased
/// queries (two [16][LD] bf16 tiles; the backward also dout), the chunk
/// buffer (a [CW][LD] bf16 chunk), its product ([16][CWP] f32) and, in the
/// backward, c skewed into a chunk ([16][CWB] bf16). Every piece starts
/// 16-byte aligned for any H and WARPS.
template <int H, int WARPS> struct XlAttnTcSmem {
  using C = XlAttnTc<WARPS>;
  /// Row stride (elements) of a bf16 tile with H columns: 8 more than H, so
  /// rows are 16-byte aligned and ldmatrix's eight rows hit different banks.
  static constexpr int kLD = H + 8;
  static constexpr int kChunk = C::kCW * kLD * 2;
  static constexpr int kProd = 16 * C::kCWP * 4;
  static constexpr int kKeyTiles = 2 * C::kBK * kLD * 2;
  static constexpr int kRowsAt = kKeyTiles;
  static constexpr int kKeysAt =
      kRowsAt + C::kBQ * static_cast<int>(sizeof(XlAttnTcRow));
  static constexpr int kTilesAt = kKeysAt + C::kBK * 16;
  static constexpr int kTiles = 2 * C::kBQ * C::kLDT * 2;
  static constexpr int kWarpBytes = 2 * 16 * kLD * 2 + kChunk + kProd;
  static constexpr int kGradWarpBytes =
      3 * 16 * kLD * 2 + kChunk + kProd + 16 * C::kCWB * 2;
  /// The forward's dynamic shared memory.
  static constexpr int kBytes = kTilesAt + C::kWarps * kWarpBytes;
  /// The backward's (every phase).
  static constexpr int kGradBytes = kTilesAt + kTiles + C::kWarps * kGradWarpBytes;
};

template <class A, class B> struct XlSameType {
  static constexpr bool value = false;
};
template <class A> struct XlSameType<A, A> {
  static constexpr bool value = true;
};

/// Pointers into the dynamic shared memory (XlAttnTcSmem's layout) for this
/// thread's warp.
template <int H, bool GRAD, int WARPS> struct XlAttnTcShared {
  using C = XlAttnTc<WARPS>;
  using G = XlAttnTcSmem<H, WARPS>;
  /// Bytes of one warp's region.
  static constexpr int kRegion = GRAD ? G::kGradWarpBytes : G::kWarpBytes;
  xl_bf16 *kt, *vt;   ///< [BK][LD]
  XlAttnTcRow *rows;  ///< [BQ]
  xl_i64 *kseg, *krank; ///< [BK]
  xl_bf16 *at, *ct;   ///< [BQ][LDT] (backward)
  unsigned char *regions; ///< the warps' regions
  xl_bf16 *qw, *qr, *go; ///< this warp's [16][LD] tiles (go: backward)
  xl_bf16 *chunk;     ///< [CW][LD]
  float *prod;        ///< [16][CWP]
  xl_bf16 *cb;        ///< [16][CWB] (backward)

  XL_DEVICE explicit XlAttnTcShared(unsigned char *smem, int warp) {
    kt = reinterpret_cast<xl_bf16 *>(smem);
    vt = kt + C::kBK * G::kLD;
    rows = reinterpret_cast<XlAttnTcRow *>(smem + G::kRowsAt);
    kseg = reinterpret_cast<xl_i64 *>(smem + G::kKeysAt);
    krank = kseg + C::kBK;
    at = reinterpret_cast<xl_bf16 *>(smem + G::kTilesAt);
    ct = at + C::kBQ * C::kLDT;
    regions = smem + G::kTilesAt + (GRAD ? G::kTiles : 0);
    qw = region(warp);
    qr = qw + 16 * G::kLD;
    go = qr + 16 * G::kLD;
    chunk = (GRAD ? go : qr) + 16 * G::kLD;
    prod = reinterpret_cast<float *>(reinterpret_cast<unsigned char *>(chunk) +
                                     G::kChunk);
    cb = reinterpret_cast<xl_bf16 *>(prod + 16 * C::kCWP);
  }
  /// Warp w's biased queries (q + r_w; q + r_r follows, then dout).
  XL_DEVICE xl_bf16 *region(int w) const {
    return reinterpret_cast<xl_bf16 *>(regions + w * kRegion);
  }
};

/// Stages `nrows` rows of H elements into dst ([nrows][LD] bf16) by
/// `nthreads` threads (this one is `tid`): row r comes from src + rowAt(r),
/// or is zeros where rowAt(r) < 0. bf16 storage goes by cp.async (16 bytes
/// at a time, zero fill; the caller commits and waits) when ASYNC, else by
/// plain 16-byte loads and stores (done when this returns: they join no
/// cp.async group, so the groups in flight — the next tile's keys — stay in
/// flight); other storage is converted on the way.
template <int H, int LD, bool ASYNC = true, typename T, typename RowAt>
XL_DEVICE void xl_attn_tc_stage(xl_bf16 *dst, int nrows, const T *src,
                                RowAt rowAt, int tid, int nthreads) {
  constexpr int kPieces = H / 8; // 16 bytes of bf16
  for (int e = tid; e < nrows * kPieces; e += nthreads) {
    const int r = e / kPieces, c = (e % kPieces) * 8;
    const xl_i64 at = rowAt(r);
    xl_bf16 *d = dst + r * LD + c;
    if constexpr (XlSameType<T, xl_bf16>::value && ASYNC) {
      xl_cp_async_16_zfill(d, at >= 0 ? src + at + c : src, at >= 0 ? 16 : 0);
    } else if constexpr (XlSameType<T, xl_bf16>::value) {
      // Eight bf16 as one uint4: the emulated device checks that both
      // addresses are 16-byte aligned, as the hardware requires.
      uint4 v;
      v.x = v.y = v.z = v.w = 0u;
      if (at >= 0)
        v = *reinterpret_cast<const uint4 *>(src + at + c);
      *reinterpret_cast<uint4 *>(d) = v;
    } else {
      for (int x = 0; x < 8; ++x)
        d[x] = xl_float2bf16(at >= 0 ? static_cast<float>(src[at + c + x])
                                     : 0.0f);
    }
  }
}

/// Completes the cp.async copies this thread issued (a no-op after
/// converting loads).
XL_DEVICE void xl_attn_tc_staged() {
  xl_cp_async_commit();
  xl_cp_async_wait_all();
}

/// The B fragments (two n-tiles, nt and nt + 1) of a k-step: B_TRANS
/// false — B is 16 columns (k) at kk·16.. of the NT·8 rows of `bt` (Bᵀ
/// row-major, stride LDB): ldmatrix; true — B is 16 rows (k) at kk·16.. of
/// `b` (row-major, NT·8 columns): ldmatrix.trans.
template <int LDB, bool B_TRANS>
XL_DEVICE void xl_attn_tc_load_b(u32 bf[4], const xl_bf16 *b, int kk, int nt, int lane) {
  const int mi = lane >> 3, mr = lane & 7;
  if constexpr (B_TRANS)
    xl_ldmatrix_x4_trans(bf, b + (kk * 16 + (mi & 1) * 8 + mr) * LDB + (nt + (mi >> 1)) * 8);
  else
    xl_ldmatrix_x4(bf, b + ((nt + (mi >> 1)) * 8 + mr) * LDB + kk * 16 + (mi & 1) * 8);
}

/// acc[NT][4] += A · op(B) by one warp: A = 16 rows of `a` (KD columns,
/// stride LDA), op(B) as xl_attn_tc_load_b reads it; bf16 in shared memory.
template <int KD, int LDA, int LDB, int NT, bool B_TRANS>
XL_DEVICE void xl_attn_tc_mma(float (*acc)[4], const xl_bf16 *a, const xl_bf16 *b,
                              int lane) {
  static_assert(NT % 2 == 0 && KD % 16 == 0, "B goes two n-tiles at a time");
  const int mi = lane >> 3, mr = lane & 7;
  // The k loop stays rolled: unrolled, ptxas hoists every fragment load
  // ahead and runs out of registers.
#pragma unroll 1
  for (int kk = 0; kk < KD / 16; ++kk) {
    u32 af[4];
    xl_ldmatrix_x4(af, a + (mr + (mi & 1) * 8) * LDA + kk * 16 + (mi >> 1) * 8);
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2) {
      u32 bf[4];
      xl_attn_tc_load_b<LDB, B_TRANS>(bf, b, kk, nt, lane);
      xl_mma_m16n8k16_bf16(acc[nt], af, bf, acc[nt]);
      xl_mma_m16n8k16_bf16(acc[nt + 1], af, bf + 2, acc[nt + 1]);
    }
  }
}

/// acc += A · Bᵀ, B given by its rows `bt` (keys, k_r rows).
template <int KD, int LDA, int LDB, int NT>
XL_DEVICE void xl_attn_tc_mma_abt(float (*acc)[4], const xl_bf16 *a, const xl_bf16 *bt,
                                  int lane) {
  xl_attn_tc_mma<KD, LDA, LDB, NT, false>(acc, a, bt, lane);
}

/// acc += A · B, B row-major (k rows).
template <int KD, int LDA, int LDB, int NT>
XL_DEVICE void xl_attn_tc_mma_ab(float (*acc)[4], const xl_bf16 *a, const xl_bf16 *b,
                                 int lane) {
  xl_attn_tc_mma<KD, LDA, LDB, NT, true>(acc, a, b, lane);
}

/// acc[NT][4] += A · B by one warp, A given as f32 accumulator fragments
/// (16 × KD: `s[KD/8][4]`, rounded to bf16 here) and B = KD rows of `b`
/// (NT·8 columns, stride LDB, bf16 in shared memory).
template <int KD, int LDB, int NT>
XL_DEVICE void xl_attn_tc_mma_fb(float (*acc)[4], const float (*s)[4],
                                 const xl_bf16 *b, int lane) {
#pragma unroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    const u32 af[4] = {xl_pack_bf16x2(s[2 * kk][0], s[2 * kk][1]),
                       xl_pack_bf16x2(s[2 * kk][2], s[2 * kk][3]),
                       xl_pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                       xl_pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2) {
      u32 bf[4];
      xl_attn_tc_load_b<LDB, true>(bf, b, kk, nt, lane);
      xl_mma_m16n8k16_bf16(acc[nt], af, bf, acc[nt]);
      xl_mma_m16n8k16_bf16(acc[nt + 1], af, bf + 2, acc[nt + 1]);
    }
  }
}

/// acc[H/8][4] += Mᵀ · X by warp `w`: M = the block's [BQ][LDT] bf16 tile
/// (query rows × its BN columns), of which the warp takes columns
/// 16w..16w+15; X = the query rows' [16][LD] tiles of the warps (`xOf(kk)`
/// is warp kk's), the k dimension running over the BQ query rows in order,
/// 16 at a time.
template <int WARPS, int H, int LD, typename XOf>
XL_DEVICE void xl_attn_tc_mma_tile_t(float (*acc)[4], const xl_bf16 *m,
                                     XOf xOf, int w, int lane) {
  constexpr int LDT = XlAttnTc<WARPS>::kLDT;
  const int mi = lane >> 3, mr = lane & 7;
#pragma unroll 1
  for (int kk = 0; kk < WARPS; ++kk) {
    u32 af[4];
    xl_ldmatrix_x4_trans(af, m + (kk * 16 + (mi >> 1) * 8 + mr) * LDT + w * 16 +
                                 (mi & 1) * 8);
    const xl_bf16 *x = xOf(kk);
#pragma unroll
    for (int nt = 0; nt < H / 8; nt += 2) {
      u32 bf[4];
      xl_attn_tc_load_b<LD, true>(bf, x, 0, nt, lane);
      xl_mma_m16n8k16_bf16(acc[nt], af, bf, acc[nt]);
      xl_mma_m16n8k16_bf16(acc[nt + 1], af, bf + 2, acc[nt + 1]);
    }
  }
}

/// Quad reductions: the four lanes 4g..4g+3 that hold one accumulator row.
XL_DEVICE float xl_attn_tc_quad_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
  return fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
}
XL_DEVICE float xl_attn_tc_quad_sum(float v) {
  v += __shfl_xor_sync(0xffffffffu, v, 1);
  return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

/// The online softmax's step for a tile of scores s[KT][4] (rows g and g +
/// 8 of the lane): the running maxima mrow become max(mrow, the tile's row
/// maxima, reduced over the row's quad), alpha the factor that rescales
/// what was summed against the old maxima (0 when there was none).
template <int KT>
XL_DEVICE void xl_attn_tc_online_max(const float (*s)[4], float mrow[2], float alpha[2]) {
  const float kNegInf = -__uint_as_float(0x7f800000u);
  float tileMax[2] = {kNegInf, kNegInf};
#pragma unroll
  for (int x = 0; x < KT; ++x)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      tileMax[e >> 1] = fmaxf(tileMax[e >> 1], s[x][e]);
  for (int hr = 0; hr < 2; ++hr) {
    const float mNew = fmaxf(mrow[hr], xl_attn_tc_quad_max(tileMax[hr]));
    alpha[hr] = mrow[hr] == kNegInf ? 0.0f : expf(mrow[hr] - mNew);
    mrow[hr] = mNew;
  }
}

template <int NT> XL_DEVICE void xl_attn_tc_zero(float (*acc)[4]) {
  for (int x = 0; x < NT; ++x)
    acc[x][0] = acc[x][1] = acc[x][2] = acc[x][3] = 0.0f;
}

/// The compact masks (xl_attn_compact_mask) at row `row` and key j, with
/// the key's segment id and rank (row 1 of perm_rank) given.
template <xl_i64 K, xl_i64 S, int HAS_ROWS, int MASK_BITS>
XL_DEVICE void xl_attn_tc_mask(const XlAttnTcRow &row, xl_i64 j, xl_i64 kseg,
                               xl_i64 krank, const xl_i64 *permMask,
                               bool &masked, bool &differ) {
  xl_attn_mask_rule<K, S, HAS_ROWS, MASK_BITS>(
      row.pos, j, row.rkey, row.rseg,
      [&](xl_i64, xl_i64 &seg, xl_i64 &rank) {
        seg = kseg;
        rank = krank;
      },
      permMask, masked, differ);
}

/// Stages the query tile t0 .. t0 + BQ of (b, n): the block fills the rows
/// (and, with STATS, each row's lse and D from the workspace), then each warp
/// its biased queries (and, with `dout`, its dout rows) as bf16. Ends with
/// a block barrier.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 S, int HAS_ROWS,
          int MASK_BITS, bool GRAD, int WARPS, typename T_q, typename T_segEmb,
          typename T_rw, typename T_rr, typename T_rs, typename T_dout>
XL_DEVICE void xl_attn_tc_stage_rows(
    const XlAttnTcShared<H, GRAD, WARPS> &sh, xl_i64 b, int n, xl_i64 t0,
    const T_q *q, const T_segEmb *segEmb, const T_rw *rw, const T_rr *rr,
    const T_rs *rs, const xl_i64 *segId, const xl_i64 *permMask,
    const xl_i64 *rows, const T_dout *dout, const double *stats,
    xl_i64 statStride, int *status) {
  using C = XlAttnTc<WARPS>;
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD;
  for (int r = threadIdx.x; r < C::kBQ; r += C::kBlock) {
    const xl_i64 t = t0 + r;
    const xl_i64 i =
        t < T ? xl_attn_position<T, S, HAS_ROWS>(rows, b, t, status,
                                                 status && n == 0)
              : -1;
    XlAttnTcRow &row = sh.rows[r];
    row.pos = i;
    row.rkey = i >= 0 ? xl_attn_row_key<S, MASK_BITS>(permMask, b, i) : 0;
    row.rseg = i >= 0 ? segId[b * S + i] : 0;
    float e0 = 0.0f, e1 = 0.0f;
    row.lse = row.dd = 0.0f;
    if (i >= 0) {
      const auto *qrow = q + ((b * T + t) * N + n) * H;
      for (int h = 0; h < H; ++h) {
        const float s = static_cast<float>(qrow[h]) +
                        static_cast<float>(rs[n * H + h]);
        e0 += s * static_cast<float>(segEmb[n * H + h]);
        e1 += s * static_cast<float>(segEmb[NH + n * H + h]);
      }
      if (stats) {
        const double *st = stats + ((b * T + t) * N + n) * statStride;
        row.lse = static_cast<float>(st[0]);
        row.dd = static_cast<float>(st[1]);
      }
    }
    row.ef[0] = e0;
    row.ef[1] = e1;
  }
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int e = lane; e < 16 * H; e += 32) {
    const int r = e / H, h = e % H;
    const xl_i64 t = t0 + warp * 16 + r;
    const xl_i64 at = ((b * T + t) * N + n) * H + h;
    const float qv = t < T ? static_cast<float>(q[at]) : 0.0f;
    sh.qw[r * LD + h] = xl_float2bf16(qv + static_cast<float>(rw[n * H + h]));
    sh.qr[r * LD + h] = xl_float2bf16(qv + static_cast<float>(rr[n * H + h]));
    if constexpr (GRAD)
      sh.go[r * LD + h] =
          xl_float2bf16(t < T ? static_cast<float>(dout[at]) : 0.0f);
  }
  __syncthreads();
}

/// Starts staging key tile j0 .. j0 + BK of (b, n) (BK: kBK or kBN): the k
/// rows (cp.async, a committed group of its own) and the keys' segment ids
/// and ranks (plain stores). The caller waits for the group and syncs the
/// block before reading them, and before that syncs so that nobody still
/// reads the last tile's.
template <xl_i64 K, xl_i64 S, int N, int H, int MASK_BITS, int BK, bool GRAD, int WARPS,
          typename T_k>
XL_DEVICE void xl_attn_tc_issue_k(const XlAttnTcShared<H, GRAD, WARPS> &sh, xl_i64 b,
                                  int n, xl_i64 j0, const T_k *k, const xl_i64 *segId,
                                  const xl_i64 *permMask) {
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD, kBlock = XlAttnTc<WARPS>::kBlock;
  constexpr xl_i64 MLEN = K - S;
  auto keyRow = [&](int c) -> xl_i64 {
    return j0 + c < K ? ((b * K + j0 + c) * N + n) * H : -1;
  };
  xl_attn_tc_stage<H, LD>(sh.kt, BK, k, keyRow, threadIdx.x, kBlock);
  xl_cp_async_commit();
  for (int c = threadIdx.x; c < BK; c += kBlock) {
    const xl_i64 jj = j0 + c - MLEN; // position of a non-memory key
    const bool real = j0 + c < K && jj >= 0;
    sh.kseg[c] = real ? segId[b * S + jj] : 0;
    sh.krank[c] = real && !MASK_BITS ? permMask[(b * 2 + 1) * S + jj] : 0;
  }
}

/// Starts staging the v rows of key tile j0 .. j0 + BK (a committed
/// cp.async group).
template <xl_i64 K, int N, int H, int BK, bool GRAD, int WARPS, typename T_v>
XL_DEVICE void xl_attn_tc_issue_v(const XlAttnTcShared<H, GRAD, WARPS> &sh, xl_i64 b,
                                  int n, xl_i64 j0, const T_v *v) {
  auto keyRow = [&](int c) -> xl_i64 {
    return j0 + c < K ? ((b * K + j0 + c) * N + n) * H : -1;
  };
  xl_attn_tc_stage<H, XlAttnTcSmem<H, WARPS>::kLD>(sh.vt, BK, v, keyRow, threadIdx.x,
                                                   XlAttnTc<WARPS>::kBlock);
  xl_cp_async_commit();
}

/// Waits for this thread's cp.async groups, then for the block's.
XL_DEVICE void xl_attn_tc_arrived() {
  xl_cp_async_wait_all();
  __syncthreads();
}

/// The span [imin, imax] of the positions of the warp's 16 rows (imax < 0:
/// none is real).
XL_DEVICE void xl_attn_tc_span(const XlAttnTcRow *rows, int warp, int lane,
                               int &imin, int &imax) {
  const xl_i64 ip = lane < 16 ? rows[warp * 16 + lane].pos : -1;
  imin = ip >= 0 ? static_cast<int>(ip) : 0x7fffffff;
  imax = ip >= 0 ? static_cast<int>(ip) : -1;
  for (int off = 16; off > 0; off >>= 1) {
    imin = min(imin, __shfl_xor_sync(0xffffffffu, imin, off));
    imax = max(imax, __shfl_xor_sync(0xffffffffu, imax, off));
  }
}

/// Stages band chunk c0 .. c0 + CW of k_r copy p, head n (rows at or past
/// `hi` or R are zeros) into the warp's chunk buffer. Ends with __syncwarp.
template <int CW, xl_i64 R, int N, int H, bool GRAD, int WARPS, typename T_kR>
XL_DEVICE void xl_attn_tc_stage_band(const XlAttnTcShared<H, GRAD, WARPS> &sh,
                                     xl_i64 p, int n, xl_i64 c0, xl_i64 hi,
                                     const T_kR *kR, int lane) {
  auto bandRow = [&](int x) -> xl_i64 {
    const xl_i64 row = c0 + x;
    return row < hi && row < R ? ((p * R + row) * N + n) * H : -1;
  };
  // Plain loads: the next tile's keys, in flight, are not waited for.
  xl_attn_tc_stage<H, XlAttnTcSmem<H, WARPS>::kLD, false>(sh.chunk, CW, kR, bandRow, lane,
                                                          32);
  __syncwarp();
}

/// The warp's product A · chunkᵀ (16 × CW; A = 16 rows of `a`, H columns)
/// into its f32 product buffer, two n-tiles at a time (so that few
/// accumulators are live). Ends with __syncwarp.
template <int CW, int H, bool GRAD, int WARPS>
XL_DEVICE void xl_attn_tc_chunk_product(const XlAttnTcShared<H, GRAD, WARPS> &sh,
                                        const xl_bf16 *a, int lane) {
  static_assert(CW % 16 == 0 && CW <= XlAttnTc<WARPS>::kCW, "two n-tiles at a time");
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD;
  const int g = lane >> 2, tq = lane & 3;
  __syncwarp(); // the previous product is read
#pragma unroll 1
  for (int nt = 0; nt < CW / 8; nt += 2) {
    float acc[2][4];
    xl_attn_tc_zero<2>(acc);
    xl_attn_tc_mma_abt<H, LD, LD, 2>(acc, a, sh.chunk + nt * 8 * LD, lane);
#pragma unroll
    for (int x = 0; x < 2; ++x)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        sh.prod[(g + (e >> 1) * 8) * XlAttnTc<WARPS>::kCWP + (nt + x) * 8 + 2 * tq +
                (e & 1)] = acc[x][e];
  }
  __syncwarp();
}

/// The warp's 16 × BK scores against the staged key tile j0 (file comment;
/// BK: kBK or kBN): s[x][e] is row g + 8·(e >> 1), key j0 + 8x + 2·tq +
/// (e & 1); -inf where that is not a key of a real row.
template <int BK, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, xl_i64 R, int HAS_ROWS,
          int MASK_BITS, bool GRAD, int WARPS, typename T_kR>
XL_DEVICE void xl_attn_tc_scores(float (*s)[4], const XlAttnTcShared<H, GRAD, WARPS> &sh,
                                 xl_i64 p, int n, xl_i64 j0, int imin, int imax,
                                 const T_kR *kR, const xl_i64 *permMask,
                                 float scale) {
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD, CW = BK + 16,
                CWP = XlAttnTc<WARPS>::kCWP, KT = BK / 8;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane >> 2, tq = lane & 3;
  const XlAttnTcRow *rowOf[2] = {&sh.rows[warp * 16 + g],
                                 &sh.rows[warp * 16 + g + 8]};
  // ac: (q + r_w) · k.
  xl_attn_tc_zero<KT>(s);
  xl_attn_tc_mma_abt<H, LD, LD, KT>(s, sh.qw, sh.kt, lane);
  // bd: (q + r_r) · k_r[S - i + j], through the band chunks.
  if (imax >= 0) {
    const xl_i64 lo = S - imax + j0, hi = S - imin + j0 + BK;
    for (xl_i64 c0 = lo; c0 < hi; c0 += CW) {
      __syncwarp(); // the previous chunk's product is read
      xl_attn_tc_stage_band<CW, R, N, H>(sh, p, n, c0, hi, kR, lane);
      xl_attn_tc_chunk_product<CW>(sh, sh.qr, lane);
      // The skew: element (row, key j) is column S - i + j - c0.
      #pragma unroll
      for (int x = 0; x < KT; ++x)
        #pragma unroll
        for (int e = 0; e < 4; ++e) {
          const xl_i64 i = rowOf[e >> 1]->pos;
          const xl_i64 col = S - i + j0 + x * 8 + 2 * tq + (e & 1) - c0;
          if (i >= 0 && col >= 0 && col < CW)
            s[x][e] += sh.prod[(g + (e >> 1) * 8) * CWP + col];
        }
    }
  }
  // Masks, ef, scale.
  const float kNegInf = -__uint_as_float(0x7f800000u);
  #pragma unroll
  for (int x = 0; x < KT; ++x)
    #pragma unroll
    for (int e = 0; e < 4; ++e) {
      const XlAttnTcRow &row = *rowOf[e >> 1];
      const int c = x * 8 + 2 * tq + (e & 1);
      const xl_i64 j = j0 + c;
      float sv = kNegInf; // not a key of this row
      if (row.pos >= 0 && j < K) {
        bool masked, differ;
        xl_attn_tc_mask<K, S, HAS_ROWS, MASK_BITS>(row, j, sh.kseg[c],
                                                   sh.krank[c], permMask,
                                                   masked, differ);
        sv = (s[x][e] + row.ef[differ ? 1 : 0]) * scale -
             (masked ? 1e30f : 0.0f);
      }
      s[x][e] = sv;
    }
}

//===----------------------------------------------------------------------===//
// Forward
//===----------------------------------------------------------------------===//

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int MASK_BITS, int WARPS, typename T_q, typename T_k, typename T_v,
          typename T_kR, typename T_segEmb, typename T_rw, typename T_rr,
          typename T_rs, typename T_out, typename T_lse>
XL_DEVICE void xl_rel_attention_tc(
    const T_q *XL_RESTRICT q, const T_k *XL_RESTRICT k,
    const T_v *XL_RESTRICT v, const T_kR *XL_RESTRICT kR,
    const T_segEmb *XL_RESTRICT segEmb, const T_rw *XL_RESTRICT rw,
    const T_rr *XL_RESTRICT rr, const T_rs *XL_RESTRICT rs,
    const xl_i64 *XL_RESTRICT segId, const xl_i64 *XL_RESTRICT permMask,
    const xl_i64 *XL_RESTRICT rows, T_out *XL_RESTRICT out,
    T_lse *XL_RESTRICT lse, int *status, xl_i64 site,
    XlStepRandom rnd) {
  using C = XlAttnTc<WARPS>;
  static_assert(H % 16 == 0 && H <= 128, "H: a multiple of 16, at most 128");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD;
  constexpr int BQ = C::kBQ, BK = C::kBK, HT = H / 8, KT = BK / 8;
  constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;
  const float scale = static_cast<float>(
      __longlong_as_double(static_cast<long long>(SCALE_BITS)));
  const float kNegInf = -__uint_as_float(0x7f800000u);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane >> 2, tq = lane & 3; // accumulator row, column pair
  // The dropatt key in shared memory, not in registers this kernel needs.
  XL_SHARED XlDropKey key;
  if (threadIdx.x == 0)
    key = xl_drop_key(rnd, site, T * N * K);
  __syncthreads();
  XL_DYN_SMEM(unsigned char, smem);
  const XlAttnTcShared<H, false, WARPS> sh(smem, warp);

  for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
    const xl_i64 t0 = (tile % kQTiles) * BQ;
    const int n = static_cast<int>((tile / kQTiles) % N);
    const xl_i64 b = tile / kQTiles / N;
    const xl_i64 p = b / (B / P);
    __syncthreads(); // the previous tile is done with shared memory
    xl_attn_tc_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, false>(
        sh, b, n, t0, q, segEmb, rw, rr, rs, segId, permMask, rows,
        static_cast<const float *>(nullptr), nullptr, 0, status);
    const xl_i64 tRow[2] = {t0 + warp * 16 + g, t0 + warp * 16 + g + 8};
    const bool real[2] = {sh.rows[warp * 16 + g].pos >= 0,
                          sh.rows[warp * 16 + g + 8].pos >= 0};
    int imin, imax;
    xl_attn_tc_span(sh.rows, warp, lane, imin, imax);
    float mrow[2] = {kNegInf, kNegInf}, lrow[2] = {0.0f, 0.0f};
    float o[HT][4];
    xl_attn_tc_zero<HT>(o);

    // The keys in a pipeline: v of a tile loads (cp.async) while its
    // scores are computed, k of the next tile while its P·v runs.
    xl_attn_tc_issue_k<K, S, N, H, MASK_BITS, BK>(sh, b, n, 0, k, segId, permMask);
    for (xl_i64 j0 = 0; j0 < K; j0 += BK) {
      xl_attn_tc_arrived(); // this tile's k; every warp is done with the last v
      xl_attn_tc_issue_v<K, N, H, BK>(sh, b, n, j0, v);
      float s[KT][4];
      xl_attn_tc_scores<BK, T, N, H, K, S, R, HAS_ROWS, MASK_BITS>(
          s, sh, p, n, j0, imin, imax, kR, permMask, scale);

      // The online softmax and dropatt.
      float alpha[2], tileSum[2] = {0.0f, 0.0f};
      xl_attn_tc_online_max<KT>(s, mrow, alpha);
      #pragma unroll
      for (int x = 0; x < KT; ++x)
        #pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int hr = e >> 1;
          const float pe = s[x][e] == kNegInf ? 0.0f : expf(s[x][e] - mrow[hr]);
          tileSum[hr] += pe;
          const xl_i64 j = j0 + x * 8 + 2 * tq + (e & 1);
          s[x][e] = pe == 0.0f
                        ? 0.0f
                        : pe * static_cast<float>(xl_attn_drop_factor<DROP_BITS>(
                                   key, static_cast<xl_u64>(
                                            ((b * T + tRow[hr]) * N + n) * K + j)));
        }
      for (int hr = 0; hr < 2; ++hr)
        lrow[hr] = lrow[hr] * alpha[hr] + xl_attn_tc_quad_sum(tileSum[hr]);
      for (int x = 0; x < HT; ++x) {
        o[x][0] *= alpha[0], o[x][1] *= alpha[0];
        o[x][2] *= alpha[1], o[x][3] *= alpha[1];
      }
      xl_attn_tc_arrived(); // this tile's v; every warp is done with k
      if (j0 + BK < K)
        xl_attn_tc_issue_k<K, S, N, H, MASK_BITS, BK>(sh, b, n, j0 + BK, k, segId, permMask);
      // o += P · v: P's accumulator fragments are the A fragments.
      xl_attn_tc_mma_fb<BK, LD, HT>(o, s, sh.vt, lane);
    }

    // out = o / l, lse = m + log(l); zeros for padding slots.
    for (int hr = 0; hr < 2; ++hr) {
      const xl_i64 t = tRow[hr];
      if (t >= T)
        continue;
      const float inv = real[hr] ? 1.0f / lrow[hr] : 0.0f;
      for (int x = 0; x < HT; ++x)
        for (int e = 0; e < 2; ++e)
          out[((b * T + t) * N + n) * H + x * 8 + 2 * tq + e] =
              real[hr] ? o[x][2 * hr + e] * inv : 0.0f;
      if (lse && tq == 0)
        lse[(b * T + t) * N + n] = real[hr] ? mrow[hr] + logf(lrow[hr]) : 0.0f;
    }
  }
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

/// The warp's dout·vᵀ (dp, the scores' fragments) against the staged v
/// rows of a key tile of BK keys.
template <int BK, int H, bool GRAD, int WARPS>
XL_DEVICE void xl_attn_tc_dout_v(float (*dp)[4], const XlAttnTcShared<H, GRAD, WARPS> &sh,
                                 int lane) {
  constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD, KT = BK / 8;
  xl_attn_tc_zero<KT>(dp);
  xl_attn_tc_mma_abt<H, LD, LD, KT>(dp, sh.go, sh.vt, lane);
}

/// From the scores s of a warp tile (key tile j0 of BK keys) and dout·vᵀ
/// (dp, same fragments): s becomes A = P·f and dp becomes c (file
/// comment), both 0 where there is no key. `cs[2][2]`, when given,
/// accumulates each row's c over keys of its own / another segment.
template <int BK, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int HAS_ROWS,
          int MASK_BITS, unsigned DROP_BITS, bool GRAD, int WARPS>
XL_DEVICE void xl_attn_tc_grad_entries(float (*s)[4], float (*dp)[4],
                                       const XlAttnTcShared<H, GRAD, WARPS> &sh,
                                       xl_i64 b, int n, xl_i64 t0, xl_i64 j0,
                                       const xl_i64 *permMask, const XlDropKey &key,
                                       float scale, float (*cs)[2]) {
  constexpr int KT = BK / 8;
  const float kNegInf = -__uint_as_float(0x7f800000u);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane >> 2, tq = lane & 3;
  #pragma unroll
  for (int x = 0; x < KT; ++x)
    #pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = warp * 16 + g + (e >> 1) * 8, c = x * 8 + 2 * tq + (e & 1);
      const XlAttnTcRow &row = sh.rows[r];
      const xl_i64 j = j0 + c;
      if (s[x][e] == kNegInf) {
        s[x][e] = dp[x][e] = 0.0f;
        continue;
      }
      const float prob = row.lse < -1e29f ? 1.0f / static_cast<float>(K)
                                          : expf(s[x][e] - row.lse);
      const float f = static_cast<float>(xl_attn_drop_factor<DROP_BITS>(
          key, static_cast<xl_u64>(((b * T + t0 + r) * N + n) * K + j)));
      bool masked, differ;
      xl_attn_tc_mask<K, S, HAS_ROWS, MASK_BITS>(row, j, sh.kseg[c], sh.krank[c],
                                                 permMask, masked, differ);
      const float cv = masked ? 0.0f : prob * (dp[x][e] * f - row.dd) * scale;
      s[x][e] = prob * f;
      dp[x][e] = cv;
      if (cs) {
        if (differ)
          cs[e >> 1][1] += cv;
        else
          cs[e >> 1][0] += cv;
      }
    }
}

/// The phases of xl_rel_attention_tc_grad (below), one member function each
/// (PHASE 0 and 1 share the query-tile pass), over the kernel's arguments,
/// this thread's place in its warp and the block's shared memory.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int PHASE, int MASK_BITS, int WARPS, typename T_dout, typename T_q,
          typename T_k, typename T_v, typename T_kR, typename T_segEmb,
          typename T_rw, typename T_rr, typename T_rs, typename T_dkInit,
          typename T_dvInit, typename T_dkRInit, typename T_dsegEmbInit,
          typename T_drwInit, typename T_drrInit, typename T_drsInit, typename T_dq,
          typename T_dk, typename T_dv, typename T_dkR, typename T_dsegEmb,
          typename T_drw, typename T_drr, typename T_drs>
struct XlAttnTcGrad {
  using C = XlAttnTc<WARPS>;
  static constexpr int LD = XlAttnTcSmem<H, WARPS>::kLD;
  // BK, CW: the query-tile passes' key tiles and chunks; BN, CWN: PHASE 2's
  // key tiles and PHASE 3's k_r tiles, and their chunks.
  static constexpr int BQ = C::kBQ, BK = C::kBK, CW = C::kCW, BN = C::kBN, CWN = BN + 16,
                       CWP = C::kCWP, CWB = C::kCWB, LDT = C::kLDT, HT = H / 8, KT = BK / 8,
                       KTN = BN / 8;
  static constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  static constexpr xl_i64 kStat = 2 * H + 4;
  static constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;

  // The kernel's arguments (xl_rel_attention_tc_grad).
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
  const T_dkInit *XL_RESTRICT dkInit;
  const T_dvInit *XL_RESTRICT dvInit;
  const T_dkRInit *XL_RESTRICT dkRInit;
  const T_dsegEmbInit *dsegEmbInit;
  const T_drwInit *drwInit;
  const T_drrInit *drrInit;
  const T_drsInit *drsInit;
  T_dq *XL_RESTRICT dq;
  T_dk *XL_RESTRICT dk;
  T_dv *XL_RESTRICT dv;
  T_dkR *XL_RESTRICT dkR;
  T_dsegEmb *XL_RESTRICT dsegEmb;
  T_drw *XL_RESTRICT drw;
  T_drr *XL_RESTRICT drr;
  T_drs *XL_RESTRICT drs;
  double *XL_RESTRICT workspace;
  const XlDropKey &key; // xl_drop_key(rnd, site, T * N * K), in shared memory
  float scale, kNegInf;
  // This thread: its lane and warp, the lane's row group g and quad tq.
  int lane, warp, g, tq;
  XlAttnTcShared<H, true, WARPS> sh;

  XL_DEVICE double *stats(xl_i64 b, xl_i64 t, int n) const {
    return workspace + ((b * T + t) * N + n) * kStat;
  }
  /// Stages query tile t0 of (b, n), with the statistics after PHASE 0.
  XL_DEVICE void stageRows(xl_i64 b, int n, xl_i64 t0) const {
    xl_attn_tc_stage_rows<B, T, N, H, S, HAS_ROWS, MASK_BITS, true>(
        sh, b, n, t0, q, segEmb, rw, rr, rs, segId, permMask, rows, dout,
        PHASE == 0 ? nullptr : workspace, kStat, nullptr);
  }

  /// PHASE 0 and 1: the query tiles (0: the row statistics; 1: dq and the
  /// per-row sums).
  XL_DEVICE void queryTiles() const {
    for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
      const xl_i64 t0 = (tile % kQTiles) * BQ;
      const int n = static_cast<int>((tile / kQTiles) % N);
      const xl_i64 b = tile / kQTiles / N;
      const xl_i64 p = b / (B / P);
      __syncthreads();
      stageRows(b, n, t0);
      const int rA = warp * 16 + g;
      const XlAttnTcRow *rowOf[2] = {&sh.rows[rA], &sh.rows[rA + 8]};
      int imin, imax;
      xl_attn_tc_span(sh.rows, warp, lane, imin, imax);
      // PHASE 0: the online statistics; PHASE 1: dq's pieces.
      float mrow[2] = {kNegInf, kNegInf}, lrow[2] = {0.0f, 0.0f},
            drow[2] = {0.0f, 0.0f};
      float cs[2][2] = {{0.0f, 0.0f}, {0.0f, 0.0f}};
      float dqk[HT][4], dqr[HT][4];
      xl_attn_tc_zero<HT>(dqk);
      xl_attn_tc_zero<HT>(dqr);
      // The keys in a pipeline, as in the forward: v loads while the
      // scores are computed; the next tile's k while the rest runs.
      xl_attn_tc_issue_k<K, S, N, H, MASK_BITS, BK>(sh, b, n, 0, k, segId, permMask);
      for (xl_i64 j0 = 0; j0 < K; j0 += BK) {
        xl_attn_tc_arrived(); // this tile's k; everyone is done with the last v
        xl_attn_tc_issue_v<K, N, H, BK>(sh, b, n, j0, v);
        float s[KT][4], dp[KT][4];
        xl_attn_tc_scores<BK, T, N, H, K, S, R, HAS_ROWS, MASK_BITS>(
            s, sh, p, n, j0, imin, imax, kR, permMask, scale);
        xl_attn_tc_arrived(); // this tile's v
        xl_attn_tc_dout_v<BK>(dp, sh, lane);
        auto nextKeys = [&] { // once every warp is done with this tile's k
          if (j0 + BK < K)
            xl_attn_tc_issue_k<K, S, N, H, MASK_BITS, BK>(sh, b, n, j0 + BK, k, segId,
                                                          permMask);
        };
        if constexpr (PHASE == 0) {
          nextKeys(); // k was last read by the scores, before the barrier
          float alpha[2], tileSum[2] = {0.0f, 0.0f}, tileDot[2] = {0.0f, 0.0f};
          xl_attn_tc_online_max<KT>(s, mrow, alpha);
          #pragma unroll
          for (int x = 0; x < KT; ++x)
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int hr = e >> 1;
              if (s[x][e] == kNegInf)
                continue;
              const float pe = expf(s[x][e] - mrow[hr]);
              const xl_i64 j = j0 + x * 8 + 2 * tq + (e & 1);
              const float f = static_cast<float>(xl_attn_drop_factor<DROP_BITS>(
                  key, static_cast<xl_u64>(((b * T + t0 + rA + hr * 8) * N + n) * K + j)));
              tileSum[hr] += pe;
              tileDot[hr] += pe * dp[x][e] * f;
            }
          for (int hr = 0; hr < 2; ++hr) {
            lrow[hr] = lrow[hr] * alpha[hr] + xl_attn_tc_quad_sum(tileSum[hr]);
            drow[hr] = drow[hr] * alpha[hr] + xl_attn_tc_quad_sum(tileDot[hr]);
          }
        } else {
          xl_attn_tc_grad_entries<BK, T, N, H, K, S, HAS_ROWS, MASK_BITS, DROP_BITS>(
              s, dp, sh, b, n, t0, j0, permMask, key, scale, cs);
          // dq += c · k (dp now holds c).
          xl_attn_tc_mma_fb<BK, LD, HT>(dqk, dp, sh.kt, lane);
          __syncthreads(); // every warp is done with this tile's k
          nextKeys();
          // dq += (c skewed into each band chunk) · chunk.
          if (imax >= 0) {
            const xl_i64 lo = S - imax + j0, hi = S - imin + j0 + BK;
            for (xl_i64 c0 = lo; c0 < hi; c0 += CW) {
              __syncwarp(); // the previous chunk is consumed
              for (int e = lane; e < 16 * CW; e += 32)
                sh.cb[(e / CW) * CWB + e % CW] = xl_float2bf16(0.0f);
              __syncwarp();
              #pragma unroll
              for (int x = 0; x < KT; ++x)
                #pragma unroll
                for (int e = 0; e < 4; ++e) {
                  const xl_i64 i = rowOf[e >> 1]->pos;
                  const xl_i64 col = S - i + j0 + x * 8 + 2 * tq + (e & 1) - c0;
                  if (i >= 0 && col >= 0 && col < CW)
                    sh.cb[(g + (e >> 1) * 8) * CWB + col] = xl_float2bf16(dp[x][e]);
                }
              xl_attn_tc_stage_band<CW, R, N, H>(sh, p, n, c0, hi, kR, lane);
              xl_attn_tc_mma_ab<CW, CWB, LD, HT>(dqr, sh.cb, sh.chunk, lane);
            }
          }
        }
      }
      // Results of the tile's rows.
      for (int hr = 0; hr < 2; ++hr) {
        const xl_i64 t = t0 + rA + hr * 8;
        const bool real = rowOf[hr]->pos >= 0;
        if constexpr (PHASE == 0) {
          if (t < T && tq == 0) {
            double *st = stats(b, t, n);
            const bool any = real && lrow[hr] > 0.0f;
            st[0] = any ? static_cast<double>(mrow[hr] + logf(lrow[hr])) : 0.0;
            st[1] = any ? static_cast<double>(drow[hr] / lrow[hr]) : 0.0;
          }
        } else {
          const float c0 = xl_attn_tc_quad_sum(cs[hr][0]);
          const float c1 = xl_attn_tc_quad_sum(cs[hr][1]);
          if (t >= T)
            continue;
          double *st = stats(b, t, n);
          if (tq == 0) {
            st[2] = c0;
            st[3] = c1;
          }
          for (int x = 0; x < HT; ++x)
            for (int e = 0; e < 2; ++e) {
              const int h = x * 8 + 2 * tq + e;
              const float a = dqk[x][2 * hr + e], ar = dqr[x][2 * hr + e];
              st[4 + h] = a;
              st[4 + H + h] = ar;
              dq[((b * T + t) * N + n) * H + h] =
                  a + ar + c0 * static_cast<float>(segEmb[n * H + h]) +
                  c1 * static_cast<float>(segEmb[NH + n * H + h]);
            }
        }
      }
    }
  }

  /// PHASE 2: dk and dv, by key tiles.
  XL_DEVICE void keyTiles() const {
    // Key tiles of BN keys, 16 per warp.
    constexpr xl_i64 kKTiles = (K + BN - 1) / BN;
    for (xl_i64 tile = blockIdx.x; tile < B * N * kKTiles; tile += gridDim.x) {
      const xl_i64 j0 = (tile % kKTiles) * BN;
      const int n = static_cast<int>((tile / kKTiles) % N);
      const xl_i64 b = tile / kKTiles / N;
      const xl_i64 p = b / (B / P);
      __syncthreads();
      xl_attn_tc_issue_k<K, S, N, H, MASK_BITS, BN>(sh, b, n, j0, k, segId, permMask);
      xl_attn_tc_issue_v<K, N, H, BN>(sh, b, n, j0, v);
      xl_attn_tc_arrived();
      float gk[HT][4], gv[HT][4]; // this warp's keys j0 + 16·warp ..
      xl_attn_tc_zero<HT>(gk);
      xl_attn_tc_zero<HT>(gv);
      for (xl_i64 t0 = 0; t0 < T; t0 += BQ) {
        __syncthreads(); // the last query tile's products are done
        stageRows(b, n, t0);
        int imin, imax;
        xl_attn_tc_span(sh.rows, warp, lane, imin, imax);
        float s[KTN][4], dp[KTN][4];
        xl_attn_tc_scores<BN, T, N, H, K, S, R, HAS_ROWS, MASK_BITS>(
            s, sh, p, n, j0, imin, imax, kR, permMask, scale);
        xl_attn_tc_dout_v<BN>(dp, sh, lane);
        xl_attn_tc_grad_entries<BN, T, N, H, K, S, HAS_ROWS, MASK_BITS, DROP_BITS>(
            s, dp, sh, b, n, t0, j0, permMask, key, scale,
            static_cast<float (*)[2]>(nullptr));
        #pragma unroll
        for (int x = 0; x < KTN; ++x)
          #pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int at = (warp * 16 + g + (e >> 1) * 8) * LDT + x * 8 + 2 * tq + (e & 1);
            sh.at[at] = xl_float2bf16(s[x][e]);
            sh.ct[at] = xl_float2bf16(dp[x][e]);
          }
        __syncthreads();
        xl_attn_tc_mma_tile_t<WARPS, H, LD>(
            gv, sh.at, [&](int w) { return sh.region(w) + 2 * 16 * LD; }, warp, lane);
        xl_attn_tc_mma_tile_t<WARPS, H, LD>(
            gk, sh.ct, [&](int w) { return sh.region(w); }, warp, lane);
      }
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const xl_i64 j = j0 + warp * 16 + g + hr * 8;
        if (j >= K)
          continue;
#pragma unroll
        for (int x = 0; x < HT; ++x)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const xl_i64 at = ((b * K + j) * N + n) * H + x * 8 + 2 * tq + e;
            xl_attn_put_sum(dk, dkInit, at, gk[x][2 * hr + e]);
            xl_attn_put_sum(dv, dvInit, at, gv[x][2 * hr + e]);
          }
      }
    }
  }

  /// PHASE 3: dk_r, by tiles of k_r rows.
  XL_DEVICE void kRTiles() const {
    // PHASE 3: dk_r over tiles of BN k_r rows rr0 .. rr0 + BN - 1 of
    // (p, n), 16 per warp.
    constexpr xl_i64 kPerCopy = B / P;
    constexpr xl_i64 kRTiles = (R + BN - 1) / BN;
    constexpr xl_i64 MLEN = K - S;
    for (xl_i64 tile = blockIdx.x; tile < P * N * kRTiles; tile += gridDim.x) {
      const xl_i64 rr0 = (tile % kRTiles) * BN;
      const int n = static_cast<int>((tile / kRTiles) % N);
      const xl_i64 p = tile / kRTiles / N;
      __syncthreads();
      // The k_r tile, in the k tile's place.
      auto rRow = [&](int c) -> xl_i64 {
        return rr0 + c < R ? ((p * R + rr0 + c) * N + n) * H : -1;
      };
      xl_attn_tc_stage<H, LD>(sh.kt, BN, kR, rRow, threadIdx.x, C::kBlock);
      xl_attn_tc_staged();
      float gr[HT][4]; // this warp's k_r rows rr0 + 16·warp ..
      xl_attn_tc_zero<HT>(gr);
      for (xl_i64 bb = 0; bb < kPerCopy; ++bb) {
        const xl_i64 b = p * kPerCopy + bb;
        for (xl_i64 t0 = 0; t0 < T; t0 += BQ) {
          __syncthreads(); // the last tile's products are done
          stageRows(b, n, t0);
          const int rA = warp * 16 + g;
          const XlAttnTcRow *rowOf[2] = {&sh.rows[rA], &sh.rows[rA + 8]};
          int imin, imax;
          xl_attn_tc_span(sh.rows, warp, lane, imin, imax);
          // bd straight from the k_r tile: element (row, rr0 + column).
          float s[KTN][4], dp[KTN][4];
          xl_attn_tc_zero<KTN>(s);
          xl_attn_tc_mma_abt<H, LD, LD, KTN>(s, sh.qr, sh.kt, lane);
          xl_attn_tc_zero<KTN>(dp);
          // ac, added into s (bd + ac is the scores' ac + bd bitwise: one
          // f32 add, in either order; no array of its own, which kept 32
          // more registers live and spilled on sm_80), and dout·vᵀ at the
          // key j = rr - S + i, over the key window rr0 - S + imin ..
          // rr0 + BN - 1 - S + imax in chunks, skewed.
          if (imax >= 0) {
            const xl_i64 lo = rr0 - S + imin, hi = rr0 + BN - S + imax;
            for (xl_i64 c0 = lo; c0 < hi; c0 += CWN) {
              for (int pass = 0; pass < 2; ++pass) {
                __syncwarp(); // the previous product is read
                auto keyRow = [&](int x) -> xl_i64 {
                  const xl_i64 j = c0 + x;
                  return j >= 0 && j < hi && j < K ? ((b * K + j) * N + n) * H : -1;
                };
                if (pass == 0)
                  xl_attn_tc_stage<H, LD>(sh.chunk, CWN, k, keyRow, lane, 32);
                else
                  xl_attn_tc_stage<H, LD>(sh.chunk, CWN, v, keyRow, lane, 32);
                xl_attn_tc_staged();
                __syncwarp();
                xl_attn_tc_chunk_product<CWN>(sh, pass == 0 ? sh.qw : sh.go, lane);
#pragma unroll
                for (int x = 0; x < KTN; ++x)
#pragma unroll
                  for (int e = 0; e < 4; ++e) {
                    const xl_i64 i = rowOf[e >> 1]->pos;
                    const xl_i64 col = rr0 + x * 8 + 2 * tq + (e & 1) - S + i - c0;
                    if (i >= 0 && col >= 0 && col < CWN) {
                      const float pv = sh.prod[(g + (e >> 1) * 8) * CWP + col];
                      if (pass == 0)
                        s[x][e] += pv;
                      else
                        dp[x][e] = pv;
                    }
                  }
              }
            }
          }
          // c at (row, k_r row rr), to the block's c tile.
          #pragma unroll
          for (int x = 0; x < KTN; ++x)
            #pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int cc = x * 8 + 2 * tq + (e & 1);
              const XlAttnTcRow &row = *rowOf[e >> 1];
              const xl_i64 rrow = rr0 + cc, j = rrow - S + row.pos;
              float cv = 0.0f;
              if (row.pos >= 0 && rrow < R && j >= 0 && j < K) {
                const xl_i64 jj = j - MLEN;
                bool masked, differ;
                xl_attn_tc_mask<K, S, HAS_ROWS, MASK_BITS>(
                    row, j, jj >= 0 ? segId[b * S + jj] : 0,
                    jj >= 0 && !MASK_BITS ? permMask[(b * 2 + 1) * S + jj] : 0,
                    permMask, masked, differ);
                if (!masked) {
                  const float sv = (s[x][e] + row.ef[differ ? 1 : 0]) * scale;
                  const float prob = row.lse < -1e29f
                                         ? 1.0f / static_cast<float>(K)
                                         : expf(sv - row.lse);
                  const xl_i64 t = t0 + rA + (e >> 1) * 8;
                  const float f = static_cast<float>(xl_attn_drop_factor<DROP_BITS>(
                      key, static_cast<xl_u64>(((b * T + t) * N + n) * K + j)));
                  cv = prob * (dp[x][e] * f - row.dd) * scale;
                }
              }
              sh.ct[(rA + (e >> 1) * 8) * LDT + cc] = xl_float2bf16(cv);
            }
          __syncthreads();
          xl_attn_tc_mma_tile_t<WARPS, H, LD>(
              gr, sh.ct, [&](int w) { return sh.region(w) + 16 * LD; }, warp, lane);
        }
      }
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const xl_i64 rrow = rr0 + warp * 16 + g + hr * 8;
        if (rrow >= R)
          continue;
#pragma unroll
        for (int x = 0; x < HT; ++x)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            xl_attn_put_sum(dkR, dkRInit, ((p * R + rrow) * N + n) * H + x * 8 + 2 * tq + e,
                            gr[x][2 * hr + e]);
      }
    }
  }

  /// PHASE 4: the bias columns (the f32 kernel's code).
  XL_DEVICE void biasColumns() const {
    xl_attn_bias_columns<B, T, N, H>(q, segEmb, rs, workspace, dsegEmbInit, drwInit,
                                     drrInit, drsInit, dsegEmb, drw, drr, drs,
                                     static_cast<int>(blockDim.x));
  }
};

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int PHASE, int MASK_BITS, int WARPS, typename T_dout, typename T_q,
          typename T_k, typename T_v, typename T_kR, typename T_segEmb,
          typename T_rw, typename T_rr, typename T_rs, typename T_dkInit,
          typename T_dvInit, typename T_dkRInit, typename T_dsegEmbInit,
          typename T_drwInit, typename T_drrInit, typename T_drsInit, typename T_dq,
          typename T_dk, typename T_dv, typename T_dkR, typename T_dsegEmb,
          typename T_drw, typename T_drr, typename T_drs>
XL_DEVICE void xl_rel_attention_tc_grad(
    const T_dout *XL_RESTRICT dout, const T_q *XL_RESTRICT q,
    const T_k *XL_RESTRICT k, const T_v *XL_RESTRICT v,
    const T_kR *XL_RESTRICT kR, const T_segEmb *XL_RESTRICT segEmb,
    const T_rw *XL_RESTRICT rw, const T_rr *XL_RESTRICT rr,
    const T_rs *XL_RESTRICT rs, const xl_i64 *XL_RESTRICT segId,
    const xl_i64 *XL_RESTRICT permMask, const xl_i64 *XL_RESTRICT rows,
    const T_dkInit *XL_RESTRICT dkInit, const T_dvInit *XL_RESTRICT dvInit,
    const T_dkRInit *XL_RESTRICT dkRInit, const T_dsegEmbInit *dsegEmbInit,
    const T_drwInit *drwInit, const T_drrInit *drrInit, const T_drsInit *drsInit,
    T_dq *XL_RESTRICT dq, T_dk *XL_RESTRICT dk, T_dv *XL_RESTRICT dv,
    T_dkR *XL_RESTRICT dkR, T_dsegEmb *XL_RESTRICT dsegEmb,
    T_drw *XL_RESTRICT drw, T_drr *XL_RESTRICT drr, T_drs *XL_RESTRICT drs,
    double *XL_RESTRICT workspace, int *status, xl_i64 site,
    XlStepRandom rnd) {
  static_assert(PHASE >= 0 && PHASE <= 4, "PHASE is 0..4");
  static_assert(H % 16 == 0 && H <= 128, "H: a multiple of 16, at most 128");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  (void)status;
  using Grad = XlAttnTcGrad<B, T, N, H, K, S, P, R, HAS_ROWS, SCALE_BITS, DROP_BITS, PHASE,
                            MASK_BITS, WARPS, T_dout, T_q, T_k, T_v, T_kR, T_segEmb, T_rw,
                            T_rr, T_rs, T_dkInit, T_dvInit, T_dkRInit, T_dsegEmbInit,
                            T_drwInit, T_drrInit, T_drsInit, T_dq, T_dk, T_dv, T_dkR,
                            T_dsegEmb, T_drw, T_drr, T_drs>;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  XL_DYN_SMEM(unsigned char, smem);
  // The dropatt key in shared memory: the phases use every register.
  XL_SHARED XlDropKey key;
  if (threadIdx.x == 0)
    key = xl_drop_key(rnd, site, T * N * K);
  __syncthreads();
  const Grad grad{dout, q, k, v, kR, segEmb, rw, rr, rs, segId, permMask, rows,
                  dkInit, dvInit, dkRInit, dsegEmbInit, drwInit, drrInit, drsInit,
                  dq, dk, dv, dkR, dsegEmb, drw, drr, drs, workspace,
                  key,
                  static_cast<float>(__longlong_as_double(static_cast<long long>(SCALE_BITS))),
                  -__uint_as_float(0x7f800000u),
                  lane, warp, lane >> 2, lane & 3,
                  XlAttnTcShared<H, true, WARPS>(smem, warp)};
  if constexpr (PHASE == 0 || PHASE == 1)
    grad.queryTiles();
  else if constexpr (PHASE == 2)
    grad.keyTiles();
  else if constexpr (PHASE == 3)
    grad.kRTiles();
  else
    grad.biasColumns();
}

#endif // XLNETC_K_ATTENTION_TC_CUH
