//===- xlnetc_prelude.cuh - Same-source kernel prelude ----------*- C++ -*-===//
//
// Every generated kernel source includes this header first. The same source
// then compiles two ways (design/cuda.md §2):
//
//  - NVRTC (__CUDACC_RTC__) or nvcc (__CUDACC__): CUDA built-ins plus inline
//    PTX for what the built-ins lack (bf16/f16 conversion, mma.sync,
//    ldmatrix, cp.async). It includes no CUDA header at all, so NVRTC needs
//    no -I path and a compile stays fast.
//  - Any other compiler: the SIMT emulator (xlnetc_emu.cuh), where the same
//    names are host functions with the semantics the PTX ISA specifies.
//
// The vocabulary, identical on both sides:
//
//   XL_KERNEL            extern "C" __global__ (a static function on the host)
//   XL_EXPORT(k)         after kernel k: nothing on the GPU; on the host the
//                        launcher xlnetc_emu_launch_k (xlnetc_emu_abi.h)
//   XL_DEVICE            __device__ __forceinline__ (inline on the host)
//   XL_SHARED            __shared__ (static thread_local on the host)
//   XL_DYN_SMEM(T, name) T *name = the dynamic shared memory, 128-byte aligned
//   XL_RESTRICT          __restrict__
//   XL_ALIGN(n)          alignment of a declaration
//   u32                  a 32-bit register of an mma/ldmatrix fragment
//   xl_bf16, xl_f16      16-bit storage types: struct { unsigned short x; }
//   xl_float2bf16, xl_bf162float, xl_float2f16, xl_f162float (round to
//   nearest even); xl_pack_bf16x2(lo, hi), xl_pack_f16x2(lo, hi)
//   xl_mma_m16n8k16_bf16 / _f16(d[4], a[4], b[2], c[4])
//   xl_ldmatrix<NUM, TRANS>(r, row), xl_ldmatrix_x{1,2,4}{,_trans}(r, row)
//   xl_cp_async_16(dst, src), xl_cp_async_16_zfill(dst, src, src_bytes),
//   xl_cp_async_commit(), xl_cp_async_wait<N>(), xl_cp_async_wait_all()
//
// plus the CUDA built-ins themselves (threadIdx, __syncthreads,
// __shfl_xor_sync, atomicAdd, __expf, the vector types float4, int2, ...
// with make_float4, ...), which the host side provides under their CUDA
// names, and `#pragma unroll` (ignored on the host; g++
// warns about it unless -Wno-unknown-pragmas). The fragment layouts are
// documented in xlnetc_emu_tensor.cuh; the emulator's rules in
// xlnetc_emu.cuh.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_PRELUDE_CUH
#define XLNETC_PRELUDE_CUH

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)

//===----------------------------------------------------------------------===//
// GPU
//===----------------------------------------------------------------------===//

typedef unsigned int u32;

#define XL_KERNEL extern "C" __global__
#define XL_EXPORT(k)
#define XL_DEVICE __device__ __forceinline__
#define XL_SHARED __shared__
#define XL_RESTRICT __restrict__
#define XL_ALIGN(n) __attribute__((aligned(n)))
// extern __shared__ arrays all alias the block's dynamic shared memory; the
// 128-byte alignment is what TMA/ldmatrix-friendly swizzles assume.
#define XL_DYN_SMEM(T, name)                                                   \
  extern __shared__                                                            \
      __attribute__((aligned(128))) unsigned char xl_dyn_smem_[];              \
  T *name = reinterpret_cast<T *>(xl_dyn_smem_)

/// bfloat16 as its bits; arithmetic goes through float. A buffer of them
/// reads and writes like a float buffer: loading converts exactly, storing
/// rounds to nearest even (kernels template their pointers on the storage
/// type, float or xl_bf16, and compute in float).
struct xl_bf16 {
  unsigned short x;
  xl_bf16() = default;
  XL_DEVICE xl_bf16(float f) {
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(x) : "f"(f));
  }
  XL_DEVICE xl_bf16(double d) : xl_bf16(static_cast<float>(d)) {}
  // A bf16 is made from a value, never from its bits: xl_bf16{bits} would
  // convert the integer (set .x for bits).
  xl_bf16(int) = delete;
  xl_bf16(unsigned) = delete;
  xl_bf16(short) = delete;
  xl_bf16(unsigned short) = delete;
  xl_bf16(long) = delete;
  xl_bf16(unsigned long) = delete;
  xl_bf16(long long) = delete;
  xl_bf16(unsigned long long) = delete;
  XL_DEVICE operator float() const {
    return __uint_as_float(static_cast<unsigned>(x) << 16);
  }
};
/// IEEE binary16 as its bits; arithmetic goes through float.
struct xl_f16 {
  unsigned short x;
};

