//===- Executor.h - One entry point for every device -----------*- C++ -*-===//
//
// What `run-step`, `train` and `gradcheck` call to execute a plan, whatever
// --device chose: the host executor (HostExecutor.h) or the CUDA executor
// over a Device (runtime/device/Device.h: the real GPU or the emulated one).
// Opening resolves `auto` (cuda when a driver and a GPU answer, else host)
// and fails with one line when the chosen device cannot be used.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_EXEC_EXECUTOR_H
#define XLNETC_RUNTIME_EXEC_EXECUTOR_H

#include "runtime/exec/DeviceExecutor.h"
#include "runtime/exec/HostExecutor.h"
#include "runtime/device/Device.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt {

/// An opened execution device.
class Executor {
public:
  /// Opens `kind` (Auto resolved). On failure the message says what is
  /// missing (no CUDA driver, no GPU, ...).
  static Status open(dev::DeviceKind kind, const dev::DeviceOptions &options,
                     Executor &out);

  /// The resolved kind (never Auto).
  dev::DeviceKind kind() const { return kind_; }
  /// One line: "host executor (2 threads, OpenBLAS 0.3.21, SkylakeX
  /// kernels)" with the threads a step given `threads` uses (0: OpenMP's
  /// default), or the device's description.
  std::string description(int threads = 0) const;
  /// Why Auto chose the host (empty otherwise), e.g. "no CUDA driver: ...".
  const std::string &autoFallbackReason() const { return autoWhy_; }
  /// The device under the CUDA executor (null for the host executor): for
  /// benchmarks, which time GEMMs and read the memory in use on it.
  dev::Device *device() const { return device_.get(); }

  /// Executes `plan` as executeHost() does (same bindings, outputs and
  /// errors), on this executor's device: start() then finish().
  Status execute(const Plan &plan, const TensorMap &bindings,
                 TensorMap &outputs, const ExecOptions &opts = {});

  /// execute() in two halves, so the host can prepare the next step while
  /// the device runs this one: start() hands the step to the device and
  /// returns (on emu and the host the work is done by then); finish() waits
  /// for it and returns its outputs (the loss and gradient norm come back
  /// asynchronously, copied as the step ends) or its error. One step is in
  /// flight at a time; `plan` must live until finish(). fetch() may be
  /// called in between: it reads the kept state once the step has written
  /// it.
  /// `carry` (optional) replaces setCarry's pairs for this step alone (a
  /// micro-batch that only accumulates carries its memory and gradients,
  /// not the parameters its skipped update would have written).
  Status start(const Plan &plan, const TensorMap &bindings, const ExecOptions &opts = {},
               const std::vector<std::pair<std::string, std::string>> *carry = nullptr);
  Status finish(TensorMap &outputs);

  /// The training state a step hands to the next: after every successful
  /// execute, output `out` becomes the kept value of input `in` for each
  /// (out, in) pair — on the device for emu and cuda, where it stays (a
  /// device-to-device copy, nothing crosses to the host) — and is not
  /// returned in `outputs`. A kept input need not be bound again; a binding
  /// of the same name replaces it. An empty list drops the kept values.
  void setCarry(std::vector<std::pair<std::string, std::string>> carry);
  /// The kept value of input `name` (read back from the device).
  Status fetch(const std::string &name, Tensor &out);
  /// Zeroes the kept value of input `name`, which a step has left (it
  /// stays kept): gradient accumulation's sum, before a step's first
  /// micro-batch.
  Status zeroKept(const std::string &name);
  /// Several sets of kept values of the inputs `names` (gradient
  /// accumulation: each micro-batch's memory; on a device in its memory or
  /// in host RAM, setAsideOnHost): the kept
  /// values are set aside as set `from` and set `to`'s take their place;
  /// a set never set aside leaves those inputs unkept, to be bound.
  Status switchKeptSet(const std::vector<std::string> &names, int from, int to);
  /// The value of input `name` set aside as set `set`, read back.
  Status fetchFromSet(const std::string &name, int set, Tensor &out);
  /// On a device: set the sets aside in page-locked host memory instead of
  /// device memory (--micro-memory host); before the first step. The host
  /// executor's sets are in host memory anyway.
  void setAsideOnHost(bool onHost);
  /// Device executors: the ops of the last step skipped for want of a
  /// reader (ExecOptions::wanted); 0 on the host.
  size_t skippedOps() const;

private:
  /// The host executor's step, with the kept inputs lent and taken back.
  Status runHost(const Plan &plan, const TensorMap &bindings, TensorMap &outputs,
                 const ExecOptions &opts,
                 const std::vector<std::pair<std::string, std::string>> &carry);

  dev::DeviceKind kind_ = dev::DeviceKind::Host;
  std::unique_ptr<dev::Device> device_;
  /// Runs plans on device_ (keeps their loaded modules between steps).
  std::unique_ptr<DeviceExecutor> deviceExecutor_;
  std::string autoWhy_;
  std::vector<std::pair<std::string, std::string>> carry_;
  /// The host's kept inputs (the device executor keeps its own on the device).
  TensorMap kept_;
  /// The host's sets of kept values set aside (switchKeptSet), by set.
  std::map<int, TensorMap> keptSets_;
  bool asideOnHost_ = false; ///< setAsideOnHost, for the device executor made later
  /// The host's arena, kept across steps.
  std::unique_ptr<HostWorkspace> hostWorkspace_;
  /// The host's started step: its result, handed out by finish().
  bool hostInFlight_ = false;
  Status hostStatus_ = Status::ok();
  TensorMap hostOutputs_;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_EXEC_EXECUTOR_H
