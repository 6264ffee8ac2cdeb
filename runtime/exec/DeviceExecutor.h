//===- DeviceExecutor.h - Runs a device program on a Device -----*- C++ -*-===//
//
// The CUDA executor: one implementation for the real GPU and the emulated
// device (runtime/device/Device.h). It binds inputs and parameters exactly as
// the host executor does (same names, same checks, same outputs), compiles
// the program's source once per executor (through the kernel cache),
// allocates the program's memory once at fixed addresses and runs the work
// of every step in plan order on one stream — generated kernels and
// cuBLASLt-semantics GEMMs — as one graph recorded at the second step and
// replayed after (inputs, parameters and the step seed are uploaded to
// their fixed buffers before). Nothing is read back inside the step; the
// status words of the steps that can find a data error (a bad id, a bad
// target, a negative step) are read once at the end and the first error in
// step order becomes the message, worded as the host's.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_EXEC_DEVICEEXECUTOR_H
#define XLNETC_RUNTIME_EXEC_DEVICEEXECUTOR_H

#include "runtime/plan/DeviceProgram.h"
#include "runtime/exec/HostExecutor.h"
#include "runtime/device/Device.h"

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt {

/// $XLNETC_CUDA_SYNC is set and not "0": the device executors run every op
/// synchronously (no graph), so a fault names its op.
bool syncEachOpRequested();

class DeviceExecutor {
public:
  explicit DeviceExecutor(dev::Device &device);
  ~DeviceExecutor();

  /// Executes `plan` with its device `program` (emitted for this plan);
  /// bindings, outputs and errors as executeHost(). `opts.threads` is not
  /// used (the device decides).
  Status execute(const Plan &plan, const DeviceProgram &program,
                 const TensorMap &bindings, TensorMap &outputs,
                 const ExecOptions &opts = {},
                 const std::vector<std::pair<std::string, std::string>> &carry = {});

  /// `carry` is Executor::setCarry's on the device: after the step each
  /// (out, in) pair's output is copied into the input's buffer and kept
  /// there; a kept input needs no binding; carried outputs are not read
  /// back.

  /// execute() in two halves. start() uploads the bindings, launches the
  /// step (its graph from the third step on), enqueues the carried copies
  /// and the copies of the returned outputs to host memory, and returns
  /// without waiting for the device; finish() waits, reports a data error,
  /// and fills `outputs`. One step is in flight at a time; `plan` must live
  /// until finish(). A step whose finish() reports a data error has already
  /// handed its results to the kept inputs.
  Status start(const Plan &plan, const DeviceProgram &program, const TensorMap &bindings,
               const ExecOptions &opts = {},
               const std::vector<std::pair<std::string, std::string>> &carry = {});
  Status finish(TensorMap &outputs);

  /// The kept value of input `name`, read back.
  Status fetch(const std::string &name, Tensor &out);
  /// Forgets every kept value (and every set aside).
  void dropKept();
  /// Zeroes the kept value of input `name` on the device (it stays kept).
  Status zeroKept(const std::string &name);
  /// Several sets of kept values of the inputs `names` (gradient
  /// accumulation: each micro-batch's memory): the kept values are set
  /// aside as set `from`, and set `to`'s, when one was set aside, take
  /// their place; otherwise those inputs are no longer kept (the next start
  /// binds them). Device-to-device copies in stream order, or over the bus
  /// (setAsideOnHost).
  Status switchKeptSet(const std::vector<std::string> &names, int from, int to);
  /// The value of input `name` set aside as set `set`, read back.
  Status fetchFromSet(const std::string &name, int set, Tensor &out);
  /// Where switchKeptSet sets values aside: device memory (false), or
  /// page-locked host memory (true: copies over the bus, for memory that
  /// does not fit beside the step on a GPU). Before any set is made.
  void setAsideOnHost(bool onHost) { asideOnHost_ = onHost; }
  /// How many ops of the last step were skipped because no output asked
  /// for (ExecOptions::wanted) depends on them.
  size_t skippedOps() const;

private:
  struct Prepared;
  struct Pending;
  /// Allocates `program`'s memory and resolves its work (DeviceExecutor.cpp).
  Status prepare(const Plan &plan, const DeviceProgram &program,
                 std::unique_ptr<Prepared> &out);
  /// Runs (or, during a capture, records) the prepared work in order;
  /// `before` (when set) is called before each op with the op's plan step.
  Status runOps(const Prepared &p, const std::function<Status(size_t step)> &before = {});
  /// runOps with `observer` called before the steps it asks for, its work
  /// ordered on the device's side stream, joined at the end of the step
  /// (dropped after an error).
  Status runOpsObserved(const Prepared &p, const Plan &plan, StepObserver &observer);

  struct LoadedModule {
    /// The program's source compiled as one module, or its CUBINs compiled
    /// ahead of time, one module per kernel (moduleOf).
    std::unique_ptr<dev::Module> module;
    std::vector<std::unique_ptr<dev::Module>> cubins;
    std::map<std::string, dev::Module *> moduleOf;
    std::map<std::string, dev::Kernel> kernels;
  };
  /// The loaded module of `program` (compiled on first use).
  Status module(const DeviceProgram &program, LoadedModule *&out);
  /// Kernel `name` of the GEMM epilogue kernels (GemmFallback.h), their
  /// module loaded at the first call.
  Status epilogueKernel(const std::string &name, dev::Kernel &out);
  /// Kernel launch `l` of `mod` (looked up on first use), checked against
  /// the device's shared memory per block; `where` names its plan step.
  Status launchKernel(LoadedModule &mod, const DeviceLaunch &l, const std::string &where,
                      const dev::Kernel *&out);
  /// prepare()'s phases (DeviceExecutor.cpp), handing on a Layout.
  struct Layout;
  Status allocateMemory(const Plan &plan, const DeviceProgram &program, Prepared &p,
                        Layout &layout);
  Status chooseUnfusedGemms(const Plan &plan, const DeviceProgram &program, Prepared &p,
                            Layout &layout);
  Status resolveWork(const Plan &plan, const DeviceProgram &program, LoadedModule &mod,
                     Prepared &p, const Layout &layout);
  Status resolveGemm(const DeviceLaunch &l, size_t step, const std::string &where, Prepared &p,
                     const Layout &layout);
  /// start()'s pieces (DeviceExecutor.cpp).
  Status carriedPairs(const Plan &plan, const Prepared &p,
                      const std::vector<std::pair<std::string, std::string>> &carry,
                      std::vector<std::pair<int, int>> &carried);
  void chooseWanted(const Plan &plan, Prepared &p, const std::set<std::string> &carriedNames,
                    const std::set<std::string> &wanted);
  Status runWork(const Plan &plan, Prepared &p, const ExecOptions &opts);
  void keepAsked(const DeviceProgram &program, Prepared &p,
                 const std::vector<const Tensor *> &bound,
                 const std::vector<std::string> &keep);
  Status startReadback(const Plan &plan, Prepared &p, const std::set<std::string> &carriedNames,
                       const std::set<std::string> &wanted, Pending &pending);

  dev::Device &device_;
  /// $XLNETC_CUDA_SYNC=1 (--sync-each-op): no graph; the host waits after
  /// every launch, GEMM and memset, so the first asynchronous error names
  /// its plan step, kernel and MLIR location (docs/Devices.md "Debugging
  /// on a GPU").
  bool syncEachOp_ = false;
  /// Loaded modules by the SHA-256 of their source.
  std::map<std::string, LoadedModule> modules_;
  /// The GEMM epilogue kernels, for the GEMMs whose fused epilogue the
  /// device cannot run (loaded when a program first needs them).
  LoadedModule epilogue_;
  /// The descriptors of those GEMMs warned about (once each).
  std::set<std::string> warnedUnfused_;
  /// The last program run, ready for its next step. Declared after the
  /// modules: it goes first (its graph and memory before their kernels).
  std::unique_ptr<Prepared> prepared_;
  /// switchKeptSet's sets: (set, input name) -> its memory, on the device,
  /// or on the host (asideOnHost_: the pointer's bits).
  std::map<std::pair<int, std::string>, dev::DevPtr> sets_;
  bool asideOnHost_ = false;
  /// Frees every set.
  void freeSets();
  /// The input buffer of the prepared program named `name` (kept or not),
  /// or an error.
  Status inputBuffer(const std::string &name, int &id) const;
  /// The started step finish() collects (null: none in flight).
  std::unique_ptr<Pending> pending_;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_EXEC_DEVICEEXECUTOR_H
