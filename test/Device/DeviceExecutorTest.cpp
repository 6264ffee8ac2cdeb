//===- DeviceExecutorTest.cpp - Plans on the emulated device vs the host --===//
//
// Small hand-built plans (test/Runtime/TinyPlans.h and below) through the
// CUDA C++ emitter and the device executor on the emulated device, against
// the host executor: the same outputs (within 1e-6 relative; dropout masks
// bit-identical), the same binding and data-error messages, and bitwise
// equal results from two runs and from every emulator schedule. The whole
// models are compared in test/Numerics/golden-emu.test and
// test/Training/train-emu.test.
//
//===----------------------------------------------------------------------===//

#include "target/cuda/CudaEmitter.h"
#include "runtime/exec/DeviceExecutor.h"
#include "runtime/exec/Executor.h"
#include "test/Device/DeviceTestUtil.h"
#include "test/Runtime/TinyPlans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

using namespace xlnetc::rt;
using xlnetc::rt::test::PlanBuilder;
using xlnetc::rt::test::tinyBindings;
using xlnetc::rt::test::tinyLmPlan;
using xlnetc::rt::test::tinyTrainPlan;
using xlnetc::rt::testing::ScopedEnv;
using nlohmann::json;

namespace {

/// `plan` with its device program attached.
Plan withProgram(Plan plan) {
  auto program = std::make_shared<DeviceProgram>();
  Status st = xlnetc::cuda::emitDeviceProgram(plan, {}, *program);
  EXPECT_TRUE(st) << st.message();
  plan.device = std::move(program);
  return plan;
}

/// One emulated-device executor for the suite (its module cache spans the
/// tests, as it spans the steps of a training run).
class DeviceExecutorTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    executor_ = new Executor;
    Status st = Executor::open(dev::DeviceKind::Emu, {}, *executor_);
    ASSERT_TRUE(st) << st.message();
  }
  static void TearDownTestSuite() {
    delete executor_;
    executor_ = nullptr;
  }
  static Status emu(const Plan &plan, const TensorMap &b, TensorMap &out,
                    uint64_t seed = 0) {
    ExecOptions o;
    o.seed = seed;
    return executor_->execute(plan, b, out, o);
  }
  static Executor *executor_;
};
Executor *DeviceExecutorTest::executor_ = nullptr;

/// Every output of `ref` is in `got` with max|got - ref| <= rtol * max|ref|.
void expectClose(const TensorMap &got, const TensorMap &ref, double rtol) {
  for (const auto &[name, r] : ref) {
    auto it = got.find(name);
    ASSERT_NE(it, got.end()) << name;
    const Tensor &g = it->second;
    ASSERT_EQ(g.dtype, r.dtype) << name;
    ASSERT_EQ(g.shape, r.shape) << name;
    if (r.dtype != DType::F32) {
      EXPECT_EQ(std::memcmp(g.storage.data(), r.storage.data(), r.nbytes()), 0)
          << name;
      continue;
    }
    double maxRef = 0, maxDiff = 0;
    for (int64_t i = 0; i < r.numel(); ++i) {
      maxRef = std::max(maxRef, std::fabs(double(r.f32()[i])));
      maxDiff = std::max(maxDiff,
                         std::fabs(double(g.f32()[i]) - double(r.f32()[i])));
    }
    EXPECT_LE(maxDiff, rtol * maxRef) << name;
  }
}

bool bitwiseEqual(const TensorMap &a, const TensorMap &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second.shape != t.shape ||
        std::memcmp(it->second.storage.data(), t.storage.data(), t.nbytes()))
      return false;
  }
  return true;
}

TensorMap trainBindings() {
  TensorMap b = tinyBindings();
  b["m.emb"] = Tensor::fromF32({4, 2}, {0.1f, 0, 0, -0.1f, 0, 0, 0.2f, 0});
  b["v.emb"] = Tensor::fromF32({4, 2}, {0.01f, 0, 0, 0.02f, 0, 0, 0.01f, 0.03f});
  b["step"] = Tensor::fromI64({}, {2});
  return b;
}

