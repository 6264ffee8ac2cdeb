//===- Nvrtc.h - CUDA C++ to CUBIN with NVRTC, cached -----------*- C++ -*-===//
//
// compileCubin turns one generated kernel source (plus in-memory headers such
// as the prelude) into a CUBIN for one architecture, straight from NVRTC
// (`-arch=sm_90` makes NVRTC 13 run ptxas itself; no PTX JIT in the driver).
// Results are cached on disk (KernelCache) under the SHA-256 of the source,
// every header's name and text, the options, the NVRTC build and the arch;
// the NVRTC log — with ptxas's register/spill report when ptxasVerbose is set
// — is stored with the CUBIN, so a warm cache answers the spill check too.
//
// Works without a GPU or driver: CI compiles every kernel for sm_90 and
// checks parsePtxasLog's report (no spills, shared memory within budget).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_NVRTC_H
#define XLNETC_RUNTIME_DEVICE_NVRTC_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt {

class KernelCache;

namespace cuda {
struct Nvrtc;
} // namespace cuda

/// A header handed to NVRTC from memory: `#include "<name>"` finds `text`.
struct NvrtcHeader {
  std::string name;
  std::string text;
};

/// One translation unit.
struct NvrtcSource {
  std::string name; // shown in diagnostics, e.g. "step12_attn_fwd.cu"
  std::string text;
  std::vector<NvrtcHeader> headers;
};

struct NvrtcOptions {
  std::string arch = "sm_90"; // sm_XY, sm_XYa or sm_XYf: a real GPU
  std::string std = "c++17";
  bool ptxasVerbose = false;      // --ptxas-options=-v: registers, spills, smem
  bool lineinfo = false;          // -lineinfo: source lines for profilers
  std::vector<std::string> extra; // passed last, verbatim
};

/// The options passed to nvrtcCompileProgram for `opts`, in order.
std::vector<std::string> nvrtcCommandLine(const NvrtcOptions &opts);

struct CompiledCubin {
  std::string cubin; // ELF
  std::string log;   // NVRTC's log (ptxas report included), maybe empty
  bool fromCache = false;
  double compileMs = 0;  // compile, or cache lookup on a hit
  std::string key;       // cache key
  std::string cachePath; // the cache entry, when one was read or written
  /// Why the result could not be cached (it is still valid), else empty.
  std::string cacheError;
};

/// The cache key of (src, opts) under NVRTC build `nvrtcFingerprint`.
std::string cubinCacheKey(const NvrtcSource &src, const NvrtcOptions &opts,
                          const std::string &nvrtcFingerprint);

/// Compiles `src` to a CUBIN, or returns it from `cache` (may be null). A
/// compile error gives
///   NVRTC failed to compile <name> for sm_90: NVRTC_ERROR_COMPILATION
///   <the whole NVRTC log>
Status compileCubin(const NvrtcSource &src, const NvrtcOptions &opts,
                    KernelCache *cache, CompiledCubin &out);
/// The same with an NVRTC that is already loaded.
Status compileCubin(const cuda::Nvrtc &nvrtc, const NvrtcSource &src,
                    const NvrtcOptions &opts, KernelCache *cache,
                    CompiledCubin &out);

/// Threads for compiling kernels concurrently: $XLNETC_COMPILE_THREADS when
/// set to a positive number, else one per core.
unsigned compileThreads();

/// Compiles `kernels` (name, wrapper source) one NVRTC program each —
/// `head` + the wrapper, against the embedded device files — on
/// compileThreads() threads (NVRTC compiles separate programs concurrently;
/// the kernel cache stores atomically). `out` follows `kernels`; the CUBINs
/// are the bytes a one-thread compile makes. An error is the first failing
/// kernel's, in order, prefixed "kernel NAME for ARCH: ". `threadsUsed`
/// (optional) receives how many threads compiled.
Status compileKernelsConcurrently(const std::string &head,
                                  const std::vector<std::pair<std::string, std::string>> &kernels,
                                  const NvrtcOptions &opts, KernelCache *cache,
                                  std::vector<CompiledCubin> &out,
                                  size_t *threadsUsed = nullptr);

/// NVRTC's version, "13.0".
Status nvrtcVersionString(std::string &out);
/// The architectures NVRTC can compile for: {75, 80, ..., 90, 100, ...}.
Status supportedArchs(std::vector<int> &out);

/// Ok when a driver of `driverVersion` (e.g. 12080) can load CUBINs from
/// NVRTC `nvrtcMajor`.`nvrtcMinor`: the driver's major version must be at
/// least NVRTC's (CUDA 13 CUBINs need a 13.x driver, NVIDIA 580+).
Status checkDriverForNvrtc(int driverVersion, int nvrtcMajor, int nvrtcMinor);

/// What ptxas reports for one function.
struct KernelResourceUsage {
  std::string kernel; // mangled name, as ptxas prints it
  bool entry = false; // a __global__ function (else a non-inlined callee)
  std::string arch;   // "sm_90"
  int registers = 0;
  int barriers = 0;
  int64_t stackBytes = 0;  // stack frame
  int64_t spillStores = 0; // bytes
  int64_t spillLoads = 0;  // bytes
  /// Static shared memory of the kernel. Not included: dynamic shared memory
  /// (a launch parameter) and the 1 KiB per block the driver reserves on
  /// sm_80+ (cuobjdump's SHARED column includes it).
  int64_t smemBytes = 0;
};

/// Parses the `ptxas info` lines of an NVRTC log compiled with
/// --ptxas-options=-v, in order of first appearance:
///   ptxas info    : Compiling entry function 'k' for 'sm_90'
///   ptxas info    : Function properties for k
///   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes
///   spill loads
///   ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem
/// (older ptxas prints the stack line indented, without "ptxas"). Lines it
/// does not know are skipped; fields not reported stay 0.
std::vector<KernelResourceUsage> parsePtxasLog(const std::string &log);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_DEVICE_NVRTC_H
