//===- block.cu - Block-level test kernels --------------------------------===//
//
// Same-source kernels for EmuTest: a block reduction over many warps, the
// __syncthreads variants, dynamic shared memory, atomics across blocks, the
// built-in indices, the order in which a schedule resumes threads, and the
// classic missing-__syncthreads race.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// Per-block sum of x (blockDim.x a multiple of 32, up to 1024): warp
/// shuffles, one shared word per warp, a barrier, and warp 0 alone for the
/// tail. Deterministic: the summation order is fixed.
XL_KERNEL void block_reduce(const float *XL_RESTRICT x, float *partial, int n) {
  XL_SHARED float warpSums[32];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  float v = i < n ? x[i] : 0.0f;
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  if ((tid & 31) == 0)
    warpSums[tid >> 5] = v;
  __syncthreads();
  if (tid < 32) {
    float w = tid < static_cast<int>(blockDim.x >> 5) ? warpSums[tid] : 0.0f;
    for (int offset = 16; offset > 0; offset >>= 1)
      w += __shfl_xor_sync(0xffffffffu, w, offset);
    if (tid == 0)
      partial[blockIdx.x] = w;
  }
}
XL_EXPORT(block_reduce)

/// __syncthreads_count/_and/_or of pred[tid]; threads >= live exit first
/// (they count as arrived and are not counted).
XL_KERNEL void barrier_variants(const int *pred, int live, int *count, int *all,
                                int *any) {
  int tid = threadIdx.x;
  if (tid >= live)
    return;
  count[tid] = __syncthreads_count(pred[tid]);
  all[tid] = __syncthreads_and(pred[tid]);
  any[tid] = __syncthreads_or(pred[tid]);
}
XL_EXPORT(barrier_variants)

/// Reverses n floats per block through dynamic shared memory; block 0 writes
/// to info[0] the address modulo 128 and to info[1] the bits of the first
/// shared word before any write (the emulator's poison; undefined on a GPU).
XL_KERNEL void dyn_smem_reverse(const float *in, float *out, int n,
                                unsigned *info) {
  XL_DYN_SMEM(float, buf);
  int tid = threadIdx.x;
  if (blockIdx.x == 0 && tid == 0) {
    info[0] =
        static_cast<unsigned>(reinterpret_cast<unsigned long long>(buf) & 127u);
    info[1] = __float_as_uint(buf[0]);
  }
  __syncthreads();
  for (int i = tid; i < n; i += blockDim.x)
    buf[i] = in[blockIdx.x * n + i];
  __syncthreads();
  for (int i = tid; i < n; i += blockDim.x)
    out[blockIdx.x * n + i] = buf[n - 1 - i];
}
XL_EXPORT(dyn_smem_reverse)

/// Every thread of every block hits each atomic once.
struct AtomicTotals {
  int add;
  unsigned uadd;
  unsigned long long ulladd;
  float fadd;
  double dadd;
  int sub;
  int imax, imin;
  unsigned umax, umin;
  unsigned andBits, orBits, xorBits;
  int casCount;
  unsigned exchSlot;
  unsigned long long exchSum; // every value atomicExch took out of the slot
  unsigned inc;
};

XL_KERNEL void atomics_all(AtomicTotals *t) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&t->add, 2);
  atomicAdd(&t->uadd, 3u);
  atomicAdd(&t->ulladd, 1ull << 33);
  atomicAdd(&t->fadd, 1.0f);
  atomicAdd(&t->dadd, 0.5);
  atomicSub(&t->sub, 1);
  atomicMax(&t->imax, g - 1000);
  atomicMin(&t->imin, 1000 - g);
  atomicMax(&t->umax, static_cast<unsigned>(g) * 3u);
  atomicMin(&t->umin, static_cast<unsigned>(g) + 5u);
  atomicAnd(&t->andBits, ~(1u << (g & 31)) | 1u);
  atomicOr(&t->orBits, 1u << (g % 31));
  atomicXor(&t->xorBits, 1u << (g & 7));
  // A CAS loop increment (the pattern of a hand-written float max). The
  // first read is atomic too: a plain load racing with other blocks' CAS is
  // what TSan would (rightly) report.
  int old = atomicAdd(&t->casCount, 0), assumed;
  do {
    assumed = old;
    old = atomicCAS(&t->casCount, assumed, assumed + 1);
  } while (old != assumed);
  atomicAdd(&t->exchSum, static_cast<unsigned long long>(atomicExch(
                             &t->exchSlot, static_cast<unsigned>(g) + 1u)));
  atomicInc(&t->inc, 1000000u);
}
XL_EXPORT(atomics_all)

