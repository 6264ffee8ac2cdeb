/*===- xlnetc_emu_abi.h - C ABI between the runtime and emulated kernels ---===//
//
// A kernel source compiled for the emulated device (g++, not NVRTC) becomes a
// shared object. For every kernel `k` marked with XL_EXPORT(k) it exports
//
//   extern "C" int xlnetc_emu_launch_k(const xlnetc_emu_launch *cfg,
//                                       void **params);
//
// `params` follows cuLaunchKernel's convention (params[i] points at the i-th
// argument). The call runs the whole grid before it returns: 0 on success;
// otherwise nonzero with a one-line message (kernel, block and threads of a
// divergent or deadlocked barrier, ...) written into cfg->err.
//
// Plain C so the runtime (which never includes the emulator) and the kernel
// object agree on the layout whatever flags each was compiled with.
//
//===----------------------------------------------------------------------===*/

#ifndef XLNETC_EMU_ABI_H
#define XLNETC_EMU_ABI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Order in which the fibers (CUDA threads) of a block are resumed. */
enum xlnetc_emu_schedule {
  XLNETC_EMU_FORWARD = 0, /* thread 0, 1, 2, ... */
  XLNETC_EMU_REVERSE = 1, /* the last thread first */
  XLNETC_EMU_RANDOM = 2   /* a fresh seeded permutation every round */
};

/* Bumped whenever this struct changes; a kernel object checks it. */
#define XLNETC_EMU_ABI_VERSION 1

typedef struct xlnetc_emu_launch {
  int abi_version;            /* XLNETC_EMU_ABI_VERSION */
  unsigned grid[3];           /* gridDim.x, .y, .z */
  unsigned block[3];          /* blockDim.x, .y, .z */
  size_t dyn_smem;            /* bytes of dynamic shared memory */
  int schedule;               /* enum xlnetc_emu_schedule */
  unsigned long long seed;    /* seed of XLNETC_EMU_RANDOM */
  int threads;                /* OS threads that run blocks (<= 1: one) */
  char *err;                  /* receives the error message ... */
  size_t err_len;             /* ... of at most this many bytes (with NUL) */
} xlnetc_emu_launch;

typedef int (*xlnetc_emu_launch_fn)(const xlnetc_emu_launch *cfg,
                                    void **params);

/* Prefix of the exported launcher of every kernel. */
#define XLNETC_EMU_LAUNCH_PREFIX "xlnetc_emu_launch_"

#ifdef __cplusplus
}
#endif

#endif /* XLNETC_EMU_ABI_H */
