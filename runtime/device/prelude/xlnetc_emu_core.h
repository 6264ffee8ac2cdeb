//===- xlnetc_emu_core.h - Emulator scheduler and launcher ------*- C++ -*-===//
//
// The machinery behind the CUDA names of xlnetc_emu_builtins.cuh:
//
//  - `Thread`: one CUDA thread, a fiber plus what it waits for;
//  - `Warp`: 32 lanes and the bit sets of the warp barrier (waiting, exited);
//  - `Worker`: one OS thread's share of a launch. It owns the fibers of one
//    block (reused block after block), resumes them round by round in the
//    schedule's order, completes block and warp barriers, lands the threads'
//    cp.async copies, and turns deadlocks and kernel faults into error
//    messages;
//  - `runGrid`: validates a launch, runs its blocks on cfg->threads workers
//    and reports (the XL_EXPORT launchers and xl::emu::launch end here).
//
// Rules of the emulated machine (barrier semantics, schedules, memory) are
// documented once, in xlnetc_emu.cuh.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_CORE_H
#define XLNETC_EMU_CORE_H

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "xlnetc_emu_abi.h"
#include "xlnetc_emu_fiber.h"

// Everything below is private to the kernel object that includes it (see
// xlnetc_emu.cuh, "Linking").
#pragma GCC visibility push(hidden)

/// Type of threadIdx/blockIdx.
struct uint3 {
  unsigned x, y, z;
};

/// Type of blockDim/gridDim and of launch shapes.
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};

namespace xl::emu {

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

/// printf into a std::string. Messages are cold: one out-of-line function
/// keeps them from bloating every kernel object's hot paths.
__attribute__((format(printf, 1, 2), noinline, cold)) inline std::string
format(const char *fmt, ...) {
  char small[256];
  va_list args;
  va_start(args, fmt);
  int n = std::vsnprintf(small, sizeof small, fmt, args);
  va_end(args);
  if (n < 0)
    return std::string();
  if (static_cast<size_t>(n) < sizeof small)
    return std::string(small, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n), '\0');
  va_start(args, fmt);
  std::vsnprintf(&out[0], out.size() + 1, fmt, args);
  va_end(args);
  return out;
}

/// Where a thread waits: the call site of the barrier or collective.
struct SrcLoc {
  const char *file;
  int line;
};

inline bool sameLoc(SrcLoc a, SrcLoc b) {
  return a.line == b.line &&
         (a.file == b.file || std::strcmp(a.file, b.file) == 0);
}

/// "file:line" with the directory stripped.
__attribute__((noinline, cold)) inline std::string formatLoc(SrcLoc loc) {
  const char *base = std::strrchr(loc.file, '/');
  return format("%s:%d", base ? base + 1 : loc.file, loc.line);
}

//===----------------------------------------------------------------------===//
// Threads, warps and launches
//===----------------------------------------------------------------------===//

enum class State : uint8_t {
  Runnable,  // may be resumed
  Running,   // the fiber on the CPU
  AtBarrier, // waits at __syncthreads
  AtWarp,    // waits at a warp collective
  Exited     // returned from the kernel (or abandoned)
};

/// Variants of the block barrier (bar.sync / bar.red.{popc,and,or}).
enum class Barrier : uint8_t { Sync, Count, And, Or };

inline const char *barrierName(Barrier kind) {
  switch (kind) {
  case Barrier::Sync:
    return "__syncthreads";
  case Barrier::Count:
    return "__syncthreads_count";
  case Barrier::And:
    return "__syncthreads_and";
  case Barrier::Or:
    return "__syncthreads_or";
  }
  return "?";
}

struct Warp;
struct Worker;

/// A warp-collective operation. The lane whose arrival completes a group
/// calls `complete` once for the whole group; it reads each participant's
/// `in` payload and writes each participant's `out`. Because results land in
/// per-lane storage before any participant resumes, a lane that runs ahead to
/// its next collective can only overwrite its own `in`, never a result
/// another lane has yet to read: no generation counting is needed.
struct CollectiveOp {
  const char *name;
  /// .aligned instructions (mma.sync, ldmatrix): all 32 lanes must take part.
  bool fullWarp;
  /// All lanes of a group must wait at the same call site (file:line). True
  /// for every op but __syncwarp, which sm_70+ explicitly lets lanes reach
  /// at different sites (bar.warp.sync); for the others, lanes at two sites
  /// of one op are a divergent branch whose lanes the GPU pairs wrongly (or,
  /// for .aligned ops, undefined behaviour).
  bool sameSite;
  /// Returns false with a complete message (block, thread, source line; the
  /// launcher adds the kernel) on a kernel error, e.g. a misaligned address.
  bool (*complete)(Warp &warp, unsigned lanes, std::string &error);
};

/// One cp.async in flight (xlnetc_emu_tensor.cuh says when it lands).
struct AsyncCopy {
  void *dst;
  const void *src;
  unsigned srcBytes; // bytes read from src; the rest of the 16 are zeroed
  unsigned group;    // commit-group index, kUncommitted before the commit
};
inline constexpr unsigned kUncommitted = ~0u;