TEST_F(DeviceExecutorTest, RunsTheTinyPlansLikeTheHost) {
  for (bool train : {false, true}) {
    Plan plan = withProgram(train ? tinyTrainPlan() : tinyLmPlan());
    TensorMap b = train ? trainBindings() : tinyBindings(), host, dev;
    ASSERT_TRUE(executeHost(plan, b, host));
    Status st = emu(plan, b, dev);
    ASSERT_TRUE(st) << st.message();
    expectClose(dev, host, 1e-6);
    EXPECT_EQ(dev.size(), host.size());
  }
}

TEST_F(DeviceExecutorTest, BindingAndDataErrorsReadAsOnTheHost) {
  Plan lm = withProgram(tinyLmPlan()), train = withProgram(tinyTrainPlan());
  auto same = [&](const Plan &plan, const TensorMap &b) {
    TensorMap out;
    Status host = executeHost(plan, b, out), dev = emu(plan, b, out);
    EXPECT_FALSE(host);
    EXPECT_FALSE(dev);
    EXPECT_EQ(dev.message(), host.message());
    return dev.message();
  };
  TensorMap b = tinyBindings();
  b.erase("target");
  EXPECT_EQ(same(lm, b), "missing input 'target' (buffer 2, expected i64[1, 2])");
  b = tinyBindings();
  b["emb"] = Tensor::zeros(DType::F32, {4, 3});
  same(lm, b);
  b = tinyBindings();
  b["input_k"] = Tensor::fromI64({1, 2}, {2, 9});
  EXPECT_EQ(same(lm, b), "step 0 (embedding, loc 'word emb'): id 9 at b=0, "
                         "s=1 is outside [0, 4)");
  b = tinyBindings();
  b["target"] = Tensor::fromI64({1, 2}, {-1, 0});
  EXPECT_EQ(same(lm, b), "step 2 (lm_loss, loc 'loss'): target -1 at b=0, "
                         "slot 0 is outside [0, 4)");
  // A 64-bit id (its high word matters) and a negative step.
  b = trainBindings();
  b["input_k"] = Tensor::fromI64({1, 2}, {int64_t(1) << 40, 1});
  same(train, b);
  b = trainBindings();
  b["step"] = Tensor::fromI64({}, {-3});
  EXPECT_EQ(same(train, b), "step 9 (lr_schedule, loc 'lr'): step -3 is negative");
}

TEST_F(DeviceExecutorTest, TargetMappingErrorsReadAsOnTheHost) {
  PlanBuilder p;
  int tm = p.buffer("f32", {2, 3, 5}, "input", "target_mapping");
  int pos = p.buffer("i64", {2, 3}, "temp", "", {"pos"});
  p.step("target_positions", {tm}, {pos}, json::object(), "targets");
  Plan plan;
  ASSERT_TRUE(parsePlan(p.text(), plan));
  plan = withProgram(std::move(plan));
  std::vector<float> v(30, 0.0f);
  v[0 * 15 + 1 * 5 + 2] = 1.0f; // b 0, row 1: column 2
  v[1 * 15 + 0 * 5 + 4] = 1.0f; // b 1, row 0: column 4
  TensorMap b{{"target_mapping", Tensor::fromF32({2, 3, 5}, v)}}, host, dev;
  ASSERT_TRUE(executeHost(plan, b, host));
  ASSERT_TRUE(emu(plan, b, dev));
  expectClose(dev, host, 0);
  for (auto [index, value] : {std::pair{6, 0.5f}, std::pair{9, 1.0f}}) {
    std::vector<float> bad = v;
    bad[index] = value; // b 0, row 1: a value that is not 0/1, a second 1
    b["target_mapping"] = Tensor::fromF32({2, 3, 5}, bad);
    Status h = executeHost(plan, b, host), d = emu(plan, b, dev);
    EXPECT_FALSE(d);
    EXPECT_EQ(d.message(), h.message());
  }
}

