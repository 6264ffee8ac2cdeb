//===- ExecutorTest.cpp - executeHost on a small plan ---------------------===//

#include "runtime/exec/HostExecutor.h"
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
// Fused forms on the host (docs/Plan.md "Fused forms")
//===----------------------------------------------------------------------===//

namespace host_fusion {

const json kGemmAttrs = {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}};

TensorMap bindings() {
  TensorMap m;
  m["x"] = Tensor::fromF32({2, 3}, {1, 2, 3, -1, 0.5f, 2});
  m["w"] = Tensor::fromF32({3, 4}, {1, 0, 2, -1, 0.25f, 1, 0, 3, -2, 1, 1, 0.5f});
  m["b"] = Tensor::fromF32({4}, {0.5f, -0.5f, 1, 0});
  m["r"] = Tensor::fromF32({2, 4}, {10, 20, 30, 40, -1, -2, -3, -4});
  return m;
}

/// z = r + x·w and o = z + r: as gemm + add, or as one gemm with init r.
Plan addOfGemm(bool fused) {
  test::PlanBuilder p;
  int x = p.buffer("f32", {2, 3}, "input", "x");
  int w = p.buffer("f32", {3, 4}, "param", "w");
  int r = p.buffer("f32", {2, 4}, "input", "r");
  int z = p.buffer("f32", {2, 4}, "temp");
  int o = p.buffer("f32", {2, 4}, "temp", "", {"o"});
  if (fused) {
    p.step("gemm", {x, w}, {z}, kGemmAttrs, "test", {r});
  } else {
    int y = p.buffer("f32", {2, 4}, "temp");
    p.step("gemm", {x, w}, {y}, kGemmAttrs);
    p.step("add", {r, y}, {z});
  }
  p.step("add", {z, r}, {o});
  Plan plan;
  Status s = parsePlan(p.text(), plan);
  EXPECT_TRUE(s) << s.message();
  return plan;
}

/// A gemm with an init writes init + its product (the GEMM's beta 1, or
/// the add after it with fuse off): the unfused plan's numbers (exact here:
/// every value is a short binary fraction).
TEST(HostFusion, GemmWithAnInitIsTheAddOfItsProduct) {
  TensorMap fused, plain, unfusedKernels;
  ExecOptions opts;
  opts.poisonTemps = true; // the fused GEMM writes all of z
  ASSERT_TRUE(executeHost(addOfGemm(true), bindings(), fused, opts));
  ASSERT_TRUE(executeHost(addOfGemm(false), bindings(), plain, opts));
  opts.fuse = false;
  ASSERT_TRUE(executeHost(addOfGemm(true), bindings(), unfusedKernels, opts));
  // o = (r + x·w) + r; row 0, column 0: x·w = 1·1 + 2·0.25 + 3·(-2) = -4.5.
  EXPECT_FLOAT_EQ(fused.at("o").f32()[0], 15.5f);
  EXPECT_EQ(values(fused.at("o")), values(plain.at("o")));
  EXPECT_EQ(values(unfusedKernels.at("o")), values(plain.at("o")));
}

/// The plan reader refuses inits the fused forms do not have: on an output
/// that cannot take one, of another type, not yet written, or on a gemm
/// with a bias.
TEST(HostFusion, PlanRefusesInitsOutsideTheFusedForms) {
  auto parse = [](bool bias, const std::string &op, int which) {
    test::PlanBuilder p;
    int x = p.buffer("f32", {2, 3}, "input", "x");
    int w = p.buffer("f32", {3, 4}, "param", "w");
    int b = p.buffer("f32", {4}, "param", "b");
    int r = p.buffer("f32", {2, 4}, "input", "r");
    int r5 = p.buffer("f32", {2, 5}, "input", "r5");
    int late = p.buffer("f32", {2, 4}, "temp");
    int z = p.buffer("f32", {2, 4}, "temp", "", {"z"});
    int init = which == 0 ? r : which == 1 ? r5 : late;
    if (op == "gemm")
      p.step("gemm", bias ? std::vector<int>{x, w, b} : std::vector<int>{x, w}, {z},
             kGemmAttrs, "test", {init});
    else
      p.step(op, {r, r}, {z}, json::object(), "test", {init});
    p.step("add", {r, r}, {late});
    Plan plan;
    return parsePlan(p.text(), plan);
  };
  EXPECT_TRUE(parse(false, "gemm", 0));
  Status st = parse(true, "gemm", 0);
  EXPECT_NE(st.message().find("takes no bias"), std::string::npos) << st.message();
  st = parse(false, "add", 0);
  EXPECT_NE(st.message().find("output 0 of add cannot start from an init"), std::string::npos)
      << st.message();
  st = parse(false, "gemm", 1);
  EXPECT_NE(st.message().find("the init of output 0 (buffer 4) is f32[2, 5]"),
            std::string::npos)
      << st.message();
  st = parse(false, "gemm", 2);
  EXPECT_NE(st.message().find("which no step wrote before"), std::string::npos)
      << st.message();
  // A plan built in memory, not through parsePlan: verifyStepTypes (which
  // both executors run on every step) refuses the same init.
  Plan plan = addOfGemm(false);
  ASSERT_EQ(plan.steps[1].kind, OpKind::Add);
  plan.steps[1].init = {0};
  st = verifyStepTypes(plan, plan.steps[1]);
  EXPECT_NE(st.message().find("output 0 of add cannot start from an init"), std::string::npos)
      << st.message();
}

