//===- async_copy.cu - A cp.async pipeline, correct and with its bugs -----===//
//
// Same-source kernel for EmuTest's cp.async tests. A copy may land anywhere
// between its issue and the wait that retires it, and each schedule mode of
// the emulator lands it somewhere else (xlnetc_emu_tensor.cuh: forward at the
// wait, reverse at the issue, random in between), so each classic pipeline
// bug below gives a wrong result under some mode, while the correct pipeline
// gives the right one under all.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

/// Variants of cp_async_pipeline.
enum {
  kPipelineCorrect = 0,
  kReadBeforeWait = 1,
  kSourceFreedEarly = 2,
  kPrefetchIntoBufferInUse = 3
};

/// One warp streams `tiles` tiles of 32 x 16 bytes from `src` through shared
/// memory, each thread its own 16-byte chunk (4 ints) of every tile: tile
/// i + 1 is prefetched while tile i is read. out[t] is a checksum of what
/// thread t read; after reading a chunk, the thread marks its source consumed
/// (zeros). Needs 2 x 32 x 16 bytes of dynamic shared memory. `variant`:
///   kPipelineCorrect          double buffer, wait_group 1 before each read;
///   kReadBeforeWait           reads tile i without waiting for its copy;
///   kSourceFreedEarly         zeroes the source of tile i + 1 right after
///                             issuing its copy, before any wait for it;
///   kPrefetchIntoBufferInUse  one buffer: tile i + 1 is prefetched into the
///                             slot that tile i is still to be read from.
XL_KERNEL void cp_async_pipeline(int *src, unsigned *out, int tiles,
                                 int variant) {
  XL_DYN_SMEM(int, smem);
  const int t = threadIdx.x;
  // Thread t's slot for tile i.
  const int buffers = variant == kPrefetchIntoBufferInUse ? 1 : 2;
  auto slot = [&](int i) { return smem + 4 * (32 * (i % buffers) + t); };
  xl_cp_async_16(slot(0), src + 4 * t);
  xl_cp_async_commit();
  unsigned sum = 0;
  for (int i = 0; i < tiles; ++i) {
    if (i + 1 < tiles) {
      int *next = src + 4 * (32 * (i + 1) + t);
      xl_cp_async_16(slot(i + 1), next);
      if (variant == kSourceFreedEarly)
        for (int k = 0; k < 4; ++k)
          next[k] = 0;
    }
    xl_cp_async_commit(); // (an empty group after the last tile)
    if (variant != kReadBeforeWait)
      xl_cp_async_wait<1>(); // tile i has landed
    const int *cur = slot(i);
    int *consumed = src + 4 * (32 * i + t);
    for (int k = 0; k < 4; ++k) {
      sum = sum * 31u + static_cast<unsigned>(cur[k]);
      consumed[k] = 0;
    }
  }
  out[t] = sum;
}
XL_EXPORT(cp_async_pipeline)
