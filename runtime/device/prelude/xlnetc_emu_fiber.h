//===- xlnetc_emu_fiber.h - Emulator fibers and stacks ----------*- C++ -*-===//
//
// The emulator runs every CUDA thread of a block as a fiber: a stack of its
// own and a saved register set, switched cooperatively by the scheduler in
// xlnetc_emu_core.h. This header is that mechanism and nothing else:
//
//  - `Stack`: an mmap'd stack with a PROT_NONE guard page below it, handed out
//    by a process-wide `StackPool` so launches reuse stacks instead of paying
//    mmap/munmap for every CUDA thread of every launch.
//  - `Context` + `initContext` + `switchContext`: on x86-64 a hand-written
//    switch (callee-saved registers, MXCSR and the x87 control word; 7-15 ns
//    on the development machine, test/Device/EmuSwitchBench); elsewhere
//    glibc's ucontext (a sigprocmask system call per switch, ~270 ns).
//    Define XLNETC_EMU_USE_UCONTEXT to force the fallback.
//  - The sanitizer hand-shakes a fiber switch needs: ThreadSanitizer's fiber
//    API (each fiber a TSan "thread", switched without implied
//    synchronization so races between CUDA threads stay visible) and
//    AddressSanitizer's start/finish_switch_fiber (stack bounds).
//
// Header-only and free of CUDA names. Everything has hidden visibility, so
// two kernel objects loaded into one process never share (or interpose) each
// other's copy.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_EMU_FIBER_H
#define XLNETC_EMU_FIBER_H

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

//===----------------------------------------------------------------------===//
// Build configuration
//===----------------------------------------------------------------------===//

#if defined(__has_feature)
#define XLNETC_EMU_HAS_FEATURE(x) __has_feature(x)
#else
#define XLNETC_EMU_HAS_FEATURE(x) 0
#endif

#if defined(__SANITIZE_THREAD__) || XLNETC_EMU_HAS_FEATURE(thread_sanitizer)
#define XLNETC_EMU_TSAN 1
#include <sanitizer/tsan_interface.h>
#else
#define XLNETC_EMU_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__) || XLNETC_EMU_HAS_FEATURE(address_sanitizer)
#define XLNETC_EMU_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#else
#define XLNETC_EMU_ASAN 0
#endif

#if defined(__x86_64__) && !defined(XLNETC_EMU_USE_UCONTEXT)
#define XLNETC_EMU_ASM_SWITCH 1
#else
#define XLNETC_EMU_ASM_SWITCH 0
#include <ucontext.h>
#endif

// Everything below is private to the kernel object that includes it (see
// xlnetc_emu.cuh, "Linking").
#pragma GCC visibility push(hidden)

/// Emulator bookkeeping (run queues, wait states) is shared by fibers that
/// TSan sees as different threads with no happens-before between them (that
/// is the point: races between CUDA threads must stay visible). The functions
/// that touch it are therefore not instrumented; data that kernels hand
/// through the emulator (shuffle values, fragments) is instrumented and
/// ordered by explicit __tsan_release/__tsan_acquire pairs instead.
#if XLNETC_EMU_TSAN
#define XLNETC_EMU_NO_TSAN __attribute__((no_sanitize_thread, noinline))
#else
#define XLNETC_EMU_NO_TSAN
#endif