/// The tied embedding's two gradients: the scatter of embedding_grad starts
/// from the other gradient (the LM head's) and rounds as the add would: the
/// results are the unfused ones bit for bit.
TEST(HostFusion, EmbeddingGradAddsIntoTheOtherGradient) {
  auto build = [](bool fused) {
    test::PlanBuilder p;
    int ids = p.buffer("i64", {1, 3}, "input", "ids");
    int dout = p.buffer("f32", {1, 3, 2}, "input", "dout");
    int head = p.buffer("f32", {4, 2}, "input", "head");
    int z = p.buffer("f32", {4, 2}, "temp");
    int o = p.buffer("f32", {4, 2}, "temp", "", {"o"});
    if (fused) {
      p.step("embedding_grad", {ids, dout}, {z}, json::object(), "test", {head});
    } else {
      int y = p.buffer("f32", {4, 2}, "temp");
      p.step("embedding_grad", {ids, dout}, {y});
      p.step("add", {head, y}, {z});
    }
    p.step("add", {z, head}, {o});
    Plan plan;
    Status st = parsePlan(p.text(), plan);
    EXPECT_TRUE(st) << st.message();
    return plan;
  };
  TensorMap in;
  in["ids"] = Tensor::fromI64({1, 3}, {2, 0, 2});
  in["dout"] = Tensor::fromF32({1, 3, 2}, {0.1f, 0.2f, 1e-8f, 3, 0.3f, -0.4f});
  in["head"] = Tensor::fromF32({4, 2}, {1, 2, 3, 4, 1e8f, 6, 7, 8});
  TensorMap fused, plain;
  ExecOptions opts;
  opts.poisonTemps = true;
  ASSERT_TRUE(executeHost(build(true), in, fused, opts));
  ASSERT_TRUE(executeHost(build(false), in, plain, opts));
  EXPECT_EQ(values(fused.at("o")), values(plain.at("o")));
  // Row 2: (1e8 + float(0.1 + 0.3)) + 1e8, (6 + float(0.2 - 0.4)) + 6.
  EXPECT_EQ(fused.at("o").f32()[4], (1e8f + float(0.1f + double(0.3f))) + 1e8f);
  EXPECT_EQ(fused.at("o").f32()[2], 3.0f + 3.0f); // row 1: no id, the head's alone
}