TEST_F(DeviceExecutorTest, DropoutMasksAreBitIdenticalToTheHost) {
  PlanBuilder p;
  int x = p.buffer("f32", {3, 1000}, "input", "x");
  int y = p.buffer("f32", {3, 1000}, "temp", "", {"y"});
  int z = p.buffer("f32", {3, 1000}, "temp", "", {"z"});
  p.step("dropout", {x}, {y}, {{"rate", 0.1}, {"dropout_site", 4}}, "drop a");
  p.step("dropout", {y}, {z}, {{"rate", 0.5}, {"dropout_site", 9}}, "drop b");
  Plan plan;
  ASSERT_TRUE(parsePlan(p.text(), plan));
  plan = withProgram(std::move(plan));
  std::vector<float> v(3000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 1.0f + 0.001f * float(i);
  TensorMap b{{"x", Tensor::fromF32({3, 1000}, v)}};
  for (uint64_t seed : {0ull, 77ull, 0xfedcba9876543210ull}) {
    TensorMap host, dev;
    ASSERT_TRUE(executeHost(plan, b, host, ExecOptions{seed, 0}));
    ASSERT_TRUE(emu(plan, b, dev, seed));
    EXPECT_TRUE(bitwiseEqual(dev, host)) << "seed " << seed;
  }
}

TEST_F(DeviceExecutorTest, TwoRunsAndEverySchedulesAreBitwiseEqual) {
  Plan plan = withProgram(tinyTrainPlan());
  TensorMap first;
  ASSERT_TRUE(emu(plan, trainBindings(), first));
  for (const char *schedule : {"forward", "reverse", "random:7"}) {
    ScopedEnv env("XLNETC_EMU_SCHEDULE", schedule);
    Executor e;
    ASSERT_TRUE(Executor::open(dev::DeviceKind::Emu, {}, e));
    TensorMap again;
    Status st = e.execute(plan, trainBindings(), again);
    ASSERT_TRUE(st) << st.message();
    EXPECT_TRUE(bitwiseEqual(again, first)) << schedule;
  }
}

/// The DGELU_BGRAD form (--xlnet-fuse-kernels makes it of gemm ->
/// activation_grad gelu_tanh -> bias_grad; test/Transforms/fuse-kernels.mlir):
/// one GEMM on the device, whose dP and db match the host's gemm,
/// activation_grad and bias_grad.
TEST_F(DeviceExecutorTest, DGeluBGradFormIsOneGemm) {
  PlanBuilder p;
  int x = p.buffer("f32", {4, 8}, "input", "x");
  int w = p.buffer("f32", {8, 16}, "param", "w");
  int pre = p.buffer("f32", {4, 16}, "input", "pre");
  int dP = p.buffer("f32", {4, 16}, "temp", "", {"dP"});
  int db = p.buffer("f32", {16}, "temp", "", {"db"});
  p.step("gemm", {x, w, pre}, {dP, db},
         {{"k_rank", 1},
          {"transpose_w", false},
          {"activation", "none"},
          {"activation_grad", "gelu_tanh"}},
         "d ffn out");
  Plan plan;
  ASSERT_TRUE(parsePlan(p.text(), plan));
  plan = withProgram(std::move(plan));
  ASSERT_EQ(plan.device->steps[0].launches.size(), 1u);
  const DeviceLaunch &g = plan.device->steps[0].launches.at(0);
  EXPECT_EQ(g.gemm.epilogue, dev::GemmEpilogue::DGeluBGrad);
  EXPECT_EQ(g.aux, pre);
  EXPECT_EQ(g.bias, db);
  TensorMap b{{"x", xlnetc::rt::testing::randomF32({4, 8}, 1, -1, 1)},
              {"w", xlnetc::rt::testing::randomF32({8, 16}, 2, -1, 1)},
              {"pre", xlnetc::rt::testing::randomF32({4, 16}, 3, -2, 2)}},
      host, devOut;
  ASSERT_TRUE(executeHost(plan, b, host));
  Status st = emu(plan, b, devOut);
  ASSERT_TRUE(st) << st.message();
  expectClose(devOut, host, 1e-5);
}

/// rel_attention and rel_attention_grad with compact masks (seg_id,
/// perm_rank) become the fused kernels; both streams, against the host.
TEST_F(DeviceExecutorTest, CompactMaskAttentionRunsTheFusedKernels) {
  const int64_t B = 2, S = 12, N = 2, H = 8, mlen = 4, K = mlen + S;
  for (bool query : {false, true}) {
    const int64_t T = query ? 3 : S;
    PlanBuilder p;
    int q = p.buffer("f32", {B, T, N, H}, "input", "q");
    int k = p.buffer("f32", {B, K, N, H}, "input", "k");
    int v = p.buffer("f32", {B, K, N, H}, "input", "v");
    int kr = p.buffer("f32", {1, K + S, N, H}, "input", "k_r");
    int se = p.buffer("f32", {2, N, H}, "input", "seg_embed");
    int rw = p.buffer("f32", {N, H}, "input", "rw");
    int rr = p.buffer("f32", {N, H}, "input", "rr");
    int rs = p.buffer("f32", {N, H}, "input", "rs");
    int seg = p.buffer("i64", {B, S}, "input", "seg_id");
    int rank = p.buffer("i64", {B, 2, S}, "input", "perm_rank");
    std::vector<int> ops = {q, k, v, kr, se, rw, rr, rs, seg, rank};
    if (query)
      ops.push_back(p.buffer("i64", {B, T}, "input", "rows"));
    int dout = p.buffer("f32", {B, T, N, H}, "input", "dout");
    int out = p.buffer("f32", {B, T, N, H}, "temp", "", {"out"});
    const char *gradNames[] = {"dq", "dk", "dv", "dk_r", "dse", "drw", "drr", "drs"};
    std::vector<std::vector<int64_t>> gradShapes = {
        {B, T, N, H}, {B, K, N, H}, {B, K, N, H}, {1, K + S, N, H},
        {2, N, H},    {N, H},       {N, H},       {N, H}};
    std::vector<int> grads;
    for (size_t g = 0; g < 8; ++g)
      grads.push_back(p.buffer("f32", gradShapes[g], "temp", "", {gradNames[g]}));
    json attrs = {{"scale", 0.35}, {"dropatt", 0.1}, {"dropout_site", 3}};
    p.step("rel_attention", ops, {out}, attrs, "attn");
    std::vector<int> gin = {dout};
    gin.insert(gin.end(), ops.begin(), ops.end());
    p.step("rel_attention_grad", gin, grads, attrs, "d attn");
    Plan plan;
    Status st = parsePlan(p.text(), plan);
    ASSERT_TRUE(st) << st.message();
    plan = withProgram(std::move(plan));
    EXPECT_NE(plan.device->source.find("xl_rel_attention_fused_grad<"),
              std::string::npos);
    using xlnetc::rt::testing::randomF32;
    TensorMap b{{"q", randomF32({B, T, N, H}, 1, -1, 1)},
                {"k", randomF32({B, K, N, H}, 2, -1, 1)},
                {"v", randomF32({B, K, N, H}, 3, -1, 1)},
                {"k_r", randomF32({1, K + S, N, H}, 4, -1, 1)},
                {"seg_embed", randomF32({2, N, H}, 5, -1, 1)},
                {"rw", randomF32({N, H}, 6, -1, 1)},
                {"rr", randomF32({N, H}, 7, -1, 1)},
                {"rs", randomF32({N, H}, 8, -1, 1)},
                {"dout", randomF32({B, T, N, H}, 9, -1, 1)}};
    std::vector<int64_t> segIds(B * S), ranks(B * 2 * S), rowIds(B * T);
    for (int64_t i = 0; i < B * S; ++i)
      segIds[i] = i % 5 < 3 ? 0 : 1;
    for (int64_t i = 0; i < B * 2 * S; ++i)
      ranks[i] = (i * 7) % (S + 1) - 1;
    for (int64_t i = 0; i < B * T; ++i)
      rowIds[i] = i == 1 ? -1 : (i * 5) % S;
    b["seg_id"] = Tensor::fromI64({B, S}, segIds);
    b["perm_rank"] = Tensor::fromI64({B, 2, S}, ranks);
    if (query)
      b["rows"] = Tensor::fromI64({B, T}, rowIds);
    TensorMap host, devOut;
    ASSERT_TRUE(executeHost(plan, b, host, ExecOptions{11, 0}));
    st = emu(plan, b, devOut, 11);
    ASSERT_TRUE(st) << st.message();
    for (const auto &[name, r] : host) {
      TensorMap one{{name, r}}, got{{name, devOut.at(name)}};
      expectClose(got, one, name == "out" ? 1e-5 : 1e-4);
    }
  }
}

TEST_F(DeviceExecutorTest, CompactMasksHaveTheirShapesChecked) {
  PlanBuilder p;
  int q = p.buffer("f32", {1, 4, 1, 8}, "input", "q");
  int k = p.buffer("f32", {1, 4, 1, 8}, "input", "k");
  int v = p.buffer("f32", {1, 4, 1, 8}, "input", "v");
  int kr = p.buffer("f32", {1, 8, 1, 8}, "input", "k_r");
  int se = p.buffer("f32", {2, 1, 8}, "input", "seg_embed");
  int rw = p.buffer("f32", {1, 8}, "input", "rw");
  int seg = p.buffer("i64", {1, 4}, "input", "seg_id");
  int rank = p.buffer("i64", {1, 4}, "input", "perm_rank"); // not [1,2,4]
  int out = p.buffer("f32", {1, 4, 1, 8}, "temp", "", {"out"});
  p.step("rel_attention", {q, k, v, kr, se, rw, rw, rw, seg, rank}, {out},
         {{"scale", 1.0}, {"dropatt", 0.0}}, "attn");
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("must be i64[1, 2, 4] (perm_rank) or i64[1, 4, 1] (perm_bits), got i64[1, 4]"), std::string::npos)
      << st.message();
}

