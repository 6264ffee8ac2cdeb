//===- OptimizerTest.cpp - lr_schedule, global_norm, adam_update ----------===//
//
// The schedule against numbers computed by hand from docs/Plan.md; Adam
// against a double-precision reference loop written out here.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;
using xlnetc::rt::test::values;

namespace {

/// lr_schedule through the kernel (f32 output).
float lrAt(int64_t step, const LrScheduleArgs &a) {
  Tensor out = Tensor::zeros(DType::F32, {});
  Status s = lrSchedule(Tensor::fromI64({}, {step}), a, out);
  EXPECT_TRUE(s) << s.message();
  return out.f32()[0];
}

LrScheduleArgs schedule(LrDecay decay) {
  // lr 1e-3, warmup 100, train 1100 (1000 decay steps), floor 1e-4.
  LrScheduleArgs a;
  a.learningRate = 1e-3;
  a.warmupSteps = 100;
  a.trainSteps = 1100;
  a.minLrRatio = 0.1;
  a.decay = decay;
  return a;
}

TEST(OptimizerTest, LrSchedulePoly) {
  LrScheduleArgs a = schedule(LrDecay::Poly);
  EXPECT_FLOAT_EQ(lrAt(0, a), 0.0f);       // warmup starts at 0
  EXPECT_FLOAT_EQ(lrAt(50, a), 5e-4f);     // 50/100 · 1e-3
  EXPECT_FLOAT_EQ(lrAt(99, a), 9.9e-4f);   // last warmup step
  EXPECT_FLOAT_EQ(lrAt(100, a), 1e-3f);    // t = 0
  EXPECT_FLOAT_EQ(lrAt(350, a), 7.75e-4f); // t = .25: 9e-4 · .75 + 1e-4
  EXPECT_FLOAT_EQ(lrAt(600, a), 5.5e-4f);  // t = .5: 9e-4 · .5 + 1e-4
  EXPECT_FLOAT_EQ(lrAt(1100, a), 1e-4f);   // t = 1: the floor
  EXPECT_FLOAT_EQ(lrAt(5000, a), 1e-4f);   // stays at the floor
}

TEST(OptimizerTest, LrScheduleCos) {
  LrScheduleArgs a = schedule(LrDecay::Cos);
  EXPECT_FLOAT_EQ(lrAt(50, a), 5e-4f);  // warmup as for poly
  EXPECT_FLOAT_EQ(lrAt(100, a), 1e-3f); // t = 0: cos 0 = 1
  // t = .25: 1e-3 · (.9 · .5 · (1 + cos(π/4)) + .1)
  //        = 1e-3 · (.45 · 1.7071067811865476 + .1) = 8.681980515339464e-4
  EXPECT_FLOAT_EQ(lrAt(350, a), 8.681980515339464e-4f);
  // t = .5: 1e-3 · (.45 · 1 + .1)
  EXPECT_FLOAT_EQ(lrAt(600, a), 5.5e-4f);
  // t = .75: 1e-3 · (.45 · (1 - .7071067811865476) + .1) = 2.318019484660536e-4
  EXPECT_FLOAT_EQ(lrAt(850, a), 2.318019484660536e-4f);
  EXPECT_FLOAT_EQ(lrAt(1100, a), 1e-4f);
  EXPECT_FLOAT_EQ(lrAt(2000, a), 1e-4f);
}

TEST(OptimizerTest, LrScheduleEdgeCases) {
  LrScheduleArgs a = schedule(LrDecay::Poly);
  // No warmup: the first step is the full rate.
  a.warmupSteps = 0;
  EXPECT_FLOAT_EQ(lrAt(0, a), 1e-3f);
  EXPECT_FLOAT_EQ(lrAt(550, a), 5.5e-4f); // t = 550/1100 = .5
  // train_steps <= warmup_steps: t = 1 after the warmup.
  a.warmupSteps = 10;
  a.trainSteps = 5;
  EXPECT_FLOAT_EQ(lrAt(3, a), 3e-4f);
  EXPECT_FLOAT_EQ(lrAt(10, a), 1e-4f);
  a.decay = LrDecay::Cos;
  EXPECT_FLOAT_EQ(lrAt(10, a), 1e-4f);
  Tensor out = Tensor::zeros(DType::F32, {});
  EXPECT_EQ(lrSchedule(Tensor::fromI64({}, {-1}), a, out).message(),
            "step -1 is negative");
}

TEST(OptimizerTest, GlobalNorm) {
  Tensor out = Tensor::zeros(DType::F32, {});
  Tensor a = Tensor::fromF32({2}, {3, 4}), b = Tensor::fromF32({1, 1}, {12});
  globalNorm({&a, &b}, out);
  EXPECT_FLOAT_EQ(out.f32()[0], 13.0f); // sqrt(9 + 16 + 144)
  globalNorm({&a}, out);
  EXPECT_FLOAT_EQ(out.f32()[0], 5.0f);
  // Many chunks: 100000 values 0.5 and 40000 values -0.25:
  // sqrt(25000 + 2500) = sqrt(27500).
  Tensor big = Tensor::zeros(DType::F32, {100000});
  Tensor big2 = Tensor::zeros(DType::F32, {200, 200});
  for (int64_t i = 0; i < big.numel(); ++i)
    big.f32()[i] = 0.5f;
  for (int64_t i = 0; i < big2.numel(); ++i)
    big2.f32()[i] = -0.25f;
  globalNorm({&big, &a, &big2}, out);
  EXPECT_FLOAT_EQ(out.f32()[0], float(std::sqrt(27500.0 + 25.0)));
}

/// Double-precision reference of three Adam steps, state kept in double.
struct AdamReference {
  std::vector<double> p, m, v;
  void step(const std::vector<float> &grad, double lr, double norm,
            int64_t step, const AdamArgs &a) {
    double c = a.clip > 0 ? a.clip / std::max(norm, a.clip) : 1.0;
    for (size_t i = 0; i < p.size(); ++i) {
      double g = double(grad[i]) * c;
      m[i] = a.beta1 * m[i] + (1 - a.beta1) * g;
      v[i] = a.beta2 * v[i] + (1 - a.beta2) * g * g;
      if (a.biasCorrection) {
        double t = double(step + 1);
        double lrT = lr * std::sqrt(1 - std::pow(a.beta2, t)) /
                     (1 - std::pow(a.beta1, t));
        p[i] -= lrT * m[i] / (std::sqrt(v[i]) + a.epsilon);
      } else {
        p[i] -=
            lr * (m[i] / (std::sqrt(v[i]) + a.epsilon) + a.weightDecay * p[i]);
      }
    }
  }
};

/// Runs three adam_update steps from step 5 and compares with the reference.
/// gradScale sets the gradient norm relative to clip.
void runAdam(const AdamArgs &a, double gradScale, bool expectClipped) {
  std::mt19937 rng(51);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t n = 7;
  std::vector<float> p0(n), m0(n), v0(n);
  for (int64_t i = 0; i < n; ++i) {
    p0[i] = float(u(rng));
    m0[i] = float(0.1 * u(rng));
    v0[i] = float(0.01 * (1 + u(rng)));
  }
  Tensor param = Tensor::fromF32({n}, p0), m = Tensor::fromF32({n}, m0),
         v = Tensor::fromF32({n}, v0);
  AdamReference ref{
      {p0.begin(), p0.end()}, {m0.begin(), m0.end()}, {v0.begin(), v0.end()}};
  const float lr = 2e-3f;
  for (int64_t step = 5; step < 8; ++step) {
    std::vector<float> g(n);
    double sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      g[i] = float(gradScale * u(rng));
      sq += double(g[i]) * g[i];
    }
    float norm = float(std::sqrt(sq));
    EXPECT_EQ(a.clip > 0 && norm > a.clip, expectClipped) << "norm " << norm;
    Tensor pOut = Tensor::zeros(DType::F32, {n}), mOut = pOut, vOut = pOut;
    Status s =
        adamUpdate(param, Tensor::fromF32({n}, g), m, v,
                   Tensor::fromF32({}, {lr}), Tensor::fromF32({}, {norm}),
                   Tensor::fromI64({}, {step}), a, pOut, mOut, vOut);
    ASSERT_TRUE(s) << s.message();
    ref.step(g, lr, norm, step, a);
    for (int64_t i = 0; i < n; ++i) {
      EXPECT_NEAR(pOut.f32()[i], ref.p[i], 2e-6)
          << "step " << step << " i " << i;
      EXPECT_NEAR(mOut.f32()[i], ref.m[i], 1e-6 * (1 + std::abs(ref.m[i])));
      EXPECT_NEAR(vOut.f32()[i], ref.v[i], 1e-6 * std::abs(ref.v[i]));
    }
    param = pOut;
    m = mOut;
    v = vOut;
  }
}