/// bias_grad, mem_concat_grad and add_layer_norm_grad's gains with inits:
/// the kernel's result plus the init, bit for bit the add's.
TEST(HostFusion, GradientsAddIntoTheirInits) {
  auto build = [](bool fused) {
    test::PlanBuilder p;
    int dy = p.buffer("f32", {2, 3, 4}, "input", "dy");
    int x = p.buffer("f32", {2, 3, 4}, "input", "x");
    int gamma = p.buffer("f32", {4}, "param", "gamma");
    int r4 = p.buffer("f32", {4}, "input", "r4");
    int r2 = p.buffer("f32", {2, 2, 4}, "input", "r2");
    int db = p.buffer("f32", {4}, "temp", "", {"db"});
    int dh = p.buffer("f32", {2, 2, 4}, "temp", "", {"dh"});
    int dsum = p.buffer("f32", {2, 3, 4}, "temp", "", {"dsum"});
    int dg = p.buffer("f32", {4}, "temp", "", {"dg"});
    int dbeta = p.buffer("f32", {4}, "temp", "", {"dbeta"});
    const json eps = {{"eps", 1e-5}};
    if (fused) {
      p.step("bias_grad", {dy}, {db}, json::object(), "test", {r4});
      p.step("mem_concat_grad", {dy}, {dh}, json::object(), "test", {r2});
      p.step("add_layer_norm_grad", {dy, x, x, gamma}, {dsum, dg, dbeta}, eps, "test",
             {-1, r4, r4});
    } else {
      auto temp = [&](std::vector<int64_t> shape) { return p.buffer("f32", shape, "temp"); };
      int y1 = temp({4}), y2 = temp({2, 2, 4}), y3 = temp({4}), y4 = temp({4});
      p.step("bias_grad", {dy}, {y1});
      p.step("add", {r4, y1}, {db});
      p.step("mem_concat_grad", {dy}, {y2});
      p.step("add", {r2, y2}, {dh});
      p.step("add_layer_norm_grad", {dy, x, x, gamma}, {dsum, y3, y4}, eps);
      p.step("add", {r4, y3}, {dg});
      p.step("add", {r4, y4}, {dbeta});
    }
    Plan plan;
    Status st = parsePlan(p.text(), plan);
    EXPECT_TRUE(st) << st.message();
    return plan;
  };
  TensorMap in;
  std::vector<float> v(24), w(24);
  for (int i = 0; i < 24; ++i)
    v[size_t(i)] = 0.1f * float(i % 7) - 0.3f, w[size_t(i)] = 0.05f * float(i % 5) + 1;
  in["dy"] = Tensor::fromF32({2, 3, 4}, v);
  in["x"] = Tensor::fromF32({2, 3, 4}, w);
  in["gamma"] = Tensor::fromF32({4}, {1, 0.5f, 2, -1});
  in["r4"] = Tensor::fromF32({4}, {1e-3f, 7, -2, 0.125f});
  in["r2"] = Tensor::fromF32({2, 2, 4}, std::vector<float>(16, 0.3f));
  TensorMap fused, plain;
  ExecOptions opts;
  opts.poisonTemps = true;
  ASSERT_TRUE(executeHost(build(true), in, fused, opts));
  ASSERT_TRUE(executeHost(build(false), in, plain, opts));
  for (const char *name : {"db", "dh", "dsum", "dg", "dbeta"})
    EXPECT_EQ(values(fused.at(name)), values(plain.at(name))) << name;
}

/// The GELU epilogues: gemm returning (gelu(p), p) is gemm + activation;
/// gemm pre p {activation_grad} returning (dP, db) is gemm,
/// activation_grad and bias_grad — the same kernels, the same bits.
TEST(HostFusion, GeluEpiloguesAreTheStepsTheyReplace) {
  auto build = [](bool fused) {
    test::PlanBuilder p;
    int x = p.buffer("f32", {2, 3}, "input", "x");
    int w = p.buffer("f32", {3, 4}, "param", "w");
    int b = p.buffer("f32", {4}, "param", "b");
    int wt = p.buffer("f32", {4, 3}, "param", "wt");
    int a = p.buffer("f32", {2, 4}, "temp", "", {"a"});
    int pre = p.buffer("f32", {2, 4}, "temp", "", {"pre"});
    int dp = p.buffer("f32", {2, 4}, "temp", "", {"dp"});
    int db = p.buffer("f32", {4}, "temp", "", {"db"});
    json gelu = kGemmAttrs;
    gelu["activation"] = "gelu_tanh";
    json act = {{"activation", "gelu_tanh"}};
    if (fused) {
      p.step("gemm", {x, w, b}, {a, pre}, gelu);
      json dgelu = kGemmAttrs;
      dgelu["transpose_w"] = true;
      dgelu["activation_grad"] = "gelu_tanh";
      p.step("gemm", {x, wt, pre}, {dp, db}, dgelu);
    } else {
      int da = p.buffer("f32", {2, 4}, "temp");
      p.step("gemm", {x, w, b}, {pre}, kGemmAttrs);
      p.step("activation", {pre}, {a}, act);
      json t = kGemmAttrs;
      t["transpose_w"] = true;
      p.step("gemm", {x, wt}, {da}, t);
      p.step("activation_grad", {da, pre}, {dp}, act);
      p.step("bias_grad", {dp}, {db});
    }
    Plan plan;
    Status st = parsePlan(p.text(), plan);
    EXPECT_TRUE(st) << st.message();
    return plan;
  };
  TensorMap in = bindings();
  in["wt"] = Tensor::fromF32({4, 3}, {0.5f, -1, 2, 1, 0, -0.5f, 3, 1, 1, -2, 0.25f, 1});
  TensorMap fused, plain;
  ExecOptions opts;
  opts.poisonTemps = true;
  ASSERT_TRUE(executeHost(build(true), in, fused, opts));
  ASSERT_TRUE(executeHost(build(false), in, plain, opts));
  for (const char *name : {"a", "pre", "dp", "db"})
    EXPECT_EQ(values(fused.at(name)), values(plain.at(name))) << name;
}

