//===- WholeStepTest.cpp - Whole compiled steps on every device -----------===//
//
// Plans of whole training steps, compiled by xlnetc at build time (no MLIR
// here: the plan JSON and a batch are files, see CMakeLists.txt), through
// the CUDA C++ emitter and the device executor on the emulated device and,
// where one answers, on the GPU: every output against the host executor
// (forward outputs within 1e-5, gradients, new parameters and moments within
// 1e-4, relative to each tensor's largest magnitude), and a second run of
// the step bitwise equal to the first (no floating-point atomics anywhere);
// steps replayed from the recorded graph equal steps launched piece by piece.
//
// This binary and its plan directory are all a GPU machine needs to check
// the whole step: `XLNETC_TEST_PLANS=DIR xlnet-device-tests
// --gtest_filter='WholeStep*'` (docs/Testing.md).
//
//===----------------------------------------------------------------------===//

#include "target/cuda/CudaEmitter.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/PlanDataflow.h"
#include "runtime/io/Safetensors.h"
#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

using namespace xlnetc::rt;

namespace {

std::string planDir() { return xlnetc::rt::testing::testPlansDir(); }

bool startsWith(const std::string &s, const char *p) {
  return s.rfind(p, 0) == 0;
}

/// The plan of `<name>.plan.json` with its device program.
Plan loadPlan(const std::string &name) {
  std::ifstream in(planDir() + "/" + name + ".plan.json");
  EXPECT_TRUE(in.good()) << "no plan " << name << " in " << planDir();
  std::stringstream text;
  text << in.rdbuf();
  Plan plan;
  Status st = parsePlan(text.str(), plan);
  EXPECT_TRUE(st) << st.message();
  auto program = std::make_shared<DeviceProgram>();
  st = xlnetc::cuda::emitDeviceProgram(plan, {}, *program);
  EXPECT_TRUE(st) << st.message();
  plan.device = std::move(program);
  return plan;
}

/// The batch of `<name>.batch.safetensors`, plus seeded parameters, memory
/// and optimizer state for every other input of the plan.
TensorMap bindingsFor(const Plan &plan, const std::string &batchName) {
  TensorMap b;
  Status st = readSafetensors(planDir() + "/" + batchName + ".batch.safetensors", b);
  EXPECT_TRUE(st) << st.message();
  std::mt19937_64 rng(20261123);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const Buffer &buf : plan.buffers) {
    if (buf.role == Buffer::Temp || b.count(buf.name))
      continue;
    Tensor t = Tensor::zeros(buf.dtype, buf.shape);
    const std::string &n = buf.name;
    bool lnWeight = n.find("layer_norm") != std::string::npos &&
                    n.size() > 7 && n.compare(n.size() - 7, 7, ".weight") == 0;
    if (n == "step") {
      t.i64()[0] = 5;
    } else if (buf.dtype == DType::F32) {
      float scale = startsWith(n, "mems.")      ? 1.0f
                    : startsWith(n, "adam_v.") ? 1e-4f
                    : startsWith(n, "adam_m.") ? 1e-3f
                                               : 0.02f;
      for (int64_t i = 0; i < t.numel(); ++i)
        t.f32()[i] = lnWeight ? 1.0f : scale * normal(rng);
      if (startsWith(n, "adam_v."))
        for (int64_t i = 0; i < t.numel(); ++i)
          t.f32()[i] = std::fabs(t.f32()[i]);
    }
    b[n] = std::move(t);
  }
  return b;
}

double maxAbs(const Tensor &t) {
  double m = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    m = std::max(m, std::fabs(double(t.f32()[i])));
  return m;
}

void expectMatchesHost(const TensorMap &got, const TensorMap &ref,
                       const std::string &device) {
  for (const auto &[name, r] : ref) {
    SCOPED_TRACE(device + ": " + name);
    auto it = got.find(name);
    ASSERT_NE(it, got.end());
    const Tensor &g = it->second;
    ASSERT_EQ(g.shape, r.shape);
    if (r.dtype != DType::F32) {
      EXPECT_EQ(std::memcmp(g.storage.data(), r.storage.data(), r.nbytes()), 0);
      continue;
    }
    bool forward = !startsWith(name, "grad.") && !startsWith(name, "new.") &&
                   name != "grad_norm";
    double tol = (forward ? 1e-5 : 1e-4) * maxAbs(r), worst = 0;
    for (int64_t i = 0; i < r.numel(); ++i)
      worst = std::max(worst, std::fabs(double(g.f32()[i]) - double(r.f32()[i])));
    EXPECT_LE(worst, tol);
  }
}

