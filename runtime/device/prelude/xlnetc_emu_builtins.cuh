//===- xlnetc_emu_builtins.cuh - Emulated CUDA built-ins --------*- C++ -*-===//
//
// The CUDA names a kernel uses (threadIdx, __syncthreads, __shfl_xor_sync,
// __ballot_sync, atomicAdd, __expf, ...) on top of the scheduler of
// xlnetc_emu_core.h: warp collectives become CollectiveOps whose `complete`
// computes every participant's result at once (shuffle source lanes as the
// PTX ISA's shfl.sync defines them), atomics are real atomics (blocks run on
// several OS threads), and the math intrinsics model the GPU's fast paths.
// Included by xlnetc_emu.cuh, where the semantics are documented.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_BUILTINS_CUH
#define XLNETC_EMU_BUILTINS_CUH

#include <atomic>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <math.h>
#include <string>
#include <type_traits>

#include "xlnetc_emu_core.h"
#include "xlnetc_emu_numeric.h"

// Everything below is private to the kernel object that includes it (see
// xlnetc_emu.cuh, "Linking").
#pragma GCC visibility push(hidden)

/// Threads per warp (a built-in variable on the GPU).
inline constexpr int warpSize = 32;

/// Source location of a wait (default arguments evaluate at the call site).
#define XLNETC_EMU_LOC                                                         \
  const char *xlFile_ = __builtin_FILE(), int xlLine_ = __builtin_LINE()
#define XLNETC_EMU_HERE                                                        \
  ::xl::emu::SrcLoc { xlFile_, xlLine_ }

namespace xl::emu {

inline void *dynamicSharedMemory() { return current().worker->dynSmem; }

//===----------------------------------------------------------------------===//
// Warp collectives: shuffles, votes, reductions, match
//===----------------------------------------------------------------------===//

enum class Shfl : unsigned { Idx, Up, Down, Bfly };

struct ShflIn {
  uint64_t value;
  unsigned b; // srcLane / delta / laneMask
  unsigned c; // clamp and segment mask, as CUDA's headers build it
};

/// shfl.sync as the PTX ISA defines it: the source lane j from b and c, own
/// value when j falls outside the lane's segment.
template <Shfl Mode>
bool completeShfl(Warp &warp, unsigned lanes, std::string &) {
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    unsigned lane = __builtin_ctz(rest);
    Thread &t = *warp.lanes[lane];
    ShflIn in;
    std::memcpy(&in, t.in, sizeof in);
    unsigned bval = in.b & 31, cval = in.c & 31, segmask = (in.c >> 8) & 31;
    int maxLane = static_cast<int>((lane & segmask) | (cval & ~segmask));
    int minLane = static_cast<int>(lane & segmask);
    int j = 0;
    bool inRange = false;
    switch (Mode) {
    case Shfl::Up:
      j = static_cast<int>(lane) - static_cast<int>(bval);
      inRange = j >= maxLane;
      break;
    case Shfl::Down:
      j = static_cast<int>(lane + bval);
      inRange = j <= maxLane;
      break;
    case Shfl::Bfly:
      j = static_cast<int>(lane ^ bval);
      inRange = j <= maxLane;
      break;
    case Shfl::Idx:
      j = minLane | static_cast<int>(bval & ~segmask);
      inRange = j <= maxLane;
      break;
    }
    if (!inRange)
      j = static_cast<int>(lane);
    uint64_t value = ~0ull; // the source lane is not in the group: poison
    if (lanes & (1u << j))
      std::memcpy(&value, warp.lanes[j]->in, sizeof value);
    std::memcpy(t.out, &value, sizeof value);
  }
  return true;
}

inline constexpr CollectiveOp kShflIdx{"__shfl_sync", false, true,
                                       &completeShfl<Shfl::Idx>};
inline constexpr CollectiveOp kShflUp{"__shfl_up_sync", false, true,
                                      &completeShfl<Shfl::Up>};
inline constexpr CollectiveOp kShflDown{"__shfl_down_sync", false, true,
                                        &completeShfl<Shfl::Down>};