TEST_F(DeviceExecutorTest, APlanWithoutItsDeviceProgramIsRefused) {
  TensorMap out;
  Status st = emu(tinyLmPlan(), tinyBindings(), out);
  EXPECT_FALSE(st);
  EXPECT_NE(st.message().find("device program"), std::string::npos)
      << st.message();
}

} // namespace

namespace {

/// The emulated device, its synchronisations and captures recorded; the
/// `failAt`-th synchronisation (counting from 1; 0: none) fails as an
/// asynchronous fault would.
class RecordingDevice : public xlnetc::rt::testing::ForwardingDevice {
public:
  using ForwardingDevice::ForwardingDevice;
  std::vector<std::string> syncs;
  /// The kernels launched (or recorded into a graph: not its replays), by
  /// name.
  std::vector<std::string> kernels;
  int captures = 0;
  size_t failAt = 0;

  Status launch(const dev::Kernel &k, const dev::LaunchDims &dims, void **params,
                const std::string &where) override {
    kernels.push_back(k.name);
    return ForwardingDevice::launch(k, dims, params, where);
  }
  Status synchronize(const std::string &where) override {
    syncs.push_back(where);
    if (syncs.size() == failAt)
      return Status::error("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS "
                           "(injected) [" + where + "]");
    return ForwardingDevice::synchronize(where);
  }
  Status beginCapture(const std::string &where) override {
    ++captures;
    return ForwardingDevice::beginCapture(where);
  }
};

/// XLNETC_CUDA_SYNC=1 (--sync-each-op): no graph, even from the second
/// step on; the host waits after every op, and each wait names the op's
/// plan step, MLIR location and kernel or GEMM, so the first asynchronous
/// fault (injected here at one wait) says where it happened. Without it the
/// third step replays a graph and the host waits once a step.
TEST(DeviceExecutorSync, EveryOpIsWaitedForAndAFaultNamesItsOp) {
  std::unique_ptr<dev::Device> emuDevice;
  ASSERT_TRUE(dev::openDevice(dev::DeviceKind::Emu, {}, emuDevice));
  const Plan plan = withProgram(tinyTrainPlan());
  const TensorMap b = trainBindings();
  for (bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "XLNETC_CUDA_SYNC=1" : "graph");
    ScopedEnv env("XLNETC_CUDA_SYNC", sync ? "1" : nullptr);
    RecordingDevice device(*emuDevice);
    DeviceExecutor exec(device);
    TensorMap first, out;
    for (int step = 0; step < 3; ++step) {
      Status st = exec.execute(plan, *plan.device, b, step == 0 ? first : out);
      ASSERT_TRUE(st) << st.message();
    }
    EXPECT_TRUE(bitwiseEqual(first, out));
    EXPECT_EQ(device.captures, sync ? 0 : 1);
    const size_t perStep = device.syncs.size() / 3;
    if (!sync) {
      EXPECT_EQ(device.syncs, std::vector<std::string>(3, "the end of the step"));
      continue;
    }
    EXPECT_GT(perStep, plan.steps.size() / 2) << "a wait after every op";
    size_t kernels = 0, gemms = 0;
    for (const std::string &where : device.syncs) {
      if (where == "the end of the step")
        continue;
      EXPECT_EQ(where.rfind("step ", 0), 0u) << where;
      EXPECT_NE(where.find(", loc '"), std::string::npos) << where;
      kernels += where.find("): kernel ") != std::string::npos;
      gemms += where.find("): gemm ") != std::string::npos;
    }
    EXPECT_GT(kernels, 0u);
    EXPECT_GT(gemms, 0u);
    // A fault at the fifth op of the next step is reported there.
    device.failAt = device.syncs.size() + 5;
    Status st = exec.execute(plan, *plan.device, b, out);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("CUDA_ERROR_ILLEGAL_ADDRESS (injected) [step "),
              std::string::npos)
        << st.message();
    EXPECT_NE(st.message().find(device.syncs.back()), std::string::npos) << st.message();
  }
}

