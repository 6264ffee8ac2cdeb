//===- MemoryPlan.cpp - One arena for a step's temporaries ----------------===//

#include "runtime/plan/MemoryPlan.h"

#include "runtime/plan/DeviceProgram.h"
#include "runtime/plan/Plan.h"
#include "runtime/train/StateNames.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace xlnetc::rt {

namespace {

int64_t alignUp(int64_t bytes) {
  return (bytes + MemoryPlan::kAlign - 1) / MemoryPlan::kAlign * MemoryPlan::kAlign;
}

int64_t bufferBytes(const Buffer &b) {
  return numelOf(b.shape) * int64_t(dtypeSize(b.dtype));
}

/// Calls `touch(buffer)` for every buffer step `i` reads or writes: with a
/// program, what its launches read and write (a step the emitter fused into
/// another has none, and a fused launch may read other buffers than the
/// step's own: a dropout recomputed inside LayerNorm reads the dropout's
/// input, not its never-written result); without one, the plan step's
/// operands.
template <class F>
void forEachTouched(const Plan &plan, const DeviceProgram *program,
                    size_t i, F touch) {
  if (!program) {
    for (int id : plan.steps[i].reads())
      touch(id);
    for (int id : plan.steps[i].out)
      touch(id);
    return;
  }
  for (const DeviceLaunch &l : program->steps[i].launches) {
    if (l.kind == DeviceLaunch::Gemm) {
      for (int id : {l.a, l.b, l.bias, l.d, l.aux, l.c})
        if (id >= 0)
          touch(id);
      for (const auto &[a, d] : l.batchMembers)
        touch(a), touch(d);
      continue;
    }
    for (const KernelArg &a : l.args) {
      if (a.kind == KernelArg::Buffer)
        touch(a.index);
      else if (a.kind == KernelArg::Table)
        for (const DeviceTable::Entry &e : program->tables[size_t(a.index)].entries)
          for (int id : e.buffers)
            touch(id);
    }
  }
}

bool isOptimizerState(const Buffer &b) {
  return b.role == Buffer::Input &&
         (train::names::hasPrefix(b.name, train::names::kAdamM) ||
          train::names::hasPrefix(b.name, train::names::kAdamV));
}

} // namespace

int64_t memorySlotBytes(const Buffer &b) {
  return alignUp(std::max<int64_t>(bufferBytes(b), 1));
}

int64_t planInputBlock(const Plan &plan, std::vector<int64_t> &offset) {
  offset.assign(plan.buffers.size(), -1);
  int64_t at = 0;
  // Parameters, then the optimizer state, then the other inputs.
  for (int part = 0; part < 3; ++part)
    for (const Buffer &b : plan.buffers) {
      if (b.role == Buffer::Temp)
        continue;
      const int partOf = b.role == Buffer::Param ? 0 : isOptimizerState(b) ? 1 : 2;
      if (partOf != part)
        continue;
      offset[size_t(b.id)] = at;
      at += memorySlotBytes(b);
    }
  return at;
}

