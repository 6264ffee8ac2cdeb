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

PlanLiveness planLiveness(const Plan &plan, const std::set<std::string> &needed) {
  PlanLiveness live;
  const bool all = needed.empty();
  live.buffer.assign(plan.buffers.size(), all ? 1 : 0);
  live.step.assign(plan.steps.size(), all ? 1 : 0);
  if (all)
    return live;
  for (const Buffer &b : plan.buffers)
    for (const std::string &name : b.outputs)
      if (needed.count(name) && b.id >= 0 && size_t(b.id) < live.buffer.size())
        live.buffer[size_t(b.id)] = 1;
  for (size_t s = plan.steps.size(); s-- > 0;) {
    const Step &step = plan.steps[s];
    bool any = step.out.empty(); // a step without outputs is kept
    for (int id : step.out)
      any = any || (id >= 0 && size_t(id) < live.buffer.size() && live.buffer[size_t(id)]);
    if (!any)
      continue;
    live.step[s] = 1;
    for (int id : step.reads())
      if (id >= 0 && size_t(id) < live.buffer.size())
        live.buffer[size_t(id)] = 1;
  }
  return live;
}

} // namespace xlnetc::rt
