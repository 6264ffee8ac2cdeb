//===- CompiledPlan.h - compile a step straight to a runtime plan -*- C++ -*-===//
//
// What run-step, train and gradcheck share: compile one step of a spec and
// hand the JSON to the runtime's parser, as the runtime would read it from a
// file.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_COMPILEDPLAN_H
#define XLNETC_XLNETC_DRIVER_COMPILEDPLAN_H

#include "xlnetc/Driver/Compiler.h"

#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"

#include <optional>
#include <string>

namespace xlnetc {

/// Compiles `step` of `spec` with `shape` and parses the plan. On failure
/// `error` holds the compiler's diagnostics (multi-line, each already saying
/// "error:") or one "internal error: ..." line. `planText`, when given,
/// receives the JSON.
/// With `device`, also emits the plan's device program (the CUDA C++ and
/// launches the emu and cuda executors run), made for that GPU, into
/// `plan.device`.
bool compilePlan(const ModelSpec &spec, const StepShape &shape, StepKind step,
                 rt::Plan &plan, std::string &error, std::string *planText = nullptr,
                 const std::optional<rt::dev::GpuTarget> &device = std::nullopt);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_COMPILEDPLAN_H
