//===- DeviceProgramJsonTest.cpp - Device programs through JSON -----------===//
//
// writeDeviceProgramJson / parseDeviceProgramJson (what a bundle's
// program.json holds): the tiny training step's program comes back with the
// same launches, tables and memory plan; a wrong buffer index, an unknown
// argument kind, status words or a workspace offset a step does not have, a
// GEMM operand smaller than its descriptor, another version and a changed
// source are each one error that names the step.
//
//===----------------------------------------------------------------------===//

#include "target/cuda/CudaEmitter.h"
#include "test/Device/DeviceTestUtil.h"
#include "runtime/plan/DeviceProgramJson.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

using namespace xlnetc::rt;

namespace {

struct Loaded {
  Plan plan;
  DeviceProgram program;
};

Loaded tinyTrain() {
  Loaded l;
  std::ifstream in(xlnetc::rt::testing::testPlansDir() + "/xlnet-tiny.train.plan.json");
  std::stringstream text;
  text << in.rdbuf();
  Status st = parsePlan(text.str(), l.plan);
  EXPECT_TRUE(st) << st.message();
  st = xlnetc::cuda::emitDeviceProgram(l.plan, {}, l.program);
  EXPECT_TRUE(st) << st.message();
  return l;
}

TEST(DeviceProgramJson, RoundTripsTheTinyTrainingStep) {
  Loaded l = tinyTrain();
  DeviceProgram back;
  Status st = parseDeviceProgramJson(writeDeviceProgramJson(l.program), l.plan,
                                     l.program.source, back);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(back.moduleName, l.program.moduleName);
  EXPECT_EQ(back.sourceDigest, l.program.sourceDigest);
  ASSERT_EQ(back.steps.size(), l.program.steps.size());
  int gemms = 0, batched = 0;
  for (size_t i = 0; i < back.steps.size(); ++i) {
    const DeviceStep &a = back.steps[i], &b = l.program.steps[i];
    EXPECT_EQ(a.workspaceBytes, b.workspaceBytes);
    EXPECT_EQ(a.status, b.status);
    ASSERT_EQ(a.launches.size(), b.launches.size()) << "step " << i;
    for (size_t k = 0; k < a.launches.size(); ++k) {
      const DeviceLaunch &x = a.launches[k], &y = b.launches[k];
      EXPECT_EQ(x.kind, y.kind);
      EXPECT_EQ(x.kernel, y.kernel);
      EXPECT_EQ(x.grid, y.grid);
      EXPECT_EQ(x.block, y.block);
      EXPECT_EQ(x.dynSmem, y.dynSmem);
      ASSERT_EQ(x.args.size(), y.args.size());
      for (size_t j = 0; j < x.args.size(); ++j) {
        EXPECT_EQ(x.args[j].kind, y.args[j].kind);
        EXPECT_EQ(x.args[j].index, y.args[j].index);
        EXPECT_EQ(x.args[j].value, y.args[j].value);
      }
      if (x.kind == DeviceLaunch::Gemm) {
        ++gemms;
        EXPECT_EQ(dev::describeGemm(x.gemm), dev::describeGemm(y.gemm));
        EXPECT_EQ(x.gemm.alpha, y.gemm.alpha);
        EXPECT_EQ(x.gemm.beta, y.gemm.beta);
        EXPECT_EQ(std::vector<int>({x.a, x.b, x.bias, x.d, x.aux}),
                  std::vector<int>({y.a, y.b, y.bias, y.d, y.aux}));
        EXPECT_EQ(x.batchMembers, y.batchMembers);
        batched += !x.batchMembers.empty();
      }
    }
  }
  EXPECT_GT(gemms, 0);
  EXPECT_GT(batched, 0) << "the k and v projections are batched GEMMs";
  EXPECT_EQ(back.groups, l.program.groups);
  EXPECT_FALSE(back.groups.empty());
  ASSERT_EQ(back.tables.size(), l.program.tables.size());
  for (size_t t = 0; t < back.tables.size(); ++t) {
    EXPECT_EQ(back.tables[t].kind, l.program.tables[t].kind);
    ASSERT_EQ(back.tables[t].entries.size(), l.program.tables[t].entries.size());
    for (size_t e = 0; e < back.tables[t].entries.size(); ++e) {
      EXPECT_EQ(back.tables[t].entries[e].buffers, l.program.tables[t].entries[e].buffers);
      EXPECT_EQ(back.tables[t].entries[e].decay, l.program.tables[t].entries[e].decay);
    }
  }
  EXPECT_EQ(back.inPlace, l.program.inPlace);
  EXPECT_FALSE(back.inPlace.empty()) << "the optimizer updates in place";
  EXPECT_EQ(back.memory.offset, l.program.memory.offset);
  EXPECT_EQ(back.memory.arenaBytes, l.program.memory.arenaBytes);
}

TEST(DeviceProgramJson, BadDocumentsAreOneError) {
  Loaded l = tinyTrain();
  nlohmann::json doc = nlohmann::json::parse(writeDeviceProgramJson(l.program));
  auto parse = [&](const nlohmann::json &d, const std::string &source) {
    DeviceProgram out;
    return parseDeviceProgramJson(d.dump(), l.plan, source, out);
  };
  // A kernel argument naming a buffer the plan does not have.
  size_t step = 0;
  while (doc["steps"][step]["launches"].empty() ||
         !doc["steps"][step]["launches"][0].contains("kernel"))
    ++step;
  nlohmann::json bad = doc;
  bad["steps"][step]["launches"][0]["args"][0] = {{"kind", "buffer"}, {"index", 99999}, {"value", 0}};
  Status st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find(stepPrefix(step, l.plan.steps[step])), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("kernel argument buffer 99999 is not a buffer of the plan"),
            std::string::npos) << st.message();