/// Performs a cp.async: reads its source and writes all 16 bytes of its
/// destination. Out of line and instrumented (never XLNETC_EMU_NO_TSAN), so
/// that under TSan the copy is an access of the issuing thread wherever the
/// scheduler lands it.
__attribute__((noinline)) inline void landCopy(const AsyncCopy &copy) {
  unsigned char bytes[16] = {};
  if (copy.srcBytes)
    std::memcpy(bytes, copy.src, copy.srcBytes);
  std::memcpy(copy.dst, bytes, 16);
}

/// Bytes a lane can hand to a collective (mma: A 16 + B 8 + C 16).
inline constexpr size_t kPayloadBytes = 48;

/// One CUDA thread: its fiber and what it waits for.
struct Thread {
  Context ctx;
  Stack stack;
  Worker *worker = nullptr;
  Warp *warp = nullptr;
  uint3 threadIdx{0, 0, 0};
  unsigned linear = 0; // x + y*bdx + z*bdx*bdy
  unsigned lane = 0;   // linear % 32
  State state = State::Exited;
  /// True from the kernel's entry until its return: a fiber abandoned in
  /// between must get a fresh context before it can run again.
  bool inKernel = false;

  // The wait: where, and for a warp collective which op with which mask.
  SrcLoc loc{"", 0};
  const CollectiveOp *op = nullptr;
  unsigned mask = 0;
  Barrier barrier = Barrier::Sync;
  int barrierValue = 0; // predicate in, reduction result out

  alignas(16) unsigned char in[kPayloadBytes];
  alignas(16) unsigned char out[16];

  std::vector<AsyncCopy> copies; // in flight, in issue order
  unsigned committedGroups = 0;

  // Addresses used as TSan synchronization objects: released when the thread
  // suspends at a barrier, acquired by whoever completes the barrier, which
  // then releases `tsanResume` for the thread to acquire when it resumes.
  char tsanArrive = 0;
  char tsanResume = 0;
};

struct Warp {
  Thread *lanes[32] = {};
  unsigned index = 0;
  unsigned present = 0; // lanes that exist (a partial last warp has fewer)
  unsigned exited = 0;  // lanes that exited or do not exist
  unsigned waiting = 0; // lanes waiting at a warp collective
};

/// What all workers of one launch share.
struct Launch {
  const char *kernel = "";
  dim3 grid, block;
  size_t dynSmem = 0;
  int schedule = XLNETC_EMU_FORWARD;
  uint64_t seed = 0;
  void (*invoke)(const void *) = nullptr;
  const void *args = nullptr;
  uint64_t numBlocks = 0;
  size_t stackBytes = 0;

  std::atomic<uint64_t> nextBlock{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::string error;
  uint64_t errorPosition = ~uint64_t(0);

  /// Records an error; `position` is the failing block's place in schedule
  /// order (~0 for a worker that could not start). The earliest position
  /// wins, so with several OS threads the message is the same as with one:
  /// blocks are taken in position order and a taken block always runs to
  /// its end, so every block before the first failing one has run.
  void fail(const std::string &message, uint64_t position = ~uint64_t(0)) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed.load(std::memory_order_relaxed) || position < errorPosition) {
      error = message;
      errorPosition = position;
    }
    failed.store(true, std::memory_order_relaxed);
  }

  /// The linear index of the i-th block to run, in schedule order.
  uint64_t blockAt(uint64_t i) const;
};

/// The fiber that is running on this OS thread, if any.
inline thread_local Thread *tCurrent = nullptr;

XLNETC_EMU_NO_TSAN inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline uint64_t Launch::blockAt(uint64_t i) const {
  switch (schedule) {
  case XLNETC_EMU_REVERSE:
    return numBlocks - 1 - i;
  case XLNETC_EMU_RANDOM: {
    // A seeded bijection of [0, 2^bits) (odd multipliers and xor-shifts are
    // invertible mod 2^bits) restricted to [0, numBlocks) by cycle walking.
    unsigned bits = 1;
    while ((1ull << bits) < numBlocks)
      ++bits;
    uint64_t mask = (1ull << bits) - 1, state = seed;
    uint64_t a = splitmix64(state) | 1, b = splitmix64(state);
    uint64_t c = splitmix64(state) | 1, d = splitmix64(state);
    uint64_t x = i;
    do {
      x = (x * a + b) & mask;
      x ^= x >> (bits / 2 + 1);
      x = (x * c + d) & mask;
    } while (x >= numBlocks);
    return x;
  }
  default:
    return i;
  }
}

//===----------------------------------------------------------------------===//
// The worker
//===----------------------------------------------------------------------===//

/// Runs blocks of one launch on one OS thread: owns the fibers (one per
/// thread of a block, reused block after block), the dynamic shared memory
/// and the scheduler state of the block in flight.
///
/// Scheduling is in rounds: a round visits the threads in the schedule's
/// order (forward, reverse, or a fresh random permutation) and resumes each
/// runnable one until it waits or exits. Fibers switch to each other
/// directly (one context switch per wait); the worker's own stack (`main`)
/// is resumed only when no fiber can run: the block is done, deadlocked, or
/// failed.
struct Worker {
  Launch &launch;
  Context main; // the OS thread's own stack
  unsigned numThreads = 0, numWarps = 0;
  std::unique_ptr<Thread[]> threads;
  std::unique_ptr<Warp[]> warps;
  unsigned char *dynSmem = nullptr;