namespace {

/// The temps' lifetimes: the first and last step touching each, and the
/// temps that get memory, in id order.
struct Lifetimes {
  std::vector<int64_t> first, last;
  std::vector<int> temps;
};

/// 1. Lifetimes: [first, last] step touching each temp; returned temps
///    live to the end.
static void planLifetimes(const Plan &plan, const DeviceProgram *program, MemoryPlan &m,
                          Lifetimes &life) {
  const size_t n = plan.buffers.size(), steps = plan.steps.size();
  std::vector<int64_t> &first = life.first, &last = life.last;
  first.assign(n, -1);
  last.assign(n, -1);
  for (size_t i = 0; i < steps; ++i)
    forEachTouched(plan, program, i, [&](int id) {
      if (id < 0 || size_t(id) >= n)
        return;
      if (first[size_t(id)] < 0)
        first[size_t(id)] = int64_t(i);
      last[size_t(id)] = int64_t(i);
    });
  std::vector<int> &temps = life.temps;
  std::set<int> inPlace; // outputs in their input's memory
  if (program)
    for (const auto &[out, in] : program->inPlace)
      inPlace.insert(out);
  for (const Buffer &b : plan.buffers) {
    const size_t id = size_t(b.id);
    if (inPlace.count(b.id))
      continue;
    if (b.role == Buffer::Param) {
      m.parameterBytes += bufferBytes(b);
      continue;
    }
    if (b.role == Buffer::Input) {
      (isOptimizerState(b) ? m.optimizerBytes : m.inputBytes) += bufferBytes(b);
      continue;
    }
    // Never touched: with a program or touches, a result a fusion never
    // writes (it gets no memory); with the plan alone, keep it valid for the
    // whole step.
    if (first[id] < 0 && program && b.outputs.empty())
      continue;
    if (first[id] < 0)
      first[id] = 0, last[id] = int64_t(steps) - 1;
    if (!b.outputs.empty()) {
      last[id] = int64_t(steps) - 1;
      m.outputBytes += bufferBytes(b);
    }
    temps.push_back(b.id);
    if (steps > 0)
      m.firstTouched[size_t(first[id])].push_back(b.id);
  }
}

/// 2. The categories the lifetimes give: the live sum per step (its peak
///    bounds any arena from below) and what crosses into the backward.
static void countCategories(const Plan &plan, const Lifetimes &life, MemoryPlan &m) {
  const size_t steps = plan.steps.size();
  const std::vector<int64_t> &first = life.first, &last = life.last;
  const std::vector<int> &temps = life.temps;
  std::vector<int64_t> live(steps + 1, 0);
  for (int id : temps) {
    live[size_t(first[size_t(id)])] += alignUp(bufferBytes(plan.buffers[size_t(id)]));
    live[size_t(last[size_t(id)]) + 1] -= alignUp(bufferBytes(plan.buffers[size_t(id)]));
  }
  for (size_t i = 0, sum = 0; i < steps; ++i) {
    sum += size_t(live[i]);
    m.peakLiveBytes = std::max(m.peakLiveBytes, int64_t(sum));
  }
  int64_t backward = -1;
  for (size_t i = 0; i < steps && backward < 0; ++i)
    if (plan.steps[i].kind == OpKind::LmLossGrad)
      backward = int64_t(i);
  if (backward >= 0)
    for (int id : temps)
      if (first[size_t(id)] < backward && last[size_t(id)] >= backward &&
          plan.buffers[size_t(id)].outputs.empty())
        m.keptForBackwardBytes += bufferBytes(plan.buffers[size_t(id)]);
}

/// 3. Placement: largest first, each at the lowest offset free during its
///    lifetime. A group of the program is one item: its members side by
///    side in order, alive from the first member's start to the last one's
///    end.
static void placeTemps(const Plan &plan, const DeviceProgram *program, const Lifetimes &life,
                       MemoryPlan &m) {
  const std::vector<int64_t> &first = life.first, &last = life.last;
  const std::vector<int> &temps = life.temps;
  auto slot = [&](int id) { return memorySlotBytes(plan.buffers[size_t(id)]); };
  struct Item {
    std::vector<int> members;
    int64_t size = 0, first = 0, last = 0;
  };
  std::vector<Item> items;
  std::set<int> grouped;
  const std::set<int> isTemp(temps.begin(), temps.end());
  if (program)
    for (const std::vector<int> &g : program->groups) {
      Item it;
      for (int id : g) {
        if (!isTemp.count(id) || grouped.count(id))
          continue; // not a placed temp, or in an earlier group
        it.first = it.members.empty() ? first[size_t(id)]
                                      : std::min(it.first, first[size_t(id)]);
        it.last = it.members.empty() ? last[size_t(id)] : std::max(it.last, last[size_t(id)]);
        it.members.push_back(id);
        it.size += slot(id);
        grouped.insert(id);
      }
      if (!it.members.empty())
        items.push_back(std::move(it));
    }
  for (int id : temps)
    if (!grouped.count(id))
      items.push_back({{id}, slot(id), first[size_t(id)], last[size_t(id)]});
  std::stable_sort(items.begin(), items.end(), [&](const Item &a, const Item &b) {
    if (a.size != b.size)
      return a.size > b.size;
    return a.first < b.first;
  });
  struct Placed {
    int64_t begin, end, first, last;
  };
  std::vector<Placed> placed;
  std::vector<Placed> overlapping;
  for (const Item &item : items) {
    const int64_t size = item.size;
    const int64_t f = item.first, l = item.last;
    overlapping.clear();
    for (const Placed &p : placed)
      if (p.first <= l && f <= p.last)
        overlapping.push_back(p);
    std::sort(overlapping.begin(), overlapping.end(),
              [](const Placed &a, const Placed &b) { return a.begin < b.begin; });
    int64_t at = 0;
    for (const Placed &p : overlapping) {
      if (p.begin - at >= size)
        break;
      at = std::max(at, p.end);
    }
    int64_t off = at;
    for (int id : item.members) {
      m.offset[size_t(id)] = off;
      off += slot(id);
    }
    placed.push_back({at, at + size, f, l});
    m.arenaBytes = std::max(m.arenaBytes, at + size);
  }
}

/// 4. The device program's scratch.
static void countProgramScratch(const DeviceProgram &program, MemoryPlan &m) {
  int64_t workspace = 0, statusSteps = 0, tables = 0;
  for (const DeviceStep &s : program.steps) {
    workspace = std::max(workspace, s.workspaceBytes);
    statusSteps += s.status ? 1 : 0;
  }
  for (const DeviceTable &t : program.tables)
    tables += alignUp(int64_t(t.entries.size()) *
                      (t.kind == DeviceTable::Norm ? kNormEntryBytes : kAdamEntryBytes));
  m.workspaceBytes = alignUp(workspace) +
                     alignUp(statusSteps * kStatusWords * int64_t(sizeof(int))) + tables;
}

/// planMemory with the steps' buffers from `program` or (null) from the
/// plan.
MemoryPlan planMemoryOf(const Plan &plan, const DeviceProgram *program) {
  const size_t n = plan.buffers.size(), steps = plan.steps.size();
  if (program && program->steps.size() != steps)
    program = nullptr; // not this plan's program: the plan alone
  MemoryPlan m;
  m.offset.assign(n, -1);
  m.firstTouched.assign(steps, {});
  m.inputBlockBytes = planInputBlock(plan, m.inputOffset);
  Lifetimes life;
  planLifetimes(plan, program, m, life);
  countCategories(plan, life, m);
  placeTemps(plan, program, life, m);
  if (program)
    countProgramScratch(*program, m);
  return m;
}

} // namespace

