//===- ExecutorTest.cpp - executeHost on a small plan ---------------------===//

#include "runtime/HostExecutor.h"
#include "test/Runtime/TestUtil.h"
#include "test/Runtime/TinyPlans.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace xlnetc::rt;
using xlnetc::rt::test::tinyBindings;
using xlnetc::rt::test::tinyLmPlan;
using xlnetc::rt::test::tinyTrainPlan;
using xlnetc::rt::test::values;
using nlohmann::json;

namespace {

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

TEST(ExecutorTest, RunsATrainingStepWithMultiOutputOps) {
  TensorMap b = tinyBindings();
  std::vector<float> m0 = {0.1f, 0, 0, -0.1f, 0, 0, 0.2f, 0};
  std::vector<float> v0 = {0.01f, 0, 0, 0.02f, 0, 0, 0.01f, 0.03f};
  b["m.emb"] = Tensor::fromF32({4, 2}, m0);
  b["v.emb"] = Tensor::fromF32({4, 2}, v0);
  b["step"] = Tensor::fromI64({}, {2});
  TensorMap out;
  Status s = executeHost(tinyTrainPlan(), b, out);
  ASSERT_TRUE(s) << s.message();

  // Expected values in double: E = [[1,0],[0,1],[1,1],[0,0]], ids (2, 1),
  // targets (2, 0), mask (1, 1): h = (E[2], E[1]), logits = h·Eᵀ,
  // dlogits = (softmax - onehot) / 2, dE = dlogitsᵀ·h + scatter(dlogits·E).
  const double E[4][2] = {{1, 0}, {0, 1}, {1, 1}, {0, 0}};
  const int ids[2] = {2, 1}, tgt[2] = {2, 0};
  double dE[4][2] = {};
  for (int r = 0; r < 2; ++r) {
    const double *hr = E[ids[r]];
    double logit[4], sum = 0;
    for (int c = 0; c < 4; ++c)
      sum += std::exp(logit[c] = hr[0] * E[c][0] + hr[1] * E[c][1]);
    for (int c = 0; c < 4; ++c) {
      double dl = (std::exp(logit[c]) / sum - (c == tgt[r])) / 2;
      for (int d = 0; d < 2; ++d) {
        dE[c][d] += dl * hr[d];         // head: dlogitsᵀ · h
        dE[ids[r]][d] += dl * E[c][d];  // input: dlogits · E
      }
    }
  }
  double sq = 0;
  for (int i = 0; i < 8; ++i)
    sq += dE[i / 2][i % 2] * dE[i / 2][i % 2];
  double norm = std::sqrt(sq);
  ASSERT_GT(norm, 0.5); // clipping is active
  for (int i = 0; i < 8; ++i)
    EXPECT_NEAR(out.at("grad").f32()[i], dE[i / 2][i % 2], 1e-6) << i;
  EXPECT_NEAR(out.at("grad_norm").f32()[0], norm, 1e-6);
  EXPECT_NEAR(out.at("lr").f32()[0], 0.05, 1e-9); // warmup: 2/4 · 0.1
  // adam_update, step 2 (t = 3), clip 0.5.
  double c = 0.5 / norm;
  double lrT =
      0.05 * std::sqrt(1 - std::pow(0.999, 3)) / (1 - std::pow(0.9, 3));
  for (int i = 0; i < 8; ++i) {
    double g = dE[i / 2][i % 2] * c;
    double mi = 0.9 * m0[i] + 0.1 * g;
    double vi = 0.999 * v0[i] + 0.001 * g * g;
    double p = E[i / 2][i % 2] - lrT * mi / (std::sqrt(vi) + 1e-6);
    EXPECT_NEAR(out.at("new.m.emb").f32()[i], mi, 1e-7) << i;
    EXPECT_NEAR(out.at("new.v.emb").f32()[i], vi, 1e-8) << i;
    EXPECT_NEAR(out.at("new.emb").f32()[i], p, 1e-6) << i;
  }
  EXPECT_NEAR(out.at("loss").f32()[0],
              ((std::log(2 * std::exp(1.0) + std::exp(2.0) + 1) - 2) +
               std::log(2 + 2 * std::exp(1.0))) /
                  2,
              1e-6);
}

} // namespace