bool bitwiseEqual(const TensorMap &a, const TensorMap &b) {
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end() ||
        std::memcmp(it->second.storage.data(), t.storage.data(), t.nbytes()))
      return false;
  }
  return a.size() == b.size();
}

/// `always`, and the GPU when one answers (else one line says why not).
std::vector<dev::DeviceKind> devicesToTest(std::vector<dev::DeviceKind> always) {
  std::string why;
  if (dev::resolveDeviceKind(dev::DeviceKind::Auto, &why) == dev::DeviceKind::Cuda)
    always.push_back(dev::DeviceKind::Cuda);
  else
    std::cout << "[ INFO     ] no GPU (" << why << "): not on cuda\n";
  return always;
}

/// Runs `planName` with `batchName`'s batch on the host, on emu, and on the
/// GPU when one answers.
void checkWholeStep(const std::string &planName, const std::string &batchName) {
  Plan plan = loadPlan(planName);
  ASSERT_TRUE(plan.device);
  TensorMap bindings = bindingsFor(plan, batchName), host;
  ExecOptions opts;
  opts.seed = 42; // dropout and dropatt on
  ASSERT_TRUE(executeHost(plan, bindings, host, opts));
  for (dev::DeviceKind kind : devicesToTest({dev::DeviceKind::Emu})) {
    Executor e;
    Status st = Executor::open(kind, {}, e);
    ASSERT_TRUE(st) << st.message();
    TensorMap first, second;
    st = e.execute(plan, bindings, first, opts);
    ASSERT_TRUE(st) << e.description() << ": " << st.message();
    expectMatchesHost(first, host, e.description());
    st = e.execute(plan, bindings, second, opts);
    ASSERT_TRUE(st) << st.message();
    EXPECT_TRUE(bitwiseEqual(first, second))
        << e.description() << ": two runs of the step differ";
  }
}

/// Steps of a training run replay the graph recorded at the second: with a
/// new seed and new inputs each step, every step equals the same step
/// launched piece by piece (and the seed reaches the replayed kernels: two
/// seeds give two results). On emu, and on the GPU when one answers.
TEST(WholeStep, GraphReplaysFollowTheSeedAndTheInputs) {
  Plan plan = loadPlan("xlnet-tiny.train");
  ASSERT_TRUE(plan.device);
  for (dev::DeviceKind kind : devicesToTest({dev::DeviceKind::Emu})) {
    Executor graphed, direct;
    ASSERT_TRUE(Executor::open(kind, {}, graphed));
    ASSERT_TRUE(Executor::open(kind, {}, direct));
    TensorMap bindings = bindingsFor(plan, "xlnet-tiny");
    TensorMap previous;
    for (uint64_t seed : {7u, 8u, 9u}) {
      ExecOptions withGraph, without;
      withGraph.seed = without.seed = seed;
      without.deviceGraph = false;
      TensorMap a, b;
      Status st = graphed.execute(plan, bindings, a, withGraph);
      ASSERT_TRUE(st) << st.message();
      st = direct.execute(plan, bindings, b, without);
      ASSERT_TRUE(st) << st.message();
      EXPECT_TRUE(bitwiseEqual(a, b)) << graphed.description() << ": seed " << seed;
      EXPECT_FALSE(bitwiseEqual(a, previous)) << "seed " << seed << " changed nothing";
      // The next step starts from this one's parameters and moments.
      for (auto &[name, t] : a)
        if (startsWith(name, "new."))
          bindings[name.substr(4)] = t;
      previous = std::move(a);
    }
  }
}

