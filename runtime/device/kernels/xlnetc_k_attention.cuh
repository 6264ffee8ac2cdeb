//===- xlnetc_k_attention.cuh - Relative attention ops ----------*- C++ -*-===//
//
// rel_segment, attn_mask, rel_attention and rel_attention_grad
// (docs/Plan.md), matching runtime/host/Kernels.cpp, RelAttention.cpp,
// RelAttentionGrad.cpp and RelAttentionCommon.*. Assumes xlnetc_prelude.cuh
// was included first; conventions in xlnetc_k_common.cuh.
//
// This is the SIMPLE, deterministic version (no tensor cores; the fused
// kernel is a later part). Bool tensors are bytes (unsigned char, 0 or 1).
//
// Common template parameters of the attention ops (shapes of docs/Plan.md):
//   B, T, N, H     q [B,T,N,H];  K keys (k, v [B,K,N,H]);  S = qlen
//   (seg_mat, mask [B,S,K]);  P, R: k_r [P,R,N,H] (R = K + S; batch row b
//   reads copy p = b / (B / P));  HAS_ROWS: whether the optional `rows`
//   operand [B,T] is given (the query stream; without it, position i = t and
//   the `rows` pointer is ignored, may be null);  SCALE_BITS: bits of the
//   double scale;  DROP_BITS: bits of float(dropatt) (as xl_dropout's
//   RATE_BITS; 0 = no dropatt);  BLOCK last. The dropout_site is the
//   argument `site` before `rnd` (a run-time value, so the layers of a
//   model share one kernel).
//
// rel_attention (forward): one block per query row (b, t, n), rows in a
// grid-stride loop over blockIdx.x, row index ((b*T + t)*N + n). Per row:
//   ef0/ef1 = (q + r_s_bias) . seg_embed[0/1, n] (double block sums);
//   thread j (strided) computes s_j = (ac + bd + ef) * scale - 1e30 * mask
//   in double, ac = (q + r_w_bias) . k[b,j,n], bd = (q + r_r_bias) .
//   k_r[p, S - i + j, n] (XLNet rel_shift), the biased queries rounded to
//   float as on the host, dots accumulated in double;
//   max (exact block max), e = exp(s - max) (0 below -746, as the host),
//   sum in double (fixed per-thread order, then xl_block_sum's fixed tree),
//   prob = e * (1 / sum); dropatt factor keep / (1 - rate) with element index
//   ((b*T + t)*N + n)*K + j, b the global batch row (xl_drop_key: the
//   bit-identical keep mask of the host);
//   A_j = float(prob_j * factor); out[h] = sum_j A_j v[b,j,n,h] in double,
//   j in order (thread h, strided over H).
// Padding rows (rows[b,t] == -1) write zeros. A rows entry outside [-1, S)
// reports XL_ERR_ATTN_ROW (b, t, value low / high 32 bits) and its row is
// written as zeros (the host returns an error).
//
//   dynamic shared memory of rel_attention:        K * 8 bytes  (double s/prob)
//
// rel_attention_grad, two launches of the same template (PHASE 0, then 1),
// same arguments, no atomics:
//   PHASE 0 (one block per (b, t, n) row, grid-stride): recompute the
//     forward's probabilities exactly as above, then dP'_j = (dout . v_j) *
//     factor_j, dot = sum_j P_j dP'_j, c_j = mask ? 0 : P_j (dP'_j - dot)
//     scale (a masked score carries no gradient, see RelAttentionGrad.cpp);
//     writes dq[b,t,n] directly (sum_j float(c_j) k_j + sum_j float(c_j)
//     k_r[p,S-i+j] + c0 seg_embed[0] + c1 seg_embed[1], c0/c1 = sums of c
//     over keys of segment 0/1), and to the workspace: A = float(P * factor)
//     and C = float(c) rows [K], and the row stats dq_w [H], dq_r [H], c0, c1
//     (doubles). Padding rows write zeros everywhere.
//   PHASE 1 (elementwise grid-stride over dk/dv elements, then dk_r
//     elements, then the N*H bias/seg_embed columns), every value a sum over
//     query rows t (and batch rows b) in a fixed order, in double:
//       dv[b,j,n,h]   = sum_t A[b,t,n,j] dout[b,t,n,h]
//       dk[b,j,n,h]   = sum_t C[b,t,n,j] float(q + r_w_bias)[b,t,n,h]
//       dk_r[p,r,n,h] = sum_{b of copy p} sum_t C[b,t,n, r - S + i] *
//                       float(q + r_r_bias)[b,t,n,h]   (0 <= r-S+i < K)
//       dr_w_bias = sum dq_w, dr_r_bias = sum dq_r, dr_s_bias = sum (c0 se0 +
//       c1 se1), dseg_embed[s] = sum c_s (q + r_s_bias) (b, t in order).
//
//   workspace of rel_attention_grad (bytes; 8-byte aligned):
//       8 * B*T*N * (2*H + 2)   row stats (doubles)
//     + 4 * B*T*N * K           A (floats)
//     + 4 * B*T*N * K           C (floats)
//     = 8 * B*T*N * (2*H + 2 + K)
//   (this simple version stores [B,T,N,K] twice; the fused kernel removes it)
//   dynamic shared memory: PHASE 0: 2 * K * 8 bytes; PHASE 1: none.
//   Static shared memory: about 20 * H + 8 * BLOCK / 32 bytes.
//
// The result does not depend on gridDim.x: every value is computed by one
// block (rows) or one thread (phase 1 elements) in a fixed order.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ATTENTION_CUH
#define XLNETC_K_ATTENTION_CUH

