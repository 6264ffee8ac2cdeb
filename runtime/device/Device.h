//===- Device.h - The device interface of the CUDA executor ----*- C++ -*-===//
//
// The CUDA executor is written once against this small interface, which has
// two implementations (docs/Devices.md, design/cuda.md §1):
//
//   cuda  the real GPU through the CUDA driver API (CudaDevice.cpp): kernels
//         compiled by NVRTC to CUBIN, GEMMs by cuBLASLt;
//   emu   the emulated device (EmuDevice.cpp): "device" memory is host
//         memory, the same kernel source is compiled by the host C++
//         compiler against the same-source prelude (a fiber SIMT emulator,
//         runtime/device/prelude/) and GEMMs run on OpenBLAS with cuBLASLt's
//         semantics.
//
// Only these primitives differ between the two; everything above them (the
// executor, the plan, the kernel sources) is shared. Every fallible call
// returns a Status; `where` arguments (the plan step and its MLIR location)
// are carried into error messages.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_DEVICE_H
#define XLNETC_RUNTIME_DEVICE_DEVICE_H

#include "runtime/Status.h"
#include "runtime/device/Gemm.h"
#include "runtime/device/GpuTarget.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt::dev {

/// What `--device` names. Auto resolves to Cuda when a driver and a GPU
/// answer, else to Host (resolveDeviceKind).
enum class DeviceKind { Host, Emu, Cuda, Auto };

/// "host", "emu", "cuda", "auto".
const char *deviceKindName(DeviceKind kind);
/// Parses a --device value; an unknown name is an error listing the choices.
Status parseDeviceKind(const std::string &name, DeviceKind &out);

/// An address in device memory (a host address on the emulated device).
using DevPtr = uint64_t;

/// A source file handed to a kernel compiler by name (headers are found by
/// their bare file name in #include "...").
struct SourceFile {
  std::string name;
  std::string text;
};

/// One translation unit of kernels: a generated source that includes the
/// prelude. `headers` are added to the embedded prelude files.
struct ModuleSource {
  std::string name; ///< e.g. "xlnet-tiny.train.cu" (messages, cache)
  std::string text;
  std::vector<SourceFile> headers;
};

/// Launch geometry of one kernel.
struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t dynSmem = 0;
};

/// The device addresses of one GEMM call (GemmPointers, as DevPtr); unused
/// operands are 0.
struct GemmOperands {
  DevPtr a = 0, b = 0, c = 0, d = 0, bias = 0, aux = 0;
};

/// The same addresses as pointers (host pointers on the emulated device).
GemmPointers gemmPointers(const GemmOperands &ops);

/// A loaded module (CUBIN or emulated shared object).
class Module {
public:
  virtual ~Module() = default;
};

/// A kernel of a loaded module; valid while its module lives.
struct Kernel {
  std::string name;
  void *handle = nullptr; ///< CUfunction, or the emulated launcher
  /// Its static shared memory per block (CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES;
  /// 0 on the emulated device, whose __shared__ arrays are host memory).
  size_t staticSmem = 0;
};

/// A recorded sequence of launches, GEMMs and memsets (a CUDA graph on a
/// GPU), replayed by Device::launchGraph; valid while its device lives. The
/// kernel parameters it was recorded with must stay valid while it lives
/// (the emulated device reads them at every replay).
class Graph {
public:
  virtual ~Graph() = default;
};

/// Options shared by the devices.
struct DeviceOptions {
  /// Use the on-disk kernel cache (--no-kernel-cache clears it).
  bool kernelCache = true;
  /// Emulated device: OS threads that run blocks (0: all cores).
  int emuThreads = 0;
  /// CUDA: the device ordinal.
  int ordinal = 0;
  /// CUDA, data parallel: the process's index on its node (>= 0): the GPU
  /// is chosen by cuda::processGpu instead of `ordinal`.
  int localRank = -1;
};

/// The device primitives the CUDA executor needs.
class Device {
public:
  virtual ~Device() = default;

