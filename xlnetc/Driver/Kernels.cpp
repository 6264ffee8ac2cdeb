//===- Kernels.cpp - `xlnetc kernels` -------------------------------------===//
//
// Compiles the device program of a spec's step with NVRTC for a GPU
// architecture — no GPU needed — and reports what ptxas says of every
// kernel: registers, stack, spills, static shared memory (plus the launch's
// dynamic shared memory). The program is made for --arch (the tensor-core
// attention's tiles fit its shared memory; --tiles-for makes it for another
// GPU). Fails when a kernel spills registers or needs more shared memory
// than a block may have on --arch (runtime/device/GpuTarget.h's table).
// Prints the compile time and whether the kernel cache answered, so cold
// and warm compile times can be measured (docs/Devices.md "Compile time").
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Commands.h"
#include "xlnetc/Driver/CompiledPlan.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Spec/Spec.h"

#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <set>

namespace xlnetc {

/// The table of `kernels` (name, dynamic shared memory) from ptxas's
/// report `ptxasLog` (--list: one row each) and the summary; every kernel
/// that spills or needs more shared memory than `limit` bytes (on
/// args.arch) is an error line. 0, or 1 when there is a problem.
static int reportKernelUsage(const KernelsArgs &args,
                             const std::vector<std::pair<std::string, uint32_t>> &kernels,
                             const std::string &ptxasLog, int64_t limit) {
  std::map<std::string, rt::KernelResourceUsage> usage;
  for (rt::KernelResourceUsage &u : rt::parsePtxasLog(ptxasLog))
    if (u.entry)
      usage[u.kernel] = std::move(u);
  int entries = 0, maxRegs = 0;
  int64_t maxSmem = 0;
  std::string maxRegsKernel, maxSmemKernel;
  std::vector<std::string> problems;
  if (args.list)
    std::cout << fmt::format("{:<40} {:>5} {:>6} {:>12} {:>10} {:>10}\n",
                             "kernel", "regs", "stack", "spill st/ld",
                             "smem", "dyn smem");
  for (const auto &[name, dyn] : kernels) {
    auto it = usage.find(name);
    if (it == usage.end()) {
      problems.push_back("ptxas reported nothing for kernel " + name);
      continue;
    }
    const rt::KernelResourceUsage &u = it->second;
    ++entries;
    if (u.registers > maxRegs) {
      maxRegs = u.registers;
      maxRegsKernel = u.kernel;
    }
    if (u.smemBytes + dyn > maxSmem) {
      maxSmem = u.smemBytes + dyn;
      maxSmemKernel = u.kernel;
    }
    if (u.spillStores || u.spillLoads)
      problems.push_back(fmt::format("{} spills registers ({} bytes stored, "
                                     "{} loaded)",
                                     u.kernel, u.spillStores, u.spillLoads));
    if (u.smemBytes + dyn > limit)
      problems.push_back(fmt::format(
          "{} needs {} bytes of shared memory ({} static + {} dynamic), more "
          "than the {} bytes a block may have on {}",
          u.kernel, u.smemBytes + dyn, u.smemBytes, dyn, limit, args.arch));
    if (args.list)
      std::cout << fmt::format("{:<40} {:>5} {:>6} {:>5}/{:<6} {:>10} {:>10}\n",
                               u.kernel, u.registers, u.stackBytes,
                               u.spillStores, u.spillLoads, u.smemBytes, dyn);
  }
  std::cout << fmt::format(
      "{} kernels: max {} registers ({}), max shared memory {} bytes ({}; "
      "limit {}), {} spilling\n",
      entries, maxRegs, maxRegsKernel.empty() ? "-" : maxRegsKernel, maxSmem,
      maxSmemKernel.empty() ? "-" : maxSmemKernel, limit,
      std::count_if(problems.begin(), problems.end(), [](const std::string &p) {
        return p.find("spills") != std::string::npos;
      }));
  for (const std::string &p : problems)
    std::cerr << "xlnetc: error: " << p << "\n";
  return problems.empty() ? 0 : 1;
}

int runKernels(const KernelsArgs &args) {
  std::optional<StepKind> step = parseStepKind(args.step);
  if (!step)
    return fail("unknown --step value '" + args.step +
                "' (expected forward, grads or train)");
  ModelSpec spec;
  std::string error;
  if (!loadSpec(args.spec, spec, error))
    return failDiagnostics(error);
  if (spec.fromHFConfig)
    return fail(args.spec + ": kernels needs a TOML spec (a config.json has no "
                            "batch shape)");
  StepShape shape = stepShapeFromSpec(spec);
  if (!args.precision.empty())
    shape.precision = *parsePrecision(args.precision); // checked by CLI11
  // The program made for --arch (its tiles fit that GPU's shared memory
  // per block) or --tiles-for, checked against --arch's limit below.
  rt::dev::GpuTarget target, tiles;
  if (rt::Status st = rt::dev::gpuTargetForArch(args.arch, target); !st)
    return fail("--arch: " + st.message());
  if (rt::Status st = rt::dev::gpuTargetForArch(
          args.tilesFor.empty() ? args.arch : args.tilesFor, tiles);
      !st)
    return fail("--tiles-for: " + st.message());
  if (args.maxRegisters < 0)
    return fail("--maxrregcount must be positive (0: no cap)");

  auto t0 = std::chrono::steady_clock::now();
  rt::Plan plan;
  if (!compilePlan(spec, shape, *step, plan, error, nullptr, tiles)) {
    std::cerr << error;
    return 1;
  }
  double emitS = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0)
                     .count();
  const rt::DeviceProgram &prog = *plan.device;
  // The kernels in program order, with their dynamic shared memory.
  std::vector<std::pair<std::string, uint32_t>> kernels;
  std::set<std::string> seenKernels;
  size_t gemms = 0;
  for (const rt::DeviceStep &s : prog.steps)
    for (const rt::DeviceLaunch &l : s.launches) {
      if (l.kind == rt::DeviceLaunch::Gemm)
        ++gemms;
      else if (seenKernels.insert(l.kernel).second)
        kernels.emplace_back(l.kernel, l.dynSmem);
    }
  std::cout << fmt::format(
      "xlnetc kernels {}: step {} ({}), {} plan steps -> {} kernels and {} GEMMs, "
      "{:.1f} KiB of CUDA C++ made for {} (compiled to the plan in {:.2f} s)\n",
      args.spec, args.step, precisionName(shape.precision), plan.steps.size(), kernels.size(),
      gemms, prog.source.size() / 1024.0, tiles.arch, emitS);