#include "xlnetc_k_common.cuh"


//===----------------------------------------------------------------------===//
// rel_segment, attn_mask (dense byte masks)
//===----------------------------------------------------------------------===//

/// rel_segment: seg_id [B,S] -> out [B,S,K] bytes, K = MLEN + S:
/// out[b,i,j] = seg[b,i] != key_seg(j), key_seg = 0 for j < MLEN, else
/// seg[b, j - MLEN].
template <xl_i64 B, xl_i64 S, xl_i64 MLEN, int BLOCK>
XL_DEVICE void xl_rel_segment(const xl_i64 *XL_RESTRICT segId,
                              unsigned char *XL_RESTRICT out,
                              XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 K = MLEN + S, kTotal = B * S * K;
  for (xl_i64 e = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
       e < kTotal; e += static_cast<xl_i64>(gridDim.x) * BLOCK) {
    const xl_i64 j = e % K, bi = e / K, b = bi / S;
    const xl_i64 keySeg = j < MLEN ? 0 : segId[b * S + (j - MLEN)];
    out[e] = segId[bi] != keySeg ? 1 : 0;
  }
}

/// attn_mask: perm_mask [B,S,S] -> out [B,S,K] bytes: 0 for j < MLEN,
/// perm_mask[b,i,j-MLEN] > 0 after; CONTENT (the content stream) also opens
/// out[b,i,MLEN+i].
template <xl_i64 B, xl_i64 S, xl_i64 MLEN, int CONTENT, int BLOCK, typename T_permMask>
XL_DEVICE void xl_attn_mask(const T_permMask *XL_RESTRICT permMask,
                            unsigned char *XL_RESTRICT out,
                            XlStepRandom rnd) {
  (void)rnd;
  constexpr xl_i64 K = MLEN + S, kTotal = B * S * K;
  for (xl_i64 e = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
       e < kTotal; e += static_cast<xl_i64>(gridDim.x) * BLOCK) {
    const xl_i64 j = e % K, bi = e / K, i = bi % S;
    unsigned char m = 0;
    if (j >= MLEN && !(CONTENT && j == MLEN + i))
      m = permMask[bi * S + (j - MLEN)] > 0.0f ? 1 : 0;
    out[e] = m;
  }
}

//===----------------------------------------------------------------------===//
// rel_attention helpers
//===----------------------------------------------------------------------===//