/// Executor::setCarry: three training steps whose parameters, moments and
/// memory stay with the executor (bound only at the first step) give
/// bitwise the results of steps that bind the previous step's outputs; the
/// carried outputs do not come back, fetch reads them; on the host, on emu
/// (and on the GPU when one answers).
TEST(WholeStep, CarriedStateStaysWithTheExecutor) {
  Plan plan = loadPlan("xlnet-tiny.train");
  ASSERT_TRUE(plan.device);
  std::vector<std::pair<std::string, std::string>> carry;
  for (const Buffer &b : plan.buffers)
    for (const std::string &out : b.outputs) {
      if (startsWith(out, "new."))
        carry.emplace_back(out, out.substr(4));
      else if (startsWith(out, "new_mems."))
        carry.emplace_back(out, out.substr(4));
    }
  ASSERT_GT(carry.size(), 3u);
  for (dev::DeviceKind kind : devicesToTest({dev::DeviceKind::Host, dev::DeviceKind::Emu})) {
    Executor kept, rebound;
    ASSERT_TRUE(Executor::open(kind, {}, kept));
    ASSERT_TRUE(Executor::open(kind, {}, rebound));
    kept.setCarry(carry);
    const TensorMap initial = bindingsFor(plan, "xlnet-tiny");
    TensorMap keptBindings = initial, reboundBindings = initial;
    for (uint64_t seed : {3u, 4u, 5u}) {
      ExecOptions o;
      o.seed = seed;
      TensorMap a, b;
      if (seed == 3) {
        Status st = kept.execute(plan, keptBindings, a, o);
        ASSERT_TRUE(st) << kept.description() << ": " << st.message();
        ASSERT_TRUE(rebound.execute(plan, reboundBindings, b, o));
      } else {
        // In two halves, as the training loop runs it: the kept state can
        // be read while the step is in flight (the read waits for it), one
        // step at a time, and its outputs come with finish().
        Status st = kept.start(plan, keptBindings, o);
        ASSERT_TRUE(st) << kept.description() << ": " << st.message();
        EXPECT_FALSE(kept.start(plan, keptBindings, o)) << "a second step in flight";
        ASSERT_TRUE(rebound.execute(plan, reboundBindings, b, o));
        const auto &[out0, in0] = carry.front();
        Tensor early;
        ASSERT_TRUE(kept.fetch(in0, early));
        EXPECT_EQ(std::memcmp(early.storage.data(), b.at(out0).storage.data(),
                              b.at(out0).nbytes()),
                  0)
            << kept.description() << ": " << in0 << " read while the step is in flight";
        st = kept.finish(a);
        ASSERT_TRUE(st) << kept.description() << ": " << st.message();
        EXPECT_FALSE(kept.finish(a)) << "no step in flight";
      }
      for (const auto &[out, in] : carry) {
        EXPECT_EQ(a.count(out), 0u) << out << " came back";
        keptBindings.erase(in); // the executor has it now
        reboundBindings[in] = b.at(out);
        b.erase(out);
      }
      EXPECT_TRUE(bitwiseEqual(a, b)) << kept.description() << ": seed " << seed;
    }
    for (const auto &[out, in] : carry) {
      Tensor t;
      Status st = kept.fetch(in, t);
      ASSERT_TRUE(st) << st.message();
      const Tensor &want = reboundBindings.at(in);
      ASSERT_EQ(t.shape, want.shape);
      EXPECT_EQ(std::memcmp(t.storage.data(), want.storage.data(), want.nbytes()), 0)
          << kept.description() << ": " << in;
    }
    Tensor none;
    EXPECT_FALSE(kept.fetch("input_k", none)) << "a bound input is not kept";
  }
}

