//===- faults.cu - Kernels with barrier and collective bugs ---------------===//
//
// Same-source kernels for EmuTest's error tests: deadlocks, divergent
// barriers, a trap, a failed assert, a lane outside its mask, an mma with
// missing lanes, collectives reached from two call sites, misaligned vector
// loads and stores, and legal early exits that must NOT be errors. The tests
// check the messages exactly, including the source lines of the waits: they
// are the constants below, and a static_assert after each wait fails the
// build when an edit moves it (then update the constant).
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// Lines of the waits and faults below, as the error messages name them.
namespace fault_line {
constexpr int kDeadlockShfl = 43;
constexpr int kDeadlockBar = 46;
constexpr int kDivergentA = 58;
constexpr int kDivergentB = 62;
constexpr int kTrap = 83;
constexpr int kAssert = 93;
constexpr int kMask = 102;
constexpr int kMma = 114;
constexpr int kBallot = 124;
constexpr int kShfl = 127;
constexpr int kShflSiteA = 139;
constexpr int kShflSiteB = 142;
constexpr int kMmaSiteA = 155;
constexpr int kMmaSiteB = 158;
constexpr int kLoad16 = 188;
constexpr int kLoad8 = 192;
constexpr int kLoad4 = 196;
} // namespace fault_line

/// In block 1 only: warp 0 and the upper half of warp 1 reach __syncthreads,
/// the lower half of warp 1 waits at a full-warp shuffle that can never
/// complete. Deadlock.
XL_KERNEL void fault_deadlock(int *out) {
  int tid = threadIdx.x;
  int v = tid;
  if (blockIdx.x == 1 && tid >= 32 && tid < 48) {
    v = __shfl_sync(0xffffffffu, v, 0);
    static_assert(__LINE__ - 1 == fault_line::kDeadlockShfl, "moved");
  } else {
    __syncthreads();
    static_assert(__LINE__ - 1 == fault_line::kDeadlockBar, "moved");
  }
  out[blockIdx.x * blockDim.x + tid] = v;
}
XL_EXPORT(fault_deadlock)

/// Two different __syncthreads: each half of the block takes one.
XL_KERNEL void fault_divergent_barrier(int *out) {
  int tid = threadIdx.x;
  if (tid < 32) {
    out[tid] = 1;
    __syncthreads();
    static_assert(__LINE__ - 1 == fault_line::kDivergentA, "moved");
  } else {
    out[tid] = 2;
    __syncthreads();
    static_assert(__LINE__ - 1 == fault_line::kDivergentB, "moved");
  }
}
XL_EXPORT(fault_divergent_barrier)

/// Threads >= live return early; the rest meet at __syncthreads (legal:
/// exited threads count as arrived) and then shuffle with the full mask,
/// reading lanes that exited (undefined on a GPU; poison here).
XL_KERNEL void early_exit(int live, int *out) {
  int tid = threadIdx.x;
  if (tid >= live)
    return;
  __syncthreads();
  out[tid] = __shfl_down_sync(0xffffffffu, tid, 4);
}
XL_EXPORT(early_exit)