/// The query position of row (b, t): rows[b*T + t] with HAS_ROWS, else t;
/// -1 for padding; an entry outside [-1, S) is reported (thread 0) and
/// treated as padding.
template <xl_i64 T, xl_i64 S, int HAS_ROWS>
XL_DEVICE xl_i64 xl_attn_position(const xl_i64 *rows, xl_i64 b, xl_i64 t,
                                  int *status, bool report) {
  if constexpr (!HAS_ROWS) {
    (void)rows, (void)b, (void)status, (void)report;
    return t;
  } else {
    const xl_i64 i = rows[b * T + t];
    if (i < -1 || i >= S) {
      if (report && status)
        xl_report_error(status, XL_ERR_ATTN_ROW, static_cast<int>(b),
                        static_cast<int>(t),
                        static_cast<int>(static_cast<xl_u64>(i) & 0xffffffffull),
                        static_cast<int>(static_cast<xl_u64>(i) >> 32));
      return -1;
    }
    return i;
  }
}

/// The dropatt factor of prob[b,t,n,j] at flat index `index` (host
/// Operands::dropIndex): `key` maps b to its global row (xl_drop_key with
/// T·N·K elements a batch row).
template <unsigned DROP_BITS>
XL_DEVICE double xl_attn_drop_factor(const XlDropKey &key, xl_u64 index) {
  if constexpr (DROP_BITS == 0u) {
    (void)key, (void)index;
    return 1.0;
  } else {
    const float rate = __uint_as_float(DROP_BITS);
    const double scale = 1.0 / (1.0 - static_cast<double>(rate));
    return xl_drop_keep(key, static_cast<xl_i64>(index), rate) ? scale : 0.0;
  }
}

/// The softmax of row (b, t, n) at position i >= 0, into prob[K] (double,
/// shared), with qw/qr (float) and qs (double) [H] left in shared memory.
/// Called by the whole block; ends with a barrier.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, xl_u64 SCALE_BITS, int BLOCK, typename T_q, typename T_k, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_qw, typename T_qr>
XL_DEVICE void
xl_attn_row_softmax(xl_i64 b, xl_i64 t, int n, xl_i64 i, const T_q *q,
                    const T_k *k, const T_kR *kR, const T_segEmb *segEmb,
                    const T_rw *rw, const T_rr *rr, const T_rs *rs,
                    const unsigned char *segMat, const unsigned char *mask,
                    T_qw *qw, T_qr *qr, double *qs, double *prob,
                    double *scratch) {
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  const double scale = __longlong_as_double(static_cast<long long>(SCALE_BITS));
  const float *qrow = q + ((b * T + t) * N + n) * H;
  const float *se0 = segEmb + static_cast<xl_i64>(n) * H;
  const float *se1 = segEmb + (static_cast<xl_i64>(N) + n) * H;
  double e0 = 0.0, e1 = 0.0;
  for (int h = threadIdx.x; h < H; h += BLOCK) {
    const float qf = qrow[h];
    qw[h] = qf + rw[n * H + h];
    qr[h] = qf + rr[n * H + h];
    const double s = static_cast<double>(qf) + static_cast<double>(rs[n * H + h]);
    qs[h] = s;
    e0 += s * static_cast<double>(se0[h]);
    e1 += s * static_cast<double>(se1[h]);
  }
  const double ef0 = xl_block_sum<BLOCK>(e0, scratch);
  const double ef1 = xl_block_sum<BLOCK>(e1, scratch);
  __syncthreads(); // qw, qr visible (xl_block_sum of one warp has no barrier)
  const xl_i64 p = b / (B / P);
  const float *kb = k + b * K * NH + static_cast<xl_i64>(n) * H;
  const float *krb = kR + (p * R + (S - i)) * NH + static_cast<xl_i64>(n) * H;
  const unsigned char *segRow = segMat + (b * S + i) * K;
  const unsigned char *maskRow = mask + (b * S + i) * K;
  double mloc = __longlong_as_double(static_cast<long long>(0xfff0000000000000ull));
  for (xl_i64 j = threadIdx.x; j < K; j += BLOCK) {
    const float *kj = kb + j * NH, *krj = krb + j * NH;
    double ac = 0.0, bd = 0.0;
    for (int h = 0; h < H; ++h) {
      ac += static_cast<double>(qw[h]) * static_cast<double>(kj[h]);
      bd += static_cast<double>(qr[h]) * static_cast<double>(krj[h]);
    }
    const double s = (ac + bd + (segRow[j] ? ef1 : ef0)) * scale -
                     1e30 * static_cast<double>(maskRow[j]);
    prob[j] = s;
    mloc = s > mloc ? s : mloc;
  }
  const double mx = xl_block_max<BLOCK>(
      mloc, scratch, -__longlong_as_double(0x7ff0000000000000ll)); // -inf
  double sum = 0.0;
  for (xl_i64 j = threadIdx.x; j < K; j += BLOCK) {
    const double x = prob[j] - mx;
    const double e = x < -746.0 ? 0.0 : exp(x);
    prob[j] = e;
    sum += e;
  }
  const double inv = 1.0 / xl_block_sum<BLOCK>(sum, scratch);
  for (xl_i64 j = threadIdx.x; j < K; j += BLOCK)
    prob[j] *= inv;
  __syncthreads();
}