  std::string version;
  if (rt::Status st = rt::nvrtcVersionString(version); !st)
    return fail("NVRTC: " + st.message());
  rt::NvrtcSource src;
  src.name = prog.moduleName;
  src.text = prog.source;
  for (const rt::dev::SourceFile &h : rt::dev::embeddedDeviceFiles())
    src.headers.push_back({h.name, h.text});
  rt::NvrtcOptions opts;
  opts.arch = args.arch;
  opts.ptxasVerbose = true;
  if (args.maxRegisters > 0)
    opts.extra.push_back(fmt::format("--maxrregcount={}", args.maxRegisters));
  rt::KernelCache cache(rt::KernelCache::defaultDirectory(), !args.noKernelCache);
  rt::CompiledCubin cubin;
  if (rt::Status st = rt::compileCubin(src, opts, &cache, cubin); !st)
    return fail(st.message());
  std::cout << fmt::format(
      "nvrtc {} -> {}: {} in {:.2f} s, {:.1f} KiB of CUBIN\n", version,
      args.arch,
      cubin.fromCache ? "kernel cache hit"
                      : (cache.enabled() ? "compiled (kernel cache miss)"
                                         : "compiled (no kernel cache)"),
      cubin.compileMs / 1000.0, cubin.cubin.size() / 1024.0);

  return reportKernelUsage(args, kernels, cubin.log, target.smemPerBlock);
}

} // namespace xlnetc