/// The LayerNorm dropouts: add_layer_norm and its gradient dropping their x
/// themselves, the gradient's output 3 the dropout of dsum — bit for bit
/// the dropout steps they replace (same hash, site and seed).
TEST(HostFusion, LayerNormDropoutsAreTheDropoutStepsTheyReplace) {
  auto build = [](bool fused) {
    test::PlanBuilder p;
    int h = p.buffer("f32", {2, 3, 4}, "input", "h");
    int r = p.buffer("f32", {2, 3, 4}, "input", "r");
    int gamma = p.buffer("f32", {4}, "param", "gamma");
    int dy = p.buffer("f32", {2, 3, 4}, "input", "dy");
    auto out = [&](const char *name, std::vector<int64_t> shape) {
      return p.buffer("f32", shape, "temp", "", {name});
    };
    int ln = out("ln", {2, 3, 4}), dsum = out("dsum", {2, 3, 4}), dg = out("dg", {4}),
        db = out("db", {4}), g = out("g", {2, 3, 4});
    const json drop = {{"rate", 0.25}, {"dropout_site", 3}};
    if (fused) {
      json attrs = {{"eps", 1e-5}, {"x_dropout_rate", 0.25}, {"x_dropout_site", 3}};
      p.step("add_layer_norm", {h, r, gamma, gamma}, {ln}, attrs);
      attrs["dsum_dropout_rate"] = 0.25;
      attrs["dsum_dropout_site"] = 3;
      p.step("add_layer_norm_grad", {dy, h, r, gamma}, {dsum, dg, db, g}, attrs);
    } else {
      int y = p.buffer("f32", {2, 3, 4}, "temp");
      p.step("dropout", {h}, {y}, drop);
      p.step("add_layer_norm", {y, r, gamma, gamma}, {ln}, {{"eps", 1e-5}});
      p.step("add_layer_norm_grad", {dy, y, r, gamma}, {dsum, dg, db}, {{"eps", 1e-5}});
      p.step("dropout", {dsum}, {g}, drop);
    }
    Plan plan;
    Status st = parsePlan(p.text(), plan);
    EXPECT_TRUE(st) << st.message();
    return plan;
  };
  TensorMap in;
  std::vector<float> v(24), w(24), d(24);
  for (int i = 0; i < 24; ++i) {
    v[size_t(i)] = 0.3f * float(i % 5) - 0.5f;
    w[size_t(i)] = 0.1f * float(i % 7);
    d[size_t(i)] = 0.2f * float(i % 3) - 0.1f;
  }
  in["h"] = Tensor::fromF32({2, 3, 4}, v);
  in["r"] = Tensor::fromF32({2, 3, 4}, w);
  in["dy"] = Tensor::fromF32({2, 3, 4}, d);
  in["gamma"] = Tensor::fromF32({4}, {1, 0.5f, 2, -1});
  TensorMap fused, plain;
  ExecOptions opts;
  opts.seed = 11;
  opts.poisonTemps = true;
  ASSERT_TRUE(executeHost(build(true), in, fused, opts));
  ASSERT_TRUE(executeHost(build(false), in, plain, opts));
  for (const char *name : {"ln", "dsum", "dg", "db", "g"})
    EXPECT_EQ(values(fused.at(name)), values(plain.at(name))) << name;
  // The dropout dropped something: g is not dsum scaled alone.
  size_t zeros = 0;
  for (float x : values(fused.at("g")))
    zeros += x == 0.0f;
  EXPECT_GT(zeros, 0u);

  // The reader: a fused dropout's rate without its site, and output 3
  // without the attributes, are each one error.
  test::PlanBuilder p;
  int x = p.buffer("f32", {2, 4}, "input", "x");
  int gm = p.buffer("f32", {4}, "param", "gamma");
  int o = p.buffer("f32", {2, 4}, "temp", "", {"o"});
  p.step("add_layer_norm", {x, x, gm, gm}, {o}, {{"eps", 1e-5}, {"x_dropout_rate", 0.1}});
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  EXPECT_NE(st.message().find("attributes 'x_dropout_rate' and 'x_dropout_site' come together"),
            std::string::npos)
      << st.message();
  test::PlanBuilder q;
  x = q.buffer("f32", {2, 4}, "input", "x");
  gm = q.buffer("f32", {4}, "param", "gamma");
  std::vector<int> outs = {q.buffer("f32", {2, 4}, "temp", "", {"a"}),
                           q.buffer("f32", {4}, "temp", "", {"b"}),
                           q.buffer("f32", {4}, "temp", "", {"c"}),
                           q.buffer("f32", {2, 4}, "temp", "", {"d"})};
  q.step("add_layer_norm_grad", {x, x, x, gm}, outs, {{"eps", 1e-5}});
  st = parsePlan(q.text(), plan);
  EXPECT_NE(st.message().find("has 4 outputs but no 'dsum_dropout_rate'"), std::string::npos)
      << st.message();
}

} // namespace host_fusion
