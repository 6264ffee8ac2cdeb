//===- xlnetc_emu.cuh - SIMT emulator of CUDA kernels -----------*- C++ -*-===//
//
// The host half of the same-source prelude (xlnetc_prelude.cuh includes it
// when the compiler is not NVRTC/nvcc). A kernel source written against the
// prelude compiles with g++ into ordinary host code in which
//
//  - every CUDA thread of a block is a fiber (xlnetc_emu_fiber.h), resumed by
//    a cooperative scheduler in a configurable order;
//  - `__syncthreads()` is a block barrier and every warp collective
//    (`__shfl*_sync`, votes, `__syncwarp`, `ldmatrix`, `mma.sync`) is a warp
//    barrier: the lane that completes the group computes every participant's
//    result (xlnetc_emu_tensor.cuh for the tensor-core instructions);
//  - `XL_SHARED` variables are `static thread_local` (a block never leaves the
//    OS thread that runs it) and dynamic shared memory is a per-worker buffer;
//  - blocks are spread over `cfg->threads` OS threads; atomics are real.
//
// Files: xlnetc_emu_fiber.h (stacks, context switch), xlnetc_emu_core.h
// (scheduler, barriers, launcher), xlnetc_emu_builtins.cuh (CUDA names),
// xlnetc_emu_tensor.cuh (mma, ldmatrix, cp.async), xlnetc_emu_numeric.h
// (bf16/f16). Kernel sources include xlnetc_prelude.cuh, not these.
//
// Rules a kernel author and the runtime must know:
//
//  1. Launching. `XL_EXPORT(k)` after the kernel `k` defines
//       extern "C" int xlnetc_emu_launch_k(const xlnetc_emu_launch *cfg,
//                                           void **params);
//     (xlnetc_emu_abi.h; cuLaunchKernel's params convention). It runs the
//     whole grid and returns 0, or nonzero with a one-line message in
//     cfg->err that starts with "emulated kernel 'k': ". In C++ (tests),
//     `xl::emu::launch(...)` / XL_EMU_LAUNCH do the same and return the
//     message ("" on success). Launches may run concurrently from several
//     OS threads; kernels must not launch kernels.
//  2. Schedules. A block runs in rounds; a round resumes every runnable
//     thread once, in the order cfg->schedule picks: forward (thread 0
//     first), reverse, or random (a fresh seeded permutation every round).
//     A resumed thread runs until it waits or exits; the thread whose
//     arrival completes a barrier waits like the others, so the round after
//     a barrier starts in schedule order too. Blocks are taken in the same
//     order (forward, reverse, or a seeded permutation of the grid). The
//     schedule also picks where each cp.async lands between its issue and
//     its wait (xlnetc_emu_tensor.cuh): forward at the wait, reverse at the
//     issue, random at seeded coin flips in between.
//     The environment variable
//       XLNETC_EMU_SCHEDULE=forward|reverse|random[:SEED]
//     (SEED decimal or 0x-hex, default 0) OVERRIDES cfg->schedule and
//     cfg->seed for every launch, so a whole test suite can be rerun in
//     another mode without recompiling. A correct kernel gives the same
//     result in every mode (up to the nondeterminism it has on a GPU, e.g.
//     the order of float atomics).
//  3. __syncthreads. Completes when every thread of the block that has not
//     exited waits at it (exited threads count as arrived, as on sm_70+), and
//     all of them wait at the same call site (file:line) and the same variant
//     (plain/_count/_and/_or). Threads of one block waiting at different
//     __syncthreads sites is an error ("divergent __syncthreads"), even where
//     sm_70+ hardware would silently let the two sites match: CUDA requires
//     the condition around a __syncthreads to be uniform, and the site check
//     is what catches a barrier that only some threads take.
//  4. Warp collectives (*_sync with a mask, ldmatrix, mma). A collective of
//     mask M completes when every non-exited lane of M waits at a collective
//     with exactly mask M (PTX: "all non-exited threads corresponding to
//     membermask"); lanes that do not exist (a partial last warp) count as
//     exited. All lanes of the group must be at the same operation and, for
//     every operation but __syncwarp, at the same call site (file:line),
//     otherwise "divergent warp collective": lanes at two shuffle sites are a
//     divergent branch whose values the GPU pairs across instructions, and
//     .aligned ops require one instruction. __syncwarp may be reached from
//     different sites, as bar.warp.sync on sm_70+. Two call paths into one
//     helper are one site (the site is where the collective is spelled).
//     A caller outside its own mask is an error. A shuffle that
//     reads a lane that is not in the group (exited, absent, not in the mask)
//     gets all-ones bits (NaN for floats): undefined on a GPU, loud here.
//     ldmatrix and mma.sync are .aligned: all 32 lanes must take part.
//     __activemask() returns the warp's non-exited lanes (the emulator has no
//     notion of convergence).
//  5. Deadlock. When no fiber can run and some have not exited, the launch
//     fails with every thread's wait point, e.g.
//       emulated kernel 'k': deadlock in block (1,0,0): threads 0-31 wait at
//       __syncthreads (k.cu:12), threads 32-63 wait at __shfl_sync with mask
//       0xffffffff (k.cu:20)
//     Thread numbers are linear (x + y*bdx + z*bdx*bdy). The block's fibers
//     are abandoned and their stacks reused (objects on them are not
//     destroyed); the process and later launches are unaffected.
//     __trap(), a failed assert() in kernel code, a misaligned cp.async or
//     ldmatrix address, a misaligned vector load or store (rule 7) and a C++
//     exception escaping a kernel end the launch the same way.
//  6. Cooperative scheduling. A fiber runs until it waits at a barrier or
//     exits: a spin loop on shared or global memory that another thread must
//     change never ends unless it calls __nanosleep() (a yield here). Blocks
//     of one launch do not wait for each other.
//  7. Memory. Dynamic shared memory (XL_DYN_SMEM) is 128-byte aligned and
//     filled with 0xff bytes (NaN) before every block. XL_SHARED variables
//     keep whatever the previous block on that OS thread left (as undefined
//     as on a GPU). Fiber stacks are XLNETC_EMU_STACK_KB KiB (default 64;
//     256 under sanitizers; the FA-style test kernel peaks at ~6.5 KiB, at
//     -O0 too) with a guard page: an overflow is a SIGSEGV at a guard-page
//     address, not a launch error. CUDA's 2- and 4-element vector types
//     (float4, int2, uchar4, ...; xlnetc_emu_builtins.cuh) check that each
//     load and store through them is size-aligned, the GPU's "misaligned
//     address" fault; scalar accesses are not checked.
//  8. Sanitizers. Under -fsanitize=thread each CUDA thread is a TSan fiber;
//     barriers order exactly the threads they synchronize, so a missing
//     __syncthreads is reported as a data race between the two source lines.
//     Races between blocks are seen only between blocks that run on different
//     OS threads (threads >= 2). -fsanitize=address is supported too.
//  9. Linking. Every emulator symbol (including the CUDA built-ins) has
//     hidden visibility, whatever the flags; only the XL_EXPORT launchers
//     are exported. Compile kernel objects with -fvisibility=hidden anyway
//     (and load them RTLD_LOCAL): a kernel's own XL_DEVICE functions are
//     inline functions, and with default visibility two objects would bind
//     each other's copies, which then run against the wrong emulator.
//     Typical flags: -std=c++17 -O2 -fPIC -shared -pthread
//     -fvisibility=hidden (-Wno-unknown-pragmas: g++ does not know
//     `#pragma unroll`). A small module compiles in ~2 s (~1 s of it the
//     standard headers). Do not include CUDA headers next to the prelude on
//     the host: it defines __device__ and friends away.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_CUH
#define XLNETC_EMU_CUH

#include "xlnetc_emu_abi.h"
#include "xlnetc_emu_core.h"
#include "xlnetc_emu_numeric.h"

//===----------------------------------------------------------------------===//
// The prelude's vocabulary on the host (see xlnetc_prelude.cuh)
//===----------------------------------------------------------------------===//

#define XL_KERNEL static
#define XL_DEVICE inline
#define XL_SHARED static thread_local
#define XL_RESTRICT __restrict__
#define XL_ALIGN(n) __attribute__((aligned(n)))
#define XL_DYN_SMEM(T, name)                                                   \
  T *name = reinterpret_cast<T *>(::xl::emu::dynamicSharedMemory())
#define XL_EXPORT(k)                                                           \
  extern "C" __attribute__((visibility("default"))) int xlnetc_emu_launch_##k( \
      const xlnetc_emu_launch *cfg, void **params) {                           \
    return ::xl::emu::launchFromParams(#k, &k, cfg, params);                   \
  }

// CUDA qualifiers that hand-written device code may spell directly.
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

#include "xlnetc_emu_builtins.cuh"
#include "xlnetc_emu_tensor.cuh"

#endif // XLNETC_EMU_CUH
