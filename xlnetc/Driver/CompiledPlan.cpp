//===- CompiledPlan.cpp - compile a step straight to a runtime plan -------===//

#include "xlnetc/Driver/CompiledPlan.h"

#include <iostream>

namespace xlnetc {

bool compilePlan(const ModelSpec &spec, const StepShape &shape, StepKind step,
                 rt::Plan &plan, std::string &error, std::string *planText,
                 bool deviceProgram) {
  CompileOptions options;
  options.step = step;
  std::string text;
  if (!compileStep(spec, shape, options, text, error))
    return false;
  if (rt::Status st = rt::parsePlan(text, plan); !st) {
    error = "xlnetc: error: internal error: the compiled plan does not parse: " +
            st.message() + "\n";
    return false;
  }
  if (deviceProgram) {
    auto program = std::make_shared<rt::DeviceProgram>();
    if (rt::Status st = cuda::emitDeviceProgram(
            plan, deviceEmitOptions(spec, step), *program);
        !st) {
      error = "xlnetc: error: " + st.message() + "\n";
      return false;
    }
    plan.device = std::move(program);
  }
  if (planText)
    *planText = std::move(text);
  return true;
}

bool openExecutor(const std::string &device, bool noKernelCache,
                  rt::Executor &executor, std::string &error) {
  rt::dev::DeviceKind kind;
  if (rt::Status st = rt::dev::parseDeviceKind(device, kind); !st) {
    error = st.message();
    return false;
  }
  rt::dev::DeviceOptions options;
  options.kernelCache = !noKernelCache;
  if (rt::Status st = rt::Executor::open(kind, options, executor); !st) {
    error = "--device " + device + ": " + st.message();
    return false;
  }
  std::cerr << "xlnetc: device: " << executor.description();
  if (!executor.autoFallbackReason().empty())
    std::cerr << " (auto: " << executor.autoFallbackReason() << ")";
  std::cerr << "\n";
  return true;
}

} // namespace xlnetc