MemoryPlan planMemory(const Plan &plan, const DeviceProgram *program) {
  return planMemoryOf(plan, program);
}


std::string formatMemoryPlan(const MemoryPlan &m, int64_t batchRows) {
  auto mib = [](int64_t bytes) { return double(bytes) / (1024.0 * 1024.0); };
  std::string out = fmt::format("{:<44} {:>16} {:>12}", "device memory of the step", "bytes", "MiB");
  if (batchRows > 0)
    out += fmt::format(" {:>14}", "MiB/sequence");
  out += "\n";
  auto row = [&](const std::string &what, int64_t bytes, bool perSequence) {
    out += fmt::format("{:<44} {:>16} {:>12.2f}", what, bytes, mib(bytes));
    if (batchRows > 0 && perSequence)
      out += fmt::format(" {:>14.2f}", mib(bytes) / double(batchRows));
    out += "\n";
  };
  row("parameters", m.parameterBytes, false);
  row("optimizer state (Adam m, v)", m.optimizerBytes, false);
  row("inputs (batch, memory, step)", m.inputBytes, true);
  row("arena (temporaries, liveness-planned)", m.arenaBytes, false);
  row("  activations kept for the backward", m.keptForBackwardBytes, true);
  row("  outputs (new mems, loss, ...)", m.outputBytes, false);
  row("  lower bound (peak of live temporaries)", m.peakLiveBytes, false);
  row("workspace (scratch, status words, tables)", m.workspaceBytes, false);
  row("total", m.totalBytes(), false);
  return out;
}

} // namespace xlnetc::rt
