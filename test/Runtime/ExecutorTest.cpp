//===- ExecutorTest.cpp - executeHost on a small plan ---------------------===//

#include "runtime/HostExecutor.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace xlnetc::rt;
using xlnetc::rt::test::PlanBuilder;
using xlnetc::rt::test::values;
using nlohmann::json;

namespace {

/// embedding -> tied output projection -> lm_loss, V = 4, D = 2, B = 1, S = 2.
Plan tinyLmPlan() {
  PlanBuilder p;
  int ids = p.buffer("i64", {1, 2}, "input", "input_k");
  int emb = p.buffer("f32", {4, 2}, "param", "emb", {"emb_out"});
  int tgt = p.buffer("i64", {1, 2}, "input", "target");
  int msk = p.buffer("f32", {1, 2}, "input", "target_mask");
  int h = p.buffer("f32", {1, 2, 2}, "temp");
  int logits = p.buffer("f32", {1, 2, 4}, "temp", "", {"logits"});
  int loss = p.buffer("f32", {}, "temp", "", {"loss"});
  int ptl = p.buffer("f32", {1, 2}, "temp", "", {"per_token_loss"});
  p.step("embedding", {ids, emb}, {h}, json::object(), "word emb");
  p.step("gemm", {h, emb}, {logits},
         {{"k_rank", 1}, {"transpose_w", true}, {"activation", "none"}},
         "lm head");
  p.step("lm_loss", {logits, tgt, msk}, {loss, ptl}, json::object(), "loss");
  Plan plan;
  Status s = parsePlan(p.text(), plan);
  EXPECT_TRUE(s) << s.message();
  return plan;
}

TensorMap tinyBindings() {
  TensorMap m;
  m["input_k"] = Tensor::fromI64({1, 2}, {2, 1});
  m["emb"] = Tensor::fromF32({4, 2}, {1, 0, 0, 1, 1, 1, 0, 0});
  m["target"] = Tensor::fromI64({1, 2}, {2, 0});
  m["target_mask"] = Tensor::fromF32({1, 2}, {1, 1});
  return m;
}

TEST(ExecutorTest, RunsAPlanAndReturnsNamedOutputs) {
  TensorMap out;
  Status s = executeHost(tinyLmPlan(), tinyBindings(), out);
  ASSERT_TRUE(s) << s.message();
  // h = (emb[2], emb[1]) = ((1,1), (0,1)); logits = h · embᵀ.
  EXPECT_EQ(values(out.at("logits")),
            (std::vector<float>{1, 1, 2, 0, 0, 1, 1, 0}));
  double ptl0 = std::log(2 * std::exp(1.0) + std::exp(2.0) + 1) - 2;
  double ptl1 = std::log(2 + 2 * std::exp(1.0)) - 0;
  EXPECT_NEAR(out.at("per_token_loss").f32()[0], ptl0, 1e-6);
  EXPECT_NEAR(out.at("per_token_loss").f32()[1], ptl1, 1e-6);
  EXPECT_NEAR(out.at("loss").f32()[0], (ptl0 + ptl1) / 2, 1e-6);
  EXPECT_TRUE(out.at("loss").shape.empty());
  // A param can be an output too.
  EXPECT_EQ(values(out.at("emb_out")), values(tinyBindings().at("emb")));

  TensorMap single;
  ASSERT_TRUE(executeHost(tinyLmPlan(), tinyBindings(), single,
                          ExecOptions{/*seed=*/0, /*threads=*/1}));
  EXPECT_EQ(values(single.at("logits")), values(out.at("logits")));
}

TEST(ExecutorTest, ReportsMissingAndMistypedBindings) {
  TensorMap b = tinyBindings(), out;
  b.erase("target");
  EXPECT_EQ(executeHost(tinyLmPlan(), b, out).message(),
            "missing input 'target' (buffer 2, expected i64[1, 2])");
  b = tinyBindings();
  b["emb"] = Tensor::zeros(DType::F32, {4, 3});
  EXPECT_EQ(executeHost(tinyLmPlan(), b, out).message(),
            "param 'emb' (buffer 1): expected f32[4, 2], got f32[4, 3]");
  b = tinyBindings();
  b["input_k"] = Tensor::zeros(DType::F32, {1, 2});
  EXPECT_EQ(executeHost(tinyLmPlan(), b, out).message(),
            "input 'input_k' (buffer 0): expected i64[1, 2], got f32[1, 2]");
}

TEST(ExecutorTest, DataErrorsNameTheStep) {
  TensorMap b = tinyBindings(), out;
  b["input_k"] = Tensor::fromI64({1, 2}, {2, 9});
  EXPECT_EQ(executeHost(tinyLmPlan(), b, out).message(),
            "step 0 (embedding, loc 'word emb'): id 9 at b=0, s=1 is outside "
            "[0, 4)");
  b = tinyBindings();
  b["target"] = Tensor::fromI64({1, 2}, {-1, 0});
  EXPECT_EQ(executeHost(tinyLmPlan(), b, out).message(),
            "step 2 (lm_loss, loc 'loss'): target -1 at b=0, slot 0 is "
            "outside [0, 4)");
}

} // namespace
