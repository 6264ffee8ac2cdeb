//===- GemmLoweringTest.cpp - Plan gemm steps as GEMM calls ---------------===//
//
// Every form of a plan's gemm / gemm_wgrad step (k_rank 1 and 2, transpose_w,
// with and without bias, every activation) lowered to one GemmDesc and run
// through Device::gemm on the emulated device (plus the follow-up activation,
// here the host's), against the host executor's kernels.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/Device.h"
#include "target/cuda/GemmLowering.h"
#include "runtime/host/Kernels.h"

#include <gtest/gtest.h>

#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;

namespace {

/// A one-step plan: buffers for the operands and the output.
struct OneStep {
  Plan plan;
  std::vector<Tensor> values; ///< by buffer id (inputs random, output zero)
};

OneStep makeStep(OpKind kind, const std::vector<std::vector<int64_t>> &ins,
                 const std::vector<int64_t> &outShape, const StepAttrs &attrs,
                 uint32_t seed) {
  OneStep s;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Step step;
  step.kind = kind;
  step.op = opName(kind);
  step.loc = "test";
  step.attrs = attrs;
  for (const auto &shape : ins) {
    Buffer b;
    b.id = int(s.plan.buffers.size());
    b.shape = shape;
    b.role = Buffer::Input;
    b.name = "in" + std::to_string(b.id);
    s.plan.buffers.push_back(b);
    Tensor t = Tensor::zeros(DType::F32, shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.f32()[i] = u(rng);
    s.values.push_back(std::move(t));
    step.in.push_back(b.id);
  }
  Buffer o;
  o.id = int(s.plan.buffers.size());
  o.shape = outShape;
  s.plan.buffers.push_back(o);
  s.values.push_back(Tensor::zeros(DType::F32, outShape));
  step.out.push_back(o.id);
  s.plan.steps.push_back(step);
  return s;
}

/// Runs the lowered call on `dev` and returns the output.
Tensor runLowered(Device &dev, const OneStep &s) {
  const Step &step = s.plan.steps[0];
  EXPECT_TRUE(verifyStepTypes(s.plan, step).isOk());
  GemmStepCall call;
  Status st = lowerGemmStep(s.plan, step, call);
  EXPECT_TRUE(st.isOk()) << st.message();
  std::vector<DevPtr> ptr(s.values.size(), 0);
  for (size_t i = 0; i < s.values.size(); ++i) {
    EXPECT_TRUE(dev.alloc(s.values[i].nbytes(), ptr[i]).isOk());
    EXPECT_TRUE(dev.upload(ptr[i], s.values[i].bytes(), s.values[i].nbytes()).isOk());
  }
  GemmOperands ops;
  ops.a = ptr[size_t(call.a)];
  ops.b = ptr[size_t(call.b)];
  ops.d = ptr[size_t(call.out)];
  if (call.bias >= 0)
    ops.bias = ptr[size_t(call.bias)];
  st = dev.gemm(call.desc, ops, "test");
  EXPECT_TRUE(st.isOk()) << st.message();
  Tensor out = s.values.back();
  EXPECT_TRUE(dev.download(out.bytes(), ops.d, out.nbytes()).isOk());
  for (DevPtr p : ptr)
    dev.free(p);
  if (call.followUp != Activation::None) {
    Tensor pre = out;
    host::applyActivation(pre, call.followUp, out);
  }
  return out;
}

double relError(const Tensor &got, const Tensor &want) {
  double err = 0, scale = 1e-30;
  for (int64_t i = 0; i < want.numel(); ++i) {
    err = std::max(err, double(std::fabs(got.f32()[i] - want.f32()[i])));
    scale = std::max(scale, double(std::fabs(want.f32()[i])));
  }
  return err / scale;
}

class GemmLowering : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  }
  std::unique_ptr<Device> dev;
};

TEST_F(GemmLowering, ForwardGemmEveryForm) {
  uint32_t seed = 1;
  for (int kRank : {1, 2})
    for (bool transposeW : {false, true})
      for (bool bias : {false, true})
        for (Activation act : {Activation::None, Activation::Relu,
                               Activation::GeluTanh, Activation::GeluErf}) {
          // x [3, 4, K...] with K = 10 (kRank 1: [10]; kRank 2: [2, 5]); N = 6.
          std::vector<int64_t> x = kRank == 1 ? std::vector<int64_t>{3, 4, 10}
                                              : std::vector<int64_t>{3, 4, 2, 5};
          std::vector<int64_t> kDims(x.end() - kRank, x.end());
          std::vector<int64_t> w = kDims;
          if (transposeW)
            w.insert(w.begin(), 6);
          else
            w.push_back(6);
          std::vector<std::vector<int64_t>> ins = {x, w};
          if (bias)
            ins.push_back({6});
          StepAttrs a;
          a.kRank = kRank;
          a.transposeW = transposeW;
          a.activation = act;
          OneStep s = makeStep(OpKind::Gemm, ins, {3, 4, 6}, a, seed++);
          SCOPED_TRACE(::testing::Message()
                       << "k_rank " << kRank << " transpose_w " << transposeW
                       << " bias " << bias << " act " << activationName(act));
          Tensor got = runLowered(*dev, s);
          Tensor want = s.values.back();
          host::gemm(s.values[0], s.values[1], bias ? &s.values[2] : nullptr,
                     kRank, transposeW, act, want);
          EXPECT_LT(relError(got, want), 1e-6);
        }
}

TEST_F(GemmLowering, WeightGradientBothLayouts) {
  uint32_t seed = 50;
  for (int kRank : {1, 2})
    for (bool transposeW : {false, true}) {
      std::vector<int64_t> x = kRank == 1 ? std::vector<int64_t>{3, 4, 10}
                                          : std::vector<int64_t>{3, 4, 2, 5};
      std::vector<int64_t> kDims(x.end() - kRank, x.end());
      std::vector<int64_t> dw = kDims;
      if (transposeW)
        dw.insert(dw.begin(), 6);
      else
        dw.push_back(6);
      StepAttrs a;
      a.kRank = kRank;
      a.transposeW = transposeW;
      OneStep s = makeStep(OpKind::GemmWgrad, {x, {3, 4, 6}}, dw, a, seed++);
      SCOPED_TRACE(::testing::Message() << "k_rank " << kRank << " transpose_w "
                                        << transposeW);
      Tensor got = runLowered(*dev, s);
      Tensor want = s.values.back();
      host::gemmWgrad(s.values[0], s.values[1], kRank, transposeW, want);
      EXPECT_LT(relError(got, want), 1e-6);
    }
}

TEST_F(GemmLowering, OtherStepsAreRefused) {
  StepAttrs a;
  OneStep s = makeStep(OpKind::Add, {{4}, {4}}, {4}, a, 3);
  GemmStepCall call;
  Status st = lowerGemmStep(s.plan, s.plan.steps[0], call);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "add: not a gemm or gemm_wgrad step");
}

} // namespace