AdamArgs adamArgs(bool biasCorrection, double weightDecay, double clip) {
  AdamArgs a;
  a.beta1 = 0.9;
  a.beta2 = 0.999;
  a.epsilon = 1e-6;
  a.clip = clip;
  a.weightDecay = weightDecay;
  a.biasCorrection = biasCorrection;
  return a;
}

TEST(OptimizerTest, AdamBiasCorrectedClipped) {
  runAdam(adamArgs(true, 0.0, 1.0), /*gradScale=*/3.0, /*clipped=*/true);
}

TEST(OptimizerTest, AdamBiasCorrectedUnclipped) {
  runAdam(adamArgs(true, 0.0, 1.0), /*gradScale=*/0.1, /*clipped=*/false);
}

TEST(OptimizerTest, AdamWeightDecayClipped) {
  runAdam(adamArgs(false, 0.01, 1.0), /*gradScale=*/3.0, /*clipped=*/true);
}

TEST(OptimizerTest, AdamWeightDecayUnclipped) {
  runAdam(adamArgs(false, 0.01, 1.0), /*gradScale=*/0.1, /*clipped=*/false);
  // clip <= 0 disables clipping whatever the norm.
  runAdam(adamArgs(false, 0.01, 0.0), /*gradScale=*/3.0, /*clipped=*/false);
}