  virtual DeviceKind kind() const = 0;
  /// One line for the progress output, e.g. "NVIDIA H100 80GB HBM3 (sm_90,
  /// 132 SMs, 79.1 GiB)" or "emulated device (2 threads, schedule forward)".
  virtual std::string description() const = 0;
  /// The architecture kernels are compiled for ("sm_90"; "emu").
  virtual std::string arch() const = 0;
  /// Which device of the machine this is, for telling processes that share
  /// one ("GPU 0000:1b:00", its PCI address); empty where processes do not
  /// share a device (emu).
  virtual std::string physicalId() const { return {}; }
  /// The most shared memory one block may have, static + dynamic, with the
  /// opt-in beyond 48 KiB: on a GPU what the driver reports
  /// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: 99 KiB on
  /// sm_86/89/120, 163 KiB on sm_80, 227 KiB on sm_90); on the emulated
  /// device sm_90's, or $XLNETC_EMU_SMEM_PER_BLOCK. The device executor
  /// checks every launch against it before the first step.
  virtual size_t maxSharedMemoryPerBlock() const = 0;

  virtual Status alloc(size_t bytes, DevPtr &out) = 0;
  virtual void free(DevPtr ptr) = 0;
  /// Device memory in use now: on a GPU what the driver reports for the
  /// whole device (total - free: this process's context, modules and
  /// allocations, and any other process's); on the emulated device the
  /// bytes of its live allocations.
  virtual Status memoryInUse(size_t &bytes) = 0;
  /// Memory a new allocation can still get: on a GPU the driver's free
  /// bytes; on the emulated device, whose allocations are the host's, the
  /// host's available RAM (MemoryCheck.h).
  virtual Status memoryFree(size_t &bytes) = 0;
  /// The CUstream the device orders its work on (cuda), for libraries that
  /// enqueue on it (NCCL); null on the emulated device.
  virtual void *nativeStream() { return nullptr; }
  /// upload and download wait for the work launched before them and return
  /// when the bytes are there; copy (device to device) is ordered after
  /// that work without the host waiting.
  virtual Status upload(DevPtr dst, const void *src, size_t bytes) = 0;
  virtual Status download(void *dst, DevPtr src, size_t bytes) = 0;
  virtual Status copy(DevPtr dst, DevPtr src, size_t bytes) = 0;
  virtual Status memset(DevPtr dst, int value, size_t bytes) = 0;
  /// Host memory the device copies into without the host waiting
  /// (page-locked on a GPU, plain memory on emu); freeHost releases it.
  virtual Status allocHost(size_t bytes, void *&out) = 0;
  virtual void freeHost(void *ptr) = 0;
  /// Enqueues a copy into `dst` (from allocHost) in order with the launches
  /// and returns at once; the bytes are there after synchronize().
  virtual Status downloadAsync(void *dst, DevPtr src, size_t bytes) = 0;

  /// Compiles `source` for this device (through the kernel cache) and loads
  /// it. Compile errors carry the compiler's whole log.
  virtual Status loadModule(const ModuleSource &source,
                            std::unique_ptr<Module> &out) = 0;
  /// Loads a CUBIN compiled ahead of time for arch() (`name` for
  /// messages). The emulated device runs sources only and says so.
  virtual Status loadCubin(const std::string &name, const std::string &image,
                           std::unique_ptr<Module> &out) = 0;
  /// Looks up an exported kernel of a loaded module.
  virtual Status getKernel(Module &module, const std::string &name,
                           Kernel &out) = 0;
  /// Launches `kernel`; `params` follows cuLaunchKernel (params[i] points
  /// at argument i). `where` names the plan step for error messages.
  virtual Status launch(const Kernel &kernel, const LaunchDims &dims,
                        void **params, const std::string &where) = 0;
  /// One fp32 GEMM with cuBLASLt's semantics (Gemm.h): cuBLASLt on a GPU,
  /// OpenBLAS + the reference epilogues on the emulated device.
  virtual Status gemm(const GemmDesc &desc, const GemmOperands &ops,
                      const std::string &where) = 0;
  /// Whether gemm() runs `desc` on these operands as one call, its epilogue
  /// fused; asked when the executor prepares a program, which runs an
  /// unsupported epilogue as a GEMM with the default epilogue followed by
  /// an epilogue kernel (GemmFallback.h). cuda: whether cuBLASLt's
  /// heuristic has an algorithm for the descriptor and the operands'
  /// alignment (chosen once: the one gemm() then runs); emu: always. On
  /// both, gemmEpilogueFault() makes every epilogue but the default
  /// unsupported. `why` (when not supported) says why, for the warning. An
  /// error is a failure to ask (an invalid descriptor, cuBLASLt missing).
  virtual Status gemmSupported(const GemmDesc &desc, const GemmOperands &ops,
                               const std::string &where, bool &supported,
                               std::string &why) = 0;
  /// Waits for all launched work; errors of asynchronous work surface here.
  virtual Status synchronize(const std::string &where) = 0;