//===----------------------------------------------------------------------===//
// rel_attention
//===----------------------------------------------------------------------===//

/// rel_attention (file comment). Arguments: q, k, v, k_r, seg_embed,
/// r_w_bias, r_r_bias, r_s_bias, seg_mat, mask, rows (ignored without
/// HAS_ROWS), out [B,T,N,H], status, site, rnd. Dynamic smem: K * 8 bytes.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int BLOCK, typename T_q, typename T_k, typename T_v, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_out>
XL_DEVICE void xl_rel_attention(
    const T_q *XL_RESTRICT q, const T_k *XL_RESTRICT k,
    const T_v *XL_RESTRICT v, const T_kR *XL_RESTRICT kR,
    const T_segEmb *XL_RESTRICT segEmb, const T_rw *XL_RESTRICT rw,
    const T_rr *XL_RESTRICT rr, const T_rs *XL_RESTRICT rs,
    const unsigned char *XL_RESTRICT segMat,
    const unsigned char *XL_RESTRICT mask, const xl_i64 *XL_RESTRICT rows,
    T_out *XL_RESTRICT out, int *status, xl_i64 site,
    XlStepRandom rnd) {
  static_assert(B > 0 && P > 0 && B % P == 0, "rel_attention: P divides B");
  static_assert(R == K + S, "rel_attention: R = K + S");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: multiple of 32");
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 kRows = B * T * N;
  XL_SHARED float qw[H];
  XL_SHARED float qr[H];
  XL_SHARED double qs[H];
  XL_SHARED double scratch[BLOCK / 32 > 0 ? BLOCK / 32 : 1];
  XL_DYN_SMEM(double, prob); // [K]
  const XlDropKey key = xl_drop_key(rnd, site, T * N * K);
  for (xl_i64 row = blockIdx.x; row < kRows; row += gridDim.x) {
    const int n = static_cast<int>(row % N);
    const xl_i64 bt = row / N, t = bt % T, b = bt / T;
    float *orow = out + row * H;
    __syncthreads(); // the previous row is done with the shared buffers
    const xl_i64 i = xl_attn_position<T, S, HAS_ROWS>(rows, b, t, status,
                                                      threadIdx.x == 0 && n == 0);
    if (i < 0 || K == 0) {
      for (int h = threadIdx.x; h < H; h += BLOCK)
        orow[h] = 0.0f;
      continue;
    }
    xl_attn_row_softmax<B, T, N, H, K, S, P, R, SCALE_BITS, BLOCK>(
        b, t, n, i, q, k, kR, segEmb, rw, rr, rs, segMat, mask, qw, qr, qs,
        prob, scratch);
    for (xl_i64 j = threadIdx.x; j < K; j += BLOCK)
      prob[j] = static_cast<double>(static_cast<float>(
          prob[j] * xl_attn_drop_factor<DROP_BITS>(
                        key, static_cast<xl_u64>(row * K + j))));
    __syncthreads();
    const float *vb = v + b * K * NH + static_cast<xl_i64>(n) * H;
    for (int h = threadIdx.x; h < H; h += BLOCK) {
      double acc = 0.0;
      for (xl_i64 j = 0; j < K; ++j)
        acc += prob[j] * static_cast<double>(vb[j * NH + h]);
      orow[h] = static_cast<float>(acc);
    }
  }
}

