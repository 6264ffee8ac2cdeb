//===- xlnetc_k_attention_tc.cuh - Fused attention on tensor cores -*- C++ -*-===//
//
// The fused relative attention forward on tensor cores (issue 8 §1, design
// cuda.md §5): the same operands, masks, dropatt and results as
// xl_rel_attention_fused (xlnetc_k_attention_fused.cuh, whose file comment
// defines the compact masks), with every matrix product — ac = (q + r_w)·k,
// the bd band (q + r_r)·k_r and P·v — a bf16 mma.sync.m16n8k16 with f32
// accumulators, fed by ldmatrix from shared memory. It is what the emitter
// picks for --precision bf16 (docs/Devices.md "The fused attention").
//
// Work: one tile = 64 query rows of one (b, n), 4 warps of 16 rows each, in
// a grid-stride loop over blockIdx.x (b, n, query tile). Per key tile of
// BK = 64:
//   1. the block stages the tile's k and v rows as bf16 in shared memory
//      (cp.async with zero fill when they are stored as bf16; converting
//      loads otherwise), with the keys' segment ids and ranks;
//   2. each warp computes ac for its 16 rows × 64 keys: 4·8 mma for H 64;
//   3. the rel-shift (XLNet's rel_shift: row i reads k_r[S - i + j]): the
//      warp's rows need k_r rows S - imax + j0 .. S - imin + j0 + 63, a band
//      of imax - imin + 64 rows. The warp stages it in chunks of CW = 80
//      rows, computes (q + r_r)·chunkᵀ (16 × 80, 4·10 mma), writes that
//      product to shared memory and reads it back skewed: element (r, j)
//      takes column S - i_r + j - chunk start. For the content stream (16
//      consecutive positions) the band is 79 rows: one chunk, 1.25× the
//      ac work. The query stream's gathered rows take more chunks when
//      their positions spread (correct for any positions);
//   4. scores s = (ac + bd + ef) · scale - 1e30 · masked in f32 (ef from the
//      row's two segment dots), the online softmax on the fragments (a quad
//      of lanes holds a row: shuffles 1 and 2, a fixed order), dropatt on
//      P, then P (bf16, straight from the accumulator fragments) · v with
//      v through ldmatrix.trans.
// At the end out = o / l, lse = m + log l. A fully masked row is the
// uniform average of v (-1e30 absorbs its scores, as in the f32 kernel), a
// padding slot zeros and lse 0. No atomics, nothing of size S×K leaves the
// block, the result does not depend on gridDim.
//
// Precision (the bf16 contract of docs/Devices.md): q + r_w and q + r_r
// rounded to bf16, k, v, k_r read as bf16, P rounded to bf16 for P·v; every
// sum in f32 (tensor-core accumulators, softmax statistics, ef).
//
// Requirements: H a multiple of 16 (the mma's k), at most 128. Block: 128
// threads. Dynamic shared memory: XlAttnTcSmem<H>::kBytes (86 016 bytes
// for H 64: more than 48 KiB, which the CUDA device opts into per launch).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ATTENTION_TC_CUH
#define XLNETC_K_ATTENTION_TC_CUH

#include "xlnetc_k_attention_fused.cuh"

/// Tile sizes of the tensor-core attention.
struct XlAttnTc {
  static constexpr int kWarps = 4;
  static constexpr int kBlock = 32 * kWarps;
  static constexpr int kBQ = 16 * kWarps; ///< query rows per tile
  static constexpr int kBK = 64;          ///< keys per tile
  static constexpr int kCW = kBK + 16;    ///< k_r band rows per chunk
  static constexpr int kCWP = kCW + 4;    ///< row stride of the f32 band product
};

