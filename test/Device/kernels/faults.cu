//===- faults.cu - Kernels with barrier and collective bugs ---------------===//
//
// Same-source kernels for EmuTest's error tests: deadlocks, divergent
// barriers, a trap, a failed assert, a lane outside its mask, an mma with
// missing lanes, and legal early exits that must NOT be errors. The tests
// check the messages exactly, including the source lines of the waits: they
// are the constants below, and a static_assert after each wait fails the
// build when an edit moves it (then update the constant).
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// Lines of the waits and faults below, as the error messages name them.
namespace fault_line {
constexpr int kDeadlockShfl = 35;
constexpr int kDeadlockBar = 38;
constexpr int kDivergentA = 50;
constexpr int kDivergentB = 54;
constexpr int kTrap = 75;
constexpr int kAssert = 85;
constexpr int kMask = 94;
constexpr int kMma = 106;
constexpr int kBallot = 116;
constexpr int kShfl = 119;
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