namespace xl::emu {

//===----------------------------------------------------------------------===//
// Stacks
//===----------------------------------------------------------------------===//

/// Default bytes of stack per CUDA thread. Kernels keep their "registers" on
/// it (a FlashAttention tile's fragments are ~1 KiB) plus the emulator's own
/// frames (the lane completing an mma runs the 16x8x16 product, ~3 KiB).
/// Measured over EmuTest: at most ~6.5 KiB at -O2 and -O0, ~12 KiB under
/// ASan, ~21 KiB under TSan (redzones, the sanitizer runtime's own frames).
/// Override with XLNETC_EMU_STACK_KB.
#if XLNETC_EMU_TSAN || XLNETC_EMU_ASAN
inline constexpr size_t kDefaultStackBytes = 256 * 1024;
#else
inline constexpr size_t kDefaultStackBytes = 64 * 1024;
#endif

inline size_t pageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

/// The stack size to use: XLNETC_EMU_STACK_KB if set (at least 16 KiB),
/// else kDefaultStackBytes; rounded up to whole pages.
inline size_t stackBytes() {
  size_t bytes = kDefaultStackBytes;
  if (const char *env = std::getenv("XLNETC_EMU_STACK_KB")) {
    unsigned long long kib = std::strtoull(env, nullptr, 10);
    if (kib >= 16 && kib <= (1ull << 20))
      bytes = static_cast<size_t>(kib) * 1024;
  }
  size_t page = pageSize();
  return (bytes + page - 1) / page * page;
}

/// One fiber stack: [mapping, mapping + page) is the PROT_NONE guard page a
/// stack overflow runs into (a SIGSEGV at a guard-page address, instead of
/// silently corrupting the neighbouring stack); the rest is usable.
struct Stack {
  char *mapping = nullptr;
  size_t mappingSize = 0;

  char *bottom() const { return mapping + pageSize(); }
  size_t size() const { return mappingSize - pageSize(); }
  char *top() const { return mapping + mappingSize; }
  explicit operator bool() const { return mapping != nullptr; }
};

/// Process-wide pool of stacks (per loaded kernel object). A worker takes the
/// stacks of its fibers at the start of a launch and gives them back at the
/// end, so repeated launches neither mmap nor fault in fresh pages. It is not
/// per OS thread because the extra OS threads of a launch live only as long as
/// the launch.
class StackPool {
public:
  static StackPool &get() {
    static StackPool pool;
    return pool;
  }

  /// A stack of `bytes` usable bytes (a multiple of the page size), or an
  /// empty Stack when the kernel refuses the memory.
  Stack acquire(size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (size_t i = free.size(); i-- > 0;) {
        if (free[i].size() != bytes)
          continue;
        Stack stack = free[i];
        free[i] = free.back();
        free.pop_back();
        return stack;
      }
    }
    size_t mappingSize = bytes + pageSize();
    void *p = mmap(nullptr, mappingSize, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return Stack();
    if (mprotect(p, pageSize(), PROT_NONE) != 0) {
      munmap(p, mappingSize);
      return Stack();
    }
    Stack stack;
    stack.mapping = static_cast<char *>(p);
    stack.mappingSize = mappingSize;
    return stack;
  }

  void release(Stack stack) {
    if (!stack)
      return;
#if XLNETC_EMU_ASAN
    // An abandoned fiber (deadlock, __trap) leaves poisoned redzones of frames
    // that never returned; the next owner must start from clean shadow.
    __asan_unpoison_memory_region(stack.bottom(), stack.size());
#endif
    std::lock_guard<std::mutex> lock(mutex);
    free.push_back(stack);
  }

  /// The most bytes written on any stack now in the pool (a measure for
  /// sizing stacks; see stackBytesTouched).
  size_t maxBytesTouched();

