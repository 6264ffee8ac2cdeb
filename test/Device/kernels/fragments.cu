//===- fragments.cu - Probes of mma, ldmatrix and cp.async ----------------===//
//
// Same-source kernels for EmuTest that expose the tensor-core and async-copy
// primitives per lane, so the test can check register fragments against the
// PTX ISA layouts written out independently on the host. One warp each.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// d = A*B + C from per-lane fragments a[4*lane..], b[2*lane..], c[4*lane..];
/// f16 != 0 selects the f16 variant.
XL_KERNEL void mma_probe(const u32 *a, const u32 *b, const float *c, float *d,
                         int f16) {
  int lane = threadIdx.x;
  u32 fa[4] = {a[4 * lane], a[4 * lane + 1], a[4 * lane + 2], a[4 * lane + 3]};
  u32 fb[2] = {b[2 * lane], b[2 * lane + 1]};
  float fc[4] = {c[4 * lane], c[4 * lane + 1], c[4 * lane + 2],
                 c[4 * lane + 3]};
  float fd[4];
  if (f16)
    xl_mma_m16n8k16_f16(fd, fa, fb, fc);
  else
    xl_mma_m16n8k16_bf16(fd, fa, fb, fc);
  for (int i = 0; i < 4; ++i)
    d[4 * lane + i] = fd[i];
}
XL_EXPORT(mma_probe)

/// Copies 32 rows x 8 16-bit elements into shared memory, then every lane
/// passes the address of row rowOf[lane] to ldmatrix x{num}{.trans};
/// out[4*lane + i] receives register i.
XL_KERNEL void ldmatrix_probe(const unsigned short *src, const int *rowOf,
                              u32 *out, int num, int trans) {
  XL_SHARED XL_ALIGN(16) unsigned short tile[32 * 8];
  int lane = threadIdx.x;
  for (int i = 0; i < 8; ++i)
    tile[lane * 8 + i] = src[lane * 8 + i];
  __syncwarp();
  const unsigned short *row = &tile[rowOf[lane] * 8];
  u32 r[4] = {0u, 0u, 0u, 0u};
  if (num == 1)
    trans ? xl_ldmatrix_x1_trans(r, row) : xl_ldmatrix_x1(r, row);
  else if (num == 2)
    trans ? xl_ldmatrix_x2_trans(r, row) : xl_ldmatrix_x2(r, row);
  else
    trans ? xl_ldmatrix_x4_trans(r, row) : xl_ldmatrix_x4(r, row);
  for (int i = 0; i < 4; ++i)
    out[4 * lane + i] = r[i];
}
XL_EXPORT(ldmatrix_probe)

/// One thread issues cp.async into four 16-byte shared slots and snapshots
/// the slots (as 4 ints each) after each step:
///   slot 0 -> group 0, slot 1 -> group 1, slot 2 -> group 2 (zfill: 5 bytes)
///   snapshot 0 after wait_group 2    (group 0 done)
///   snapshot 1 after wait_group 1    (groups 0-1 done)
///   slot 3 issued, NOT committed
///   snapshot 2 after wait_group 0    (groups 0-2 done, slot 3 still stale)
///   commit; snapshot 3 after wait_group 0 (everything done)
/// The slots start as -1; src holds 4 x 4 ints.
XL_KERNEL void cp_async_groups(const int *src, int *snapshots) {
  XL_SHARED XL_ALIGN(16) int slots[16];
  if (threadIdx.x != 0)
    return;
  for (int i = 0; i < 16; ++i)
    slots[i] = -1;
  xl_cp_async_16(&slots[0], &src[0]);
  xl_cp_async_commit();
  xl_cp_async_16(&slots[4], &src[4]);
  xl_cp_async_commit();
  xl_cp_async_16_zfill(&slots[8], &src[8], 5);
  xl_cp_async_commit();
  xl_cp_async_wait<2>();
  for (int i = 0; i < 16; ++i)
    snapshots[i] = slots[i];
  xl_cp_async_wait<1>();
  for (int i = 0; i < 16; ++i)
    snapshots[16 + i] = slots[i];
  xl_cp_async_16(&slots[12], &src[12]);
  xl_cp_async_wait<0>();
  for (int i = 0; i < 16; ++i)
    snapshots[32 + i] = slots[i];
  xl_cp_async_commit();
  xl_cp_async_wait<0>();
  for (int i = 0; i < 16; ++i)
    snapshots[48 + i] = slots[i];
}
XL_EXPORT(cp_async_groups)

/// A warp GEMM through the whole pipeline, as the attention kernel uses it:
/// cp.async global -> shared, ldmatrix.x4 for A, ldmatrix.x2 for B from B^T
/// and ldmatrix.x2.trans for B itself, two mma. C = A[16x16] * B[16x8].
XL_KERNEL void warp_gemm(const xl_bf16 *A, const xl_bf16 *B, const xl_bf16 *Bt,
                         float *C, float *C2) {
  XL_SHARED XL_ALIGN(16) xl_bf16 As[16 * 16];
  XL_SHARED XL_ALIGN(16) xl_bf16 Bs[16 * 8];
  XL_SHARED XL_ALIGN(16) xl_bf16 Bts[8 * 16];
  int lane = threadIdx.x;
  // 512 bytes of A = 32 chunks of 16 bytes; B and B^T 16 chunks each.
  xl_cp_async_16(&As[lane * 8], &A[lane * 8]);
  if (lane < 16)
    xl_cp_async_16(&Bs[lane * 8], &B[lane * 8]);
  else
    xl_cp_async_16(&Bts[(lane - 16) * 8], &Bt[(lane - 16) * 8]);
  xl_cp_async_commit();
  xl_cp_async_wait<0>();
  __syncwarp();
  u32 a[4], b[2], b2[2];
  xl_ldmatrix_x4(a, &As[(lane % 16) * 16 + (lane / 16) * 8]);
  xl_ldmatrix_x2(b, &Bts[(lane % 8) * 16 + ((lane / 8) % 2) * 8]);
  xl_ldmatrix_x2_trans(b2, &Bs[(lane % 16) * 8]);
  float zero[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4], d2[4];
  xl_mma_m16n8k16_bf16(d, a, b, zero);
  xl_mma_m16n8k16_bf16(d2, a, b2, zero);
  int g = lane >> 2, t = lane & 3;
  for (int i = 0; i < 4; ++i) {
    int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
    C[row * 8 + col] = d[i];
    C2[row * 8 + col] = d2[i];
  }
}
XL_EXPORT(warp_gemm)
