//===- PlanAttrs.h - Typed attributes of plan steps (internal) -*- C++ -*-===//
//
// Internal to the plan reader: keeps nlohmann::json out of Plan.h.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_PLANATTRS_H
#define XLNETC_RUNTIME_PLAN_PLANATTRS_H

#include "runtime/plan/Plan.h"

#include <nlohmann/json.hpp>

namespace xlnetc::rt::detail {

/// Parses `attrs` (an object, or null for none) into `step.attrs` according
/// to `step.kind`.
Status parseStepAttrs(const nlohmann::json &attrs, Step &step);

} // namespace xlnetc::rt::detail

#endif // XLNETC_RUNTIME_PLAN_PLANATTRS_H
