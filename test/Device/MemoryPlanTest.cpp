//===- MemoryPlanTest.cpp - The arena of a step's temporaries -------------===//
//
// planMemory (runtime/plan/MemoryPlan.h): temps whose lifetimes do not overlap
// share memory, temps whose lifetimes overlap never do (checked on the whole
// tiny training step and a grads step with fused GEMM epilogues, with the
// lifetimes recomputed here from every launch's operands), returned temps
// live to the end, the categories add up. That the executor runs whole steps
// from the arena is WholeStepTest's and DeviceExecutorTest's business.
//
//===----------------------------------------------------------------------===//

#include "target/cuda/CudaEmitter.h"
#include "test/Device/DeviceTestUtil.h"
#include "runtime/plan/MemoryPlan.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

using namespace xlnetc::rt;

namespace {

int64_t bytesOf(const Buffer &b) { return numelOf(b.shape) * int64_t(dtypeSize(b.dtype)); }

TEST(MemoryPlan, ChainReusesWhatIsDeadAndKeepsOutputs) {
  // x -> t1 -> t2 -> t3 (returned): t1 is dead once t2 is written, so t3
  // may take its place; t2 and t3 are live together at step 2.
  xlnetc::rt::test::PlanBuilder p;
  int x = p.buffer("f32", {1000}, "input", "x");
  int t1 = p.buffer("f32", {1000}, "temp");
  int t2 = p.buffer("f32", {1000}, "temp");
  int t3 = p.buffer("f32", {1000}, "temp", "", {"out"});
  p.step("add", {x, x}, {t1});
  p.step("add", {t1, x}, {t2});
  p.step("add", {t2, x}, {t3});
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  ASSERT_TRUE(st) << st.message();
  MemoryPlan m = planMemory(plan, nullptr);
  const int64_t slot = 4096; // 4000 bytes, 256-aligned
  EXPECT_EQ(m.arenaBytes, 2 * slot);
  EXPECT_EQ(m.peakLiveBytes, 2 * slot);
  EXPECT_EQ(m.offset[size_t(x)], -1);
  EXPECT_NE(m.offset[size_t(t1)], m.offset[size_t(t2)]);
  EXPECT_NE(m.offset[size_t(t2)], m.offset[size_t(t3)]);
  EXPECT_EQ(m.offset[size_t(t1)], m.offset[size_t(t3)]);
  EXPECT_EQ(m.inputBytes, 4000);
  EXPECT_EQ(m.outputBytes, 4000);
  EXPECT_EQ(m.keptForBackwardBytes, 0); // no backward
  EXPECT_EQ(m.firstTouched[0], std::vector<int>{t1});
  EXPECT_EQ(m.firstTouched[2], std::vector<int>{t3});
}

/// The build-time plan `name` (WholeStepTest's) with its device program.
bool loadProgram(const std::string &name, Plan &plan, DeviceProgram &program) {
  std::ifstream in(xlnetc::rt::testing::testPlansDir() + "/" + name + ".plan.json");
  if (!in.good())
    return false;
  std::stringstream text;
  text << in.rdbuf();
  Status st = parsePlan(text.str(), plan);
  EXPECT_TRUE(st) << st.message();
  st = xlnetc::cuda::emitDeviceProgram(plan, {}, program);
  EXPECT_TRUE(st) << st.message();
  return st.isOk();
}

void checkWholeStep(const std::string &name) {
  Plan plan;
  DeviceProgram program;
  ASSERT_TRUE(loadProgram(name, plan, program)) << "no plan " << name;
  const MemoryPlan &m = program.memory; // the emitter ran the pass
  ASSERT_EQ(m.offset.size(), plan.buffers.size());
  // Lifetimes from scratch: what every launch reads and writes (a fused
  // step's own operands that no launch touches are never written).
  const size_t n = plan.buffers.size(), steps = plan.steps.size();
  std::vector<int64_t> first(n, -1), last(n, -1);
  auto touch = [&](size_t i, int id) {
    if (id < 0)
      return;
    if (first[size_t(id)] < 0)
      first[size_t(id)] = int64_t(i);
    last[size_t(id)] = int64_t(i);
  };
  int fusedAux = 0;
  for (size_t i = 0; i < steps; ++i) {
    for (const DeviceLaunch &l : program.steps[i].launches) {
      for (int id : {l.a, l.b, l.bias, l.d, l.aux, l.c})
        if (l.kind == DeviceLaunch::Gemm)
          touch(i, id);
      for (const auto &[a, d] : l.batchMembers)
        touch(i, a), touch(i, d);
      fusedAux += l.kind == DeviceLaunch::Gemm && l.aux >= 0;
      for (const KernelArg &a : l.args) {
        if (a.kind == KernelArg::Buffer)
          touch(i, a.index);
        if (a.kind == KernelArg::Table)
          for (const DeviceTable::Entry &e : program.tables[size_t(a.index)].entries)
            for (int id : e.buffers)
              touch(i, id);
      }
    }
  }
  int64_t sum = 0, params = 0;
  int untouched = 0;
  std::set<int> inPlace;
  for (const auto &[out, in] : program.inPlace)
    inPlace.insert(out);
  // The training step updates every parameter and moment in place.
  if (name.find("train") != std::string::npos)
    EXPECT_EQ(program.inPlace.size(), 3 * size_t(std::count_if(
                                              plan.buffers.begin(), plan.buffers.end(),
                                              [](const Buffer &b) { return b.role == Buffer::Param; })))
        << name;
  std::vector<int> temps;
  for (const Buffer &b : plan.buffers) {
    if (b.role == Buffer::Param)
      params += bytesOf(b);
    if (b.role != Buffer::Temp) {
      EXPECT_EQ(m.offset[size_t(b.id)], -1);
      continue;
    }
    if (!b.outputs.empty())
      last[size_t(b.id)] = int64_t(steps) - 1;
    if (inPlace.count(b.id)) { // written over its input: no memory of its own
      EXPECT_EQ(m.offset[size_t(b.id)], -1) << name << ": in-place buffer " << b.id;
      continue;
    }
    if (first[size_t(b.id)] < 0) { // never written or read: no memory
      EXPECT_TRUE(b.outputs.empty()) << name << ": returned buffer " << b.id << " untouched";
      EXPECT_EQ(m.offset[size_t(b.id)], -1) << name << ": untouched buffer " << b.id;
      ++untouched;
      continue;
    }
    temps.push_back(b.id);
    sum += bytesOf(b);
    EXPECT_GE(m.offset[size_t(b.id)], 0);
    EXPECT_LE(m.offset[size_t(b.id)] + bytesOf(b), m.arenaBytes);
  }
  int conflicts = 0;
  for (size_t x = 0; x < temps.size(); ++x)
    for (size_t y = x + 1; y < temps.size(); ++y) {
      const size_t a = size_t(temps[x]), b = size_t(temps[y]);
      if (first[a] > last[b] || first[b] > last[a])
        continue; // never live together
      const int64_t a0 = m.offset[a], a1 = a0 + bytesOf(plan.buffers[a]);
      const int64_t b0 = m.offset[b], b1 = b0 + bytesOf(plan.buffers[b]);
      if (a0 < b1 && b0 < a1 && ++conflicts <= 5)
        ADD_FAILURE() << name << ": buffers " << a << " and " << b
                      << " are live together and share bytes";
    }
  EXPECT_EQ(conflicts, 0);
  // Where each buffer lives: a temp in the arena, an input or parameter in
  // the input block (parameters first, none overlapping).
  auto aligned = [](int64_t bytes) {
    return (std::max<int64_t>(bytes, 1) + MemoryPlan::kAlign - 1) / MemoryPlan::kAlign *
           MemoryPlan::kAlign;
  };
  std::vector<std::pair<int64_t, int64_t>> inputs;
  for (const Buffer &b : plan.buffers)
    if (b.role != Buffer::Temp) {
      EXPECT_GE(m.inputOffset[size_t(b.id)], 0) << name << ": input " << b.id;
      inputs.emplace_back(m.inputOffset[size_t(b.id)],
                          m.inputOffset[size_t(b.id)] + aligned(bytesOf(b)));
      if (b.role == Buffer::Param)
        EXPECT_LT(m.inputOffset[size_t(b.id)], params) << name << ": parameters first";
    } else {
      EXPECT_EQ(m.inputOffset[size_t(b.id)], -1);
    }
  std::sort(inputs.begin(), inputs.end());
  for (size_t x = 1; x < inputs.size(); ++x)
    EXPECT_LE(inputs[x - 1].second, inputs[x].first) << name << ": inputs overlap";
  EXPECT_EQ(inputs.back().second, m.inputBlockBytes);
  // A group's members lie side by side, in order.
  for (const std::vector<int> &g : program.groups)
    for (size_t x = 1; x < g.size(); ++x)
      EXPECT_EQ(m.offset[size_t(g[x])],
                m.offset[size_t(g[x - 1])] + aligned(bytesOf(plan.buffers[size_t(g[x - 1])])))
          << name << ": group member " << g[x];
  // A batched GEMM's entries lie where its strides say (as the executor
  // checks before it runs one).
  auto where = [&](int id) {
    return plan.buffers[size_t(id)].role == Buffer::Temp
               ? std::pair<int, int64_t>(0, m.offset[size_t(id)])
               : std::pair<int, int64_t>(1, m.inputOffset[size_t(id)]);
  };
  int batched = 0;
  for (const DeviceStep &st : program.steps)
    for (const DeviceLaunch &l : st.launches) {
      if (l.batchMembers.empty())
        continue;
      ++batched;
      EXPECT_EQ(l.gemm.batch, int64_t(l.batchMembers.size()) + 1);
      EXPECT_EQ(l.gemm.strideB, 0);
      const int64_t sa = dtypeSize(plan.buffers[size_t(l.a)].dtype),
                    sd = dtypeSize(plan.buffers[size_t(l.d)].dtype);
      for (size_t e = 0; e < l.batchMembers.size(); ++e) {
        const auto [a, d] = l.batchMembers[e];
        EXPECT_EQ(where(a).first, where(l.a).first);
        EXPECT_EQ(where(a).second,
                  where(l.a).second + int64_t(e + 1) * l.gemm.strideA * sa)
            << name << ": batched A " << a;
        EXPECT_EQ(where(d).first, 0);
        EXPECT_EQ(where(d).second,
                  where(l.d).second + int64_t(e + 1) * l.gemm.strideC * sd)
            << name << ": batched D " << d;
      }
    }
  // The k and v projections (and their weight gradients) of each layer.
  EXPECT_GT(batched, 0) << name;
  EXPECT_GE(m.arenaBytes, m.peakLiveBytes);
  EXPECT_LT(m.arenaBytes, sum) << "the arena reuses nothing";
  EXPECT_EQ(m.parameterBytes, params);
  EXPECT_GT(m.keptForBackwardBytes, 0);
  EXPECT_GT(m.workspaceBytes, 0);
  if (name.find("gelu") != std::string::npos)
    EXPECT_GT(fusedAux, 0) << "the grads step's GELU epilogues write aux buffers early";
  // Every fusion that leaves a result unwritten is in the plan now (the
  // fused forms have no such result): every temp is touched.
  EXPECT_EQ(untouched, 0) << name;
}

TEST(MemoryPlan, TinyTrainingStepNeverSharesLiveBytes) {
  checkWholeStep("xlnet-tiny.train");
}

TEST(MemoryPlan, FusedEpiloguesStepNeverSharesLiveBytes) {
  checkWholeStep("tiny-gelu-nodropout.grads");
}

} // namespace
