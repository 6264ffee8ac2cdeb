//===- CompiledPlan.cpp - compile a step straight to a runtime plan -------===//

#include "xlnetc/Driver/CompiledPlan.h"

namespace xlnetc {

bool compilePlan(const ModelSpec &spec, const StepShape &shape, StepKind step,
                 rt::Plan &plan, std::string &error, std::string *planText,
                 const std::optional<rt::dev::GpuTarget> &device) {
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
  if (device) {
    auto program = std::make_shared<rt::DeviceProgram>();
    if (rt::Status st = cuda::emitDeviceProgram(
            plan, deviceEmitOptions(spec, step, *device), *program);
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

} // namespace xlnetc
