//===- Executor.cpp - One entry point for every device --------------------===//

#include "runtime/Executor.h"

#include <fmt/format.h>
#include <omp.h>

namespace xlnetc::rt {

Status Executor::open(dev::DeviceKind kind, const dev::DeviceOptions &options,
                      Executor &out) {
  out.autoWhy_.clear();
  out.kind_ = dev::resolveDeviceKind(kind, &out.autoWhy_);
  out.device_.reset();
  if (out.kind_ == dev::DeviceKind::Host)
    return Status::ok();
  return dev::openDevice(out.kind_, options, out.device_);
}

std::string Executor::description() const {
  if (device_)
    return device_->description();
  int threads = omp_get_max_threads();
  return fmt::format("host executor ({} thread{})", threads,
                     threads == 1 ? "" : "s");
}

Status Executor::execute(const Plan &plan, const TensorMap &bindings,
                         TensorMap &outputs, const ExecOptions &opts) {
  if (!device_)
    return executeHost(plan, bindings, outputs, opts);
  // The device is open and can compile and launch kernels (docs/Devices.md),
  // but nothing yet turns a plan into launches: the op templates
  // (runtime/device/kernels/) and GEMM lowerings exist, the CUDA C++ emitter
  // and the executor loop arrive with the rest of issue 7, part B.
  return Status::error(fmt::format(
      "--device {}: the CUDA executor cannot run plans yet (the plan's ops get "
      "device kernels in the next part of the CUDA backend); use --device host",
      dev::deviceKindName(kind_)));
}

} // namespace xlnetc::rt