inline constexpr CollectiveOp kShflXor{"__shfl_xor_sync", false, true,
                                       &completeShfl<Shfl::Bfly>};

template <class T>
T shuffle(const CollectiveOp &op, unsigned mask, T var, unsigned b, unsigned c,
          SrcLoc loc) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "shuffles move values of at most 8 bytes");
  Thread &self = current();
  ShflIn in{0, b, c};
  std::memcpy(&in.value, &var, sizeof(T));
  std::memcpy(self.in, &in, sizeof in);
  self.worker->warpCollective(self, op, mask, loc);
  T result;
  std::memcpy(&result, self.out, sizeof(T));
  return result;
}

/// Reductions over the group's 32-bit inputs: votes, __reduce_*_sync and
/// match.sync. Every participant gets the same 32-bit result (match.any: a
/// per-lane one).
enum class Reduce {
  All,
  Any,
  Ballot,
  Sync,
  Add,
  Min,
  Max,
  MinSigned,
  MaxSigned,
  And,
  Or,
  Xor,
  MatchAny,
  MatchAll
};

template <Reduce R>
bool completeReduce(Warp &warp, unsigned lanes, std::string &) {
  uint64_t acc = 0;
  switch (R) {
  case Reduce::And:
  case Reduce::Min:
    acc = ~0u;
    break;
  case Reduce::MinSigned:
    acc = 0x7fffffff;
    break;
  case Reduce::MaxSigned:
    acc = 0x80000000u;
    break;
  default:
    break;
  }
  auto input = [&](unsigned lane) {
    uint64_t v;
    std::memcpy(&v, warp.lanes[lane]->in, sizeof v);
    return v;
  };
  unsigned count = 0;
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    unsigned lane = __builtin_ctz(rest);
    uint64_t v = input(lane);
    uint32_t v32 = static_cast<uint32_t>(v);
    switch (R) {
    case Reduce::All:
    case Reduce::Any:
    case Reduce::Ballot:
      acc |= (v32 != 0 ? 1ull : 0ull) << lane;
      count += v32 != 0;
      break;
    case Reduce::Add:
      acc = static_cast<uint32_t>(acc + v32);
      break;
    case Reduce::Min:
      acc = std::min<uint64_t>(acc, v32);
      break;
    case Reduce::Max:
      acc = std::max<uint64_t>(acc, v32);
      break;
    case Reduce::MinSigned:
      acc = static_cast<uint32_t>(
          std::min(static_cast<int32_t>(acc), static_cast<int32_t>(v32)));
      break;
    case Reduce::MaxSigned:
      acc = static_cast<uint32_t>(
          std::max(static_cast<int32_t>(acc), static_cast<int32_t>(v32)));
      break;
    case Reduce::And:
      acc &= v32;
      break;
    case Reduce::Or:
      acc |= v32;
      break;
    case Reduce::Xor:
      acc ^= v32;
      break;
    default:
      break;
    }
  }
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    unsigned lane = __builtin_ctz(rest);
    uint64_t out = 0;
    switch (R) {
    case Reduce::All:
      out = count == static_cast<unsigned>(__builtin_popcount(lanes));
      break;
    case Reduce::Any:
      out = count > 0;
      break;
    case Reduce::MatchAny:
    case Reduce::MatchAll: {
      uint64_t mine = input(lane);
      unsigned same = 0;
      for (unsigned r = lanes; r; r &= r - 1)
        same |= input(__builtin_ctz(r)) == mine ? 1u << __builtin_ctz(r) : 0;
      out = R == Reduce::MatchAny ? same : (same == lanes ? lanes : 0);
      break;
    }
    default:
      out = acc;
      break;
    }
    std::memcpy(warp.lanes[lane]->out, &out, sizeof out);
  }
  return true;
}