  // The block in flight.
  uint3 blockIdx{0, 0, 0};
  std::vector<unsigned> order; // resume order of the current round
  size_t cursor = 0;           // next position in `order`
  unsigned runnable = 0;       // threads in State::Runnable
  unsigned live = 0;           // threads not exited
  unsigned atBarrier = 0;      // threads in State::AtBarrier
  uint64_t rng = 0;
  bool failed = false;
  std::string error;

  explicit Worker(Launch &l) : launch(l) {}
  ~Worker();
  Worker(const Worker &) = delete;
  Worker &operator=(const Worker &) = delete;

  /// Takes stacks and creates the fibers. False with `error` set on failure.
  bool init();
  /// Runs blocks until the grid is exhausted or the launch failed.
  void run();
  bool runBlock(uint64_t linearBlock);

  // Called on fibers.
  void switchAway(Thread &self);
  void yield(Thread &self);
  int blockBarrier(Thread &self, Barrier kind, int predicate, SrcLoc loc);
  void warpCollective(Thread &self, const CollectiveOp &op, unsigned mask,
                      SrcLoc loc);
  void exitThread(Thread &self);
  /// cp.async of `self`: lands at once or joins `self.copies`.
  void issueCopy(Thread &self, const AsyncCopy &copy);
  /// A landing point of `self`'s copies in flight: lands every copy of a
  /// committed group before `retire` and, under the random schedule, each
  /// other copy with probability 1/2.
  void landCopies(Thread &self, unsigned retire);
  /// The first error of the block wins.
  void recordError(const std::string &message);
  /// Ends `self` after an error was recorded; runBlock resets the fiber. Call
  /// it in a statement of its own: temporaries still alive in the calling
  /// frame (an error message) would never be destroyed.
  [[noreturn]] void abandon(Thread &self);

  // Scheduler internals.
  Thread *pickNext();
  void startRound();
  bool completeBarrier(Thread &executor);
  enum class Group { NotReady, Done, Failed };
  Group tryCompleteGroup(Warp &warp, unsigned mask, Thread &executor);
  void completeGroupsAfterExit(Thread &self);
  void resetFiber(Thread &t);

  // Messages.
  std::string blockName() const;
  std::string describe(unsigned firstThread, unsigned endThread) const;
};

/// The running CUDA thread. A CUDA built-in outside an emulated kernel is a
/// programming error of the host code, not of a kernel: abort loudly.
inline Thread &current() {
  Thread *t = tCurrent;
  if (__builtin_expect(t == nullptr, 0)) {
    std::fprintf(stderr, "xlnetc emulator: a CUDA built-in was used outside "
                         "an emulated kernel\n");
    std::abort();
  }
  return *t;
}

//===----------------------------------------------------------------------===//
// TSan hand-off between fibers (no-ops otherwise)
//===----------------------------------------------------------------------===//

inline void tsanRelease(char *token) {
#if XLNETC_EMU_TSAN
  __tsan_release(token);
#endif
  (void)token;
}

inline void tsanAcquire(char *token) {
#if XLNETC_EMU_TSAN
  __tsan_acquire(token);
#endif
  (void)token;
}

//===----------------------------------------------------------------------===//
// Fiber lifecycle
//===----------------------------------------------------------------------===//

inline void runKernelBody(Thread &self) {
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  // Fail outside the handler: a fiber abandoned inside a catch block would
  // leave its exception on the OS thread's list of caught exceptions.
  bool threw = false;
  try {
    self.worker->launch.invoke(self.worker->launch.args);
  } catch (...) {
    threw = true;
  }
  if (threw) {
    self.worker->recordError(
        format("a C++ exception escaped the kernel in thread %u of block %s",
               self.linear, self.worker->blockName().c_str()));
    self.worker->abandon(self);
  }
#else
  self.worker->launch.invoke(self.worker->launch.args);
#endif
}

/// Entry of every fiber. A fiber runs its thread's body once per block: after
/// the kernel returns it parks in exitThread and, resumed for the next block,
/// loops. (Reusing the fiber keeps TSan's per-fiber shadow stack bounded.)
XLNETC_EMU_NO_TSAN inline void fiberMain(void *arg) {
  Thread &self = *static_cast<Thread *>(arg);
  finishSwitch(self.ctx);
  tsanAcquire(&self.tsanResume);
  for (;;) {
    self.inKernel = true;
    runKernelBody(self);
    self.worker->exitThread(self);
  }
}