/// float -> bf16, round to nearest even (sm_80+).
XL_DEVICE xl_bf16 xl_float2bf16(float f) {
  xl_bf16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
/// bf16 -> float: the bits are the upper half of the float.
XL_DEVICE float xl_bf162float(xl_bf16 h) {
  return __uint_as_float(static_cast<unsigned>(h.x) << 16);
}
/// float -> f16, round to nearest even.
XL_DEVICE xl_f16 xl_float2f16(float f) {
  xl_f16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r.x) : "f"(f));
  return r;
}
/// f16 -> float (exact).
XL_DEVICE float xl_f162float(xl_f16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.x));
  return f;
}
/// Two floats as bf16 in one register, `lo` in bits 0-15 (the element order
/// of mma fragments). cvt.rn.bf16x2.f32 d, a, b puts a in the upper half.
XL_DEVICE u32 xl_pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
/// The f16 twin of xl_pack_bf16x2.
XL_DEVICE u32 xl_pack_f16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// D = A*B + C on the tensor cores, bf16 inputs, f32 accumulators. Executed
/// by all 32 lanes together; fragment layouts in xlnetc_emu_tensor.cuh.
XL_DEVICE void xl_mma_m16n8k16_bf16(float d[4], const u32 a[4], const u32 b[2],
                                    const float c[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}
/// The f16 twin of xl_mma_m16n8k16_bf16.
XL_DEVICE void xl_mma_m16n8k16_f16(float d[4], const u32 a[4], const u32 b[2],
                                   const float c[4]) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

/// 32-bit shared-state-space address of a generic pointer into shared memory.
XL_DEVICE u32 xl_smem_addr(const void *p) {
  return static_cast<u32>(__cvta_generic_to_shared(p));
}

/// ldmatrix.sync.aligned.m8n8.x{NUM}{.trans}.shared.b16: each lane passes one
/// 16-byte row address (lanes 8i..8i+7 the rows of matrix i).
template <int NUM, bool TRANS = false>
XL_DEVICE void xl_ldmatrix(u32 *r, const void *smem_row) {
  static_assert(NUM == 1 || NUM == 2 || NUM == 4, "ldmatrix loads 1, 2 or 4");
  u32 addr = xl_smem_addr(smem_row);
  if constexpr (NUM == 1 && !TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(addr));
  else if constexpr (NUM == 1 && TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
                 : "=r"(r[0])
                 : "r"(addr));
  else if constexpr (NUM == 2 && !TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr));
  else if constexpr (NUM == 2 && TRANS)
    asm volatile(
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
        : "=r"(r[0]), "=r"(r[1])
        : "r"(addr));
  else if constexpr (NUM == 4 && !TRANS)
    asm volatile(
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
        : "r"(addr));
  else
    asm volatile(
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
        : "r"(addr));
}
XL_DEVICE void xl_ldmatrix_x1(u32 *r, const void *p) {
  xl_ldmatrix<1, false>(r, p);
}
XL_DEVICE void xl_ldmatrix_x2(u32 *r, const void *p) {
  xl_ldmatrix<2, false>(r, p);
}
XL_DEVICE void xl_ldmatrix_x4(u32 *r, const void *p) {
  xl_ldmatrix<4, false>(r, p);
}
XL_DEVICE void xl_ldmatrix_x1_trans(u32 *r, const void *p) {
  xl_ldmatrix<1, true>(r, p);
}
XL_DEVICE void xl_ldmatrix_x2_trans(u32 *r, const void *p) {
  xl_ldmatrix<2, true>(r, p);
}
XL_DEVICE void xl_ldmatrix_x4_trans(u32 *r, const void *p) {
  xl_ldmatrix<4, true>(r, p);
}

/// cp.async.cg (L2 only, bypassing L1: the data is staged in shared memory
/// anyway) of 16 bytes, global -> shared, asynchronous until a wait_group.
XL_DEVICE void xl_cp_async_16(void *dst_smem, const void *src_gmem) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                   xl_smem_addr(dst_smem)),
               "l"(src_gmem));
}
/// cp.async with src-size: reads src_bytes (0..16) and zero-fills the rest,
/// so a tile's tail needs no branch around the copy.
XL_DEVICE void xl_cp_async_16_zfill(void *dst_smem, const void *src_gmem,
                                    int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                   xl_smem_addr(dst_smem)),
               "l"(src_gmem), "r"(src_bytes));
}
/// Closes the group of cp.async issued since the previous commit.
XL_DEVICE void xl_cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
/// Waits until at most N committed groups are still in flight.
template <int N> XL_DEVICE void xl_cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
/// Waits for every cp.async of the thread (commit + wait_group 0).
XL_DEVICE void xl_cp_async_wait_all() {
  asm volatile("cp.async.wait_all;\n" ::);
}

#else

//===----------------------------------------------------------------------===//
// Host: the SIMT emulator
//===----------------------------------------------------------------------===//

#include "xlnetc_emu.cuh"

#endif

#endif // XLNETC_PRELUDE_CUH