template <Reduce R>
inline constexpr CollectiveOp kReduceOp{
    R == Reduce::All         ? "__all_sync"
    : R == Reduce::Any       ? "__any_sync"
    : R == Reduce::Ballot    ? "__ballot_sync"
    : R == Reduce::Sync      ? "__syncwarp"
    : R == Reduce::Add       ? "__reduce_add_sync"
    : R == Reduce::Min       ? "__reduce_min_sync"
    : R == Reduce::Max       ? "__reduce_max_sync"
    : R == Reduce::MinSigned ? "__reduce_min_sync"
    : R == Reduce::MaxSigned ? "__reduce_max_sync"
    : R == Reduce::And       ? "__reduce_and_sync"
    : R == Reduce::Or        ? "__reduce_or_sync"
    : R == Reduce::Xor       ? "__reduce_xor_sync"
    : R == Reduce::MatchAny  ? "__match_any_sync"
                             : "__match_all_sync",
    false, R != Reduce::Sync, &completeReduce<R>};

template <Reduce R>
uint64_t reduceCollective(unsigned mask, uint64_t value, SrcLoc loc) {
  Thread &self = current();
  std::memcpy(self.in, &value, sizeof value);
  self.worker->warpCollective(self, kReduceOp<R>, mask, loc);
  uint64_t out;
  std::memcpy(&out, self.out, sizeof out);
  return out;
}

template <class T> uint64_t matchKey(T value) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "__match_*_sync compares values of at most 8 bytes");
  uint64_t key = 0;
  std::memcpy(&key, &value, sizeof(T));
  return key;
}

/// Records "<what> in block (x,y,z), thread t (file:line)" as the launch's
/// error, without the location when `loc` is null; follow it with
/// abandonCurrent() in a separate statement.
__attribute__((noinline, cold)) inline void
recordKernelError(const std::string &what, const SrcLoc *loc) {
  Thread &self = current();
  std::string message = format("%s in block %s, thread %u", what.c_str(),
                               self.worker->blockName().c_str(), self.linear);
  if (loc)
    message += " (" + formatLoc(*loc) + ")";
  self.worker->recordError(message);
}

inline void recordKernelError(const std::string &what, SrcLoc loc) {
  recordKernelError(what, &loc);
}

[[noreturn]] inline void abandonCurrent() {
  Thread &self = current();
  self.worker->abandon(self);
}

/// Target of the emulator's assert(): a launch error inside a kernel, the
/// C library's behaviour elsewhere.
__attribute__((noinline, cold)) inline void
assertFail(const char *expr, const char *file, int line, const char *function) {
  if (tCurrent) {
    recordKernelError(format("assertion '%s' failed", expr), {file, line});
    abandonCurrent();
  }
  std::fprintf(stderr, "%s:%d: %s: Assertion `%s' failed.\n", file, line,
               function, expr);
  std::abort();
}

} // namespace xl::emu

//===----------------------------------------------------------------------===//
// CUDA built-ins
//===----------------------------------------------------------------------===//

#define threadIdx (::xl::emu::current().threadIdx)
#define blockIdx (::xl::emu::current().worker->blockIdx)
#define blockDim (::xl::emu::current().worker->launch.block)
#define gridDim (::xl::emu::current().worker->launch.grid)

