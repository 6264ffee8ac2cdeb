//===- RunStep.h - One step from a spec (or a bundle) and a batch -*- C++ -*-===//
//
// What `xlnetc run-step` and the runtime-only `xlnetc-run run-step` share.
// No MLIR: where the plan comes from is a StepCompiler (Support.h) — the
// compiler in xlnetc, a compiled bundle in xlnetc-run (docs/Bundles.md).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_RUNSTEP_H
#define XLNETC_XLNETC_DRIVER_RUNSTEP_H

#include "xlnetc/Driver/Commands.h"
#include "xlnetc/Driver/Support.h"
#include "xlnetc/Spec/StepShape.h"

#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"
#include "runtime/Tensor.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace xlnetc {

/// `run-step`: one forward (or grads) step of `args.model` on a batch file
/// or a synthetic batch, the plan from `compile`.
int runRunStep(const RunStepArgs &args, const StepCompiler &compile);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_RUNSTEP_H
