//===- Executor.cpp - One entry point for every device --------------------===//

#include "runtime/exec/Executor.h"

#include "runtime/host/GemmKernels.h"

#include <fmt/format.h>
#include <omp.h>

#include <cstring>
#include <iterator>
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
  out.keptSets_.clear();
  out.asideOnHost_ = false;
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
  keptSets_.clear();
  if (deviceExecutor_)
    deviceExecutor_->dropKept();
}

void Executor::setAsideOnHost(bool onHost) {
  asideOnHost_ = onHost;
  if (deviceExecutor_)
    deviceExecutor_->setAsideOnHost(onHost);
}

Status Executor::zeroKept(const std::string &name) {
  if (deviceExecutor_)
    return deviceExecutor_->zeroKept(name);
  auto it = kept_.find(name);
  if (it == kept_.end())
    return Status::error(fmt::format("no step has left a value of input '{}'", name));
  std::memset(it->second.bytes(), 0, it->second.nbytes());
  return Status::ok();
}

Status Executor::switchKeptSet(const std::vector<std::string> &names, int from, int to) {
  if (hostInFlight_)
    return Status::error("internal error: kept sets switched while a step is in flight");
  if (deviceExecutor_)
    return deviceExecutor_->switchKeptSet(names, from, to);
  for (const std::string &name : names) {
    if (auto it = kept_.find(name); it != kept_.end()) {
      keptSets_[from][name] = std::move(it->second);
      kept_.erase(it);
    }
    TensorMap &set = keptSets_[to];
    if (auto it = set.find(name); it != set.end()) {
      kept_[name] = std::move(it->second);
      set.erase(it);
    }
  }
  return Status::ok();
}

Status Executor::fetchFromSet(const std::string &name, int set, Tensor &out) {
  if (deviceExecutor_)
    return deviceExecutor_->fetchFromSet(name, set, out);
  auto s = keptSets_.find(set);
  if (s == keptSets_.end() || !s->second.count(name))
    return Status::error(
        fmt::format("no value of input '{}' was set aside as set {}", name, set));
  out = s->second.at(name);
  return Status::ok();
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

Status Executor::start(const Plan &plan, const TensorMap &bindings, const ExecOptions &opts,
                       const std::vector<std::pair<std::string, std::string>> *carry) {
  const auto &pairs = carry ? *carry : carry_;
  if (!device_) {
    if (hostInFlight_)
      return Status::error("internal error: a step was started while another is in flight "
                           "(finish it first)");
    hostInFlight_ = true;
    hostOutputs_.clear();
    hostStatus_ = runHost(plan, bindings, hostOutputs_, opts, pairs);
    return Status::ok();
  }
  if (!plan.device)
    return Status::error(fmt::format(
        "internal error: --device {} needs the plan's device program (the "
        "driver emits it with the plan)",
        dev::deviceKindName(kind_)));
  if (!deviceExecutor_) {
    deviceExecutor_ = std::make_unique<DeviceExecutor>(*device_);
    deviceExecutor_->setAsideOnHost(asideOnHost_);
  }
  return deviceExecutor_->start(plan, *plan.device, bindings, opts, pairs);
}

Status Executor::runHost(const Plan &plan, const TensorMap &bindings, TensorMap &outputs,
                         const ExecOptions &opts,
                         const std::vector<std::pair<std::string, std::string>> &carry) {
  if (!hostWorkspace_)
    hostWorkspace_ = std::make_unique<HostWorkspace>();
  if (carry.empty())
    return executeHost(plan, bindings, outputs, opts, hostWorkspace_.get());
  // The carried outputs are always computed (the wanted ones and those).
  ExecOptions withCarried = opts;
  if (!withCarried.wanted.empty())
    for (const auto &pair : carry)
      withCarried.wanted.push_back(pair.first);
  // The kept inputs are donated bindings (a binding of the same name wins):
  // the optimizer updates them in place into the outputs that carry them
  // on. What a failed step did not take stays kept.
  TensorMap result;
  Status st = executeHost(plan, bindings, result, withCarried, hostWorkspace_.get(), &kept_);
  for (const auto &[out, in] : carry)
    if (st && !result.count(out))
      st = Status::error(fmt::format("the step has no output '{}' to carry to '{}'", out, in));
  if (!st)
    return st;
  // Kept values the step did not replace stay (a micro-batch carries its
  // memory and gradients only), unless it took their storage.
  for (auto it = kept_.begin(); it != kept_.end();)
    it = it->second.storage.empty() && !it->second.viewData && it->second.numel() > 0
             ? kept_.erase(it)
             : std::next(it);
  for (const std::string &name : opts.keep) // bound, read and not updated
    if (auto it = bindings.find(name); it != bindings.end())
      kept_[name] = it->second;
  for (const auto &[out, in] : carry) {
    kept_[in] = std::move(result[out]);
    result.erase(out);
  }
  for (auto &[name, t] : result)
    outputs[name] = std::move(t);
  return Status::ok();
}

} // namespace xlnetc::rt
