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

//===----------------------------------------------------------------------===//
// Host fusions (runtime/host/HostFusion.h)
//===----------------------------------------------------------------------===//

namespace host_fusion {

const json kGemmAttrs = {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}};

/// y = gemm(x, w); z = add(r, y); o = add(z, r) (returned), with the
/// variations each negative test names.
struct AddOfGemm {
  bool yReadTwice = false; ///< a second step reads y
  bool xAfterGemm = false; ///< the add's other operand is written after the GEMM
  bool zReturned = false;  ///< the add's result is returned
  bool bias = false;       ///< the GEMM has a bias

  Plan build() const {
    test::PlanBuilder p;
    int x = p.buffer("f32", {2, 3}, "input", "x");
    int w = p.buffer("f32", {3, 4}, "param", "w");
    int b = p.buffer("f32", {4}, "param", "b");
    int r = p.buffer("f32", {2, 4}, "input", "r");
    int y = p.buffer("f32", {2, 4}, "temp");
    int late = p.buffer("f32", {2, 4}, "temp");
    int z = p.buffer("f32", {2, 4}, "temp", "", zReturned ? std::vector<std::string>{"z"}
                                                           : std::vector<std::string>{});
    int o = p.buffer("f32", {2, 4}, "temp", "", {"o"});
    int extra = p.buffer("f32", {2, 4}, "temp", "", {"extra"});
    p.step("gemm", bias ? std::vector<int>{x, w, b} : std::vector<int>{x, w}, {y}, kGemmAttrs);
    p.step("add", {r, r}, {late});
    p.step("add", {xAfterGemm ? late : r, y}, {z});
    p.step("add", {z, late}, {o});
    p.step("add", {yReadTwice ? y : r, r}, {extra});
    Plan plan;
    Status s = parsePlan(p.text(), plan);
    EXPECT_TRUE(s) << s.message();
    return plan;
  }
};

TensorMap bindings() {
  TensorMap m;
  m["x"] = Tensor::fromF32({2, 3}, {1, 2, 3, -1, 0.5f, 2});
  m["w"] = Tensor::fromF32({3, 4}, {1, 0, 2, -1, 0.25f, 1, 0, 3, -2, 1, 1, 0.5f});
  m["b"] = Tensor::fromF32({4}, {0.5f, -0.5f, 1, 0});
  m["r"] = Tensor::fromF32({2, 4}, {10, 20, 30, 40, -1, -2, -3, -4});
  return m;
}

/// The add of the GEMM's result is summed in the GEMM: the add does not
/// run, y gets no memory, z lives from the GEMM on, and the results are
/// the unfused ones.
TEST(HostFusion, SumsAnAddOfAGemmResultInTheGemm) {
  const Plan plan = AddOfGemm{}.build();
  host::HostFusions f = host::findHostFusions(plan, true, true);
  EXPECT_EQ(f.absorbedBy, (std::vector<int>{-1, -1, 0, -1, -1}));
  EXPECT_EQ(f.accumulate[0].init, 3); // r
  EXPECT_EQ(f.accumulate[0].into, 6); // z
  EXPECT_EQ(f.accumulate[0].add, 2u);
  EXPECT_EQ(f.absorbedCount(), 1u);
  EXPECT_TRUE(f.touched[2].empty());
  const MemoryPlan m = planMemory(plan, f.touched);
  EXPECT_EQ(m.offset[4], -1) << "y is never written";
  EXPECT_EQ(m.firstTouched[0], std::vector<int>{6}) << "z is written by the GEMM";

  TensorMap fused, plain;
  ExecOptions opts;
  opts.poisonTemps = true; // the fused GEMM writes all of z
  HostWorkspace ws;
  ASSERT_TRUE(executeHost(plan, bindings(), fused, opts, &ws));
  EXPECT_EQ(ws.fusions().absorbedCount(), 1u);
  opts.fuse = false;
  ASSERT_TRUE(executeHost(plan, bindings(), plain, opts, &ws));
  EXPECT_EQ(ws.fusions().absorbedCount(), 0u);
  // o = (r + x·w) + (r + r); row 0, column 0: x·w = 1·1 + 2·0.25 + 3·(-2)
  // = -4.5, so o = 10 - 4.5 + 20.
  EXPECT_FLOAT_EQ(fused.at("o").f32()[0], 25.5f);
  for (const char *name : {"o", "extra"})
    EXPECT_EQ(values(fused.at(name)), values(plain.at(name))) << name;
}