/// A training loop asks for the loss, the gradient norm and the learning
/// rate alone (ExecOptions::wanted): the device executors copy back nothing
/// else and skip the bf16 step's casts of logits and hidden to f32, and what
/// comes back and the state the steps leave equal the full step's bit for
/// bit, launched piece by piece and replayed as a graph. On emu, and on the
/// GPU when one answers.
TEST(WholeStep, WantedOutputsSkipWhatNobodyReads) {
  Plan plan = loadPlan("xlnet-tiny-bf16.train");
  std::vector<std::pair<std::string, std::string>> carry;
  for (const Buffer &b : plan.buffers)
    for (const std::string &out : b.outputs)
      if (startsWith(out, "new.") || startsWith(out, "new_mems."))
        carry.emplace_back(out, out.substr(4));
  for (dev::DeviceKind kind : devicesToTest({dev::DeviceKind::Emu})) {
    Executor full, lean;
    ASSERT_TRUE(Executor::open(kind, {}, full));
    ASSERT_TRUE(Executor::open(kind, {}, lean));
    full.setCarry(carry);
    lean.setCarry(carry);
    TensorMap fullBindings = bindingsFor(plan, "xlnet-tiny-bf16"),
              leanBindings = fullBindings;
    for (uint64_t seed : {7u, 8u, 9u}) { // the third replays the graph
      SCOPED_TRACE(full.description() + ", seed " + std::to_string(seed));
      ExecOptions o;
      o.seed = seed;
      TensorMap a, b;
      Status st = full.execute(plan, fullBindings, a, o);
      ASSERT_TRUE(st) << st.message();
      o.wanted = {"loss", "grad_norm", "lr"};
      st = lean.execute(plan, leanBindings, b, o);
      ASSERT_TRUE(st) << st.message();
      EXPECT_TRUE(a.count("logits") && a.count("hidden"));
      std::vector<std::string> names;
      for (const auto &[name, t] : b)
        names.push_back(name);
      EXPECT_EQ(names, (std::vector<std::string>{"grad_norm", "loss", "lr"}));
      for (const std::string &name : names)
        EXPECT_EQ(std::memcmp(a.at(name).storage.data(), b.at(name).storage.data(),
                              b.at(name).nbytes()),
                  0)
            << name;
      EXPECT_EQ(full.skippedOps(), 0u);
      EXPECT_GE(lean.skippedOps(), 2u) << "the casts of logits and hidden";
      for (const auto &[out, in] : carry) {
        fullBindings.erase(in);
        leanBindings.erase(in);
      }
    }
    for (const auto &[out, in] : carry) {
      Tensor x, y;
      ASSERT_TRUE(full.fetch(in, x));
      ASSERT_TRUE(lean.fetch(in, y));
      EXPECT_EQ(std::memcmp(x.storage.data(), y.storage.data(), x.nbytes()), 0) << in;
    }
  }
}

/// The host's arena is never zeroed: every kernel writes all of its
/// outputs. A step whose temps start as 0xff bytes (NaN, -1, true) equals
/// the step on a fresh arena bit for bit, and a second step on the same
/// workspace (the arena reused) equals the first.
TEST(WholeStep, HostKernelsWriteAllOfTheirOutputs) {
  for (const auto &[planName, batchName] :
       {std::pair<std::string, std::string>{"xlnet-tiny.train", "xlnet-tiny"},
        {"tiny-gelu-nodropout.grads", "tiny-gelu-nodropout"}}) {
    SCOPED_TRACE(planName);
    Plan plan = loadPlan(planName);
    const TensorMap bindings = bindingsFor(plan, batchName);
    ExecOptions opts;
    opts.seed = 42;
    TensorMap clean, poisoned, again;
    HostWorkspace ws;
    ASSERT_TRUE(executeHost(plan, bindings, clean, opts, &ws));
    const uint8_t *arena = ws.arena();
    opts.poisonTemps = true;
    ASSERT_TRUE(executeHost(plan, bindings, poisoned, opts, &ws));
    EXPECT_EQ(ws.arena(), arena) << "the arena was not reused";
    EXPECT_GT(ws.arenaBytes(), 0u);
    EXPECT_TRUE(bitwiseEqual(clean, poisoned)) << "a kernel left part of an output unwritten";
    opts.poisonTemps = false;
    ASSERT_TRUE(executeHost(plan, bindings, again, opts));
    EXPECT_TRUE(bitwiseEqual(clean, again));
  }
}