XLNETC_EMU_NO_TSAN inline bool Worker::init() {
  const dim3 &b = launch.block;
  numThreads = b.x * b.y * b.z;
  numWarps = (numThreads + 31) / 32;
  threads.reset(new Thread[numThreads]);
  warps.reset(new Warp[numWarps]);
  initThreadContext(main);
  for (unsigned w = 0; w < numWarps; ++w) {
    warps[w].index = w;
    unsigned count = std::min(32u, numThreads - w * 32);
    warps[w].present = count == 32 ? ~0u : (1u << count) - 1;
  }
  for (unsigned i = 0; i < numThreads; ++i) {
    Thread &t = threads[i];
    t.worker = this;
    t.linear = i;
    t.lane = i & 31;
    t.warp = &warps[i >> 5];
    t.warp->lanes[t.lane] = &t;
    t.threadIdx = uint3{i % b.x, (i / b.x) % b.y, i / (b.x * b.y)};
    t.stack = StackPool::get().acquire(launch.stackBytes);
    if (!t.stack) {
      error = format("cannot map %u fiber stacks of %zu KiB", numThreads,
                     launch.stackBytes / 1024);
      return false;
    }
#if XLNETC_EMU_TSAN
    t.ctx.tsanFiber = __tsan_create_fiber(0);
#endif
    if (!initContext(t.ctx, t.stack, &fiberMain, &t)) {
      error = "cannot create a fiber context";
      return false;
    }
  }
  if (launch.dynSmem > 0) {
    size_t bytes = (launch.dynSmem + 127) / 128 * 128;
    dynSmem = static_cast<unsigned char *>(std::aligned_alloc(128, bytes));
    if (!dynSmem) {
      error = format("cannot allocate %zu bytes of dynamic shared memory",
                     launch.dynSmem);
      return false;
    }
  }
  order.resize(numThreads);
  for (unsigned i = 0; i < numThreads; ++i)
    order[i] = launch.schedule == XLNETC_EMU_REVERSE ? numThreads - 1 - i : i;
  return true;
}

XLNETC_EMU_NO_TSAN inline Worker::~Worker() {
  if (threads) {
    for (unsigned i = 0; i < numThreads; ++i) {
#if XLNETC_EMU_TSAN
      if (threads[i].ctx.tsanFiber)
        __tsan_destroy_fiber(threads[i].ctx.tsanFiber);
#endif
      StackPool::get().release(threads[i].stack);
    }
  }
  std::free(dynSmem);
}

/// Gives an abandoned fiber (stuck at a barrier, or stopped by a kernel
/// error) a fresh start: its stack content is simply forgotten.
XLNETC_EMU_NO_TSAN inline void Worker::resetFiber(Thread &t) {
#if XLNETC_EMU_TSAN
  // The TSan fiber's shadow stack still holds the abandoned frames.
  __tsan_destroy_fiber(t.ctx.tsanFiber);
  t.ctx.tsanFiber = __tsan_create_fiber(0);
#endif
#if XLNETC_EMU_ASAN
  __asan_unpoison_memory_region(t.stack.bottom(), t.stack.size());
  t.ctx.asanFakeStack = nullptr;
#endif
  initContext(t.ctx, t.stack, &fiberMain, &t);
  t.inKernel = false;
}

XLNETC_EMU_NO_TSAN inline void Worker::run() {
  while (!launch.failed.load(std::memory_order_relaxed)) {
    uint64_t i = launch.nextBlock.fetch_add(1, std::memory_order_relaxed);
    if (i >= launch.numBlocks)
      return;
    if (!runBlock(launch.blockAt(i))) {
      launch.fail(error, i);
      return;
    }
  }
}

XLNETC_EMU_NO_TSAN inline void Worker::startRound() {
  cursor = 0;
  if (launch.schedule != XLNETC_EMU_RANDOM)
    return;
  // Fisher-Yates. (No std::swap: under TSan, helpers that are not inlined
  // into this uninstrumented function would be instrumented.)
  unsigned *o = order.data();
  for (unsigned i = numThreads; i > 1; --i) {
    unsigned j = static_cast<unsigned>(splitmix64(rng) % i);
    unsigned tmp = o[i - 1];
    o[i - 1] = o[j];
    o[j] = tmp;
  }
}

XLNETC_EMU_NO_TSAN inline Thread *Worker::pickNext() {
  if (runnable == 0 || failed)
    return nullptr;
  for (;;) {
    while (cursor < numThreads) {
      Thread &t = threads[order[cursor++]];
      if (t.state == State::Runnable) {
        --runnable;
        return &t;
      }
    }
    startRound();
  }
}

/// Runs one block to completion. False (with `error`) on a deadlock or a
/// kernel error; the fibers are then reset for the next block.
XLNETC_EMU_NO_TSAN inline bool Worker::runBlock(uint64_t linearBlock) {
  const dim3 &g = launch.grid;
  blockIdx = uint3{static_cast<unsigned>(linearBlock % g.x),
                   static_cast<unsigned>(linearBlock / g.x % g.y),
                   static_cast<unsigned>(linearBlock / g.x / g.y)};
  // Same seed for the same block whichever worker runs it.
  uint64_t seedState = launch.seed ^ (linearBlock * 0xd1b54a32d192ed03ull);
  rng = splitmix64(seedState);
  if (dynSmem)
    std::memset(dynSmem, 0xff, launch.dynSmem);
  for (unsigned w = 0; w < numWarps; ++w) {
    warps[w].exited = ~warps[w].present;
    warps[w].waiting = 0;
  }
  for (unsigned i = 0; i < numThreads; ++i) {
    Thread &t = threads[i];
    t.state = State::Runnable;
    t.copies.clear();
    t.committedGroups = 0;
    t.op = nullptr;
#if XLNETC_EMU_TSAN
    // TSan reports name the fiber: "Thread T7 'CUDA thread 5 of block
    // (1,0,0)'".
    char name[64];
    std::snprintf(name, sizeof name, "CUDA thread %u of block (%u,%u,%u)", i,
                  blockIdx.x, blockIdx.y, blockIdx.z);
    __tsan_set_fiber_name(t.ctx.tsanFiber, name);
#endif
    // This (unsynchronized) setup happens before the thread's first resume.
    tsanRelease(&t.tsanResume);
  }
  runnable = live = numThreads;
  atBarrier = 0;
  failed = false;
  startRound();
  Thread *first = pickNext();
  first->state = State::Running;
  tCurrent = first;
  switchContext(main, first->ctx);
  tCurrent = nullptr;
  for (unsigned i = 0; i < numThreads; ++i)
    tsanAcquire(&threads[i].tsanArrive);
  if (!failed && live > 0) {
    failed = true;
    error = "deadlock in block " + blockName() + ": " + describe(0, numThreads);
  }
  if (!failed)
    return true;
  for (unsigned i = 0; i < numThreads; ++i) {
    if (threads[i].inKernel)
      resetFiber(threads[i]);
    threads[i].state = State::Exited;
  }
  return false;
}

