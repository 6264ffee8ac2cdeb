//===- EmuSwitchBench.cpp - Cost of a fiber switch in the SIMT emulator ---===//
//
// Prints a table of nanoseconds per context switch:
//
//   emulator switch     xl::emu::switchContext (the hand-written x86-64
//                       switch: callee-saved GPRs + MXCSR + x87 CW)
//   switch without FP   the same switch without saving MXCSR / x87 CW, to
//                       show what the FP control state costs
//   glibc swapcontext   ucontext (what the emulator falls back to elsewhere;
//                       it makes a sigprocmask system call per switch)
//
// and what the emulator pays per wait at the kernel level (one fiber
// suspending at __syncthreads / at a warp shuffle, including the scheduler).
// Usage: EmuSwitchBench [switches]. A benchmark, not a test: numbers only.
//
//===----------------------------------------------------------------------===//

#include "xlnetc_prelude.cuh"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ucontext.h>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

//===----------------------------------------------------------------------===//
// Raw switches: a fiber and the main stack ping-pong.
//===----------------------------------------------------------------------===//

xl::emu::Context gMain, gFiber;

void emuPingPong(void *) {
  for (;;)
    xl::emu::switchContext(gFiber, gMain);
}

double emulatorSwitchNs(long rounds) {
  xl::emu::Stack stack = xl::emu::StackPool::get().acquire(64 * 1024);
  xl::emu::initThreadContext(gMain);
  xl::emu::initContext(gFiber, stack, &emuPingPong, nullptr);
  xl::emu::switchContext(gMain, gFiber); // warm up
  auto start = Clock::now();
  for (long i = 0; i < rounds; ++i)
    xl::emu::switchContext(gMain, gFiber);
  double s = secondsSince(start);
  xl::emu::StackPool::get().release(stack);
  return s * 1e9 / (2.0 * rounds);
}

#if XLNETC_EMU_ASM_SWITCH && !XLNETC_EMU_TSAN && !XLNETC_EMU_ASAN
/// rawSwitch minus the MXCSR/x87 control words.
__attribute__((naked, noinline)) void gprSwitch(void **, void *) {
  asm volatile("pushq %rbp\n\t"
               "pushq %rbx\n\t"
               "pushq %r12\n\t"
               "pushq %r13\n\t"
               "pushq %r14\n\t"
               "pushq %r15\n\t"
               "movq %rsp, (%rdi)\n\t"
               "movq %rsi, %rsp\n\t"
               "popq %r15\n\t"
               "popq %r14\n\t"
               "popq %r13\n\t"
               "popq %r12\n\t"
               "popq %rbx\n\t"
               "popq %rbp\n\t"
               "popq %rcx\n\t"
               "jmpq *%rcx\n\t");
}

void *gMainSp, *gFiberSp;

void gprPingPong(void *) {
  for (;;)
    gprSwitch(&gFiberSp, gMainSp);
}

double gprSwitchNs(long rounds) {
  xl::emu::Stack stack = xl::emu::StackPool::get().acquire(64 * 1024);
  xl::emu::Context ctx;
  xl::emu::initContext(ctx, stack, &gprPingPong, nullptr);
  // initContext's frame has the FP words first; skip them for gprSwitch.
  gFiberSp = static_cast<char *>(ctx.sp) + 8;
  gprSwitch(&gMainSp, gFiberSp);
  auto start = Clock::now();
  for (long i = 0; i < rounds; ++i)
    gprSwitch(&gMainSp, gFiberSp);
  double s = secondsSince(start);
  xl::emu::StackPool::get().release(stack);
  return s * 1e9 / (2.0 * rounds);
}
#endif

ucontext_t gUcMain, gUcFiber;

void ucPingPong() {
  for (;;)
    swapcontext(&gUcFiber, &gUcMain);
}

double swapcontextNs(long rounds) {
  std::vector<char> stack(64 * 1024);
  getcontext(&gUcFiber);
  gUcFiber.uc_stack.ss_sp = stack.data();
  gUcFiber.uc_stack.ss_size = stack.size();
  gUcFiber.uc_link = nullptr;
  makecontext(&gUcFiber, &ucPingPong, 0);
  swapcontext(&gUcMain, &gUcFiber);
  auto start = Clock::now();
  for (long i = 0; i < rounds; ++i)
    swapcontext(&gUcMain, &gUcFiber);
  double s = secondsSince(start);
  return s * 1e9 / (2.0 * rounds);
}

//===----------------------------------------------------------------------===//
// Kernel-level waits
//===----------------------------------------------------------------------===//

XL_KERNEL void barrierLoop(int iterations) {
  for (int i = 0; i < iterations; ++i)
    __syncthreads();
}

XL_KERNEL void shuffleLoop(int iterations, float *sink) {
  float v = static_cast<float>(threadIdx.x);
  for (int i = 0; i < iterations; ++i)
    v += __shfl_xor_sync(0xffffffffu, v, 1);
  if (threadIdx.x == 0)
    *sink = v;
}

/// Nanoseconds per thread per wait of a 256-thread block.
template <class... A>
double perWaitNs(void (*kernel)(A...), const char *name, int iterations,
                 int schedule, A... args) {
  xl::emu::LaunchOptions options;
  options.schedule = schedule;
  auto start = Clock::now();
  std::string err =
      xl::emu::launch(name, kernel, dim3(1), dim3(256), 0, options, args...);
  double s = secondsSince(start);
  if (!err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    std::exit(1);
  }
  return s * 1e9 / (256.0 * iterations);
}

} // namespace

int main(int argc, char **argv) {
  long rounds = argc > 1 ? std::atol(argv[1]) / 2 : 5000000;
  if (rounds < 1000)
    rounds = 1000;
  std::printf("%-44s %10s\n", "context switch", "ns/switch");
  std::printf("%-44s %10.1f\n",
#if XLNETC_EMU_ASM_SWITCH
              "emulator switch (x86-64 asm, GPRs+MXCSR+x87)",
#else
              "emulator switch (ucontext fallback)",
#endif
              emulatorSwitchNs(rounds));
#if XLNETC_EMU_ASM_SWITCH && !XLNETC_EMU_TSAN && !XLNETC_EMU_ASAN
  std::printf("%-44s %10.1f\n", "same switch without MXCSR/x87 CW",
              gprSwitchNs(rounds));
#endif
  std::printf("%-44s %10.1f\n", "glibc swapcontext",
              swapcontextNs(rounds / 10));

  int iterations = 2000;
  float sink = 0;
  std::printf("\n%-44s %10s\n", "emulated wait (256 threads, per thread)",
              "ns/wait");
  const char *modes[] = {"forward", "reverse", "random"};
  for (int mode = 0; mode < 3; ++mode) {
    std::printf(
        "__syncthreads, %-29s %10.1f\n", modes[mode],
        perWaitNs(&barrierLoop, "barrierLoop", iterations, mode, iterations));
    std::printf("__shfl_xor_sync, %-27s %10.1f\n", modes[mode],
                perWaitNs(&shuffleLoop, "shuffleLoop", iterations, mode,
                          iterations, &sink));
  }
  return 0;
}