  // An in-place pair that is not a step's result over an input of its kind
  // (an input over a temp), and one that is not a pair.
  bad = doc;
  bad["in_place"][0] = {doc["in_place"][0][1], doc["in_place"][0][0]};
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("does not write a step's result over an input of its type and size"),
            std::string::npos) << st.message();
  bad = doc;
  bad["in_place"].push_back({1});
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("is not a pair of buffers of the plan"), std::string::npos)
      << st.message();

  // A multi-tensor entry counting more elements than its buffers hold (the
  // kernels would read and write past them), and a negative first chunk.
  ASSERT_FALSE(doc["tables"].empty());
  bad = doc;
  bad["tables"][0]["entries"][0]["count"] = int64_t(1) << 40;
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("an entry of 1099511627776 elements names buffer"),
            std::string::npos) << st.message();
  bad = doc;
  bad["tables"][0]["entries"][0]["chunk_begin"] = -1;
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("'chunk_begin' is -1, outside [0,"), std::string::npos)
      << st.message();

  bad = doc;
  bad["steps"][step]["launches"][0]["args"][0]["kind"] = "texture";
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("unknown kernel argument kind 'texture'"), std::string::npos)
      << st.message();

  // Status words on a step without them; a workspace offset past the step's
  // workspace; a GEMM operand smaller than its descriptor.
  size_t plain = 0;
  while (doc["steps"][plain]["status"] == true || doc["steps"][plain]["launches"].empty() ||
         !doc["steps"][plain]["launches"][0].contains("kernel"))
    ++plain;
  bad = doc;
  bad["steps"][plain]["launches"][0]["args"].push_back(
      {{"kind", "status"}, {"index", -1}, {"value", 0}});
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("takes status words but the step has none"), std::string::npos)
      << st.message();
  bad = doc;
  bad["steps"][plain]["launches"][0]["args"].push_back(
      {{"kind", "workspace"}, {"index", -1}, {"value", 1 << 30}});
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("workspace offset 1073741824 is outside"), std::string::npos)
      << st.message();
  size_t gemm = 0;
  while (doc["steps"][gemm]["launches"].empty() ||
         !doc["steps"][gemm]["launches"][0].contains("gemm"))
    ++gemm;
  bad = doc;
  bad["steps"][gemm]["launches"][0]["gemm"]["m"] = 1 << 20;
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("elements but the descriptor spans"), std::string::npos)
      << st.message();

  // A batched GEMM whose batch count disagrees with its members, a member
  // that is not a buffer pair, and groups that are not temps or repeat one.
  size_t batchedStep = 0;
  while (doc["steps"][batchedStep]["launches"].empty() ||
         !doc["steps"][batchedStep]["launches"][0].contains("gemm") ||
         doc["steps"][batchedStep]["launches"][0]["batch_members"].empty())
    ++batchedStep;
  bad = doc;
  bad["steps"][batchedStep]["launches"][0]["gemm"]["batch"] = 1;
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("batch members needs batch"), std::string::npos) << st.message();
  bad = doc;
  bad["steps"][batchedStep]["launches"][0]["batch_members"][0] = {1, 99999};
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("is not a pair of buffers of the plan"), std::string::npos)
      << st.message();
  bad = doc;
  bad["groups"].push_back({doc["groups"][0][0], doc["groups"][0][1]});
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("each in no other group"), std::string::npos) << st.message();
  bad = doc;
  bad["groups"][0] = {0, 1}; // inputs, not temporaries
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("is not two or more temporaries"), std::string::npos)
      << st.message();

  bad = doc;
  bad["version"] = 7;
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "device program: version 7 (this runtime reads 2)");

  st = parse(doc, l.program.source + "// changed\n");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("SHA-256"), std::string::npos) << st.message();

  bad = doc;
  bad["steps"].erase(bad["steps"].size() - 1);
  st = parse(bad, l.program.source);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("steps for a plan of"), std::string::npos) << st.message();
}

} // namespace
