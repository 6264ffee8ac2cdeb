//===- fa_tile.cu - An FA2-style attention forward for the emulator tests -===//
//
// softmax(scale * Q K^T) V for one head, head dim 64, the way the production
// attention kernel is built: 4 warps per block, 64 query rows per block (16
// per warp), key/value tiles of 64 rows double-buffered in shared memory by
// cp.async (+ zero-fill for the tails, wait_group 1 to overlap the next tile),
// Q and K fragments by ldmatrix, V by ldmatrix.trans, both products on
// mma.sync m16n8k16 bf16, and an online softmax whose S accumulators are
// re-packed as the A fragments of P. M and N need not be multiples of 64.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

namespace fa {

constexpr int kHeadDim = 64;
constexpr int kRows = 64; // query rows per block and key rows per tile
constexpr int kThreads = 128;

/// rows [row0, row0 + 64) of a [rows x 64] bf16 matrix into a 64x64 tile;
/// rows past the end are zero-filled (src-size 0 reads nothing).
XL_DEVICE void loadTile(xl_bf16 *dst, const xl_bf16 *src, int row0, int rows,
                        int tid) {
  // 64 rows x 128 bytes = 512 chunks of 16 bytes, 4 per thread.
  for (int c = tid; c < kRows * 8; c += kThreads) {
    int r = c >> 3, col = (c & 7) * 8;
    int gr = row0 + r;
    bool inside = gr < rows;
    xl_cp_async_16_zfill(
        &dst[r * kHeadDim + col],
        inside ? &src[static_cast<long long>(gr) * kHeadDim + col] : src,
        inside ? 16 : 0);
  }
}

} // namespace fa

XL_KERNEL void fa_tile(const xl_bf16 *XL_RESTRICT Q,
                       const xl_bf16 *XL_RESTRICT K,
                       const xl_bf16 *XL_RESTRICT V, float *XL_RESTRICT O,
                       int M, int N, float scale) {
  using namespace fa;
  XL_SHARED XL_ALIGN(128) xl_bf16 Qs[kRows * kHeadDim];
  XL_SHARED XL_ALIGN(128) xl_bf16 Ks[2][kRows * kHeadDim];
  XL_SHARED XL_ALIGN(128) xl_bf16 Vs[2][kRows * kHeadDim];
  const float kNegInf = __uint_as_float(0xff800000u);
  int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int g = lane >> 2, t = lane & 3;
  int q0 = blockIdx.x * kRows;
  int tiles = (N + kRows - 1) / kRows;

  // Group 0: Q and the first K/V tile.
  loadTile(Qs, Q, q0, M, tid);
  loadTile(Ks[0], K, 0, N, tid);
  loadTile(Vs[0], V, 0, N, tid);
  xl_cp_async_commit();

  u32 qf[4][4];  // A fragments of the warp's 16 rows, 4 k-steps of 16
  float o[8][4]; // O accumulators: 8 blocks of 8 head-dim columns
  float m0 = kNegInf, m1 = kNegInf, l0 = 0.0f, l1 = 0.0f; // rows g, g+8
#pragma unroll
  for (int n = 0; n < 8; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      o[n][i] = 0.0f;

  for (int j = 0; j < tiles; ++j) {
    int buf = j & 1;
    // Prefetch tile j+1 into the other buffer (freed by the barrier at the
    // end of iteration j-1); always commit so "all but the newest group"
    // means "everything up to tile j".
    if (j + 1 < tiles) {
      loadTile(Ks[buf ^ 1], K, (j + 1) * kRows, N, tid);
      loadTile(Vs[buf ^ 1], V, (j + 1) * kRows, N, tid);
    }
    xl_cp_async_commit();
    xl_cp_async_wait<1>();
    __syncthreads();

    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk)
        xl_ldmatrix_x4(qf[kk], &Qs[(warp * 16 + lane % 16) * kHeadDim +
                                   kk * 16 + (lane / 16) * 8]);
    }

    // S = Q K^T: B[k][n] = K[n][k], so K's rows load without .trans; one x4
    // covers two k-steps of one 8-key block.
    float s[8][4];
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        s[n][i] = 0.0f;
#pragma unroll
      for (int kk2 = 0; kk2 < 2; ++kk2) {
        u32 kb[4];
        xl_ldmatrix_x4(kb, &Ks[buf][(n * 8 + lane % 8) * kHeadDim + kk2 * 32 +
                                    (lane / 8) * 8]);
        xl_mma_m16n8k16_bf16(s[n], qf[2 * kk2], kb, s[n]);
        xl_mma_m16n8k16_bf16(s[n], qf[2 * kk2 + 1], kb + 2, s[n]);
      }
    }

    // Scale, mask the keys past N, and run the online softmax. Accumulator
    // i of block n is row g (+8 for i >= 2), key n*8 + 2t + (i & 1); a row
    // is spread over the 4 lanes of a quad.
    float mx0 = m0, mx1 = m1;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        int key = j * kRows + n * 8 + 2 * t + (i & 1);
        s[n][i] = key < N ? s[n][i] * scale : kNegInf;
      }
      mx0 = fmaxf(mx0, fmaxf(s[n][0], s[n][1]));
      mx1 = fmaxf(mx1, fmaxf(s[n][2], s[n][3]));
    }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    // Tile 0 always holds a valid key, so mx is finite from here on and
    // exp(-inf - mx) = 0 rescales the empty initial state.
    float a0 = __expf(m0 - mx0), a1 = __expf(m1 - mx1);
    m0 = mx0;
    m1 = mx1;
    l0 *= a0;
    l1 *= a1;

    // P = exp(S - m) in bf16. The C fragment of S block n is exactly half of
    // the A fragment of P for k-step n/2: no shuffle needed.
    u32 pf[4][4];
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      float p0 = __expf(s[n][0] - m0), p1 = __expf(s[n][1] - m0);
      float p2 = __expf(s[n][2] - m1), p3 = __expf(s[n][3] - m1);
      l0 += p0 + p1;
      l1 += p2 + p3;
      pf[n / 2][(n % 2) * 2 + 0] = xl_pack_bf16x2(p0, p1);
      pf[n / 2][(n % 2) * 2 + 1] = xl_pack_bf16x2(p2, p3);
    }
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      o[n][0] *= a0;
      o[n][1] *= a0;
      o[n][2] *= a1;
      o[n][3] *= a1;
    }

    // O += P V: B[k][n] = V[k][n] has k (keys) along rows, so V loads with
    // .trans; one x4.trans covers two 8-column blocks of one k-step.
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
      for (int n2 = 0; n2 < 4; ++n2) {
        u32 vb[4];
        xl_ldmatrix_x4_trans(vb, &Vs[buf][(kk * 16 + lane % 16) * kHeadDim +
                                          n2 * 16 + (lane / 16) * 8]);
        xl_mma_m16n8k16_bf16(o[2 * n2], pf[kk], vb, o[2 * n2]);
        xl_mma_m16n8k16_bf16(o[2 * n2 + 1], pf[kk], vb + 2, o[2 * n2 + 1]);
      }
    }
    // The next iteration's prefetch overwrites this tile's buffer.
    __syncthreads();
  }

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
#pragma unroll
  for (int n = 0; n < 8; ++n) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      int row = q0 + warp * 16 + g + (i >= 2 ? 8 : 0);
      int col = n * 8 + 2 * t + (i & 1);
      if (row < M)
        O[static_cast<long long>(row) * kHeadDim + col] =
            o[n][i] / (i >= 2 ? l1 : l0);
    }
  }
}
XL_EXPORT(fa_tile)