/// Suspends `self` (whose state says why) and resumes the next runnable
/// fiber of the round, or the worker's main context when none is left.
XLNETC_EMU_NO_TSAN inline void Worker::switchAway(Thread &self) {
  // Every switch point is a landing point of the thread's copies in flight.
  if (launch.schedule == XLNETC_EMU_RANDOM && !self.copies.empty())
    landCopies(self, 0);
  Thread *next = pickNext();
  if (next == &self) {
    self.state = State::Running;
    return;
  }
  tsanRelease(&self.tsanArrive);
  tCurrent = next;
  if (next) {
    next->state = State::Running;
    switchContext(self.ctx, next->ctx);
  } else {
    switchContext(self.ctx, main);
  }
  tsanAcquire(&self.tsanResume);
}

XLNETC_EMU_NO_TSAN __attribute__((noinline, cold)) inline void
Worker::recordError(const std::string &message) {
  if (!failed)
    error = message;
  failed = true;
}

XLNETC_EMU_NO_TSAN inline void Worker::abandon(Thread &self) {
  failed = true;
  self.state = State::Exited;
  switchAway(self);
  std::fprintf(stderr, "xlnetc emulator: an abandoned fiber was resumed\n");
  std::abort();
}

XLNETC_EMU_NO_TSAN inline void Worker::yield(Thread &self) {
  self.state = State::Runnable;
  ++runnable;
  switchAway(self);
}

//===----------------------------------------------------------------------===//
// cp.async landing points
//===----------------------------------------------------------------------===//

// A cp.async may land at any moment between its issue and the wait that
// retires it. Where the emulator lands it depends on the schedule (the rules
// are in xlnetc_emu_tensor.cuh): forward at the wait, reverse at the issue,
// random at a seeded coin flip at the issue, at every switch point of the
// issuing thread and at every wait.

XLNETC_EMU_NO_TSAN inline void Worker::issueCopy(Thread &self,
                                                 const AsyncCopy &copy) {
  if (launch.schedule == XLNETC_EMU_REVERSE ||
      (launch.schedule == XLNETC_EMU_RANDOM && (splitmix64(rng) & 1))) {
    landCopy(copy);
    return;
  }
  self.copies.push_back(copy);
}

XLNETC_EMU_NO_TSAN __attribute__((noinline)) inline void
Worker::landCopies(Thread &self, unsigned retire) {
  const bool random = launch.schedule == XLNETC_EMU_RANDOM;
  std::vector<AsyncCopy> &copies = self.copies;
  size_t kept = 0;
  uint64_t coins = 0; // one random bit per copy
  for (size_t i = 0; i < copies.size(); ++i) {
    if (random && i % 64 == 0)
      coins = splitmix64(rng);
    bool retired = copies[i].group < retire; // never for kUncommitted
    if (retired || (random && ((coins >> (i % 64)) & 1)))
      landCopy(copies[i]);
    else
      copies[kept++] = copies[i];
  }
  copies.resize(kept);
}

//===----------------------------------------------------------------------===//
// Barriers
//===----------------------------------------------------------------------===//

XLNETC_EMU_NO_TSAN inline int Worker::blockBarrier(Thread &self, Barrier kind,
                                                   int predicate, SrcLoc loc) {
  self.state = State::AtBarrier;
  self.barrier = kind;
  self.loc = loc;
  self.barrierValue = predicate;
  ++atBarrier;
  if (atBarrier == live && !completeBarrier(self))
    abandon(self);
  // Even the thread that completed the barrier yields, so the round after a
  // barrier starts in schedule order (thread 0 first in forward mode).
  switchAway(self);
  return self.barrierValue;
}

/// Releases a __syncthreads at which every live thread waits (they become
/// runnable); `executor` is the thread whose arrival (or exit) completed it.
/// False with `error` set when the waiting threads are at different barriers.
XLNETC_EMU_NO_TSAN inline bool Worker::completeBarrier(Thread &executor) {
  Thread *first = nullptr;
  int count = 0;
  for (unsigned i = 0; i < numThreads; ++i) {
    Thread &t = threads[i];
    if (t.state != State::AtBarrier)
      continue;
    if (!first) {
      first = &t;
    } else if (t.barrier != first->barrier || !sameLoc(t.loc, first->loc)) {
      recordError("divergent __syncthreads in block " + blockName() + ": " +
                  describe(0, numThreads));
      return false;
    }
    count += t.barrierValue != 0;
    if (&t != &executor)
      tsanAcquire(&t.tsanArrive);
  }
  int result = 0;
  switch (first->barrier) {
  case Barrier::Sync:
    break;
  case Barrier::Count:
    result = count;
    break;
  case Barrier::And:
    result = count == static_cast<int>(atBarrier);
    break;
  case Barrier::Or:
    result = count > 0;
    break;
  }
  for (unsigned i = 0; i < numThreads; ++i) {
    Thread &t = threads[i];
    if (t.state != State::AtBarrier)
      continue;
    t.barrierValue = result;
    tsanRelease(&t.tsanResume);
    t.state = State::Runnable;
    ++runnable;
  }
  atBarrier = 0;
  return true;
}