/// The shared-memory geometry for head size H (a struct of constants: NVRTC
/// compiles no unannotated function).
template <int H> struct XlAttnTcSmem {
  /// Row stride (elements) of a bf16 tile with H columns: 8 more than H, so
  /// rows are 16-byte aligned and ldmatrix's eight rows hit different banks.
  static constexpr int kLD = H + 8;
  static constexpr int kBand = XlAttnTc::kCW * kLD * 2;
  static constexpr int kProd = 16 * XlAttnTc::kCWP * 4;
  /// Bytes of one warp's private region: its biased queries (two [16][LD]
  /// bf16 tiles) and the band buffer (a [CW][LD] bf16 chunk of k_r, later
  /// its [16][CWP] f32 product).
  static constexpr int kWarpBytes =
      2 * 16 * kLD * 2 + (kBand > kProd ? kBand : kProd);
  /// The kernel's dynamic shared memory (the layout is in the kernel).
  static constexpr int kBytes = 2 * XlAttnTc::kBK * kLD * 2  // k, v tiles
                                + XlAttnTc::kWarps * kWarpBytes
                                + XlAttnTc::kBQ * (8 + 8 + 8 + 8) // rows
                                + XlAttnTc::kBK * (8 + 8);         // keys
};

template <class A, class B> struct XlSameType {
  static constexpr bool value = false;
};
template <class A> struct XlSameType<A, A> {
  static constexpr bool value = true;
};

/// Stages `nrows` rows of H elements into dst ([nrows][LD] bf16) by
/// `nthreads` threads (this one is `tid`): row r comes from src + rowAt(r),
/// or is zeros where rowAt(r) < 0. bf16 storage goes by cp.async (16 bytes
/// at a time, zero fill), so the caller commits and waits; other storage is
/// converted on the way.
template <int H, int LD, typename T, typename RowAt>
XL_DEVICE void xl_attn_tc_stage(xl_bf16 *dst, int nrows, const T *src,
                                RowAt rowAt, int tid, int nthreads) {
  constexpr int kPieces = H / 8; // 16 bytes of bf16
  for (int e = tid; e < nrows * kPieces; e += nthreads) {
    const int r = e / kPieces, c = (e % kPieces) * 8;
    const xl_i64 at = rowAt(r);
    xl_bf16 *d = dst + r * LD + c;
    if constexpr (XlSameType<T, xl_bf16>::value) {
      xl_cp_async_16_zfill(d, at >= 0 ? src + at + c : src, at >= 0 ? 16 : 0);
    } else {
      for (int x = 0; x < 8; ++x)
        d[x] = xl_float2bf16(at >= 0 ? static_cast<float>(src[at + c + x])
                                     : 0.0f);
    }
  }
}

