//===- Executor.cpp - One entry point for every device --------------------===//

#include "runtime/Executor.h"

#include <fmt/format.h>
#include <omp.h>

namespace xlnetc::rt {

Status Executor::open(dev::DeviceKind kind, const dev::DeviceOptions &options,
                      Executor &out) {
  out.autoWhy_.clear();
  out.kind_ = dev::resolveDeviceKind(kind, &out.autoWhy_);
  out.deviceExecutor_.reset(); // it refers to the old device
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
  if (!plan.device)
    return Status::error(fmt::format(
        "internal error: --device {} needs the plan's device program (the "
        "driver emits it with the plan)",
        dev::deviceKindName(kind_)));
  if (!deviceExecutor_)
    deviceExecutor_ = std::make_unique<DeviceExecutor>(*device_);
  return deviceExecutor_->execute(plan, *plan.device, bindings, outputs, opts);
}

} // namespace xlnetc::rt
