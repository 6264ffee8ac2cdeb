//===- collectives.cu - Warp collective test kernels ----------------------===//
//
// Same-source kernels for EmuTest: every shuffle variant (with width and
// partial masks), votes, ballot, __syncwarp, redux and match, and a stress
// kernel whose lanes run ahead of each other between collectives. Each
// kernel writes what every thread saw, so the test can compare against the
// documented semantics computed on the host.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// Shuffle modes of `shfl_variants`.
enum { kShflIdx = 0, kShflUp = 1, kShflDown = 2, kShflXor = 3 };

/// Lanes in `mask` shuffle in[tid] with the given mode, argument (srcLane,
/// delta or laneMask) and width; lanes outside the mask write -7.
XL_KERNEL void shfl_variants(const int *in, int *out, unsigned mask, int mode,
                             int arg, int width) {
  int tid = threadIdx.x;
  int lane = tid & 31;
  int v = in[tid];
  int r = -7;
  if ((mask >> lane) & 1u) {
    switch (mode) {
    case kShflIdx:
      r = __shfl_sync(mask, v, arg, width);
      break;
    case kShflUp:
      r = __shfl_up_sync(mask, v, static_cast<unsigned>(arg), width);
      break;
    case kShflDown:
      r = __shfl_down_sync(mask, v, static_cast<unsigned>(arg), width);
      break;
    default:
      r = __shfl_xor_sync(mask, v, arg, width);
      break;
    }
  }
  out[tid] = r;
}
XL_EXPORT(shfl_variants)

/// Shuffles of 64-bit and floating-point values (full warp, xor 5 and a
/// broadcast from lane 7).
XL_KERNEL void shfl_types(const double *d, const long long *ll, const float *f,
                          double *dout, long long *llout, float *fout) {
  int tid = threadIdx.x;
  dout[tid] = __shfl_xor_sync(0xffffffffu, d[tid], 5);
  llout[tid] = __shfl_sync(0xffffffffu, ll[tid], 7);
  fout[tid] = __shfl_down_sync(0xffffffffu, f[tid], 3);
}
XL_EXPORT(shfl_types)

/// Votes of the lanes in `mask` on pred[tid]; other lanes write 0xdead.
/// active[tid] = __activemask() on entry.
XL_KERNEL void votes(const int *pred, unsigned mask, int *all, int *any,
                     unsigned *ballot, unsigned *active) {
  int tid = threadIdx.x;
  int lane = tid & 31;
  // Before any lane can have exited (the emulator's __activemask() is the
  // set of non-exited lanes).
  active[tid] = __activemask();
  if ((mask >> lane) & 1u) {
    all[tid] = __all_sync(mask, pred[tid]);
    any[tid] = __any_sync(mask, pred[tid]);
    ballot[tid] = __ballot_sync(mask, pred[tid]);
  } else {
    all[tid] = any[tid] = 0xdead;
    ballot[tid] = 0xdead;
  }
}
XL_EXPORT(votes)

/// Each half warp exchanges through shared memory with its own __syncwarp;
/// the write and the read are ordered only by that __syncwarp.
XL_KERNEL void syncwarp_halves(const int *in, int *out) {
  XL_SHARED int buf[64];
  int tid = threadIdx.x;
  int lane = tid & 31;
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  buf[tid] = in[tid] * 3;
  __syncwarp(half);
  // Rotate within the half warp.
  int src = (tid & ~15) | ((tid + 5) & 15);
  out[tid] = buf[src];
  __syncwarp(half);
  buf[tid] = out[tid] + 1;
  __syncwarp();
  out[tid] += buf[tid ^ 16] * 1000;
}
XL_EXPORT(syncwarp_halves)

/// redux.sync and match.sync on the full warp; out has 8 words per thread.
XL_KERNEL void redux_match(const unsigned *in, unsigned *out) {
  int tid = threadIdx.x;
  unsigned v = in[tid];
  unsigned *o = out + 8 * tid;
  o[0] = __reduce_add_sync(0xffffffffu, v);
  o[1] = __reduce_min_sync(0xffffffffu, v);
  o[2] = __reduce_max_sync(0xffffffffu, v);
  o[3] = static_cast<unsigned>(
      __reduce_min_sync(0xffffffffu, static_cast<int>(v)));
  o[4] = __reduce_and_sync(0xffffffffu, v) ^ __reduce_or_sync(0xffffffffu, v);
  o[5] = __reduce_xor_sync(0xffffffffu, v);
  o[6] = __match_any_sync(0xffffffffu, v & 3u);
  int pred = 0;
  o[7] = __match_all_sync(0xffffffffu, v & 0x80000000u, &pred) | (pred << 0);
}
XL_EXPORT(redux_match)

/// A sequence of collectives in which lanes constantly run ahead of each
/// other: the halves of each warp synchronize separately (so one half can be
/// several collectives ahead of the other), widths change, and every value
/// depends on the previous results. The host replays the same sequence.
XL_KERNEL void runahead(unsigned *out, int rounds) {
  int tid = threadIdx.x;
  int lane = tid & 31;
  unsigned half = lane < 16 ? 0x0000ffffu : 0xffff0000u;
  unsigned v = static_cast<unsigned>(tid) * 7u + 1u;
  for (int r = 0; r < rounds; ++r) {
    v = v * 31u + __shfl_sync(0xffffffffu, v, (lane + r) & 31);
    // The halves run a different number of collectives per round.
    int extra = lane < 16 ? 3 : 1;
    for (int e = 0; e < extra; ++e)
      v ^= __shfl_xor_sync(half, v, 1 + ((r + e) & 7), 16);
    v += __shfl_down_sync(0xffffffffu, v, 1 + (r & 3), 8);
    v -= __shfl_up_sync(0xffffffffu, v, 2, 32);
    v += __ballot_sync(0xffffffffu, v & 1u) >> (r & 15);
  }
  out[tid] = v;
}
XL_EXPORT(runahead)
