//===- Executor.h - One entry point for every device -----------*- C++ -*-===//
//
// What `run-step`, `train` and `gradcheck` call to execute a plan, whatever
// --device chose: the host executor (HostExecutor.h) or the CUDA executor
// over a Device (runtime/device/Device.h: the real GPU or the emulated one).
// Opening resolves `auto` (cuda when a driver and a GPU answer, else host)
// and fails with one line when the chosen device cannot be used.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_EXECUTOR_H
#define XLNETC_RUNTIME_EXECUTOR_H

#include "runtime/DeviceExecutor.h"
#include "runtime/HostExecutor.h"
#include "runtime/device/Device.h"

#include <memory>
#include <string>

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
  /// One line: "host executor (2 threads)", or the device's description.
  std::string description() const;
  /// Why Auto chose the host (empty otherwise), e.g. "no CUDA driver: ...".
  const std::string &autoFallbackReason() const { return autoWhy_; }

  /// Executes `plan` as executeHost() does (same bindings, outputs and
  /// errors), on this executor's device.
  Status execute(const Plan &plan, const TensorMap &bindings,
                 TensorMap &outputs, const ExecOptions &opts = {});

private:
  dev::DeviceKind kind_ = dev::DeviceKind::Host;
  std::unique_ptr<dev::Device> device_;
  /// Runs plans on device_ (keeps their loaded modules between steps).
  std::unique_ptr<DeviceExecutor> deviceExecutor_;
  std::string autoWhy_;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_EXECUTOR_H