  ~StackPool() {
    for (Stack &stack : free)
      munmap(stack.mapping, stack.mappingSize);
  }

private:
  StackPool() = default;
  std::mutex mutex;
  std::vector<Stack> free;
};

/// Bytes of `stack` that were ever written, judged by the lowest non-zero
/// byte (fresh mmap pages are zero). A lower bound on the high-water mark,
/// precise enough to size stacks; meaningful only for stacks that came fresh
/// from mmap in this process.
XLNETC_EMU_NO_TSAN inline size_t stackBytesTouched(const Stack &stack) {
  const uint64_t *p = reinterpret_cast<const uint64_t *>(stack.bottom());
  const uint64_t *end = reinterpret_cast<const uint64_t *>(stack.top());
  while (p < end && *p == 0)
    ++p;
  return static_cast<size_t>(reinterpret_cast<const char *>(end) -
                             reinterpret_cast<const char *>(p));
}

inline size_t StackPool::maxBytesTouched() {
  std::lock_guard<std::mutex> lock(mutex);
  size_t most = 0;
  for (const Stack &stack : free) {
    size_t touched = stackBytesTouched(stack);
    most = touched > most ? touched : most;
  }
  return most;
}

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

/// The function a fiber starts in. It must never return: a fiber ends by
/// switching away for good.
using FiberEntry = void (*)(void *arg);

/// Saved execution state of a fiber, or of the OS thread's own stack (the
/// "main" context of a worker, which needs no initContext).
struct Context {
#if XLNETC_EMU_ASM_SWITCH
  /// Stack pointer at the last switch away; the callee-saved registers, MXCSR
  /// and the x87 control word lie on the stack below it (see rawSwitch).
  void *sp = nullptr;
#else
  ucontext_t uc;
  FiberEntry entry = nullptr;
  void *arg = nullptr;
#endif
#if XLNETC_EMU_TSAN
  /// TSan's per-fiber state (a shadow call stack and a vector clock).
  void *tsanFiber = nullptr;
#endif
#if XLNETC_EMU_ASAN
  void *asanFakeStack = nullptr;
  const void *asanStackBottom = nullptr;
  size_t asanStackSize = 0;
#endif
};

#if XLNETC_EMU_ASM_SWITCH

/// Saves the callee-saved state of the running fiber on its own stack, stores
/// the stack pointer into *saveSp and resumes the fiber whose stack pointer is
/// loadSp. System V: rdi = saveSp, rsi = loadSp. Everything else (rax, rcx,
/// rdx, rsi, rdi, r8-r11, xmm*) is caller-saved, so the compiler already keeps
/// nothing live in it across this call. MXCSR (SSE rounding mode, FTZ/DAZ)
/// and the x87 control word are callee-saved too and travel with the fiber.
/// Saving and loading MXCSR and the x87 control word is most of the cost: on
/// the AMD EPYC development VM the switch takes ~3 ns with GPRs only, ~6 ns
/// with MXCSR alone and 7-15 ns with both (ldmxcsr is microcoded). Skipping
/// the loads when the words match was measured slower (the compare stalls on
/// the fresh stmxcsr store).
/// The resume address is popped and jumped to rather than `ret`-urned to,
/// which keeps the return-stack predictor from being trained on a mismatch.
__attribute__((naked, noinline)) inline void rawSwitch(void ** /*saveSp*/,
                                                       void * /*loadSp*/) {
  asm volatile("pushq %rbp\n\t"
               "pushq %rbx\n\t"
               "pushq %r12\n\t"
               "pushq %r13\n\t"
               "pushq %r14\n\t"
               "pushq %r15\n\t"
               "subq $8, %rsp\n\t"
               "stmxcsr (%rsp)\n\t"
               "fnstcw 4(%rsp)\n\t"
               "movq %rsp, (%rdi)\n\t"
               "movq %rsi, %rsp\n\t"
               "ldmxcsr (%rsp)\n\t"
               "fldcw 4(%rsp)\n\t"
               "addq $8, %rsp\n\t"
               "popq %r15\n\t"
               "popq %r14\n\t"
               "popq %r13\n\t"
               "popq %r12\n\t"
               "popq %rbx\n\t"
               "popq %rbp\n\t"
               "popq %rcx\n\t"
               "jmpq *%rcx\n\t");
}

/// First code a fresh fiber runs: rawSwitch "returns" here with the entry
/// function in r13 and its argument in r12 (both restored from the initial
/// frame). `.cfi_undefined rip` ends unwinding here, so debuggers and
/// sanitizer stack traces stop at the fiber's base instead of walking into
/// garbage.
__attribute__((naked, noinline)) inline void fiberTrampoline() {
  asm volatile(".cfi_undefined rip\n\t"
               "movq %r12, %rdi\n\t"
               "callq *%r13\n\t"
               "ud2\n\t");
}

#else

inline void ucontextTrampoline(unsigned hi, unsigned lo) {
  uintptr_t bits = (static_cast<uintptr_t>(hi) << 32) | lo;
  Context *ctx = reinterpret_cast<Context *>(bits);
  ctx->entry(ctx->arg);
}

#endif

/// Prepares `ctx` so that the first switch to it calls entry(arg) on `stack`.
/// Returns false when the platform refuses (ucontext only).
XLNETC_EMU_NO_TSAN inline bool initContext(Context &ctx, const Stack &stack,
                                           FiberEntry entry, void *arg) {
#if XLNETC_EMU_ASM_SWITCH
  // Initial frame, as rawSwitch's restore path pops it (low to high):
  //   [mxcsr:4 fpcw:2 pad:2] r15 r14 r13=entry r12=arg rbx rbp=0 ret=trampoline
  // The trampoline's `call` must see a 16-byte aligned rsp (System V), which
  // is the address just above `ret`.
  uintptr_t aligned = (reinterpret_cast<uintptr_t>(stack.top()) - 16) & ~15ull;
  uint64_t *frame = reinterpret_cast<uint64_t *>(aligned) - 8;
  uint32_t mxcsr;
  uint16_t fpcw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpcw));
  frame[0] = 0;
  std::memcpy(&frame[0], &mxcsr, 4);
  std::memcpy(reinterpret_cast<char *>(&frame[0]) + 4, &fpcw, 2);
  frame[1] = 0;                                 // r15
  frame[2] = 0;                                 // r14
  frame[3] = reinterpret_cast<uint64_t>(entry); // r13
  frame[4] = reinterpret_cast<uint64_t>(arg);   // r12
  frame[5] = 0;                                 // rbx
  frame[6] = 0;                                 // rbp: ends frame chains
  frame[7] = reinterpret_cast<uint64_t>(&fiberTrampoline);
  ctx.sp = frame;
