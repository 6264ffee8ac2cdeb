//===- device_smoke.cu - Kernels of DeviceTest.cpp ------------------------===//
//
// Same-source kernels the device tests load through Device::loadModule: on
// the emulated device (host compiler + SIMT emulator), on a GPU (NVRTC), and
// compiled for sm_90 by NVRTC in CI to check registers and spills.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// y[i] = a * x[i] + y[i] over a 1-D grid with a tail.
XL_KERNEL void saxpy(float a, const float *XL_RESTRICT x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
XL_EXPORT(saxpy)

/// out[blockIdx.x] = sum of the block's slice of x: warp shuffles, static
/// shared memory for the per-warp sums, dynamic shared memory for a copy of
/// the input, and a barrier between the phases. Fixed order: deterministic.
XL_KERNEL void block_sum(const float *XL_RESTRICT x, float *out, int n) {
  XL_SHARED float warpSums[32];
  XL_DYN_SMEM(float, staged);
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  staged[tid] = i < n ? x[i] : 0.f;
  __syncthreads();
  float v = staged[blockDim.x - 1 - tid]; // read another thread's element
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((tid & 31) == 0)
    warpSums[tid >> 5] = v;
  __syncthreads();
  if (tid < 32) {
    float w = tid < int(blockDim.x >> 5) ? warpSums[tid] : 0.f;
    for (int o = 16; o > 0; o >>= 1)
      w += __shfl_xor_sync(0xffffffffu, w, o);
    if (tid == 0)
      out[blockIdx.x] = w;
  }
}
XL_EXPORT(block_sum)

/// A kernel bug on purpose (never launched on a GPU, where it hangs): half of
/// every warp waits at the block barrier, the other half at a warp barrier
/// that needs the first half.
XL_KERNEL void divergent_barrier(int *out) {
  if ((threadIdx.x & 31) < 16)
    __syncthreads();
  else
    __syncwarp();
  out[threadIdx.x] = 1;
}
XL_EXPORT(divergent_barrier)