/// Writes threadIdx, blockIdx, blockDim, gridDim and the linear id of lane 0
/// of the thread's warp (8 words each, indexed by global linear thread id).
XL_KERNEL void indices(unsigned *out) {
  unsigned tlin =
      threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned blin =
      blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  unsigned *o = out + 8 * (blin * blockDim.x * blockDim.y * blockDim.z + tlin);
  o[0] = threadIdx.x;
  o[1] = threadIdx.y;
  o[2] = threadIdx.z;
  o[3] = blockIdx.x;
  o[4] = blockIdx.y;
  o[5] = blockIdx.z;
  o[6] = (blockDim.x * 100u + blockDim.y * 10u + blockDim.z) * 1000u +
         gridDim.x * 100u + gridDim.y * 10u + gridDim.z;
  // Warps are 32 consecutive linear thread ids.
  o[7] = __shfl_sync(0xffffffffu, tlin, 0);
}
XL_EXPORT(indices)

/// ticket[tid] = the order in which the threads first ran, then the same
/// after a barrier (second half of ticket).
XL_KERNEL void schedule_order(int *counter, int *ticket) {
  int tid = threadIdx.x;
  ticket[tid] = atomicAdd(counter, 1);
  __syncthreads();
  ticket[blockDim.x + tid] =
      atomicAdd(counter, 1) - static_cast<int>(blockDim.x);
}
XL_EXPORT(schedule_order)

/// out[t] = s[t^1] + s[(t+32)&63] over a block of 64; without the barrier
/// (with_barrier == 0) it reads neighbours that may not have written yet.
XL_KERNEL void neighbor_sum(const float *in, float *out, int with_barrier) {
  XL_SHARED float s[64];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 64 + t];
  if (with_barrier)
    __syncthreads();
  out[blockIdx.x * 64 + t] = s[t ^ 1] + s[(t + 32) & 63];
}
XL_EXPORT(neighbor_sum)

/// Math built-ins on x[tid]: 12 outputs per thread.
XL_KERNEL void math_builtins(const float *x, float *out, int *iout) {
  int tid = threadIdx.x;
  float v = x[tid];
  float *o = out + 12 * tid;
  o[0] = __expf(v);
  o[1] = expf(v);
  o[2] = __logf(fabsf(v) + 1.0f);
  o[3] = logf(fabsf(v) + 1.0f);
  o[4] = rsqrtf(fabsf(v) + 1.0f);
  o[5] = sqrtf(fabsf(v));
  o[6] = tanhf(v);
  o[7] = erff(v);
  o[8] = __fdividef(v, 3.0f);
  o[9] = fmaxf(v, 0.5f) + fminf(v, -0.5f);
  o[10] = __saturatef(v);
  o[11] = __uint_as_float(__float_as_uint(v) ^ 0x80000000u) +
          __int_as_float(__float_as_int(1.0f)) + __ldg(&x[0]);
  int *io = iout + 8 * tid;
  unsigned u = __float_as_uint(v);
  io[0] = __popc(u);
  io[1] = __ffs(static_cast<int>(u));
  io[2] = __clz(static_cast<int>(u));
  io[3] = static_cast<int>(__brev(u));
  io[4] = min(tid, 7) + max(tid, 7) * 100;
  io[5] = static_cast<int>(min(static_cast<unsigned>(tid), 3u));
  io[6] = warpSize;
  io[7] = static_cast<int>(__byte_perm(0x33221100u, 0x77665544u, 0x7531u));
}
XL_EXPORT(math_builtins)