TEST(OptimizerTest, AdamFirstStepByHand) {
  // Step 0 from zero moments with bias correction: m' = .1 g, v' = .001 g²,
  // lr_t = lr · sqrt(.001) / .1, so param' = param - lr · g / (|g| + ε/√.001)
  // = param - lr · sign(g) up to ε. Gradient (3, -4, 0): norm 5 > clip 2.5
  // halves it to (1.5, -2, 0) — the sign is unchanged, the zero stays zero.
  AdamArgs a = adamArgs(true, 0.0, 2.5);
  a.epsilon = 0.0;
  Tensor param = Tensor::fromF32({3}, {1, 1, 1});
  Tensor zero = Tensor::zeros(DType::F32, {3});
  Tensor pOut = zero, mOut = zero, vOut = zero;
  // ε = 0 and g = 0 give 0/0 for the last element: use it only for 2.
  Tensor g = Tensor::fromF32({3}, {3, -4, 0});
  ASSERT_TRUE(adamUpdate(param, g, zero, zero, Tensor::fromF32({}, {0.5f}),
                         Tensor::fromF32({}, {5.0f}), Tensor::fromI64({}, {0}),
                         a, pOut, mOut, vOut));
  EXPECT_FLOAT_EQ(pOut.f32()[0], 0.5f);
  EXPECT_FLOAT_EQ(pOut.f32()[1], 1.5f);
  EXPECT_FLOAT_EQ(mOut.f32()[0], 0.15f);
  EXPECT_FLOAT_EQ(mOut.f32()[1], -0.2f);
  EXPECT_FLOAT_EQ(vOut.f32()[0], 0.001f * 2.25f);
  EXPECT_FLOAT_EQ(vOut.f32()[1], 0.001f * 4.0f);
  EXPECT_EQ(mOut.f32()[2], 0.0f);
  Status s = adamUpdate(param, g, zero, zero, Tensor::fromF32({}, {0.5f}),
                        Tensor::fromF32({}, {5.0f}), Tensor::fromI64({}, {-3}),
                        a, pOut, mOut, vOut);
  EXPECT_EQ(s.message(), "step -3 is negative");
}

} // namespace
