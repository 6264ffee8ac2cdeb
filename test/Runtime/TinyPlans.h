//===- TinyPlans.h - Small hand-built plans for executor tests -*- C++ -*-===//
//
// Plans small enough to check by hand, shared by the host executor's tests
// (ExecutorTest.cpp) and the device executor's (test/Device/
// DeviceExecutorTest.cpp), which runs the same plans on the emulated device.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_TEST_RUNTIME_TINYPLANS_H
#define XLNETC_TEST_RUNTIME_TINYPLANS_H

#include "runtime/plan/Plan.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

namespace xlnetc::rt::test {

using nlohmann::json;

/// embedding -> tied output projection -> lm_loss, V = 4, D = 2, B = 1, S = 2.
inline Plan tinyLmPlan() {
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

inline TensorMap tinyBindings() {
  TensorMap m;
  m["input_k"] = Tensor::fromI64({1, 2}, {2, 1});
  m["emb"] = Tensor::fromF32({4, 2}, {1, 0, 0, 1, 1, 1, 0, 0});
  m["target"] = Tensor::fromI64({1, 2}, {2, 0});
  m["target_mask"] = Tensor::fromF32({1, 2}, {1, 1});
  return m;
}

/// One training step of the tiny LM: forward, lm_loss_grad, the tied
/// embedding's two gradients (gemm_wgrad of the head, embedding_grad of the
/// input through the head's dx gemm) summed with add, then global_norm,
/// lr_schedule and adam_update (three outputs).
inline Plan tinyTrainPlan() {
  PlanBuilder p;
  int ids = p.buffer("i64", {1, 2}, "input", "input_k");
  int emb = p.buffer("f32", {4, 2}, "param", "emb");
  int tgt = p.buffer("i64", {1, 2}, "input", "target");
  int msk = p.buffer("f32", {1, 2}, "input", "target_mask");
  int m = p.buffer("f32", {4, 2}, "input", "m.emb");
  int v = p.buffer("f32", {4, 2}, "input", "v.emb");
  int step = p.buffer("i64", {}, "input", "step");
  int h = p.buffer("f32", {1, 2, 2}, "temp");
  int logits = p.buffer("f32", {1, 2, 4}, "temp");
  int loss = p.buffer("f32", {}, "temp", "", {"loss"});
  int ptl = p.buffer("f32", {1, 2}, "temp");
  int dlogits = p.buffer("f32", {1, 2, 4}, "temp");
  int dHead = p.buffer("f32", {4, 2}, "temp");
  int dh = p.buffer("f32", {1, 2, 2}, "temp");
  int dIn = p.buffer("f32", {4, 2}, "temp");
  int grad = p.buffer("f32", {4, 2}, "temp", "", {"grad"});
  int norm = p.buffer("f32", {}, "temp", "", {"grad_norm"});
  int lr = p.buffer("f32", {}, "temp", "", {"lr"});
  int newEmb = p.buffer("f32", {4, 2}, "temp", "", {"new.emb"});
  int newM = p.buffer("f32", {4, 2}, "temp", "", {"new.m.emb"});
  int newV = p.buffer("f32", {4, 2}, "temp", "", {"new.v.emb"});
  json head = {{"k_rank", 1}, {"transpose_w", true}};
  p.step("embedding", {ids, emb}, {h}, json::object(), "word emb");
  p.step("gemm", {h, emb}, {logits},
         {{"k_rank", 1}, {"transpose_w", true}, {"activation", "none"}},
         "lm head");
  p.step("lm_loss", {logits, tgt, msk}, {loss, ptl}, json::object(), "loss");
  p.step("lm_loss_grad", {logits, tgt, msk}, {dlogits}, json::object(),
         "d loss");
  p.step("gemm_wgrad", {h, dlogits}, {dHead}, head, "d lm head w");
  p.step("gemm", {dlogits, emb}, {dh},
         {{"k_rank", 1}, {"transpose_w", false}, {"activation", "none"}},
         "d lm head x");
  p.step("embedding_grad", {ids, dh}, {dIn}, json::object(), "d word emb");
  p.step("add", {dHead, dIn}, {grad}, json::object(), "tied grad");
  p.step("global_norm", {grad}, {norm}, json::object(), "norm");
  p.step("lr_schedule", {step}, {lr},
         {{"learning_rate", 0.1},
          {"warmup_steps", 4},
          {"train_steps", 10},
          {"min_lr_ratio", 0.0},
          {"decay", "poly"}},
         "lr");
  p.step("adam_update", {emb, grad, m, v, lr, norm, step},
         {newEmb, newM, newV},
         {{"beta1", 0.9},
          {"beta2", 0.999},
          {"epsilon", 1e-6},
          {"clip", 0.5},
          {"weight_decay", 0.0},
          {"bias_correction", true}},
         "adam emb");
  Plan plan;
  Status s = parsePlan(p.text(), plan);
  EXPECT_TRUE(s) << s.message();
  return plan;
}

} // namespace xlnetc::rt::test

#endif // XLNETC_TEST_RUNTIME_TINYPLANS_H