/// acc[NT][4] += A(16 × H, rows of `a`) · B(NT·8 × H, rows of `bt`)ᵀ, both
/// bf16 row-major tiles with row stride LD in shared memory, by one warp.
template <int H, int LD, int NT>
XL_DEVICE void xl_attn_tc_mma_abt(float (*acc)[4], const xl_bf16 *a,
                                  const xl_bf16 *bt, int lane) {
  static_assert(NT % 2 == 0, "B is loaded two n-tiles at a time");
  const int mi = lane >> 3, mr = lane & 7;
#pragma unroll
  for (int kk = 0; kk < H / 16; ++kk) {
    u32 af[4];
    xl_ldmatrix_x4(af, a + (mr + (mi & 1) * 8) * LD + kk * 16 + (mi >> 1) * 8);
#pragma unroll
    for (int nt = 0; nt < NT; nt += 2) {
      u32 bf[4];
      xl_ldmatrix_x4(bf, bt + ((nt + (mi >> 1)) * 8 + mr) * LD + kk * 16 +
                             (mi & 1) * 8);
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

template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int MASK_BITS, typename T_q, typename T_k, typename T_v,
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
    unsigned long long seed) {
  using C = XlAttnTc;
  static_assert(H % 16 == 0 && H <= 128, "H: a multiple of 16, at most 128");
  static_assert(B % P == 0 && R == K + S && K >= S, "bad shapes");
  using G = XlAttnTcSmem<H>;
  constexpr int LD = G::kLD;
  constexpr int BQ = C::kBQ, BK = C::kBK, CW = C::kCW, CWP = C::kCWP;
  constexpr int HT = H / 8;                 // n-tiles of the output
  constexpr int KT = BK / 8;                // n-tiles of a key tile
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 MLEN = K - S;
  constexpr xl_i64 kQTiles = (T + BQ - 1) / BQ;
  const float scale = static_cast<float>(
      __longlong_as_double(static_cast<long long>(SCALE_BITS)));
  const float kNegInf = -__uint_as_float(0x7f800000u);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int g = lane >> 2, tq = lane & 3; // accumulator row, column pair
  const xl_u64 key = xl_dropout_key(seed, site);

  // Shared memory: k, v tiles; the warps' regions; row and key data.
  XL_DYN_SMEM(unsigned char, smem);
  xl_bf16 *kt = reinterpret_cast<xl_bf16 *>(smem);            // [BK][LD]
  xl_bf16 *vt = kt + BK * LD;                                 // [BK][LD]
  unsigned char *region =
      reinterpret_cast<unsigned char *>(vt + BK * LD) +
      warp * G::kWarpBytes;
  xl_bf16 *qw = reinterpret_cast<xl_bf16 *>(region);          // [16][LD]
  xl_bf16 *qr = qw + 16 * LD;                                 // [16][LD]
  xl_bf16 *band = qr + 16 * LD;                               // [CW][LD]
  float *bprod = reinterpret_cast<float *>(band);             // [16][CWP]
  xl_i64 *rpos = reinterpret_cast<xl_i64 *>(
      reinterpret_cast<unsigned char *>(vt + BK * LD) +
      C::kWarps * G::kWarpBytes);                // [BQ]
  xl_i64 *rkey = rpos + BQ;                                   // [BQ]
  xl_i64 *rseg = rkey + BQ;                                   // [BQ]
  float *ref = reinterpret_cast<float *>(rseg + BQ);          // [BQ][2]
  xl_i64 *kseg = reinterpret_cast<xl_i64 *>(ref + 2 * BQ);    // [BK]
  xl_i64 *krank = kseg + BK;                                  // [BK]

  for (xl_i64 tile = blockIdx.x; tile < B * N * kQTiles; tile += gridDim.x) {
    const xl_i64 t0 = (tile % kQTiles) * BQ;
    const int n = static_cast<int>((tile / kQTiles) % N);
    const xl_i64 b = tile / kQTiles / N;
    const xl_i64 p = b / (B / P);
    __syncthreads(); // the previous tile is done with shared memory

    // 1. The tile's rows: position, mask row key, segment, ef (f32).
    for (int r = threadIdx.x; r < BQ; r += C::kBlock) {
      const xl_i64 t = t0 + r;
      const xl_i64 i =
          t < T ? xl_attn_position<T, S, HAS_ROWS>(rows, b, t, status, n == 0)
                : -1;
      rpos[r] = i;
      rkey[r] = i >= 0 ? xl_attn_row_key<S, MASK_BITS>(permMask, b, i) : 0;
      rseg[r] = i >= 0 ? segId[b * S + i] : 0;
      float e0 = 0.0f, e1 = 0.0f;
      if (i >= 0) {
        const auto *qrow = q + ((b * T + t) * N + n) * H;
        for (int h = 0; h < H; ++h) {
          const float s = static_cast<float>(qrow[h]) +
                          static_cast<float>(rs[n * H + h]);
          e0 += s * static_cast<float>(segEmb[n * H + h]);
          e1 += s * static_cast<float>(segEmb[NH + n * H + h]);
        }
      }
      ref[2 * r] = e0;
      ref[2 * r + 1] = e1;
    }
    // The warp's biased queries, bf16.
    for (int e = lane; e < 16 * H; e += 32) {
      const int r = e / H, h = e % H;
      const xl_i64 t = t0 + warp * 16 + r;
      const float qv =
          t < T ? static_cast<float>(q[((b * T + t) * N + n) * H + h]) : 0.0f;
      qw[r * LD + h] = xl_float2bf16(qv + static_cast<float>(rw[n * H + h]));
      qr[r * LD + h] = xl_float2bf16(qv + static_cast<float>(rr[n * H + h]));
    }
    __syncthreads();

    // This lane's two accumulator rows (g and g + 8 of the warp's 16).
    const int rowA = warp * 16 + g, rowB = rowA + 8;
    const xl_i64 posR[2] = {rpos[rowA], rpos[rowB]};
    // The span of the warp's positions, for the k_r band.
    int imin = S, imax = -1;
    {
      const xl_i64 ip = lane < 16 ? rpos[warp * 16 + lane] : -1;
      if (ip >= 0)
        imin = imax = static_cast<int>(ip);
      for (int off = 16; off > 0; off >>= 1) {
        imin = min(imin, __shfl_xor_sync(0xffffffffu, imin, off));
        imax = max(imax, __shfl_xor_sync(0xffffffffu, imax, off));
      }
    }
    float mrow[2] = {kNegInf, kNegInf}, lrow[2] = {0.0f, 0.0f};
    float o[HT][4];
    for (int x = 0; x < HT; ++x)
      o[x][0] = o[x][1] = o[x][2] = o[x][3] = 0.0f;

    // 2. Key tiles.
    for (xl_i64 j0 = 0; j0 < K; j0 += BK) {
      __syncthreads(); // the last tile's k and v are consumed
      auto keyRow = [&](int c) -> xl_i64 {
        return j0 + c < K ? ((b * K + j0 + c) * N + n) * H : -1;
      };
      xl_attn_tc_stage<H, LD>(kt, BK, k, keyRow, threadIdx.x, C::kBlock);
      xl_attn_tc_stage<H, LD>(vt, BK, v, keyRow, threadIdx.x, C::kBlock);
      xl_cp_async_commit();
      for (int c = threadIdx.x; c < BK; c += C::kBlock) {
        const xl_i64 jj = j0 + c - MLEN; // position of a non-memory key
        const bool real = j0 + c < K && jj >= 0;
        kseg[c] = real ? segId[b * S + jj] : 0;
        krank[c] = real && !MASK_BITS ? permMask[(b * 2 + 1) * S + jj] : 0;
      }
      xl_cp_async_wait_all();
      __syncthreads();

      // ac: (q + r_w) · k.
      float s[KT][4];
      for (int x = 0; x < KT; ++x)
        s[x][0] = s[x][1] = s[x][2] = s[x][3] = 0.0f;
      xl_attn_tc_mma_abt<H, LD, KT>(s, qw, kt, lane);

      // bd: (q + r_r) · k_r[S - i + j], through the band chunks.
      if (imax >= 0) {
        const xl_i64 lo = S - imax + j0, hi = S - imin + j0 + BK;
        for (xl_i64 c0 = lo; c0 < hi; c0 += CW) {
          __syncwarp(); // the previous chunk's product is read
          auto bandRow = [&](int x) -> xl_i64 {
            const xl_i64 row = c0 + x;
            return row < hi && row < R ? ((p * R + row) * N + n) * H : -1;
          };
          xl_attn_tc_stage<H, LD>(band, CW, kR, bandRow, lane, 32);
          xl_cp_async_commit();
          xl_cp_async_wait_all();
          __syncwarp();
          float bp[CW / 8][4];
          for (int x = 0; x < CW / 8; ++x)
            bp[x][0] = bp[x][1] = bp[x][2] = bp[x][3] = 0.0f;
          xl_attn_tc_mma_abt<H, LD, CW / 8>(bp, qr, band, lane);
          __syncwarp(); // every lane's ldmatrix of the chunk is done
          for (int x = 0; x < CW / 8; ++x)
            for (int e = 0; e < 4; ++e)
              bprod[(g + (e >> 1) * 8) * CWP + x * 8 + 2 * tq + (e & 1)] =
                  bp[x][e];
          __syncwarp();
          // The skew: element (row, key j) is column S - i + j - c0.
          for (int x = 0; x < KT; ++x)
            for (int e = 0; e < 4; ++e) {
              const xl_i64 i = posR[e >> 1];
              const xl_i64 col = S - i + j0 + x * 8 + 2 * tq + (e & 1) - c0;
              if (i >= 0 && col >= 0 && col < CW)
                s[x][e] += bprod[(g + (e >> 1) * 8) * CWP + col];
            }
        }
      }

      // Scores, masks, the online softmax and dropatt.
      float tileMax[2] = {kNegInf, kNegInf};
      for (int x = 0; x < KT; ++x)
        for (int e = 0; e < 4; ++e) {
          const int hr = e >> 1, r = hr ? rowB : rowA;
          const int c = x * 8 + 2 * tq + (e & 1);
          const xl_i64 j = j0 + c, i = posR[hr];
          float sv = kNegInf; // not a key of this row
          if (i >= 0 && j < K) {
            bool masked = false, differ;
            if (j < MLEN) {
              differ = rseg[r] != 0;
            } else {
              const xl_i64 jj = j - MLEN;
              bool perm;
              if constexpr (MASK_BITS)
                perm = (static_cast<xl_u64>(permMask[rkey[r] + jj / 64]) >>
                        (jj % 64)) & 1u;
              else
                perm = rkey[r] <= krank[c];
              masked = perm && (HAS_ROWS || jj != i);
              differ = rseg[r] != kseg[c];
            }
            sv = (s[x][e] + ref[2 * r + (differ ? 1 : 0)]) * scale -
                 (masked ? 1e30f : 0.0f);
          }
          s[x][e] = sv;
          tileMax[hr] = fmaxf(tileMax[hr], sv);
        }
      float alpha[2], tileSum[2] = {0.0f, 0.0f};
      for (int hr = 0; hr < 2; ++hr) {
        const float mNew = fmaxf(mrow[hr], xl_attn_tc_quad_max(tileMax[hr]));
        alpha[hr] = mrow[hr] == kNegInf ? 0.0f : expf(mrow[hr] - mNew);
        mrow[hr] = mNew;
      }
      for (int x = 0; x < KT; ++x)
        for (int e = 0; e < 4; ++e) {
          const int hr = e >> 1;
          const float pe = s[x][e] == kNegInf ? 0.0f : expf(s[x][e] - mrow[hr]);
          tileSum[hr] += pe;
          const xl_i64 t = t0 + (hr ? rowB : rowA);
          const xl_i64 j = j0 + x * 8 + 2 * tq + (e & 1);
          s[x][e] = pe == 0.0f
                        ? 0.0f
                        : pe * static_cast<float>(xl_attn_drop_factor<DROP_BITS>(
                                   key, static_cast<xl_u64>(
                                            ((b * T + t) * N + n) * K + j)));
        }
      for (int hr = 0; hr < 2; ++hr)
        lrow[hr] = lrow[hr] * alpha[hr] + xl_attn_tc_quad_sum(tileSum[hr]);
      for (int x = 0; x < HT; ++x) {
        o[x][0] *= alpha[0], o[x][1] *= alpha[0];
        o[x][2] *= alpha[1], o[x][3] *= alpha[1];
      }

      // o += P · v: P's accumulator fragments are the A fragments.
      const int mi = lane >> 3, mr = lane & 7;
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const u32 af[4] = {xl_pack_bf16x2(s[2 * kk][0], s[2 * kk][1]),
                           xl_pack_bf16x2(s[2 * kk][2], s[2 * kk][3]),
                           xl_pack_bf16x2(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                           xl_pack_bf16x2(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
        for (int ht = 0; ht < HT; ht += 2) {
          u32 bf[4];
          xl_ldmatrix_x4_trans(bf, vt + (kk * 16 + (mi & 1) * 8 + mr) * LD +
                                       (ht + (mi >> 1)) * 8);
          xl_mma_m16n8k16_bf16(o[ht], af, bf, o[ht]);
          xl_mma_m16n8k16_bf16(o[ht + 1], af, bf + 2, o[ht + 1]);
        }
      }
    }

    // 3. out = o / l, lse = m + log(l); zeros for padding slots.
    for (int hr = 0; hr < 2; ++hr) {
      const xl_i64 t = t0 + (hr ? rowB : rowA);
      if (t >= T)
        continue;
      const bool real = posR[hr] >= 0;
      const float inv = real ? 1.0f / lrow[hr] : 0.0f;
      for (int x = 0; x < HT; ++x)
        for (int e = 0; e < 2; ++e)
          out[((b * T + t) * N + n) * H + x * 8 + 2 * tq + e] =
              real ? o[x][2 * hr + e] * inv : 0.0f;
      if (lse && tq == 0)
        lse[(b * T + t) * N + n] = real ? mrow[hr] + logf(lrow[hr]) : 0.0f;
    }
  }
}

#endif // XLNETC_K_ATTENTION_TC_CUH