/// One GEMM step for each fused epilogue (f32): bias, relu_bias and
/// gelu_bias (a gemm with a bias and an activation), gelu_aux_bias (the
/// gemm that also returns its pre-activation) and dgelu_bgrad (the gemm with
/// activation_grad; docs/Plan.md "Fused forms").
Plan epiloguePlan() {
  PlanBuilder p;
  int x = p.buffer("f32", {6, 8}, "input", "x");
  int w = p.buffer("f32", {8, 24}, "param", "w");
  int w2 = p.buffer("f32", {8, 24}, "param", "w2");
  int bias = p.buffer("f32", {24}, "param", "b");
  auto out = [&](const char *name) { return p.buffer("f32", {6, 24}, "temp", "", {name}); };
  const char *acts[] = {"none", "relu", "gelu_tanh"};
  for (const char *act : acts)
    p.step("gemm", {x, w, bias}, {out(act)},
           {{"k_rank", 1}, {"transpose_w", false}, {"activation", act}}, act);
  int pre = out("pre"), h = out("h");
  p.step("gemm", {x, w, bias}, {h, pre},
         {{"k_rank", 1}, {"transpose_w", false}, {"activation", "gelu_tanh"}}, "ffn");
  int dP = out("dP");
  int db = p.buffer("f32", {24}, "temp", "", {"db"});
  p.step("gemm", {x, w2, pre}, {dP, db},
         {{"k_rank", 1},
          {"transpose_w", false},
          {"activation", "none"},
          {"activation_grad", "gelu_tanh"}},
         "d ffn");
  Plan plan;
  Status st = parsePlan(p.text(), plan);
  EXPECT_TRUE(st) << st.message();
  return withProgram(std::move(plan));
}