XLNETC_EMU_NO_TSAN inline void Worker::warpCollective(Thread &self,
                                                      const CollectiveOp &op,
                                                      unsigned mask,
                                                      SrcLoc loc) {
  if (!(mask & (1u << self.lane))) {
    recordError(format("thread %u in block %s calls %s with mask 0x%08x, "
                       "which excludes its own lane %u (%s)",
                       self.linear, blockName().c_str(), op.name, mask,
                       self.lane, formatLoc(loc).c_str()));
    abandon(self);
  }
  Warp &warp = *self.warp;
  self.state = State::AtWarp;
  self.op = &op;
  self.mask = mask;
  self.loc = loc;
  warp.waiting |= 1u << self.lane;
  if (tryCompleteGroup(warp, mask, self) == Group::Failed)
    abandon(self);
  // Suspend even when this arrival completed the group (see blockBarrier).
  switchAway(self);
}

/// Completes the warp collective of `mask` if every non-exited lane of it
/// waits there: `executor` (the arriving lane, or a lane whose exit completed
/// the group) runs the op's `complete` and makes the participants runnable.
XLNETC_EMU_NO_TSAN inline Worker::Group
Worker::tryCompleteGroup(Warp &warp, unsigned mask, Thread &executor) {
  if (((warp.waiting | warp.exited) & mask) != mask)
    return Group::NotReady;
  unsigned lanes = warp.waiting & mask;
  const Thread *leader = nullptr;
  bool mixed = false; // different ops, or one op at different call sites
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    Thread &t = *warp.lanes[__builtin_ctz(rest)];
    if (t.mask != mask)
      return Group::NotReady; // that lane waits for a group of its own
    if (!leader)
      leader = &t;
    mixed |=
        t.op != leader->op || (t.op->sameSite && !sameLoc(t.loc, leader->loc));
  }
  const CollectiveOp *op = leader->op;
  unsigned first = warp.index * 32;
  unsigned end = std::min(numThreads, first + 32);
  if (mixed) {
    recordError(format("divergent warp collective in block %s, warp %u: %s",
                       blockName().c_str(), warp.index,
                       describe(first, end).c_str()));
    return Group::Failed;
  }
  if (op->fullWarp && lanes != ~0u) {
    recordError(format("%s in block %s needs all 32 lanes of warp %u "
                       "(.aligned): %s",
                       op->name, blockName().c_str(), warp.index,
                       describe(first, end).c_str()));
    return Group::Failed;
  }
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    Thread &t = *warp.lanes[__builtin_ctz(rest)];
    if (&t != &executor)
      tsanAcquire(&t.tsanArrive);
  }
  std::string message;
  if (!op->complete(warp, lanes, message)) {
    recordError(message);
    return Group::Failed;
  }
  warp.waiting &= ~lanes;
  for (unsigned rest = lanes; rest; rest &= rest - 1) {
    Thread &t = *warp.lanes[__builtin_ctz(rest)];
    tsanRelease(&t.tsanResume);
    t.state = State::Runnable;
    ++runnable;
  }
  return Group::Done;
}

/// An exited lane counts as arrived: groups that waited only for it complete.
XLNETC_EMU_NO_TSAN inline void Worker::completeGroupsAfterExit(Thread &self) {
  Warp &warp = *self.warp;
  unsigned bit = 1u << self.lane;
  unsigned tried[32];
  unsigned numTried = 0;
  for (unsigned rest = warp.waiting; rest; rest &= rest - 1) {
    unsigned mask = warp.lanes[__builtin_ctz(rest)]->mask;
    bool seen = false;
    for (unsigned i = 0; i < numTried; ++i)
      seen |= tried[i] == mask;
    if (!(mask & bit) || seen)
      continue;
    tried[numTried++] = mask;
    if (tryCompleteGroup(warp, mask, self) == Group::Failed)
      return;
  }
}

XLNETC_EMU_NO_TSAN inline void Worker::exitThread(Thread &self) {
  // cp.async copies still in flight are dropped: no wait orders them before
  // anything another thread does, so a kernel may not rely on them.
  self.copies.clear();
  self.inKernel = false;
  self.state = State::Exited;
  self.warp->exited |= 1u << self.lane;
  --live;
  // Exited threads count as arrived at __syncthreads (sm_70+).
  if (live > 0 && atBarrier == live)
    completeBarrier(self);
  if (!failed)
    completeGroupsAfterExit(self);
  switchAway(self);
}

//===----------------------------------------------------------------------===//
// Messages
//===----------------------------------------------------------------------===//

__attribute__((noinline, cold)) inline std::string Worker::blockName() const {
  return format("(%u,%u,%u)", blockIdx.x, blockIdx.y, blockIdx.z);
}