/// Each condition of the fusion, broken alone, leaves the add to run.
TEST(HostFusion, LeavesTheAddWhenTheGemmCannotDoIt) {
  for (AddOfGemm variant : {AddOfGemm{true, false, false, false},
                            AddOfGemm{false, true, false, false},
                            AddOfGemm{false, false, true, false},
                            AddOfGemm{false, false, false, true}}) {
    const Plan plan = variant.build();
    const host::HostFusions f = host::findHostFusions(plan, true, true);
    EXPECT_EQ(f.absorbedCount(), 0u)
        << "y read twice " << variant.yReadTwice << ", x after the GEMM "
        << variant.xAfterGemm << ", z returned " << variant.zReturned << ", bias "
        << variant.bias;
    TensorMap out;
    EXPECT_TRUE(executeHost(plan, bindings(), out));
  }
}

/// The tied embedding's two gradients: the scatter of embedding_grad starts
/// from the other gradient (the LM head's, written before it) and rounds as
/// the add would: the results are the unfused ones bit for bit.
TEST(HostFusion, EmbeddingGradAddsIntoTheOtherGradient) {
  test::PlanBuilder p;
  int ids = p.buffer("i64", {1, 3}, "input", "ids");
  int dout = p.buffer("f32", {1, 3, 2}, "input", "dout");
  int head = p.buffer("f32", {4, 2}, "input", "head");
  int y = p.buffer("f32", {4, 2}, "temp");
  int z = p.buffer("f32", {4, 2}, "temp");
  int o = p.buffer("f32", {4, 2}, "temp", "", {"o"});
  p.step("embedding_grad", {ids, dout}, {y});
  p.step("add", {head, y}, {z});
  p.step("add", {z, head}, {o});
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  ASSERT_TRUE(st) << st.message();
  const host::HostFusions f = host::findHostFusions(plan, true, true);
  EXPECT_EQ(f.absorbedBy, (std::vector<int>{-1, 0, -1}));
  EXPECT_EQ(f.accumulate[0].init, head);
  EXPECT_EQ(f.accumulate[0].into, z);

  TensorMap in;
  in["ids"] = Tensor::fromI64({1, 3}, {2, 0, 2});
  in["dout"] = Tensor::fromF32({1, 3, 2}, {0.1f, 0.2f, 1e-8f, 3, 0.3f, -0.4f});
  in["head"] = Tensor::fromF32({4, 2}, {1, 2, 3, 4, 1e8f, 6, 7, 8});
  TensorMap fused, plain;
  ExecOptions opts;
  opts.poisonTemps = true;
  ASSERT_TRUE(executeHost(plan, in, fused, opts));
  opts.fuse = false;
  ASSERT_TRUE(executeHost(plan, in, plain, opts));
  EXPECT_EQ(values(fused.at("o")), values(plain.at("o")));
  // Row 2: (1e8 + float(0.1 + 0.3)) + 1e8, (6 + float(0.2 - 0.4)) + 6.
  EXPECT_EQ(fused.at("o").f32()[4], (1e8f + float(0.1f + double(0.3f))) + 1e8f);
  EXPECT_EQ(fused.at("o").f32()[2], 3.0f + 3.0f); // row 1: no id, the head's alone
  (void)o;
}

/// An observer that does not accept fused steps sees every step run.
TEST(HostFusion, AnObserverSeesEveryStepUnlessItAcceptsFusion) {
  struct Count final : StepObserver {
    bool accepts = false;
    std::vector<size_t> seen;
    Status beforeStep(size_t, const Step &) override { return Status::ok(); }
    Status afterStep(size_t i, const Step &, const std::vector<Tensor *> &) override {
      seen.push_back(i);
      return Status::ok();
    }
    bool acceptsFusedSteps() const override { return accepts; }
    bool wantsDeviceStep(size_t) const override { return false; }
    Status beforeDeviceStep(size_t, const Step &, const DeviceBuffers &) override {
      return Status::ok();
    }
  };
  const Plan plan = AddOfGemm{}.build();
  for (bool accepts : {false, true}) {
    Count count;
    count.accepts = accepts;
    ExecOptions opts;
    opts.observer = &count;
    TensorMap out;
    ASSERT_TRUE(executeHost(plan, bindings(), out, opts));
    const std::vector<size_t> all = {0, 1, 2, 3, 4}, fused = {0, 1, 3, 4};
    EXPECT_EQ(count.seen, accepts ? fused : all);
  }
}

} // namespace host_fusion