/// How often `what` occurs in `text`.
size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

/// XLNETC_FAULT_GEMM_EPILOGUE=unsupported: every GEMM with a fused epilogue
/// runs as the GEMM and its epilogue kernel (the emulated device's, at the
/// first step, piece by piece; recorded into the graph at the second,
/// replayed at the third), with one warning per descriptor, none at the
/// later steps nor for the next program of the same executor; the results
/// are bitwise the fused program's and match the host. Without the hook
/// nothing falls back: no warning, no epilogue kernel.
TEST(DeviceExecutorFallback, EveryEpilogueUnfusedIsBitwiseTheFusedStep) {
  using xlnetc::rt::testing::randomF32;
  std::unique_ptr<dev::Device> emuDevice;
  ASSERT_TRUE(dev::openDevice(dev::DeviceKind::Emu, {}, emuDevice));
  const Plan plan = epiloguePlan();
  std::set<std::string> epilogues;
  for (const DeviceStep &s : plan.device->steps)
    for (const DeviceLaunch &l : s.launches)
      if (l.kind == DeviceLaunch::Gemm)
        epilogues.insert(dev::gemmEpilogueName(l.gemm.epilogue));
  ASSERT_EQ(epilogues, (std::set<std::string>{"bias", "relu_bias", "gelu_bias",
                                              "gelu_aux_bias", "dgelu_bgrad"}));
  const TensorMap b{{"x", randomF32({6, 8}, 1, -1, 1)},
                    {"w", randomF32({8, 24}, 2, -1, 1)},
                    {"w2", randomF32({8, 24}, 3, -1, 1)},
                    {"b", randomF32({24}, 4, -1, 1)}};
  TensorMap host;
  ASSERT_TRUE(executeHost(plan, b, host));
  const std::string kernelPrefix = "xl_gemm_epilogue_";

  RecordingDevice fusedDevice(*emuDevice);
  TensorMap fused;
  {
    ::testing::internal::CaptureStderr();
    DeviceExecutor exec(fusedDevice);
    Status st = exec.execute(plan, *plan.device, b, fused);
    const std::string log = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(occurrences(log, "runs unfused"), 0u) << log;
    for (const std::string &k : fusedDevice.kernels)
      EXPECT_NE(k.rfind(kernelPrefix, 0), 0u) << k;
  }
  expectClose(fused, host, 1e-5);

  xlnetc::rt::testing::ScopedEnv hook("XLNETC_FAULT_GEMM_EPILOGUE", "unsupported");
  RecordingDevice device(*emuDevice);
  DeviceExecutor exec(device);
  ::testing::internal::CaptureStderr();
  std::vector<TensorMap> steps(3);
  Status st = Status::ok();
  for (TensorMap &out : steps)
    if (st)
      st = exec.execute(plan, *plan.device, b, out);
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(device.captures, 1);
  EXPECT_EQ(occurrences(log, "runs unfused"), 5u) << log;
  for (const std::string &epi : epilogues) {
    EXPECT_EQ(occurrences(log, "epilogue=" + epi + ": XLNETC_FAULT_GEMM_EPILOGUE=unsupported"),
              1u)
        << epi << "\n"
        << log;
    // Launched at the first step and recorded at the second.
    EXPECT_EQ(std::count(device.kernels.begin(), device.kernels.end(),
                         kernelPrefix + epi + "_f32"),
              2)
        << epi;
  }
  EXPECT_NE(log.find("step 0 (gemm, loc 'none'): gemm m=24 n=6 k=8"), std::string::npos) << log;
  for (const TensorMap &out : steps)
    EXPECT_TRUE(bitwiseEqual(out, fused));
  expectClose(steps[0], host, 1e-5);

  // The same GEMMs in a new program of this executor: no second warning.
  const Plan again = epiloguePlan();
  ::testing::internal::CaptureStderr();
  TensorMap out;
  st = exec.execute(again, *again.device, b, out);
  const std::string quiet = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(quiet, "");
  EXPECT_TRUE(bitwiseEqual(out, fused));
}

} // namespace