/// The fused forms on whole steps (--xlnet-fuse-kernels, which every
/// compiled plan has been through): the sums a GEMM or the embedding's
/// scatter does itself (`kernelInits`: the gradients that meet at
/// residuals, layer inputs, the two streams' shared weights and the tied
/// embedding; the grads step returns its gradients, which the host's own
/// search once left unfused: 9 of these 14), the attention probabilities kept for the backward, and the
/// step's results against the same plan with every init added after its
/// kernel and nothing kept (ExecOptions::fuse off), within the tolerances
/// of a device against the host (the GEMM sums in another order where
/// OpenBLAS splits the inner dimension).
TEST(WholeStep, HostFusionsMatchOneKernelPerStep) {
  for (const auto &[planName, batchName, kernelInits] :
       {std::tuple<std::string, std::string, size_t>{"xlnet-tiny.train", "xlnet-tiny", 13},
        {"tiny-gelu-nodropout.grads", "tiny-gelu-nodropout", 14}}) {
    SCOPED_TRACE(planName);
    Plan plan = loadPlan(planName);
    size_t inits = 0;
    for (const Step &s : plan.steps)
      if ((s.kind == OpKind::Gemm || s.kind == OpKind::GemmWgrad ||
           s.kind == OpKind::EmbeddingGrad) &&
          s.initOf(0) >= 0)
        ++inits;
    EXPECT_EQ(inits, kernelInits);
    const TensorMap bindings = bindingsFor(plan, batchName);
    ExecOptions opts;
    opts.seed = 42;
    TensorMap fused, plain;
    HostWorkspace ws;
    ASSERT_TRUE(executeHost(plan, bindings, fused, opts, &ws));
    // Every rel_attention_grad (layer 0's two streams, layer 1's query
    // stream) reads the probabilities its rel_attention kept.
    EXPECT_EQ(ws.fusions().keptProbsFloats.size(), 3u);
    opts.fuse = false;
    ASSERT_TRUE(executeHost(plan, bindings, plain, opts, &ws));
    EXPECT_EQ(ws.fusions().keptProbsFloats.size(), 0u);
    expectMatchesHost(fused, plain, "host with fusions");
  }
}

/// The fusion set is the plan's, for both executors: every init of a
/// compiled step (f32 and bf16, train and grads) is read by its step's
/// device launches (a GEMM's C, a kernel's argument), every GELU epilogue
/// form is a GEMM with that epilogue, every LayerNorm gradient's dropped
/// dsum an argument of its kernels, and no `add` is left whose operand
/// only it reads from a GEMM (what --xlnet-fuse-kernels folds). The host
/// runs every init itself (executeHost refuses nothing here; the fused
/// forms' host results are checked bit for bit in ExecutorTest).
TEST(WholeStep, EmitterReadsEveryFusedFormOfThePlan) {
  for (const std::string name : {"xlnet-tiny.train", "xlnet-tiny-bf16.train",
                                 "tiny-gelu-nodropout.grads"}) {
    SCOPED_TRACE(name);
    const Plan plan = loadPlan(name);
    ASSERT_TRUE(plan.device);
    size_t inits = 0, epilogues = 0;
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step &s = plan.steps[i];
      std::set<int> read;
      std::set<dev::GemmEpilogue> gemmEpilogues;
      for (const DeviceLaunch &l : plan.device->steps[i].launches) {
        if (l.kind == DeviceLaunch::Gemm) {
          read.insert({l.c, l.aux, l.bias});
          gemmEpilogues.insert(l.gemm.epilogue);
        }
        for (const KernelArg &a : l.args)
          if (a.kind == KernelArg::Buffer)
            read.insert(a.index);
      }
      for (size_t k = 0; k < s.out.size(); ++k)
        if (s.initOf(k) >= 0) {
          ++inits;
          EXPECT_TRUE(read.count(s.initOf(k)))
              << stepPrefix(i, s) << "its device launches do not read the init of output " << k;
        }
      // The LayerNorm gradient's dsum dropout is its own launch's output.
      if (s.kind == OpKind::AddLayerNormGrad && s.attrs.dsumDropout) {
        ++epilogues;
        EXPECT_TRUE(read.count(s.out[3])) << stepPrefix(i, s);
      }
      if (s.kind == OpKind::Gemm && s.out.size() == 2) {
        ++epilogues;
        const dev::GemmEpilogue want = s.attrs.activationGrad == Activation::GeluTanh
                                           ? dev::GemmEpilogue::DGeluBGrad
                                           : dev::GemmEpilogue::GeluAuxBias;
        EXPECT_TRUE(gemmEpilogues.count(want)) << stepPrefix(i, s);
      }
    }
    EXPECT_GT(inits, 0u);
    EXPECT_GT(epilogues, 0u);
    // No add of a plain GEMM's result that only the add reads, with the
    // other operand there before the GEMM: the pass would have folded it.
    const PlanDataflow df = planDataflow(plan);
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      const Step &add = plan.steps[i];
      if (add.kind != OpKind::Add)
        continue;
      for (int u = 0; u < 2; ++u) {
        const int y = add.in[size_t(u)], x = add.in[size_t(1 - u)], g = df.writer[size_t(y)];
        if (g < 0 || df.uses(y) != 1 || df.writer[size_t(x)] >= g)
          continue;
        const Step &gemm = plan.steps[size_t(g)];
        const bool plain = (gemm.kind == OpKind::Gemm && gemm.in.size() == 2 &&
                            gemm.out.size() == 1 && gemm.attrs.activation == Activation::None) ||
                           gemm.kind == OpKind::GemmWgrad;
        EXPECT_FALSE(plain && gemm.init.empty())
            << stepPrefix(i, add) << "adds the result of step " << g << ", which could take it";
      }
    }
  }
}

