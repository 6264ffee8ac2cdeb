//===- Executor.cpp - One entry point for every device --------------------===//

#include "runtime/exec/Executor.h"

#include "runtime/host/GemmKernels.h"

#include <fmt/format.h>
#include <omp.h>

#include <utility>

namespace xlnetc::rt {

Status Executor::open(dev::DeviceKind kind, const dev::DeviceOptions &options,
                      Executor &out) {
  out.autoWhy_.clear();
  out.kind_ = dev::resolveDeviceKind(kind, &out.autoWhy_);
  out.deviceExecutor_.reset(); // it refers to the old device
  out.device_.reset();
  out.carry_.clear();
  out.kept_.clear();
  out.hostInFlight_ = false;
  out.hostWorkspace_.reset();
  out.hostOutputs_.clear();
  if (out.kind_ == dev::DeviceKind::Host)
    return Status::ok();
  return dev::openDevice(out.kind_, options, out.device_);
}

std::string Executor::description(int threads) const {
  if (device_)
    return device_->description();
  int used = threads > 0 ? threads : omp_get_max_threads();
  return fmt::format("host executor ({} thread{}, {})", used, used == 1 ? "" : "s",
                     host::gemmKernelsText());
}

void Executor::setCarry(std::vector<std::pair<std::string, std::string>> carry) {
  carry_ = std::move(carry);
  kept_.clear();
  if (deviceExecutor_)
    deviceExecutor_->dropKept();
}

size_t Executor::skippedOps() const {
  return deviceExecutor_ ? deviceExecutor_->skippedOps() : 0;
}

Status Executor::fetch(const std::string &name, Tensor &out) {
  if (deviceExecutor_)
    return deviceExecutor_->fetch(name, out);
  auto it = kept_.find(name);
  if (it == kept_.end())
    return Status::error(fmt::format("no step has left a value of input '{}'", name));
  out = it->second;
  return Status::ok();
}

Status Executor::execute(const Plan &plan, const TensorMap &bindings,
                         TensorMap &outputs, const ExecOptions &opts) {
  XLNETC_RETURN_IF_ERROR(start(plan, bindings, opts));
  return finish(outputs);
}

Status Executor::finish(TensorMap &outputs) {
  if (deviceExecutor_ && !hostInFlight_)
    return deviceExecutor_->finish(outputs);
  if (!hostInFlight_)
    return Status::error("internal error: no step is in flight");
  hostInFlight_ = false;
  for (auto &[name, t] : hostOutputs_)
    outputs[name] = std::move(t);
  hostOutputs_.clear();
  return std::exchange(hostStatus_, Status::ok());
}

Status Executor::start(const Plan &plan, const TensorMap &bindings, const ExecOptions &opts) {
  if (!device_) {
    if (hostInFlight_)
      return Status::error("internal error: a step was started while another is in flight "
                           "(finish it first)");
    hostInFlight_ = true;
    hostOutputs_.clear();
    hostStatus_ = runHost(plan, bindings, hostOutputs_, opts);
    return Status::ok();
  }
  if (!plan.device)
    return Status::error(fmt::format(
        "internal error: --device {} needs the plan's device program (the "
        "driver emits it with the plan)",
        dev::deviceKindName(kind_)));
  if (!deviceExecutor_)
    deviceExecutor_ = std::make_unique<DeviceExecutor>(*device_);
  return deviceExecutor_->start(plan, *plan.device, bindings, opts, carry_);
}

Status Executor::runHost(const Plan &plan, const TensorMap &bindings, TensorMap &outputs,
                         const ExecOptions &opts) {
  if (!hostWorkspace_)
    hostWorkspace_ = std::make_unique<HostWorkspace>();
  if (carry_.empty())
    return executeHost(plan, bindings, outputs, opts, hostWorkspace_.get());
  // The kept inputs are donated bindings (a binding of the same name wins):
  // the optimizer updates them in place into the outputs that carry them
  // on. What a failed step did not take stays kept.
  TensorMap result;
  Status st = executeHost(plan, bindings, result, opts, hostWorkspace_.get(), &kept_);
  for (const auto &[out, in] : carry_)
    if (st && !result.count(out))
      st = Status::error(fmt::format("the step has no output '{}' to carry to '{}'", out, in));
  if (!st)
    return st;
  kept_.clear();
  for (const auto &[out, in] : carry_) {
    kept_[in] = std::move(result[out]);
    result.erase(out);
  }
  for (auto &[name, t] : result)
    outputs[name] = std::move(t);
  return Status::ok();
}

} // namespace xlnetc::rt