//===----------------------------------------------------------------------===//
// rel_attention_grad
//===----------------------------------------------------------------------===//

/// rel_attention_grad, PHASE 0 then PHASE 1 (file comment). Arguments: dout,
/// q, k, v, k_r, seg_embed, r_w_bias, r_r_bias, r_s_bias, seg_mat, mask,
/// rows (ignored without HAS_ROWS); dq, dk, dv, dk_r, dseg_embed, dr_w_bias,
/// dr_r_bias, dr_s_bias; workspace (8 * B*T*N * (2H + 2 + K) bytes), status,
/// site, rnd. Dynamic smem: PHASE 0 2 * K * 8 bytes, PHASE 1 none.
template <xl_i64 B, xl_i64 T, int N, int H, xl_i64 K, xl_i64 S, int P,
          xl_i64 R, int HAS_ROWS, xl_u64 SCALE_BITS, unsigned DROP_BITS,
          int PHASE, int BLOCK, typename T_dout, typename T_q, typename T_k, typename T_v, typename T_kR, typename T_segEmb, typename T_rw, typename T_rr, typename T_rs, typename T_dq, typename T_dk, typename T_dv, typename T_dkR, typename T_dsegEmb, typename T_drw, typename T_drr, typename T_drs>
XL_DEVICE void xl_rel_attention_grad(
    const T_dout *XL_RESTRICT dout, const T_q *XL_RESTRICT q,
    const T_k *XL_RESTRICT k, const T_v *XL_RESTRICT v,
    const T_kR *XL_RESTRICT kR, const T_segEmb *XL_RESTRICT segEmb,
    const T_rw *XL_RESTRICT rw, const T_rr *XL_RESTRICT rr,
    const T_rs *XL_RESTRICT rs, const unsigned char *XL_RESTRICT segMat,
    const unsigned char *XL_RESTRICT mask, const xl_i64 *XL_RESTRICT rows,
    T_dq *XL_RESTRICT dq, T_dk *XL_RESTRICT dk, T_dv *XL_RESTRICT dv,
    T_dkR *XL_RESTRICT dkR, T_dsegEmb *XL_RESTRICT dsegEmb,
    T_drw *XL_RESTRICT drw, T_drr *XL_RESTRICT drr, T_drs *XL_RESTRICT drs,
    double *XL_RESTRICT workspace, int *status, xl_i64 site,
    XlStepRandom rnd) {
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  static_assert(B > 0 && P > 0 && B % P == 0, "rel_attention: P divides B");
  static_assert(R == K + S, "rel_attention: R = K + S");
  static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK: multiple of 32");
  constexpr xl_i64 NH = static_cast<xl_i64>(N) * H;
  constexpr xl_i64 kRows = B * T * N;
  constexpr xl_i64 kStat = 2 * H + 2; // dq_w [H], dq_r [H], c0, c1
  double *stats = workspace;
  float *wA = reinterpret_cast<float *>(workspace + kRows * kStat);
  float *wC = wA + kRows * K;
  if constexpr (PHASE == 0) {
    XL_SHARED float qw[H];
    XL_SHARED float qr[H];
    XL_SHARED double qs[H];
    XL_SHARED float go[H];
    XL_SHARED double scratch[BLOCK / 32 > 0 ? BLOCK / 32 : 1];
    XL_DYN_SMEM(double, smem); // prob [K], then dP' / c [K]
    double *prob = smem, *dp = smem + K;
    const XlDropKey key = xl_drop_key(rnd, site, T * N * K);
    const double scale =
        __longlong_as_double(static_cast<long long>(SCALE_BITS));
    for (xl_i64 row = blockIdx.x; row < kRows; row += gridDim.x) {
      const int n = static_cast<int>(row % N);
      const xl_i64 bt = row / N, t = bt % T, b = bt / T;
      float *dqRow = dq + row * H;
      double *st = stats + row * kStat;
      float *aRow = wA + row * K, *cRow = wC + row * K;
      __syncthreads(); // the previous row is done with the shared buffers
      const xl_i64 i = xl_attn_position<T, S, HAS_ROWS>(
          rows, b, t, status, threadIdx.x == 0 && n == 0);
      if (i < 0 || K == 0) { // padding: no gradient anywhere
        for (int h = threadIdx.x; h < H; h += BLOCK)
          dqRow[h] = 0.0f;
        for (xl_i64 x = threadIdx.x; x < kStat; x += BLOCK)
          st[x] = 0.0;
        for (xl_i64 j = threadIdx.x; j < K; j += BLOCK)
          aRow[j] = cRow[j] = 0.0f;
        continue;
      }
      for (int h = threadIdx.x; h < H; h += BLOCK)
        go[h] = dout[row * H + h];
      xl_attn_row_softmax<B, T, N, H, K, S, P, R, SCALE_BITS, BLOCK>(
          b, t, n, i, q, k, kR, segEmb, rw, rr, rs, segMat, mask, qw, qr, qs,
          prob, scratch);
      // dP'_j = (dout . v_j) * factor_j; A_j = float(P_j * factor_j).
      const float *vb = v + b * K * NH + static_cast<xl_i64>(n) * H;
      double dloc = 0.0;
      for (xl_i64 j = threadIdx.x; j < K; j += BLOCK) {
        const double f = xl_attn_drop_factor<DROP_BITS>(
            key, static_cast<xl_u64>(row * K + j));
        const float *vj = vb + j * NH;
        double d = 0.0;
        for (int h = 0; h < H; ++h)
          d += static_cast<double>(go[h]) * static_cast<double>(vj[h]);
        d *= f;
        dp[j] = d;
        aRow[j] = static_cast<float>(prob[j] * f);
        dloc += prob[j] * d;
      }
      const double dot = xl_block_sum<BLOCK>(dloc, scratch);
      const unsigned char *segRow = segMat + (b * S + i) * K;
      const unsigned char *maskRow = mask + (b * S + i) * K;
      double c0 = 0.0, c1 = 0.0;
      for (xl_i64 j = threadIdx.x; j < K; j += BLOCK) {
        const double c = maskRow[j] ? 0.0 : prob[j] * (dp[j] - dot) * scale;
        const float cf = static_cast<float>(c);
        cRow[j] = cf;
        dp[j] = static_cast<double>(cf);
        if (segRow[j])
          c1 += c;
        else
          c0 += c;
      }
      c0 = xl_block_sum<BLOCK>(c0, scratch);
      c1 = xl_block_sum<BLOCK>(c1, scratch);
      __syncthreads(); // dp (now c) visible to every thread
      const xl_i64 p = b / (B / P);
      const float *kb = k + b * K * NH + static_cast<xl_i64>(n) * H;
      const float *krb =
          kR + (p * R + (S - i)) * NH + static_cast<xl_i64>(n) * H;
      const float *se0 = segEmb + static_cast<xl_i64>(n) * H;
      const float *se1 = segEmb + (static_cast<xl_i64>(N) + n) * H;
      for (int h = threadIdx.x; h < H; h += BLOCK) {
        double w = 0.0, r = 0.0;
        for (xl_i64 j = 0; j < K; ++j) {
          w += dp[j] * static_cast<double>(kb[j * NH + h]);
          r += dp[j] * static_cast<double>(krb[j * NH + h]);
        }
        const double s = c0 * static_cast<double>(se0[h]) +
                         c1 * static_cast<double>(se1[h]);
        dqRow[h] = static_cast<float>(w + r + s);
        st[h] = w;
        st[H + h] = r;
      }
      if (threadIdx.x == 0) {
        st[2 * H] = c0;
        st[2 * H + 1] = c1;
      }
    }
  } else {
    (void)rnd, (void)status, (void)k, (void)v, (void)segMat, (void)mask;
    constexpr xl_i64 kDkv = B * K * NH;    // dk, dv elements
    constexpr xl_i64 kDkr = P * R * NH;    // dk_r elements
    constexpr xl_i64 kTotal = kDkv + kDkr + NH; // + bias / seg_embed columns
    for (xl_i64 e = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
         e < kTotal; e += static_cast<xl_i64>(gridDim.x) * BLOCK) {
      if (e < kDkv) {
        const xl_i64 nh = e % NH, bj = e / NH, j = bj % K, b = bj / K;
        const int n = static_cast<int>(nh / H);
        const float rwv = rw[nh];
        double sv = 0.0, sk = 0.0;
        for (xl_i64 t = 0; t < T; ++t) {
          const xl_i64 row = (b * T + t) * N + n;
          const xl_i64 qi = (b * T + t) * NH + nh;
          sv += static_cast<double>(wA[row * K + j]) *
                static_cast<double>(dout[qi]);
          sk += static_cast<double>(wC[row * K + j]) *
                static_cast<double>(q[qi] + rwv);
        }
        dv[e] = static_cast<float>(sv);
        dk[e] = static_cast<float>(sk);
      } else if (e < kDkv + kDkr) {
        const xl_i64 x = e - kDkv;
        const xl_i64 nh = x % NH, pr = x / NH, r = pr % R, p = pr / R;
        const int n = static_cast<int>(nh / H);
        const float rrv = rr[nh];
        constexpr xl_i64 kPerCopy = B / P;
        double acc = 0.0;
        for (xl_i64 b = p * kPerCopy; b < (p + 1) * kPerCopy; ++b)
          for (xl_i64 t = 0; t < T; ++t) {
            const xl_i64 i =
                xl_attn_position<T, S, HAS_ROWS>(rows, b, t, nullptr, false);
            if (i < 0)
              continue;
            const xl_i64 j = r - S + i;
            if (j < 0 || j >= K)
              continue;
            const xl_i64 row = (b * T + t) * N + n;
            acc += static_cast<double>(wC[row * K + j]) *
                   static_cast<double>(q[(b * T + t) * NH + nh] + rrv);
          }
        dkR[x] = static_cast<float>(acc);
      } else {
        const xl_i64 nh = e - kDkv - kDkr;
        const int n = static_cast<int>(nh / H);
        const int h = static_cast<int>(nh % H);
        const double se0 = segEmb[nh], se1 = segEmb[NH + nh];
        const double rsv = rs[nh];
        double aw = 0.0, ar = 0.0, as = 0.0, a0 = 0.0, a1 = 0.0;
        for (xl_i64 bt = 0; bt < B * T; ++bt) {
          const double *st = stats + (bt * N + n) * kStat;
          const double c0 = st[2 * H], c1 = st[2 * H + 1];
          const double qsv = static_cast<double>(q[bt * NH + nh]) + rsv;
          aw += st[h];
          ar += st[H + h];
          as += c0 * se0 + c1 * se1;
          a0 += c0 * qsv;
          a1 += c1 * qsv;
        }
        drw[nh] = static_cast<float>(aw);
        drr[nh] = static_cast<float>(ar);
        drs[nh] = static_cast<float>(as);
        dsegEmb[nh] = static_cast<float>(a0);
        dsegEmb[NH + nh] = static_cast<float>(a1);
      }
    }
  }
}

#endif // XLNETC_K_ATTENTION_CUH