/// "threads 0-31 wait at __syncthreads (k.cu:12), thread 32 waits at ...,
/// threads 33-63 have exited" for threads [firstThread, endThread).
XLNETC_EMU_NO_TSAN __attribute__((noinline, cold)) inline std::string
Worker::describe(unsigned firstThread, unsigned endThread) const {
  struct Entry {
    std::string what; // "at <barrier> (file:line)", "exited" or "running"
    std::string ranges;
    unsigned count = 0, last = 0;
  };
  std::vector<Entry> entries;
  for (unsigned i = firstThread; i < endThread; ++i) {
    const Thread &t = threads[i];
    std::string what;
    switch (t.state) {
    case State::AtBarrier:
      what = format("at %s (%s)", barrierName(t.barrier),
                    formatLoc(t.loc).c_str());
      break;
    case State::AtWarp:
      what = format("at %s with mask 0x%08x (%s)", t.op->name, t.mask,
                    formatLoc(t.loc).c_str());
      break;
    case State::Exited:
      what = "exited";
      break;
    case State::Runnable:
    case State::Running:
      what = "running";
      break;
    }
    Entry *e = nullptr;
    for (Entry &candidate : entries)
      if (candidate.what == what)
        e = &candidate;
    if (!e) {
      entries.push_back(Entry{what, std::to_string(i), 0, i});
      e = &entries.back();
    } else if (e->last + 1 == i) {
      // Extend the open range "a" or "a-b" to end at i.
      size_t dash = e->ranges.find_last_of("-,");
      if (dash != std::string::npos && e->ranges[dash] == '-')
        e->ranges.resize(dash);
      e->ranges += "-" + std::to_string(i);
    } else {
      e->ranges += "," + std::to_string(i);
    }
    e->last = i;
    ++e->count;
  }
  std::string out;
  for (const Entry &e : entries) {
    bool plural = e.count > 1;
    if (!out.empty())
      out += ", ";
    out += format("%s %s ", plural ? "threads" : "thread", e.ranges.c_str());
    if (e.what == "exited")
      out += plural ? "have exited" : "has exited";
    else if (e.what == "running")
      out += plural ? "are running" : "is running";
    else
      out += (plural ? "wait " : "waits ") + e.what;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Launching a grid
//===----------------------------------------------------------------------===//

inline void writeError(const xlnetc_emu_launch *cfg, const std::string &msg) {
  if (cfg && cfg->err && cfg->err_len > 0)
    std::snprintf(cfg->err, cfg->err_len, "%s", msg.c_str());
}

/// Parses XLNETC_EMU_SCHEDULE into `schedule`/`seed`; false if malformed.
inline bool scheduleFromEnv(int &schedule, uint64_t &seed) {
  const char *env = std::getenv("XLNETC_EMU_SCHEDULE");
  if (!env || !*env)
    return true;
  const char *colon = std::strchr(env, ':');
  size_t modeLength =
      colon ? static_cast<size_t>(colon - env) : std::strlen(env);
  auto is = [&](const char *mode) {
    return std::strlen(mode) == modeLength &&
           std::strncmp(env, mode, modeLength) == 0;
  };
  if (is("forward"))
    schedule = XLNETC_EMU_FORWARD;
  else if (is("reverse"))
    schedule = XLNETC_EMU_REVERSE;
  else if (is("random"))
    schedule = XLNETC_EMU_RANDOM;
  else
    return false;
  seed = 0;
  if (!colon)
    return true;
  if (schedule != XLNETC_EMU_RANDOM || !colon[1])
    return false;
  char *end = nullptr;
  seed = std::strtoull(colon + 1, &end, 0);
  return *end == '\0';
}

/// Validates `cfg`, runs the grid on cfg->threads OS threads and reports.
/// `invoke(args)` runs the kernel body of the current fiber.
__attribute__((noinline)) inline int runGrid(const char *kernel,
                                             const xlnetc_emu_launch *cfg,
                                             void (*invoke)(const void *),
                                             const void *args) {
  if (!cfg)
    return 1;
  auto reject = [&](const std::string &msg) {
    writeError(cfg, format("emulated kernel '%s': %s", kernel, msg.c_str()));
    return 1;
  };
  if (tCurrent)
    return reject("launched from inside an emulated kernel (dynamic "
                  "parallelism is not emulated)");
  if (cfg->abi_version != XLNETC_EMU_ABI_VERSION)
    return reject(format("launch ABI version %d, the kernel object has %d",
                         cfg->abi_version, XLNETC_EMU_ABI_VERSION));
  const unsigned *g = cfg->grid, *b = cfg->block;
  // The limits of sm_90 (cudaErrorInvalidConfiguration on a GPU).
  if (!g[0] || !g[1] || !g[2] || g[0] > 0x7fffffffu || g[1] > 65535 ||
      g[2] > 65535)
    return reject(format("invalid grid (%u,%u,%u)", g[0], g[1], g[2]));
  if (!b[0] || !b[1] || !b[2] || b[0] > 1024 || b[1] > 1024 || b[2] > 64 ||
      static_cast<uint64_t>(b[0]) * b[1] * b[2] > 1024)
    return reject(format("invalid block (%u,%u,%u) (at most 1024 threads, z "
                         "at most 64)",
                         b[0], b[1], b[2]));
  constexpr size_t kMaxDynSmem = 227 * 1024;
  if (cfg->dyn_smem > kMaxDynSmem)
    return reject(format("%zu bytes of dynamic shared memory exceed the sm_90 "
                         "limit of %zu",
                         cfg->dyn_smem, kMaxDynSmem));
  if (cfg->schedule < XLNETC_EMU_FORWARD || cfg->schedule > XLNETC_EMU_RANDOM)
    return reject(format("unknown schedule %d", cfg->schedule));

  Launch launch;
  launch.kernel = kernel;
  launch.grid = dim3(g[0], g[1], g[2]);
  launch.block = dim3(b[0], b[1], b[2]);
  launch.dynSmem = cfg->dyn_smem;
  launch.schedule = cfg->schedule;
  launch.seed = cfg->seed;
  if (!scheduleFromEnv(launch.schedule, launch.seed))
    return reject(format("cannot parse XLNETC_EMU_SCHEDULE='%s' (forward, "
                         "reverse, random or random:SEED)",
                         std::getenv("XLNETC_EMU_SCHEDULE")));
  launch.invoke = invoke;
  launch.args = args;
  launch.numBlocks = static_cast<uint64_t>(g[0]) * g[1] * g[2];
  launch.stackBytes = stackBytes();

  uint64_t numWorkers = std::min<uint64_t>(
      static_cast<uint64_t>(std::clamp(cfg->threads, 1, 64)), launch.numBlocks);
  auto work = [&launch] {
    Worker worker(launch);
    if (worker.init())
      worker.run();
    else
      launch.fail(worker.error);
  };
  std::vector<std::thread> helpers;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    for (uint64_t i = 1; i < numWorkers; ++i)
      helpers.emplace_back(work);
  } catch (...) {
    // Fewer OS threads than asked for: the blocks still all run.
  }
#else
  for (uint64_t i = 1; i < numWorkers; ++i)
    helpers.emplace_back(work);
#endif
  work();
  for (std::thread &helper : helpers)
    helper.join();
  if (launch.failed.load())
    return reject(launch.error);
  return 0;
}

/// A kernel with its arguments bound, as runGrid's `invoke` expects.
template <class... P> struct BoundKernel {
  void (*kernel)(P...);
  std::tuple<std::decay_t<P>...> args;

  static void invoke(const void *self) {
    const BoundKernel &bound = *static_cast<const BoundKernel *>(self);
    // Each CUDA thread gets its own copy of the parameters (a kernel may
    // modify them), as each GPU thread reads them from the parameter bank.
    std::apply(bound.kernel, bound.args);
  }
};

template <class... P, size_t... I>
int launchFromParamsImpl(const char *name, void (*kernel)(P...),
                         const xlnetc_emu_launch *cfg, void **params,
                         std::index_sequence<I...>) {
  if (sizeof...(P) > 0 && !params) {
    writeError(cfg, format("emulated kernel '%s': params is null but the "
                           "kernel takes %zu arguments",
                           name, sizeof...(P)));
    return 1;
  }
  BoundKernel<P...> bound{kernel,
                          {*static_cast<std::decay_t<P> *>(params[I])...}};
  (void)params;
  return runGrid(name, cfg, &BoundKernel<P...>::invoke, &bound);
}

/// The body of XL_EXPORT's launcher: params[i] points at argument i.
template <class... P>
int launchFromParams(const char *name, void (*kernel)(P...),
                     const xlnetc_emu_launch *cfg, void **params) {
  return launchFromParamsImpl(name, kernel, cfg, params,
                              std::index_sequence_for<P...>());
}

/// Options of the C++ launch API (see xlnetc_emu_launch).
struct LaunchOptions {
  int schedule = XLNETC_EMU_FORWARD;
  unsigned long long seed = 0;
  int threads = 1;
};

/// Runs kernel<<<grid, block, dynSmem>>>(args...) and returns "" or the
/// error message. Arguments convert to the parameter types as in a call.
template <class... P, class... A>
std::string launch(const char *name, void (*kernel)(P...), dim3 grid,
                   dim3 block, size_t dynSmem, const LaunchOptions &options,
                   A &&...args) {
  static_assert(sizeof...(P) == sizeof...(A),
                "wrong number of kernel arguments");
  BoundKernel<P...> bound{kernel, std::tuple<std::decay_t<P>...>(
                                      static_cast<std::decay_t<P>>(args)...)};
  char err[1024] = "";
  xlnetc_emu_launch cfg{};
  cfg.abi_version = XLNETC_EMU_ABI_VERSION;
  cfg.grid[0] = grid.x;
  cfg.grid[1] = grid.y;
  cfg.grid[2] = grid.z;
  cfg.block[0] = block.x;
  cfg.block[1] = block.y;
  cfg.block[2] = block.z;
  cfg.dyn_smem = dynSmem;
  cfg.schedule = options.schedule;
  cfg.seed = options.seed;
  cfg.threads = options.threads;
  cfg.err = err;
  cfg.err_len = sizeof err;
  if (runGrid(name, &cfg, &BoundKernel<P...>::invoke, &bound) != 0)
    return err[0] ? std::string(err) : std::string("launch failed");
  return std::string();
}

} // namespace xl::emu

#pragma GCC visibility pop

#endif // XLNETC_EMU_CORE_H