  /// From beginCapture to endCapture, launch, gemm and memset are recorded
  /// into a Graph instead of run (upload, download and copy are errors
  /// then). endCapture always ends the capture; `out` is null on failure.
  virtual Status beginCapture(const std::string &where) = 0;
  virtual Status endCapture(std::unique_ptr<Graph> &out, const std::string &where) = 0;
  /// Runs a recorded graph on the device's stream.
  virtual Status launchGraph(Graph &graph, const std::string &where) = 0;

  /// The side stream: work that overlaps the step's (the data-parallel
  /// gradient all-reduce, dist/GradReducer.h), ordered against the step's
  /// stream by events only (docs/Devices.md "The side stream").
  /// sideWaitsForMain: the side stream's next work starts after everything
  /// enqueued on the step's stream so far. mainWaitsForSide: the step's
  /// next work starts after everything enqueued on the side stream so far.
  /// synchronize() waits for both streams.
  virtual Status sideWaitsForMain(const std::string &where) = 0;
  virtual Status mainWaitsForSide(const std::string &where) = 0;
  /// The side stream's CUstream, for libraries that enqueue on it (NCCL);
  /// null on the emulated device.
  virtual void *nativeSideStream() { return nullptr; }
  /// Host work in order on the side stream; it may read and write device
  /// memory (emulated device only: a GPU's host functions may not call
  /// CUDA). Its error surfaces from the call that runs it. On emu it runs
  /// at once or, by default, as late as the events allow (at the next
  /// mainWaitsForSide or synchronize), $XLNETC_EMU_SIDE_STREAM=early|late.
  virtual Status hostWorkOnSide(std::function<Status()> work, const std::string &where) = 0;
  /// After a failed step: side work not started yet is dropped (emu; a
  /// GPU's enqueued work cannot be taken back and runs).
  virtual void abandonSide() {}
};

/// What a program compiled for `device` is made for: its architecture and
/// shared memory per block (GpuTarget.h).
GpuTarget gpuTargetOf(const Device &device);

/// Resolves Auto: Cuda when the driver loads and reports a GPU, else Host.
/// `why` (optional) receives the reason when Auto falls back to Host.
DeviceKind resolveDeviceKind(DeviceKind kind, std::string *why = nullptr);

/// Opens an Emu or Cuda device. Cuda on a machine without a driver or GPU
/// fails with one line saying what is missing.
Status openDevice(DeviceKind kind, const DeviceOptions &options,
                  std::unique_ptr<Device> &out);

/// Test hook: $XLNETC_FAULT_GEMM_EPILOGUE=unsupported makes both devices
/// report every fused GEMM epilogue (all but the default) unsupported, so
/// the executor's unfused fallback runs (docs/Devices.md "GEMMs"). Sets
/// `unsupported`; another non-empty value is an error naming the variable.
Status gemmEpilogueFault(bool &unsupported);

/// Whether the switch `$name` is on: set, not empty and not "0".
bool envSwitchOn(const char *name);

/// $XLNETC_CUDA_LINEINFO is set and not "0": NVRTC compiles kernels with
/// -lineinfo (compute-sanitizer and profilers show source lines) and the
/// executor does not use a bundle's CUBINs compiled ahead of time.
bool lineInfoRequested();

/// The prelude and hand-written device templates, embedded at build time
/// (runtime/device/prelude/*, by file name).
const std::vector<SourceFile> &embeddedDeviceFiles();

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_DEVICE_H