/// assert() in kernel code fails the launch instead of aborting the process.
#undef assert
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e)                                                              \
  ((e) ? (void)0 : ::xl::emu::assertFail(#e, __FILE__, __LINE__, __func__))
#endif

inline void __syncthreads(XLNETC_EMU_LOC) {
  ::xl::emu::Thread &t = ::xl::emu::current();
  t.worker->blockBarrier(t, ::xl::emu::Barrier::Sync, 0, XLNETC_EMU_HERE);
}
inline int __syncthreads_count(int predicate, XLNETC_EMU_LOC) {
  ::xl::emu::Thread &t = ::xl::emu::current();
  return t.worker->blockBarrier(t, ::xl::emu::Barrier::Count, predicate != 0,
                                XLNETC_EMU_HERE);
}
inline int __syncthreads_and(int predicate, XLNETC_EMU_LOC) {
  ::xl::emu::Thread &t = ::xl::emu::current();
  return t.worker->blockBarrier(t, ::xl::emu::Barrier::And, predicate != 0,
                                XLNETC_EMU_HERE);
}
inline int __syncthreads_or(int predicate, XLNETC_EMU_LOC) {
  ::xl::emu::Thread &t = ::xl::emu::current();
  return t.worker->blockBarrier(t, ::xl::emu::Barrier::Or, predicate != 0,
                                XLNETC_EMU_HERE);
}

inline void __syncwarp(unsigned mask = 0xffffffffu, XLNETC_EMU_LOC) {
  ::xl::emu::reduceCollective<::xl::emu::Reduce::Sync>(mask, 0,
                                                       XLNETC_EMU_HERE);
}

/// The warp's non-exited lanes (an approximation: see rule 4 above).
XLNETC_EMU_NO_TSAN inline unsigned __activemask() {
  const ::xl::emu::Warp &w = *::xl::emu::current().warp;
  return w.present & ~w.exited;
}

// Shuffles: the clamp/segment operand c as CUDA's sm_30_intrinsics.hpp
// builds it from `width`.
template <class T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize,
                     XLNETC_EMU_LOC) {
  return ::xl::emu::shuffle(::xl::emu::kShflIdx, mask, var,
                            static_cast<unsigned>(srcLane),
                            ((warpSize - width) << 8) | 0x1f, XLNETC_EMU_HERE);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta,
                        int width = warpSize, XLNETC_EMU_LOC) {
  return ::xl::emu::shuffle(::xl::emu::kShflUp, mask, var, delta,
                            (warpSize - width) << 8, XLNETC_EMU_HERE);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta,
                          int width = warpSize, XLNETC_EMU_LOC) {
  return ::xl::emu::shuffle(::xl::emu::kShflDown, mask, var, delta,
                            ((warpSize - width) << 8) | 0x1f, XLNETC_EMU_HERE);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask,
                         int width = warpSize, XLNETC_EMU_LOC) {
  return ::xl::emu::shuffle(::xl::emu::kShflXor, mask, var,
                            static_cast<unsigned>(laneMask),
                            ((warpSize - width) << 8) | 0x1f, XLNETC_EMU_HERE);
}

// Votes.
inline int __all_sync(unsigned mask, int predicate, XLNETC_EMU_LOC) {
  return static_cast<int>(::xl::emu::reduceCollective<::xl::emu::Reduce::All>(
      mask, predicate != 0, XLNETC_EMU_HERE));
}
inline int __any_sync(unsigned mask, int predicate, XLNETC_EMU_LOC) {
  return static_cast<int>(::xl::emu::reduceCollective<::xl::emu::Reduce::Any>(
      mask, predicate != 0, XLNETC_EMU_HERE));
}
inline unsigned __ballot_sync(unsigned mask, int predicate, XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Ballot>(
          mask, predicate != 0, XLNETC_EMU_HERE));
}

// sm_80 warp reductions (redux.sync).
inline unsigned __reduce_add_sync(unsigned mask, unsigned value,
                                  XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Add>(mask, value,
                                                          XLNETC_EMU_HERE));
}
inline int __reduce_add_sync(unsigned mask, int value, XLNETC_EMU_LOC) {
  return static_cast<int>(::xl::emu::reduceCollective<::xl::emu::Reduce::Add>(
      mask, static_cast<unsigned>(value), XLNETC_EMU_HERE));
}
inline unsigned __reduce_min_sync(unsigned mask, unsigned value,
                                  XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Min>(mask, value,
                                                          XLNETC_EMU_HERE));
}
inline int __reduce_min_sync(unsigned mask, int value, XLNETC_EMU_LOC) {
  return static_cast<int>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::MinSigned>(
          mask, static_cast<unsigned>(value), XLNETC_EMU_HERE));
}
inline unsigned __reduce_max_sync(unsigned mask, unsigned value,
                                  XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Max>(mask, value,
                                                          XLNETC_EMU_HERE));
}
inline int __reduce_max_sync(unsigned mask, int value, XLNETC_EMU_LOC) {
  return static_cast<int>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::MaxSigned>(
          mask, static_cast<unsigned>(value), XLNETC_EMU_HERE));
}
inline unsigned __reduce_and_sync(unsigned mask, unsigned value,
                                  XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::And>(mask, value,
                                                          XLNETC_EMU_HERE));
}
inline unsigned __reduce_or_sync(unsigned mask, unsigned value,
                                 XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Or>(mask, value,
                                                         XLNETC_EMU_HERE));
}
inline unsigned __reduce_xor_sync(unsigned mask, unsigned value,
                                  XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::Xor>(mask, value,
                                                          XLNETC_EMU_HERE));
}