#else
  if (getcontext(&ctx.uc) != 0)
    return false;
  ctx.uc.uc_stack.ss_sp = stack.bottom();
  ctx.uc.uc_stack.ss_size = stack.size();
  ctx.uc.uc_link = nullptr;
  ctx.entry = entry;
  ctx.arg = arg;
  uintptr_t bits = reinterpret_cast<uintptr_t>(&ctx);
  makecontext(&ctx.uc, reinterpret_cast<void (*)()>(&ucontextTrampoline), 2,
              static_cast<unsigned>(bits >> 32),
              static_cast<unsigned>(bits & 0xffffffffu));
#endif
#if XLNETC_EMU_ASAN
  ctx.asanStackBottom = stack.bottom();
  ctx.asanStackSize = stack.size();
#endif
  return true;
}

/// Describes the OS thread's own stack to the sanitizers; call once on the
/// "main" context of a worker before the first switch away from it.
XLNETC_EMU_NO_TSAN inline void initThreadContext(Context &ctx) {
#if XLNETC_EMU_TSAN
  ctx.tsanFiber = __tsan_get_current_fiber();
#endif
#if XLNETC_EMU_ASAN
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void *addr = nullptr;
    size_t size = 0;
    pthread_attr_getstack(&attr, &addr, &size);
    ctx.asanStackBottom = addr;
    ctx.asanStackSize = size;
    pthread_attr_destroy(&attr);
  }
#endif
  (void)ctx;
}

/// The sanitizer half of arriving in a context (after a switch, or as the
/// first thing a fresh fiber does).
XLNETC_EMU_NO_TSAN inline void finishSwitch(Context &self) {
#if XLNETC_EMU_ASAN
  __sanitizer_finish_switch_fiber(self.asanFakeStack, nullptr, nullptr);
#endif
  (void)self;
}

/// Suspends the running context into `from` and resumes `to`. Returns when
/// someone switches back to `from`.
XLNETC_EMU_NO_TSAN inline void switchContext(Context &from, Context &to) {
#if XLNETC_EMU_TSAN
  // No implied synchronization: happens-before between CUDA threads comes
  // only from the emulated barriers (see the scheduler).
  __tsan_switch_to_fiber(to.tsanFiber, __tsan_switch_to_fiber_no_sync);
#endif
#if XLNETC_EMU_ASAN
  __sanitizer_start_switch_fiber(&from.asanFakeStack, to.asanStackBottom,
                                 to.asanStackSize);
#endif
#if XLNETC_EMU_ASM_SWITCH
  rawSwitch(&from.sp, to.sp);
#else
  swapcontext(&from.uc, &to.uc);
#endif
  finishSwitch(from);
}

} // namespace xl::emu

#pragma GCC visibility pop

#endif // XLNETC_EMU_FIBER_H