/// One workspace across plans re-plans its arena for each new plan (the
/// results are those of fresh workspaces).
TEST(WholeStep, HostWorkspaceReplansForAnotherPlan) {
  Plan train = loadPlan("xlnet-tiny.train"), grads = loadPlan("tiny-gelu-nodropout.grads");
  const TensorMap trainIn = bindingsFor(train, "xlnet-tiny");
  const TensorMap gradsIn = bindingsFor(grads, "tiny-gelu-nodropout");
  TensorMap freshTrain, freshGrads;
  ASSERT_TRUE(executeHost(train, trainIn, freshTrain));
  ASSERT_TRUE(executeHost(grads, gradsIn, freshGrads));
  HostWorkspace ws;
  for (int round = 0; round < 2; ++round) {
    TensorMap a, b;
    ASSERT_TRUE(executeHost(train, trainIn, a, {}, &ws));
    ASSERT_TRUE(executeHost(grads, gradsIn, b, {}, &ws));
    EXPECT_TRUE(bitwiseEqual(a, freshTrain)) << "round " << round;
    EXPECT_TRUE(bitwiseEqual(b, freshGrads)) << "round " << round;
  }
}

/// Donated parameters and moments are updated in place: the outputs that
/// carry them on take the donated storage, with the values of a step that
/// donates nothing.
TEST(WholeStep, HostAdamUpdatesDonatedStateInPlace) {
  Plan plan = loadPlan("xlnet-tiny.train");
  const TensorMap bindings = bindingsFor(plan, "xlnet-tiny");
  TensorMap plain;
  ASSERT_TRUE(executeHost(plan, bindings, plain));
  TensorMap bound, donated, inPlace;
  std::map<std::string, const void *> storage;
  for (const auto &[name, t] : bindings) {
    bool state = false;
    for (const Buffer &b : plan.buffers)
      if (b.name == name && (b.role == Buffer::Param || startsWith(name, "adam_")))
        state = true;
    if (state) {
      donated[name] = t;
      storage[name] = donated[name].f32();
    } else {
      bound[name] = t;
    }
  }
  ASSERT_GT(storage.size(), 10u);
  ASSERT_TRUE(executeHost(plan, bound, inPlace, {}, nullptr, &donated));
  EXPECT_TRUE(bitwiseEqual(plain, inPlace));
  for (const auto &[name, data] : storage) {
    SCOPED_TRACE(name);
    ASSERT_EQ(inPlace.count("new." + name), 1u);
    EXPECT_EQ(static_cast<const void *>(inPlace.at("new." + name).f32()), data);
    EXPECT_TRUE(donated.at(name).storage.empty()) << "still held by the caller";
  }
}