/// Thread 5 of block 1 traps.
XL_KERNEL void fault_trap(int *out) {
  if (blockIdx.x == 1 && threadIdx.x == 5) {
    __trap();
    static_assert(__LINE__ - 1 == fault_line::kTrap, "moved");
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}
XL_EXPORT(fault_trap)

/// assert on a value that is negative for thread 3.
XL_KERNEL void fault_assert(const int *in) {
  int v = in[threadIdx.x];
  assert(v >= 0);
  static_assert(__LINE__ - 1 == fault_line::kAssert, "moved");
}
XL_EXPORT(fault_assert)

/// Lane 3 passes a mask without its own bit.
XL_KERNEL void fault_mask(int *out) {
  int lane = threadIdx.x;
  unsigned mask = lane == 3 ? 0x1u : 0xffffffffu;
  out[lane] = __shfl_sync(mask, lane, 0);
  static_assert(__LINE__ - 1 == fault_line::kMask, "moved");
}
XL_EXPORT(fault_mask)

/// The upper half of the warp exits before an mma (.aligned: needs all).
XL_KERNEL void fault_mma_partial(float *out) {
  int lane = threadIdx.x;
  if (lane >= 16)
    return;
  u32 a[4] = {0u, 0u, 0u, 0u}, b[2] = {0u, 0u};
  float c[4] = {0.0f, 0.0f, 0.0f, 0.0f}, d[4];
  xl_mma_m16n8k16_bf16(d, a, b, c);
  static_assert(__LINE__ - 1 == fault_line::kMma, "moved");
  out[lane] = d[0];
}
XL_EXPORT(fault_mma_partial)

/// Half the warp votes while the other half shuffles, same mask.
XL_KERNEL void fault_divergent_collective(int *out) {
  int lane = threadIdx.x;
  if (lane < 16) {
    out[lane] = static_cast<int>(__ballot_sync(0xffffffffu, 1));
    static_assert(__LINE__ - 1 == fault_line::kBallot, "moved");
  } else {
    out[lane] = __shfl_sync(0xffffffffu, lane, 0);
    static_assert(__LINE__ - 1 == fault_line::kShfl, "moved");
  }
}
XL_EXPORT(fault_divergent_collective)

/// Lanes below `split` shuffle at one call site, the others at another: the
/// same op and mask, but a divergent branch (the GPU would pair lanes of two
/// different instructions). split 0 or 32 keeps the warp together: correct.
XL_KERNEL void fault_shfl_two_sites(int *out, int split) {
  int lane = threadIdx.x;
  if (lane < split) {
    out[lane] = __shfl_xor_sync(0xffffffffu, lane, 1);
    static_assert(__LINE__ - 1 == fault_line::kShflSiteA, "moved");
  } else {
    out[lane] = __shfl_xor_sync(0xffffffffu, lane, 1);
    static_assert(__LINE__ - 1 == fault_line::kShflSiteB, "moved");
  }
}
XL_EXPORT(fault_shfl_two_sites)

/// The same for mma.sync, whose .aligned form requires every lane to execute
/// the same instruction.
XL_KERNEL void fault_mma_two_sites(float *out, int split) {
  int lane = threadIdx.x;
  u32 a[4] = {0u, 0u, 0u, 0u}, b[2] = {0u, 0u};
  float c[4] = {1.0f, 1.0f, 1.0f, 1.0f}, d[4];
  if (lane < split) {
    xl_mma_m16n8k16_bf16(d, a, b, c);
    static_assert(__LINE__ - 1 == fault_line::kMmaSiteA, "moved");
  } else {
    xl_mma_m16n8k16_bf16(d, a, b, c);
    static_assert(__LINE__ - 1 == fault_line::kMmaSiteB, "moved");
  }
  out[lane] = d[0];
}
XL_EXPORT(fault_mma_two_sites)

/// The halves of the warp meet at two different __syncwarp sites: legal on
/// sm_70+ (bar.warp.sync pairs lanes by mask, not by instruction). Each lane
/// then reads the value the other half wrote.
XL_KERNEL void syncwarp_two_sites(int *out) {
  XL_SHARED int buf[32];
  int lane = threadIdx.x;
  buf[lane] = lane * 10;
  if (lane < 16)
    __syncwarp();
  else
    __syncwarp();
  out[lane] = buf[lane ^ 16];
}
XL_EXPORT(syncwarp_two_sites)

/// Thread t copies one vector of `bytes` bytes (16: float4, 8: int2, 4:
/// uchar4) from src + srcOffset + bytes * t to dst + dstOffset + bytes * t.
/// An offset that is not a multiple of `bytes` is a misaligned address.
XL_KERNEL void vector_copy(const unsigned char *src, unsigned char *dst,
                           int bytes, int srcOffset, int dstOffset) {
  const unsigned char *s = src + srcOffset + bytes * threadIdx.x;
  unsigned char *d = dst + dstOffset + bytes * threadIdx.x;
  if (bytes == 16) {
    float4 v = *reinterpret_cast<const float4 *>(s);
    static_assert(__LINE__ - 1 == fault_line::kLoad16, "moved");
    *reinterpret_cast<float4 *>(d) = v;
  } else if (bytes == 8) {
    int2 v = *reinterpret_cast<const int2 *>(s);
    static_assert(__LINE__ - 1 == fault_line::kLoad8, "moved");
    *reinterpret_cast<int2 *>(d) = v;
  } else {
    uchar4 v = *reinterpret_cast<const uchar4 *>(s);
    static_assert(__LINE__ - 1 == fault_line::kLoad4, "moved");
    *reinterpret_cast<uchar4 *>(d) = v;
  }
}
XL_EXPORT(vector_copy)
