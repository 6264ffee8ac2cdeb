//===- PlanDataflow.cpp - Who writes and reads each plan buffer -----------===//

#include "runtime/plan/PlanDataflow.h"

#include "runtime/plan/Plan.h"

namespace xlnetc::rt {

PlanDataflow planDataflow(const Plan &plan) {
  const size_t n = plan.buffers.size();
  PlanDataflow df;
  df.writer.assign(n, -1);
  df.readers.assign(n, {});
  df.lastReader.assign(n, -1);
  df.returned.assign(n, false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (int id : plan.steps[i].reads())
      if (id >= 0 && size_t(id) < n) {
        df.readers[size_t(id)].push_back(i);
        df.lastReader[size_t(id)] = int(i);
      }
    for (int id : plan.steps[i].out)
      if (id >= 0 && size_t(id) < n)
        df.writer[size_t(id)] = int(i);
  }
  for (const Buffer &b : plan.buffers)
    if (b.id >= 0 && size_t(b.id) < n)
      df.returned[size_t(b.id)] = !b.outputs.empty();
  return df;
}

} // namespace xlnetc::rt
