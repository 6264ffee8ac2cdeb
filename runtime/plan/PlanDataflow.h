//===- PlanDataflow.h - Who writes and reads each plan buffer ---*- C++ -*-===//
//
// The plan's dataflow, computed once from its steps (a step writes its
// `out` and reads its `in` and its inits, Step::reads), for every place
// that needs it: the host executor's last uses, the device executor's live
// steps, the data-parallel reducer's gradient writers, the CUDA emitter's
// layout choices, the tests. A verified plan has one writer per temp
// (parsePlan checks that); ids out of range are skipped here.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_PLANDATAFLOW_H
#define XLNETC_RUNTIME_PLAN_PLANDATAFLOW_H

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace xlnetc::rt {

struct Plan;

struct PlanDataflow {
  /// Per buffer: the step writing it (the last one, in an unverified plan),
  /// or -1 (inputs, parameters, unwritten temps).
  std::vector<int> writer;
  /// Per buffer: the steps reading it, in plan order; a step reading it as
  /// two operands is listed twice.
  std::vector<std::vector<size_t>> readers;
  /// Per buffer: the last step reading it, or -1.
  std::vector<int> lastReader;
  /// Per buffer: whether the plan returns it (an output name).
  std::vector<bool> returned;

  /// The uses of buffer `id`: its readers, plus one when it is returned.
  size_t uses(int id) const {
    return readers[size_t(id)].size() + (returned[size_t(id)] ? 1 : 0);
  }
};

PlanDataflow planDataflow(const Plan &plan);

/// What a step that returns only the outputs named `needed` must compute:
/// per buffer whether it is needed (returned under one of those names, or
/// read by a needed step), per step whether it runs (it writes a needed
/// buffer, or has no outputs). An empty `needed` needs everything. The
/// executors skip the rest (ExecOptions::wanted).
struct PlanLiveness {
  std::vector<char> buffer, step;
};
PlanLiveness planLiveness(const Plan &plan, const std::set<std::string> &needed);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PLAN_PLANDATAFLOW_H