/// With XLNETC_FAULT_GEMM_EPILOGUE=unsupported every GEMM with a fused
/// epilogue runs as the GEMM and an epilogue kernel (GemmFallback.h): the
/// f32 grads step (bias, gelu_aux_bias, dgelu_bgrad) and the bf16 training
/// step (bias and gelu_aux_bias with bf16 D, through the f32 scratch). The
/// step warns once per descriptor, its three runs (piece by piece, recorded,
/// replayed) are bitwise equal, and so are they to the fused step's on emu
/// (the kernels compute the reference epilogues' operations); on the GPU,
/// when one answers, they are within the host tolerances of the fused step
/// (f32) or 2% of each tensor's largest magnitude (bf16: a product rounded
/// the other way moves on through the step).
TEST(WholeStep, UnfusedEpiloguesGiveTheFusedStep) {
  for (const auto &[planName, batchName] :
       {std::pair<std::string, std::string>{"tiny-gelu-nodropout.grads", "tiny-gelu-nodropout"},
        {"xlnet-tiny-bf16.train", "xlnet-tiny-bf16"}}) {
    SCOPED_TRACE(planName);
    Plan plan = loadPlan(planName);
    ASSERT_TRUE(plan.device);
    const TensorMap bindings = bindingsFor(plan, batchName);
    std::set<std::string> descriptors; // of the GEMMs with a fused epilogue
    for (const DeviceStep &s : plan.device->steps)
      for (const DeviceLaunch &l : s.launches)
        if (l.kind == DeviceLaunch::Gemm && l.gemm.epilogue != dev::GemmEpilogue::Default)
          descriptors.insert(dev::describeGemm(l.gemm));
    ASSERT_GE(descriptors.size(), 2u);
    ExecOptions opts;
    opts.seed = 42;
    for (dev::DeviceKind kind : devicesToTest({dev::DeviceKind::Emu})) {
      Executor fused;
      ASSERT_TRUE(Executor::open(kind, {}, fused));
      TensorMap want;
      Status st = fused.execute(plan, bindings, want, opts);
      ASSERT_TRUE(st) << fused.description() << ": " << st.message();
      xlnetc::rt::testing::ScopedEnv hook("XLNETC_FAULT_GEMM_EPILOGUE", "unsupported");
      Executor unfused;
      ASSERT_TRUE(Executor::open(kind, {}, unfused));
      ::testing::internal::CaptureStderr();
      std::vector<TensorMap> runs(3);
      for (TensorMap &out : runs)
        if (st)
          st = unfused.execute(plan, bindings, out, opts);
      const std::string log = ::testing::internal::GetCapturedStderr();
      ASSERT_TRUE(st) << unfused.description() << ": " << st.message();
      for (const std::string &desc : descriptors) {
        size_t warnings = 0;
        for (size_t at = log.find(desc + ": XLNETC_FAULT"); at != std::string::npos;
             at = log.find(desc + ": XLNETC_FAULT", at + 1))
          ++warnings;
        EXPECT_EQ(warnings, 1u) << desc << "\n" << log;
      }
      EXPECT_TRUE(bitwiseEqual(runs[0], runs[1]) && bitwiseEqual(runs[0], runs[2]))
          << unfused.description() << ": the runs of the unfused step differ";
      if (kind == dev::DeviceKind::Emu) {
        EXPECT_TRUE(bitwiseEqual(runs[0], want)) << "the unfused step is not the fused one";
      } else if (planName == "xlnet-tiny-bf16.train") {
        for (const auto &[name, r] : want) {
          if (r.dtype != DType::F32)
            continue;
          double worst = 0;
          for (int64_t i = 0; i < r.numel(); ++i)
            worst = std::max(worst, std::fabs(double(runs[0].at(name).f32()[i]) -
                                              double(r.f32()[i])));
          EXPECT_LE(worst, 0.02 * maxAbs(r)) << unfused.description() << ": " << name;
        }
      } else {
        expectMatchesHost(runs[0], want, unfused.description() + " unfused");
      }
    }
  }
}

TEST(WholeStep, TinyTrainingStep) {
  checkWholeStep("xlnet-tiny.train", "xlnet-tiny");
}

/// A device that forwards everything to another and counts the work asked
/// of it: allocations, kernel launches, GEMMs, memsets.
class CountingDevice : public xlnetc::rt::testing::ForwardingDevice {
public:
  using ForwardingDevice::ForwardingDevice;
  int allocs = 0, launches = 0, gemms = 0, memsets = 0;

  Status alloc(size_t bytes, dev::DevPtr &out) override {
    ++allocs;
    return ForwardingDevice::alloc(bytes, out);
  }
  Status memset(dev::DevPtr dst, int value, size_t bytes) override {
    ++memsets;
    return ForwardingDevice::memset(dst, value, bytes);
  }
  Status launch(const dev::Kernel &kernel, const dev::LaunchDims &dims, void **params,
                const std::string &where) override {
    ++launches;
    return ForwardingDevice::launch(kernel, dims, params, where);
  }
  Status gemm(const dev::GemmDesc &desc, const dev::GemmOperands &ops,
              const std::string &where) override {
    ++gemms;
    return ForwardingDevice::gemm(desc, ops, where);
  }
};