// match.sync (sm_70).
template <class T>
inline unsigned __match_any_sync(unsigned mask, T value, XLNETC_EMU_LOC) {
  return static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::MatchAny>(
          mask, ::xl::emu::matchKey(value), XLNETC_EMU_HERE));
}
template <class T>
inline unsigned __match_all_sync(unsigned mask, T value, int *pred,
                                 XLNETC_EMU_LOC) {
  unsigned r = static_cast<unsigned>(
      ::xl::emu::reduceCollective<::xl::emu::Reduce::MatchAll>(
          mask, ::xl::emu::matchKey(value), XLNETC_EMU_HERE));
  *pred = r != 0;
  return r;
}

/// Ends the launch with an error naming the thread (the GPU's trap).
[[noreturn]] inline void __trap(XLNETC_EMU_LOC) {
  ::xl::emu::recordKernelError("__trap()", XLNETC_EMU_HERE);
  ::xl::emu::abandonCurrent();
}

/// A yield point: lets spin-wait loops make progress under cooperative
/// scheduling.
inline void __nanosleep(unsigned) {
  ::xl::emu::Thread &t = ::xl::emu::current();
  t.worker->yield(t);
}

// Memory fences. Fibers of one block share an OS thread (nothing to order);
// blocks on other OS threads see global memory through real fences.
inline void __threadfence_block() {
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
inline void __threadfence_system() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

//===----------------------------------------------------------------------===//
// Atomics (relaxed, device scope: real atomics, blocks run in parallel)
//===----------------------------------------------------------------------===//

namespace xl::emu {
/// Compare-and-swap loop applying `update` to *address; returns the old value.
template <class T, class F> inline T atomicUpdate(T *address, F update) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired;
  do {
    desired = update(old);
  } while (!__atomic_compare_exchange(address, &old, &desired, true,
                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return old;
}
} // namespace xl::emu

#define XLNETC_EMU_INT_ATOMICS(T)                                              \
  inline T atomicAdd(T *a, T v) {                                              \
    return __atomic_fetch_add(a, v, __ATOMIC_RELAXED);                         \
  }                                                                            \
  inline T atomicSub(T *a, T v) {                                              \
    return __atomic_fetch_sub(a, v, __ATOMIC_RELAXED);                         \
  }                                                                            \
  inline T atomicExch(T *a, T v) {                                             \
    return __atomic_exchange_n(a, v, __ATOMIC_RELAXED);                        \
  }                                                                            \
  inline T atomicAnd(T *a, T v) {                                              \
    return __atomic_fetch_and(a, v, __ATOMIC_RELAXED);                         \
  }                                                                            \
  inline T atomicOr(T *a, T v) {                                               \
    return __atomic_fetch_or(a, v, __ATOMIC_RELAXED);                          \
  }                                                                            \
  inline T atomicXor(T *a, T v) {                                              \
    return __atomic_fetch_xor(a, v, __ATOMIC_RELAXED);                         \
  }                                                                            \
  inline T atomicMax(T *a, T v) {                                              \
    return ::xl::emu::atomicUpdate(a, [v](T o) { return o > v ? o : v; });     \
  }                                                                            \
  inline T atomicMin(T *a, T v) {                                              \
    return ::xl::emu::atomicUpdate(a, [v](T o) { return o < v ? o : v; });     \
  }                                                                            \
  inline T atomicCAS(T *a, T compare, T v) {                                   \
    __atomic_compare_exchange_n(a, &compare, v, false, __ATOMIC_RELAXED,       \
                                __ATOMIC_RELAXED);                             \
    return compare;                                                            \
  }
XLNETC_EMU_INT_ATOMICS(int)
XLNETC_EMU_INT_ATOMICS(unsigned)
XLNETC_EMU_INT_ATOMICS(unsigned long long)
XLNETC_EMU_INT_ATOMICS(long long)
#undef XLNETC_EMU_INT_ATOMICS

inline float atomicAdd(float *a, float v) {
  return ::xl::emu::atomicUpdate(a, [v](float o) { return o + v; });
}
inline double atomicAdd(double *a, double v) {
  return ::xl::emu::atomicUpdate(a, [v](double o) { return o + v; });
}
inline float atomicExch(float *a, float v) {
  float old;
  __atomic_exchange(a, &v, &old, __ATOMIC_RELAXED);
  return old;
}
/// ((old >= limit) ? 0 : old + 1), as CUDA's atomicInc.
inline unsigned atomicInc(unsigned *a, unsigned limit) {
  return ::xl::emu::atomicUpdate(
      a, [limit](unsigned o) { return o >= limit ? 0u : o + 1; });
}
/// ((old == 0 || old > limit) ? limit : old - 1), as CUDA's atomicDec.
inline unsigned atomicDec(unsigned *a, unsigned limit) {
  return ::xl::emu::atomicUpdate(
      a, [limit](unsigned o) { return (o == 0 || o > limit) ? limit : o - 1; });
}

//===----------------------------------------------------------------------===//
// Vector types: loads and stores fault on misaligned addresses
//===----------------------------------------------------------------------===//

// CUDA's vector types (NVRTC predefines them; the prelude's GPU half needs
// nothing): the 2- and 4-element ones, whose alignment is their size. On the
// GPU, a load or store of one (`*reinterpret_cast<const float4 *>(p)`) is a
// single vector access, and an address that is not a multiple of the size is
// a "misaligned address" fault that kills the context. Here the copy
// constructor (a load) and the copy assignment (a load and a store) check the
// alignment and fail the launch the same way. A load names its call site; a
// store cannot (an assignment operator takes no defaulted location argument),
// so its message names the block, thread and address only. Unlike CUDA's
// aggregates these have constructors: `float4 v = {a, b, c, d}`, `float4{}`
// and make_float4 work, partial braces `{a}` do not.

namespace xl::emu {

/// Fails the launch for a load (or store) of the vector type `type` at the
/// misaligned address `p`, naming the call site when `loc` is given. Outside
/// a kernel (host code copying vectors) there is no fault to report.
__attribute__((noinline, cold)) inline void
misalignedVector(const char *type, size_t bytes, bool store, const void *p,
                 const SrcLoc *loc) {
  if (!tCurrent)
    return;
  { // the message must be destroyed before the fiber is abandoned
    std::string what =
        format("misaligned address: %s %s %p (needs %zu-byte alignment)", type,
               store ? "store to" : "load from", p, bytes);
    recordKernelError(what, loc);
  }
  abandonCurrent();
}

template <class V>
inline void checkVectorAddress(const V *p, const char *type, bool store,
                               const SrcLoc *loc = nullptr) {
  if (__builtin_expect(reinterpret_cast<uintptr_t>(p) % sizeof(V) != 0, 0))
    misalignedVector(type, sizeof(V), store, p, loc);
}

} // namespace xl::emu

#define XLNETC_EMU_VECTOR2(V, E)                                               \
  struct alignas(2 * sizeof(E)) V {                                            \
    E x, y;                                                                    \
    V() = default;                                                             \
    constexpr V(E x_, E y_) : x(x_), y(y_) {}                                  \
    V(const V &o, XLNETC_EMU_LOC) {                                            \
      const ::xl::emu::SrcLoc loc = XLNETC_EMU_HERE;                           \
      ::xl::emu::checkVectorAddress(&o, #V, false, &loc);                      \
      x = o.x;                                                                 \
      y = o.y;                                                                 \
    }                                                                          \
    V &operator=(const V &o) {                                                 \
      ::xl::emu::checkVectorAddress(&o, #V, false);                            \
      ::xl::emu::checkVectorAddress(this, #V, true);                           \
      x = o.x;                                                                 \
      y = o.y;                                                                 \
      return *this;                                                            \
    }                                                                          \
  };                                                                           \
  static_assert(alignof(V) == sizeof(V), #V " is not size-aligned");           \
  inline V make_##V(E x, E y) { return V(x, y); }
#define XLNETC_EMU_VECTOR4(V, E)                                               \
  struct alignas(4 * sizeof(E)) V {                                            \
    E x, y, z, w;                                                              \
    V() = default;                                                             \
    constexpr V(E x_, E y_, E z_, E w_) : x(x_), y(y_), z(z_), w(w_) {}        \
    V(const V &o, XLNETC_EMU_LOC) {                                            \
      const ::xl::emu::SrcLoc loc = XLNETC_EMU_HERE;                           \
      ::xl::emu::checkVectorAddress(&o, #V, false, &loc);                      \
      x = o.x;                                                                 \
      y = o.y;                                                                 \
      z = o.z;                                                                 \
      w = o.w;                                                                 \
    }                                                                          \
    V &operator=(const V &o) {                                                 \
      ::xl::emu::checkVectorAddress(&o, #V, false);                            \
      ::xl::emu::checkVectorAddress(this, #V, true);                           \
      x = o.x;                                                                 \
      y = o.y;                                                                 \
      z = o.z;                                                                 \
      w = o.w;                                                                 \
      return *this;                                                            \
    }                                                                          \
  };                                                                           \
  static_assert(alignof(V) == sizeof(V), #V " is not size-aligned");           \
  inline V make_##V(E x, E y, E z, E w) { return V(x, y, z, w); }
XLNETC_EMU_VECTOR2(char2, signed char)
XLNETC_EMU_VECTOR2(uchar2, unsigned char)
XLNETC_EMU_VECTOR2(short2, short)
XLNETC_EMU_VECTOR2(ushort2, unsigned short)
XLNETC_EMU_VECTOR2(int2, int)
XLNETC_EMU_VECTOR2(uint2, unsigned)
XLNETC_EMU_VECTOR2(float2, float)
XLNETC_EMU_VECTOR2(longlong2, long long)
XLNETC_EMU_VECTOR2(ulonglong2, unsigned long long)
XLNETC_EMU_VECTOR2(double2, double)
XLNETC_EMU_VECTOR4(char4, signed char)
XLNETC_EMU_VECTOR4(uchar4, unsigned char)
XLNETC_EMU_VECTOR4(short4, short)
XLNETC_EMU_VECTOR4(ushort4, unsigned short)
XLNETC_EMU_VECTOR4(int4, int)
XLNETC_EMU_VECTOR4(uint4, unsigned)
XLNETC_EMU_VECTOR4(float4, float)
#undef XLNETC_EMU_VECTOR2
#undef XLNETC_EMU_VECTOR4

//===----------------------------------------------------------------------===//
// Arithmetic and bit built-ins
//===----------------------------------------------------------------------===//

// expf, logf, sqrtf, tanhf, erff, fmaxf, fminf, fabsf, exp2f, ... are the C
// library's (<math.h>). The intrinsics below model the GPU's fast paths.

/// ex2.approx(x * log2 e): the rounding of the product dominates __expf's
/// error on the GPU too, so this tracks it to a few ulp.
inline float __expf(float x) { return exp2f(x * 1.4426950408889634f); }
/// lg2.approx(x) * ln 2.
inline float __logf(float x) { return log2f(x) * 0.69314718055994531f; }
inline float __log2f(float x) { return log2f(x); }
inline float __exp10f(float x) { return exp2f(x * 3.3219280948873623f); }
inline float __powf(float x, float y) { return exp2f(y * log2f(x)); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
/// x * (1/y); as on the GPU, 0 for 2^126 < |y| < 2^128 (NaN if x is inf).
inline float __fdividef(float x, float y) {
  float ay = fabsf(y);
  if (ay > 0x1p126f && ay <= 3.40282347e38f)
    return std::isinf(x) ? NAN : 0.0f;
  return x / y;
}
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
/// Clamp to [0, 1]; NaN -> 0.
inline float __saturatef(float x) {
  return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f);
}

inline unsigned __float_as_uint(float x) { return xl::numeric::floatBits(x); }
inline float __uint_as_float(unsigned x) { return xl::numeric::bitsFloat(x); }
inline int __float_as_int(float x) {
  return static_cast<int>(xl::numeric::floatBits(x));
}
inline float __int_as_float(int x) {
  return xl::numeric::bitsFloat(static_cast<unsigned>(x));
}
inline long long __double_as_longlong(double x) {
  long long r;
  std::memcpy(&r, &x, 8);
  return r;
}
inline double __longlong_as_double(long long x) {
  double r;
  std::memcpy(&r, &x, 8);
  return r;
}
inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(x); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned __float2uint_rn(float x) {
  return static_cast<unsigned>(nearbyintf(x));
}

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline int __clz(int x) {
  return x ? __builtin_clz(static_cast<unsigned>(x)) : 32;
}
inline int __clzll(long long x) {
  return x ? __builtin_clzll(static_cast<unsigned long long>(x)) : 64;
}
inline unsigned __brev(unsigned x) {
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x)))
          << 32) |
         __brev(static_cast<unsigned>(x >> 32));
}
/// prmt.b32: byte i of the result is byte s[4i+2:4i] of {y, x}.
inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  uint64_t bytes = (static_cast<uint64_t>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i)
    r |= static_cast<unsigned>((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xff)
         << (8 * i);
  return r;
}
inline unsigned __umulhi(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<uint64_t>(x) * y) >> 32);
}
inline int __mulhi(int x, int y) {
  return static_cast<int>((static_cast<int64_t>(x) * y) >> 32);
}

/// __ldg: a load through the read-only data cache.
template <class T> inline T __ldg(const T *p) { return *p; }

// min/max: CUDA's overload set (mixed signedness -> the unsigned type).
#define XLNETC_EMU_MINMAX(R, A, B)                                             \
  inline R min(A a, B b) {                                                     \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
  }                                                                            \
  inline R max(A a, B b) {                                                     \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
  }
XLNETC_EMU_MINMAX(int, int, int)
XLNETC_EMU_MINMAX(unsigned, unsigned, unsigned)
XLNETC_EMU_MINMAX(unsigned, int, unsigned)
XLNETC_EMU_MINMAX(unsigned, unsigned, int)
XLNETC_EMU_MINMAX(long, long, long)
XLNETC_EMU_MINMAX(unsigned long, unsigned long, unsigned long)
XLNETC_EMU_MINMAX(unsigned long, long, unsigned long)
XLNETC_EMU_MINMAX(unsigned long, unsigned long, long)
XLNETC_EMU_MINMAX(long long, long long, long long)
XLNETC_EMU_MINMAX(unsigned long long, unsigned long long, unsigned long long)
XLNETC_EMU_MINMAX(unsigned long long, long long, unsigned long long)
XLNETC_EMU_MINMAX(unsigned long long, unsigned long long, long long)
#undef XLNETC_EMU_MINMAX
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }
inline double min(float a, double b) { return fmin(a, b); }
inline double max(float a, double b) { return fmax(a, b); }
inline double min(double a, float b) { return fmin(a, b); }
inline double max(double a, float b) { return fmax(a, b); }

/// Launch helper for C++ callers: XL_EMU_LAUNCH(k, grid, block, smem, opts,
/// args...) returns "" or the error message.
#define XL_EMU_LAUNCH(k, ...) ::xl::emu::launch(#k, &k, __VA_ARGS__)

#pragma GCC visibility pop

#endif // XLNETC_EMU_BUILTINS_CUH
