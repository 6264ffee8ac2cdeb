//===- TrainerTest.cpp - runtime/train/Trainer.h --------------------------===//
//
// The training semantics shared by `xlnetc train`, `xlnetc-run train` and
// the benchmarks: the state's names and carry, the fresh state, seeds, the
// ranks' weights and global loss, the initialisation, the fault hooks.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/Trainer.h"

#include "runtime/train/StateNames.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;

namespace {

StepState smallState(bool hasMems) {
  return StepState(ParamShapes{{"a", {2}}, {"b", {3, 1}}}, /*nLayer=*/2, hasMems);
}

TEST(Trainer, CarryHandsEveryStateToItsNextValue) {
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(smallState(true).carry(),
            (Pairs{{"new.a", "a"},
                   {"new.adam_m.a", "adam_m.a"},
                   {"new.adam_v.a", "adam_v.a"},
                   {"new.b", "b"},
                   {"new.adam_m.b", "adam_m.b"},
                   {"new.adam_v.b", "adam_v.b"},
                   {"new_mems.0", "mems.0"},
                   {"new_mems.1", "mems.1"}}));
  EXPECT_EQ(smallState(false).carry().size(), 6u);
  EXPECT_EQ(smallState(true).numParams(), 5);
}

TEST(Trainer, FreshStateHasZeroMomentsAndMemory) {
  StepState s = smallState(true);
  TensorMap params;
  params["a"] = Tensor::fromF32({2}, {1.f, 2.f});
  params["b"] = Tensor::fromF32({3, 1}, {3.f, 4.f, 5.f});
  s.startFresh(std::move(params), {4, 1, 2});
  const TensorMap &m = s.bindings();
  EXPECT_EQ(m.at("a").f32()[1], 2.f);
  EXPECT_EQ(m.at(names::adamM("b")).shape, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(m.at(names::adamV("b")).f32()[2], 0.f);
  EXPECT_EQ(m.at("mems.1").shape, (std::vector<int64_t>{4, 1, 2}));

  // A step's inputs: the batch without raw.*, and the counter.
  TensorMap batch;
  batch["input_k"] = Tensor::fromI64({1}, {7});
  batch["raw.tokens"] = Tensor::fromI64({1}, {7});
  s.bindInputs(std::move(batch), 12);
  EXPECT_EQ(s.bindings().count("raw.tokens"), 0u);
  EXPECT_EQ(s.bindings().at("step").i64()[0], 12);

  // A snapshot while everything is still bound here.
  Executor executor;
  TrainState snap;
  ASSERT_TRUE(s.snapshot(executor, snap));
  EXPECT_EQ(snap.params.size(), 2u);
  EXPECT_EQ(snap.adamM.size(), 2u);
  EXPECT_EQ(snap.mems.size(), 2u);
  EXPECT_EQ(snap.params.at("b").f32()[2], 5.f);

  // Handed to the executor: the carried state is bound here no more, the
  // batch and the counter still are.
  s.handedToExecutor();
  std::set<std::string> left;
  for (const auto &[name, t] : s.bindings())
    left.insert(name);
  EXPECT_EQ(left, (std::set<std::string>{"input_k", "step"}));
}

TEST(Trainer, RestoreTakesEachLayersRowsThroughTheSplit) {
  StepState s = smallState(true);
  TrainState ckpt;
  ckpt.params["a"] = Tensor::fromF32({2}, {1.f, 2.f});
  ckpt.adamM["a"] = Tensor::fromF32({2}, {3.f, 4.f});
  ckpt.adamV["a"] = Tensor::fromF32({2}, {5.f, 6.f});
  ckpt.mems["mems.0"] = Tensor::fromF32({1, 2, 1}, {8.f, 9.f});
  auto secondRow = [](const Tensor &global, Tensor &local) {
    local = Tensor::fromF32({1, 1, 1}, {global.f32()[1]});
    return Status::ok();
  };
  ASSERT_TRUE(s.restore(std::move(ckpt), secondRow));
  EXPECT_EQ(s.bindings().at("adam_v.a").f32()[1], 6.f);
  EXPECT_EQ(s.bindings().at("mems.0").f32()[0], 9.f);

  TrainState bad;
  bad.mems["mems.1"] = Tensor::fromF32({1}, {0.f});
  Status st = s.restore(std::move(bad), [](const Tensor &, Tensor &) {
    return Status::error("3 rows do not split over 2 ranks");
  });
  EXPECT_EQ(st.message(), "mems.1: 3 rows do not split over 2 ranks");
}

TEST(Trainer, RanksAreWeightedByTheTokensTheyPredict) {
  EXPECT_EQ(rankWeights({3, 1}), (std::vector<double>{0.75, 0.25}));
  EXPECT_EQ(rankWeights({0, 0}), (std::vector<double>{0.5, 0.5}));
  EXPECT_EQ(rankWeights({3, 1}, 2.0), (std::vector<double>{1.5, 0.5}));
  EXPECT_DOUBLE_EQ(globalLoss({2.0, 4.0}, {3, 1}), 2.5);
}

TEST(Trainer, SeedsDependOnTheRunSeedAndTheStepOnly) {
  EXPECT_EQ(stepSeed(42, 7), stepSeed(42, 7));
  EXPECT_NE(stepSeed(42, 7), stepSeed(42, 8));
  EXPECT_NE(stepSeed(42, 7), stepSeed(43, 7));
}

TEST(Trainer, InitialParametersFollowXLNetsInit) {
  Plan plan;
  auto param = [&](const char *name, std::vector<int64_t> shape) {
    Buffer b;
    b.id = int(plan.buffers.size());
    b.role = Buffer::Param;
    b.name = name;
    b.shape = std::move(shape);
    plan.buffers.push_back(b);
  };
  param("layer.0.ff.layer_norm.weight", {4});
  param("layer.0.ff.layer_norm.bias", {4});
  param("layer.0.ff.layer_1.weight", {100, 100});
  param("layer.0.rel_attn.r_w_bias", {2, 3});
  TensorMap p = initialParameters(plan, 0.02, 1);
  EXPECT_EQ(p.at("layer.0.ff.layer_norm.weight").f32()[3], 1.f);
  EXPECT_EQ(p.at("layer.0.ff.layer_norm.bias").f32()[3], 0.f);
  EXPECT_NE(p.at("layer.0.rel_attn.r_w_bias").f32()[0], 0.f);
  const Tensor &w = p.at("layer.0.ff.layer_1.weight");
  double sum2 = 0;
  for (int64_t i = 0; i < w.numel(); ++i)
    sum2 += double(w.f32()[i]) * w.f32()[i];
  EXPECT_NEAR(std::sqrt(sum2 / double(w.numel())), 0.02, 0.001);
  TensorMap again = initialParameters(plan, 0.02, 1);
  EXPECT_EQ(std::memcmp(again.at("layer.0.ff.layer_1.weight").bytes(), w.bytes(),
                        size_t(w.numel()) * 4),
            0);
}

TEST(Trainer, FaultHooksComeFromTheEnvironment) {
  ::setenv("XLNETC_FAULT_KILL_RANK", "1:5", 1);
  ::setenv("XLNETC_FAULT_NAN_AT_STEP", "2", 1);
  ::setenv("XLNETC_FAULT_REDUCE_SCALE", "4", 1);
  ::setenv("XLNETC_FAULT_BADID_RANK", "0:2", 1);
  FaultHooks h = FaultHooks::fromEnvironment();
  for (const char *v : {"XLNETC_FAULT_KILL_RANK", "XLNETC_FAULT_NAN_AT_STEP",
                        "XLNETC_FAULT_REDUCE_SCALE", "XLNETC_FAULT_BADID_RANK"})
    ::unsetenv(v);
  EXPECT_TRUE(h.kill.at(1, 5));
  EXPECT_FALSE(h.kill.at(0, 5));
  EXPECT_FALSE(h.hang.at(-1, -1)); // unset: never
  EXPECT_EQ(h.reduceScale, 4.0);
  EXPECT_EQ(FaultHooks::fromEnvironment().reduceScale, 1.0);
  EXPECT_FALSE(FaultHooks::fromEnvironment().nanAtStep.has_value());

  // Step 2 on rank 0: mask_emb poisoned, an id outside the vocabulary.
  StepState s(ParamShapes{{"transformer.mask_emb", {1, 1, 2}}}, 1, false);
  TensorMap params;
  params["transformer.mask_emb"] = Tensor::fromF32({1, 1, 2}, {0.5f, 0.5f});
  s.startFresh(std::move(params), {});
  TensorMap batch;
  batch["input_k"] = Tensor::fromI64({2}, {3, 4});
  s.bindInputs(std::move(batch), 1);
  Executor executor;
  ASSERT_TRUE(h.perturbInputs(s, executor, /*rank=*/0, /*step=*/2, /*nToken=*/32));
  EXPECT_TRUE(std::isnan(s.bindings().at("transformer.mask_emb").f32()[0]));
  EXPECT_EQ(s.bindings().at("input_k").i64()[0], 32);
}

} // namespace