/// The tensor-core attention kernels' launches of `program` (PHASE 4, the
/// bias columns, aside): their block sizes and dynamic shared memory.
std::set<std::pair<uint32_t, uint32_t>> tcLaunches(const DeviceProgram &program) {
  std::set<std::pair<uint32_t, uint32_t>> found;
  for (const DeviceStep &s : program.steps)
    for (const DeviceLaunch &l : s.launches)
      if (l.kind == DeviceLaunch::Kernel && l.kernel.find("_rel_attention_tc") != std::string::npos &&
          l.kernel.find("_p4") == std::string::npos)
        found.insert({l.block, l.dynSmem});
  return found;
}

/// The bf16 training step made for a GPU with less shared memory per block
/// (48 KiB here, an emulated device limited to it): its tensor-core
/// attention takes 2 warps per block instead of sm_90's 4, and the step's
/// results are bitwise those of the program made for sm_90. That program
/// on the smaller device is refused before anything is allocated or
/// launched, with one line naming the step, the kernel, what it needs, what
/// the device allows and what to do.
TEST(WholeStep, Bf16TilesFollowTheTargetGpuAndChangeNoResult) {
  Plan plan = loadPlan("xlnet-tiny-bf16.train"); // made for sm_90
  const DeviceProgram &sm90 = *plan.device;
  dev::GpuTarget small;
  small.arch = "emu";
  small.smemPerBlock = 48 * 1024;
  DeviceProgram smallProgram;
  Status st = xlnetc::cuda::emitDeviceProgram(plan, {"small.cu", "", small}, smallProgram);
  ASSERT_TRUE(st) << st.message();
  // d_head 16: the forward's 52736 bytes and the backward's 85504 in 4
  // warps, 29952 and 46336 in 2 (AttentionTc.h).
  using Launches = std::set<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(tcLaunches(sm90), (Launches{{128, 52736}, {128, 85504}}));
  EXPECT_EQ(tcLaunches(smallProgram), (Launches{{64, 29952}, {64, 46336}}));

  const TensorMap bindings = bindingsFor(plan, "xlnet-tiny");
  ExecOptions opts;
  opts.seed = 7;
  TensorMap want;
  {
    std::unique_ptr<dev::Device> emu;
    ASSERT_TRUE(dev::openDevice(dev::DeviceKind::Emu, {}, emu));
    DeviceExecutor ex(*emu);
    st = ex.execute(plan, sm90, bindings, want, opts);
    ASSERT_TRUE(st) << st.message();
  }

  std::unique_ptr<dev::Device> emu;
  {
    xlnetc::rt::testing::ScopedEnv limit("XLNETC_EMU_SMEM_PER_BLOCK", "49152");
    ASSERT_TRUE(dev::openDevice(dev::DeviceKind::Emu, {}, emu));
  }
  ASSERT_EQ(emu->maxSharedMemoryPerBlock(), 49152u);
  CountingDevice counted(*emu);
  DeviceExecutor ex(counted);
  TensorMap got;
  st = ex.execute(plan, sm90, bindings, got, opts);
  ASSERT_FALSE(st);
  // The first launch over the limit: the first attention forward.
  EXPECT_NE(st.message().find(" (rel_attention, loc 'layer.0'): kernel 's"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("_rel_attention_tc' needs 52736 bytes of shared memory per block "
                              "(0 static + 52736 dynamic); this device (emu) allows 49152: "
                              "compile the step for a GPU within that (xlnetc compile SPEC -o "
                              "BUNDLE --arch ARCH) or raise XLNETC_EMU_SMEM_PER_BLOCK"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(counted.allocs + counted.launches + counted.gemms + counted.memsets, 0)
      << "work before the check";

  st = ex.execute(plan, smallProgram, bindings, got, opts);
  ASSERT_TRUE(st) << st.message();
  EXPECT_GT(counted.launches, 0);
  EXPECT_TRUE(bitwiseEqual(got, want)) << "2 warps per block changed a result";
}

TEST(WholeStep, TanhGeluEpiloguesGradsStep) {
  checkWholeStep("tiny-gelu-nodropout.grads", "tiny-gelu-nodropout");
}

} // namespace
