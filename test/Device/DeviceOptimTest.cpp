//===- DeviceOptimTest.cpp - Optimizer and loss kernels on emu ------------===//
//
// The device templates of xlnetc_k_optim.cuh (lr_schedule, global_norm,
// adam_update and its multi-tensor form) and xlnetc_k_loss.cuh (lm_loss,
// lm_loss_grad, embedding_grad, mask_embedding_grad), instantiated in small
// modules, run on the emulated device with grids smaller than the work, and
// compared with the host reference kernels (runtime/host/Kernels.h); the
// multi-phase reductions are checked bitwise against themselves under other
// grid sizes; the modules compile for sm_90 with NVRTC without spills.
// The templates come embedded with the prelude (runtime/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/Device.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/device/CudaApi.h"
#include "runtime/host/Kernels.h"

#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>


using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;

namespace {

/// The status words and codes of xlnetc_k_common.cuh, _optim.cuh, _loss.cuh.
constexpr int XL_STATUS_WORDS_TEST = 5;
constexpr int XL_ERR_EMBEDDING_ID_TEST = 1;
constexpr int XL_ERR_NEGATIVE_STEP_TEST = 8;
constexpr int XL_ERR_LM_TARGET_TEST = 9;

/// "0x...ull": the bits of a double, for an X_BITS template argument.
std::string bits(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llxull",
                xlnetc::rt::testing::doubleBits(d));
  return buf;
}

//===----------------------------------------------------------------------===//
// Module sources (shapes are shared with the tests below)
//===----------------------------------------------------------------------===//

constexpr int kBlock = 64;
// lr_schedule
constexpr double kLr = 3e-4, kMinRatio = 0.1;
constexpr int64_t kWarm = 10, kTrain = 100;
// global_norm: sizes with an empty tensor and chunk tails.
const std::vector<int64_t> kNormSizes = {1000, 0, 37, 4097, 5};
constexpr int64_t kNormChunk = 256;
// adam
constexpr int64_t kAdamN = 1000;
const std::vector<int64_t> kMultiSizes = {300, 0, 1, 777, 129};
const std::vector<int> kMultiDecay = {1, 0, 1, 0, 1};
constexpr int64_t kAdamChunk = 128;
constexpr double kB1 = 0.9, kB2 = 0.999, kEps = 1e-6, kClip = 1.0,
                 kWd = 0.01;

int64_t chunksOf(const std::vector<int64_t> &sizes, int64_t chunk) {
  int64_t n = 0;
  for (int64_t s : sizes)
    n += (s + chunk - 1) / chunk;
  return n;
}

std::string optimModuleText() {
  std::ostringstream s;
  const std::string lrArgs = bits(kLr) + ", " + std::to_string(kWarm) + ", " +
                             std::to_string(kTrain) + ", " + bits(kMinRatio);
  const int64_t normChunks = chunksOf(kNormSizes, kNormChunk);
  const int64_t adamChunks = chunksOf(kMultiSizes, kAdamChunk);
  const std::string adamBits = bits(kB1) + ", " + bits(kB2) + ", " +
                               bits(kEps) + ", " + bits(kClip) + ", " +
                               bits(kWd);
  s << "#include \"xlnetc_prelude.cuh\"\n"
       "#include \"xlnetc_k_optim.cuh\"\n";
  for (int decay : {0, 1})
    s << "XL_KERNEL void lr_" << decay
      << "(const xl_i64 *step, float *lr, int *status, unsigned long long "
         "seed) {\n  xl_lr_schedule<"
      << lrArgs << ", " << decay << ", " << kBlock
      << ">(step, lr, status, seed);\n}\nXL_EXPORT(lr_" << decay << ")\n";
  // train_steps <= warmup_steps: t = 1 after the warmup.
  s << "XL_KERNEL void lr_short(const xl_i64 *step, float *lr, int *status, "
       "unsigned long long seed) {\n  xl_lr_schedule<"
    << bits(kLr) << ", 10, 5, " << bits(kMinRatio) << ", 0, " << kBlock
    << ">(step, lr, status, seed);\n}\nXL_EXPORT(lr_short)\n";
  for (int phase : {0, 1})
    s << "XL_KERNEL void gnorm_" << phase
      << "(const XlNormEntry *t, float *out, double *ws, unsigned long long "
         "seed) {\n  xl_global_norm<"
      << kNormSizes.size() << ", " << normChunks << ", " << kNormChunk << ", "
      << phase << ", " << kBlock << ">(t, out, ws, seed);\n}\nXL_EXPORT(gnorm_"
      << phase << ")\n";
  // One parameter of kAdamN elements: the multi-tensor kernel (the only
  // adam_update kernel) over a table of one entry, built in the wrapper.
  for (int bc : {0, 1})
    s << "XL_KERNEL void adam_" << bc
      << "(const float *p, const float *g, const float *m, const float *v, "
         "const float *lr, const float *gn, const xl_i64 *step, float *po, "
         "float *mo, float *vo, int *status, unsigned long long seed) {\n"
         "  XlAdamEntry e = {p, g, m, v, po, mo, vo, "
      << kAdamN << ", 0, 1, 0};\n  xl_adam_update_multi<1, " << chunksOf({kAdamN}, kAdamChunk)
      << ", " << kAdamChunk << ", " << adamBits << ", " << (bc ? "true" : "false") << ", "
      << kBlock << ">(&e, lr, gn, step, status, seed);\n}\nXL_EXPORT(adam_" << bc << ")\n";
  for (int bc : {0, 1})
    s << "XL_KERNEL void adam_multi_" << bc
      << "(const XlAdamEntry *t, const float *lr, const float *gn, const "
         "xl_i64 *step, int *status, unsigned long long seed) {\n"
         "  xl_adam_update_multi<"
      << kMultiSizes.size() << ", " << adamChunks << ", " << kAdamChunk << ", "
      << adamBits << ", " << (bc ? "true" : "false") << ", " << kBlock
      << ">(t, lr, gn, step, status, seed);\n}\nXL_EXPORT(adam_multi_" << bc
      << ")\n";
  return s.str();
}

//===----------------------------------------------------------------------===//
// Device helpers
//===----------------------------------------------------------------------===//

/// One emulated device and the modules of this test, shared by the tests
/// (each g++ module compile costs seconds).
struct Fixture {
  std::unique_ptr<Device> dev;
  std::map<std::string, std::unique_ptr<Module>> modules;
  std::vector<DevPtr> allocs;

  static Fixture &get() {
    static Fixture f;
    return f;
  }
  Fixture() {
    Status st = openDevice(DeviceKind::Emu, {}, dev);
    if (!st.isOk())
      ADD_FAILURE() << st.message();
  }
  ~Fixture() {
    for (DevPtr p : allocs)
      dev->free(p);
  }
  Module *module(const std::string &name, const std::string &text) {
    auto it = modules.find(name);
    if (it != modules.end())
      return it->second.get();
    ModuleSource src;
    src.name = name;
    src.text = text;
    std::unique_ptr<Module> m;
    Status st = dev->loadModule(src, m);
    EXPECT_TRUE(st.isOk()) << st.message();
    if (!st.isOk())
      return nullptr;
    return (modules[name] = std::move(m)).get();
  }
  template <class T> DevPtr upload(const std::vector<T> &v) {
    DevPtr p;
    size_t bytes = std::max<size_t>(1, v.size()) * sizeof(T);
    EXPECT_TRUE(dev->alloc(bytes, p).isOk());
    allocs.push_back(p);
    if (!v.empty()) {
      EXPECT_TRUE(dev->upload(p, v.data(), v.size() * sizeof(T)).isOk());
    }
    return p;
  }
  template <class T> DevPtr zeros(size_t n) {
    return upload(std::vector<T>(std::max<size_t>(n, 1), T(0)));
  }
  template <class T> std::vector<T> download(DevPtr p, size_t n) {
    std::vector<T> v(n);
    if (n) {
      EXPECT_TRUE(dev->download(v.data(), p, n * sizeof(T)).isOk());
    }
    return v;
  }
  /// Launches `name` of `mod` on `grid` blocks of kBlock threads.
  void launch(Module *mod, const std::string &name, unsigned grid,
              std::vector<void *> params) {
    ASSERT_NE(mod, nullptr);
    Kernel k;
    Status st = dev->getKernel(*mod, name, k);
    ASSERT_TRUE(st.isOk()) << st.message();
    LaunchDims d;
    d.grid[0] = grid;
    d.block[0] = kBlock;
    st = dev->launch(k, d, params.data(), name);
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(dev->synchronize(name).isOk());
  }
};

Module *optimModule() {
  return Fixture::get().module("optim_test.cu", optimModuleText());
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1.0f,
                                float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = u(rng);
  return v;
}

float maxAbs(const float *v, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i)
    m = std::max(m, std::fabs(v[i]));
  return m;
}

/// max |ref - got| / max |ref| (0 when both are zero).
double relErr(const float *ref, const float *got, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i)
    worst = std::max(worst, std::fabs(double(ref[i]) - double(got[i])));
  double scale = maxAbs(ref, n);
  return scale == 0 ? worst : worst / scale;
}

//===----------------------------------------------------------------------===//
// lr_schedule
//===----------------------------------------------------------------------===//

TEST(DeviceOptim, LrScheduleMatchesHost) {
  Fixture &f = Fixture::get();
  Module *mod = optimModule();
  ASSERT_NE(mod, nullptr);
  DevPtr dstep = f.zeros<int64_t>(1), dlr = f.zeros<float>(1),
         dstatus = f.zeros<int>(XL_STATUS_WORDS_TEST);
  unsigned long long seed = 7;
  struct Case {
    const char *kernel;
    int64_t warm, train;
    LrDecay decay;
  };
  for (Case c : {Case{"lr_0", kWarm, kTrain, LrDecay::Poly},
                 Case{"lr_1", kWarm, kTrain, LrDecay::Cos},
                 Case{"lr_short", 10, 5, LrDecay::Poly}}) {
    host::LrScheduleArgs a;
    a.learningRate = kLr;
    a.warmupSteps = c.warm;
    a.trainSteps = c.train;
    a.minLrRatio = kMinRatio;
    a.decay = c.decay;
    for (int64_t step : {0, 1, 5, 9, 10, 11, 37, 99, 100, 101, 5000}) {
      std::vector<int64_t> sv = {step};
      ASSERT_TRUE(f.dev->upload(dstep, sv.data(), 8).isOk());
      f.launch(mod, c.kernel, 2, {&dstep, &dlr, &dstatus, &seed});
      float got = f.download<float>(dlr, 1)[0];
      Tensor st = Tensor::fromI64({}, sv), out = Tensor::zeros(DType::F32, {});
      ASSERT_TRUE(host::lrSchedule(st, a, out).isOk());
      EXPECT_EQ(got, out.f32()[0]) << c.kernel << " step " << step;
      EXPECT_EQ(f.download<int>(dstatus, 1)[0], 0);
    }
  }
  // A negative step is a data error; lr is left alone.
  std::vector<int64_t> neg = {-3};
  std::vector<float> sentinel = {42.0f};
  ASSERT_TRUE(f.dev->upload(dstep, neg.data(), 8).isOk());
  ASSERT_TRUE(f.dev->upload(dlr, sentinel.data(), 4).isOk());
  f.launch(mod, "lr_1", 3, {&dstep, &dlr, &dstatus, &seed});
  auto status = f.download<int>(dstatus, 3);
  EXPECT_EQ(status[0], XL_ERR_NEGATIVE_STEP_TEST);
  EXPECT_EQ(status[1], -3);
  EXPECT_EQ(status[2], -1);
  EXPECT_EQ(f.download<float>(dlr, 1)[0], 42.0f);
}

//===----------------------------------------------------------------------===//
// global_norm
//===----------------------------------------------------------------------===//

struct NormEntry { // XlNormEntry's layout
  uint64_t data;
  int64_t count, chunkBegin;
};
static_assert(sizeof(NormEntry) == 24);

TEST(DeviceOptim, GlobalNormMatchesHostAndIgnoresTheGrid) {
  Fixture &f = Fixture::get();
  Module *mod = optimModule();
  ASSERT_NE(mod, nullptr);
  std::vector<Tensor> grads;
  std::vector<NormEntry> table;
  int64_t chunk = 0;
  for (size_t i = 0; i < kNormSizes.size(); ++i) {
    int64_t n = kNormSizes[i];
    grads.push_back(Tensor::fromF32({n}, randomFloats(n, 100 + i, -2, 2)));
    table.push_back({f.upload(std::vector<float>(grads.back().f32(),
                                                 grads.back().f32() + n)),
                     n, chunk});
    chunk += (n + kNormChunk - 1) / kNormChunk;
  }
  DevPtr dtable = f.upload(table), dws = f.zeros<double>(chunk),
         dout = f.zeros<float>(1);
  unsigned long long seed = 0;
  std::vector<float> results;
  std::vector<std::vector<double>> partials;
  for (unsigned grid : {1u, 3u, 7u, 64u}) {
    f.launch(mod, "gnorm_0", grid, {&dtable, &dout, &dws, &seed});
    f.launch(mod, "gnorm_1", grid == 64 ? 2 : 1, {&dtable, &dout, &dws, &seed});
    results.push_back(f.download<float>(dout, 1)[0]);
    partials.push_back(f.download<double>(dws, chunk));
  }
  for (size_t i = 1; i < results.size(); ++i) {
    uint32_t a, b;
    std::memcpy(&a, &results[0], 4);
    std::memcpy(&b, &results[i], 4);
    EXPECT_EQ(a, b) << "grid run " << i;
    EXPECT_EQ(std::memcmp(partials[0].data(), partials[i].data(),
                          partials[0].size() * 8),
              0);
  }
  std::vector<const Tensor *> ptrs;
  for (auto &g : grads)
    ptrs.push_back(&g);
  Tensor ref = Tensor::zeros(DType::F32, {});
  host::globalNorm(ptrs, ref);
  std::printf("global_norm: host %.9g device %.9g\n", ref.f32()[0],
              results[0]);
  EXPECT_LE(std::fabs(double(ref.f32()[0]) - results[0]),
            1e-6 * std::fabs(ref.f32()[0]))
      << ref.f32()[0] << " vs " << results[0];
}

//===----------------------------------------------------------------------===//
// adam_update
//===----------------------------------------------------------------------===//

host::AdamArgs adamArgs(bool biasCorrection, double wd) {
  host::AdamArgs a;
  a.beta1 = kB1;
  a.beta2 = kB2;
  a.epsilon = kEps;
  a.clip = kClip;
  a.weightDecay = wd;
  a.biasCorrection = biasCorrection;
  return a;
}

TEST(DeviceOptim, AdamUpdateMatchesHost) {
  Fixture &f = Fixture::get();
  Module *mod = optimModule();
  ASSERT_NE(mod, nullptr);
  const int64_t n = kAdamN;
  auto p = randomFloats(n, 1), g = randomFloats(n, 2, -0.5f, 0.5f),
       m = randomFloats(n, 3, -0.1f, 0.1f), v = randomFloats(n, 4, 0, 0.01f);
  unsigned long long seed = 0;
  // grad_norm above the clip (clipping active) and below it.
  for (float norm : {3.5f, 0.25f})
    for (int bc : {0, 1}) {
      std::vector<float> lr = {2e-3f}, gn = {norm};
      std::vector<int64_t> step = {bc ? 6 : 0};
      DevPtr dp = f.upload(p), dg = f.upload(g), dm = f.upload(m),
             dv = f.upload(v), dlr = f.upload(lr), dgn = f.upload(gn),
             dstep = f.upload(step), dpo = f.zeros<float>(n),
             dmo = f.zeros<float>(n), dvo = f.zeros<float>(n),
             dstatus = f.zeros<int>(XL_STATUS_WORDS_TEST);
      f.launch(mod, bc ? "adam_1" : "adam_0", 3,
               {&dp, &dg, &dm, &dv, &dlr, &dgn, &dstep, &dpo, &dmo, &dvo,
                &dstatus, &seed});
      Tensor tp = Tensor::fromF32({n}, p), tg = Tensor::fromF32({n}, g),
             tm = Tensor::fromF32({n}, m), tv = Tensor::fromF32({n}, v),
             tlr = Tensor::fromF32({}, lr), tgn = Tensor::fromF32({}, gn),
             ts = Tensor::fromI64({}, step);
      Tensor po = Tensor::zeros(DType::F32, {n}), mo = po, vo = po;
      ASSERT_TRUE(host::adamUpdate(tp, tg, tm, tv, tlr, tgn, ts,
                                   adamArgs(bc, kWd), po, mo, vo)
                      .isOk());
      auto gp = f.download<float>(dpo, n), gm = f.download<float>(dmo, n),
           gv = f.download<float>(dvo, n);
      // The param step is lr-sized: compare the updates, not the params.
      std::vector<float> dref(n), dgot(n);
      for (int64_t i = 0; i < n; ++i) {
        dref[i] = po.f32()[i] - p[i];
        dgot[i] = gp[i] - p[i];
      }
      std::printf("adam bc=%d norm=%g: rel err param %.3g m %.3g v %.3g "
                  "update %.3g\n",
                  bc, norm, relErr(po.f32(), gp.data(), n),
                  relErr(mo.f32(), gm.data(), n),
                  relErr(vo.f32(), gv.data(), n),
                  relErr(dref.data(), dgot.data(), n));
      EXPECT_LE(relErr(po.f32(), gp.data(), n), 1e-6) << "bc " << bc;
      EXPECT_LE(relErr(mo.f32(), gm.data(), n), 1e-6) << "bc " << bc;
      EXPECT_LE(relErr(vo.f32(), gv.data(), n), 1e-6) << "bc " << bc;
      EXPECT_LE(relErr(dref.data(), dgot.data(), n), 1e-5) << "bc " << bc;
      EXPECT_EQ(f.download<int>(dstatus, 1)[0], 0);
    }
  // A NaN grad_norm makes the clipped update NaN, as on the host (TF).
  {
    std::vector<float> lr = {1e-3f}, gn = {std::nanf("")};
    std::vector<int64_t> step = {3};
    DevPtr dp = f.upload(p), dg = f.upload(g), dm = f.upload(m),
           dv = f.upload(v), dlr = f.upload(lr), dgn = f.upload(gn),
           dstep = f.upload(step), dpo = f.zeros<float>(n),
           dmo = f.zeros<float>(n), dvo = f.zeros<float>(n),
           dstatus = f.zeros<int>(XL_STATUS_WORDS_TEST);
    f.launch(mod, "adam_1", 2,
             {&dp, &dg, &dm, &dv, &dlr, &dgn, &dstep, &dpo, &dmo, &dvo,
              &dstatus, &seed});
    Tensor tp = Tensor::fromF32({n}, p), tg = Tensor::fromF32({n}, g),
           tm = Tensor::fromF32({n}, m), tv = Tensor::fromF32({n}, v),
           tlr = Tensor::fromF32({}, lr), tgn = Tensor::fromF32({}, gn),
           ts = Tensor::fromI64({}, step);
    Tensor po = Tensor::zeros(DType::F32, {n}), mo = po, vo = po;
    ASSERT_TRUE(host::adamUpdate(tp, tg, tm, tv, tlr, tgn, ts,
                                 adamArgs(true, kWd), po, mo, vo)
                    .isOk());
    auto gp = f.download<float>(dpo, n);
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::isnan(gp[i]), std::isnan(po.f32()[i])) << i;
    EXPECT_TRUE(std::isnan(gp[0]));
  }
  // A negative step: a data error, nothing written.
  std::vector<float> lr = {1e-3f}, gn = {1.0f};
  std::vector<int64_t> step = {-(int64_t(1) << 33) - 5};
  DevPtr dp = f.upload(p), dg = f.upload(g), dm = f.upload(m),
         dv = f.upload(v), dlr = f.upload(lr), dgn = f.upload(gn),
         dstep = f.upload(step), dpo = f.zeros<float>(n),
         dmo = f.zeros<float>(n), dvo = f.zeros<float>(n),
         dstatus = f.zeros<int>(XL_STATUS_WORDS_TEST);
  f.launch(mod, "adam_1", 2,
           {&dp, &dg, &dm, &dv, &dlr, &dgn, &dstep, &dpo, &dmo, &dvo, &dstatus,
            &seed});
  auto status = f.download<int>(dstatus, 3);
  EXPECT_EQ(status[0], XL_ERR_NEGATIVE_STEP_TEST);
  uint64_t s = uint64_t(step[0]);
  EXPECT_EQ(uint32_t(status[1]), uint32_t(s & 0xffffffffu));
  EXPECT_EQ(uint32_t(status[2]), uint32_t(s >> 32));
  EXPECT_EQ(maxAbs(f.download<float>(dpo, n).data(), n), 0.0f);
}

struct AdamEntry { // XlAdamEntry's layout
  uint64_t param, grad, m, v, paramOut, mOut, vOut;
  int64_t count, chunkBegin;
  int32_t decay, pad;
};
static_assert(sizeof(AdamEntry) == 80);

TEST(DeviceOptim, MultiTensorAdamMatchesHostPerTensor) {
  Fixture &f = Fixture::get();
  Module *mod = optimModule();
  ASSERT_NE(mod, nullptr);
  unsigned long long seed = 0;
  for (int bc : {0, 1}) {
    std::vector<float> lr = {1e-3f}, gn = {2.0f};
    std::vector<int64_t> step = {41};
    std::vector<AdamEntry> table;
    std::vector<std::vector<float>> ps, gs, ms, vs;
    int64_t chunk = 0;
    for (size_t i = 0; i < kMultiSizes.size(); ++i) {
      int64_t n = kMultiSizes[i];
      ps.push_back(randomFloats(n, 10 + i));
      gs.push_back(randomFloats(n, 20 + i, -0.3f, 0.3f));
      ms.push_back(randomFloats(n, 30 + i, -0.05f, 0.05f));
      vs.push_back(randomFloats(n, 40 + i, 0, 0.002f));
      AdamEntry e;
      e.param = f.upload(ps[i]);
      e.grad = f.upload(gs[i]);
      e.m = f.upload(ms[i]);
      e.v = f.upload(vs[i]);
      // Entry 3 updates in place.
      bool inPlace = i == 3;
      e.paramOut = inPlace ? e.param : f.zeros<float>(n);
      e.mOut = inPlace ? e.m : f.zeros<float>(n);
      e.vOut = inPlace ? e.v : f.zeros<float>(n);
      e.count = n;
      e.chunkBegin = chunk;
      e.decay = kMultiDecay[i];
      e.pad = 0;
      chunk += (n + kAdamChunk - 1) / kAdamChunk;
      table.push_back(e);
    }
    DevPtr dtable = f.upload(table), dlr = f.upload(lr), dgn = f.upload(gn),
           dstep = f.upload(step), dstatus = f.zeros<int>(XL_STATUS_WORDS_TEST);
    f.launch(mod, bc ? "adam_multi_1" : "adam_multi_0", 2,
             {&dtable, &dlr, &dgn, &dstep, &dstatus, &seed});
    EXPECT_EQ(f.download<int>(dstatus, 1)[0], 0);
    for (size_t i = 0; i < kMultiSizes.size(); ++i) {
      int64_t n = kMultiSizes[i];
      Tensor tp = Tensor::fromF32({n}, ps[i]), tg = Tensor::fromF32({n}, gs[i]),
             tm = Tensor::fromF32({n}, ms[i]), tv = Tensor::fromF32({n}, vs[i]),
             tlr = Tensor::fromF32({}, lr), tgn = Tensor::fromF32({}, gn),
             ts = Tensor::fromI64({}, step);
      Tensor po = Tensor::zeros(DType::F32, {n}), mo = po, vo = po;
      ASSERT_TRUE(host::adamUpdate(tp, tg, tm, tv, tlr, tgn, ts,
                                   adamArgs(bc, kMultiDecay[i] ? kWd : 0.0),
                                   po, mo, vo)
                      .isOk());
      auto gp = f.download<float>(table[i].paramOut, n),
           gm = f.download<float>(table[i].mOut, n),
           gv = f.download<float>(table[i].vOut, n);
      EXPECT_LE(relErr(po.f32(), gp.data(), n), 1e-6) << "tensor " << i;
      EXPECT_LE(relErr(mo.f32(), gm.data(), n), 1e-6) << "tensor " << i;
      EXPECT_LE(relErr(vo.f32(), gv.data(), n), 1e-6) << "tensor " << i;
    }
  }
}

//===----------------------------------------------------------------------===//
// Loss and embedding gradients (xlnetc_k_loss.cuh)
//===----------------------------------------------------------------------===//

constexpr int64_t kLB = 3, kLNP = 5, kLV = 1000; // lm_loss
struct EmbShape {
  int64_t B, S, V, D;
};
const EmbShape kEmb[2] = {{3, 37, 50, 70}, {4, 50, 300, 8}};
constexpr int64_t kMRows = 21, kMD = 130; // mask_embedding_grad

std::string lossModuleText() {
  std::ostringstream s;
  const std::string lshape = std::to_string(kLB) + ", " +
                             std::to_string(kLNP) + ", " + std::to_string(kLV);
  s << "#include \"xlnetc_prelude.cuh\"\n"
       "#include \"xlnetc_k_loss.cuh\"\n";
  for (int phase : {0, 1})
    s << "XL_KERNEL void lm_loss_" << phase
      << "(const float *l, const xl_i64 *t, const float *m, float *loss, "
         "float *ptl, double *ws, int *status, unsigned long long seed) {\n"
         "  xl_lm_loss<"
      << lshape << ", " << phase << ", " << kBlock
      << ">(l, t, m, loss, ptl, ws, status, seed);\n}\nXL_EXPORT(lm_loss_"
      << phase << ")\n";
  s << "XL_KERNEL void lm_loss_grad(const float *l, const xl_i64 *t, const "
       "float *m, const float *c, float *dl, int *status, unsigned long long seed) {\n"
       "  xl_lm_loss_grad<"
    << lshape << ", " << kBlock
    << ">(l, t, m, c, dl, status, seed);\n}\nXL_EXPORT(lm_loss_grad)\n";
  for (int e = 0; e < 2; ++e)
    for (int phase : {0, 1})
      s << "XL_KERNEL void emb" << e << "_" << phase
        << "(const xl_i64 *ids, const float *dout, float *out, int *ws, int "
           "*status, unsigned long long seed) {\n  xl_embedding_grad<"
        << kEmb[e].B << ", " << kEmb[e].S << ", " << kEmb[e].V << ", "
        << kEmb[e].D << ", " << phase << ", " << kBlock
        << ">(ids, dout, (const float *)0, out, ws, status, seed);\n}\nXL_EXPORT(emb" << e << "_"
        << phase << ")\n";
  s << "XL_KERNEL void mask_emb_grad(const float *dout, float *out, unsigned "
       "long long seed) {\n  xl_mask_embedding_grad<"
    << kMRows << ", " << kMD << ", " << kBlock
    << ">(dout, out, seed);\n}\nXL_EXPORT(mask_emb_grad)\n";
  return s.str();
}

Module *lossModule() {
  return Fixture::get().module("loss_test.cu", lossModuleText());
}

struct LossInputs {
  std::vector<float> logits, mask;
  std::vector<int64_t> target;
};

LossInputs lossInputs(uint32_t seed) {
  LossInputs in;
  const int64_t R = kLB * kLNP;
  in.logits = randomFloats(R * kLV, seed, -6.0f, 6.0f);
  std::mt19937 rng(seed + 1);
  for (int64_t r = 0; r < R; ++r) {
    in.target.push_back(int64_t(rng() % kLV));
    in.mask.push_back(r % 4 == 1 ? 0.0f : (r % 3 == 0 ? 1.0f : 0.5f));
  }
  in.target[R - 1] = kLV - 1; // the last column
  return in;
}

/// Runs lm_loss (grid `grid` for phase 0) and returns {loss, ptl..., status}.
struct LossResult {
  float loss;
  std::vector<float> ptl;
  std::vector<int> status;
};
LossResult runLmLoss(const LossInputs &in, unsigned grid) {
  Fixture &f = Fixture::get();
  Module *mod = lossModule();
  const int64_t R = kLB * kLNP;
  DevPtr dl = f.upload(in.logits), dt = f.upload(in.target),
         dm = f.upload(in.mask), dloss = f.zeros<float>(1),
         dptl = f.zeros<float>(R), dws = f.zeros<double>(R),
         dst = f.zeros<int>(XL_STATUS_WORDS_TEST);
  unsigned long long seed = 1;
  std::vector<void *> params = {&dl, &dt, &dm, &dloss, &dptl, &dws, &dst, &seed};
  f.launch(mod, "lm_loss_0", grid, params);
  f.launch(mod, "lm_loss_1", grid > 2 ? 2 : 1, params);
  return {f.download<float>(dloss, 1)[0], f.download<float>(dptl, R),
          f.download<int>(dst, XL_STATUS_WORDS_TEST)};
}

TEST(DeviceLoss, LmLossMatchesHostAndIgnoresTheGrid) {
  ASSERT_NE(lossModule(), nullptr);
  LossInputs in = lossInputs(5);
  const int64_t R = kLB * kLNP;
  Tensor logits = Tensor::fromF32({kLB, kLNP, kLV}, in.logits),
         target = Tensor::fromI64({kLB, kLNP}, in.target),
         mask = Tensor::fromF32({kLB, kLNP}, in.mask);
  Tensor loss = Tensor::zeros(DType::F32, {}),
         ptl = Tensor::zeros(DType::F32, {kLB, kLNP});
  ASSERT_TRUE(host::lmLoss(logits, target, mask, loss, ptl).isOk());
  LossResult first = runLmLoss(in, 4);
  EXPECT_EQ(first.status[0], 0);
  double e = relErr(ptl.f32(), first.ptl.data(), R);
  double le = std::fabs(double(loss.f32()[0]) - first.loss) /
              std::fabs(loss.f32()[0]);
  std::printf("lm_loss: rel err ptl %.3g loss %.3g\n", e, le);
  EXPECT_LE(e, 1e-6);
  EXPECT_LE(le, 1e-6);
  for (unsigned grid : {1u, 7u, 40u}) {
    LossResult r = runLmLoss(in, grid);
    EXPECT_EQ(std::memcmp(&r.loss, &first.loss, 4), 0) << "grid " << grid;
    EXPECT_EQ(std::memcmp(r.ptl.data(), first.ptl.data(), R * 4), 0);
  }
  // An all-zero mask gives NaN, as on the host.
  LossInputs zero = in;
  std::fill(zero.mask.begin(), zero.mask.end(), 0.0f);
  EXPECT_TRUE(std::isnan(runLmLoss(zero, 3).loss));
}

TEST(DeviceLoss, LmLossReportsABadTarget) {
  ASSERT_NE(lossModule(), nullptr);
  for (int64_t bad : {kLV, int64_t(-2)}) {
    LossInputs in = lossInputs(6);
    in.target[7] = bad; // b = 1, slot 2
    LossResult r = runLmLoss(in, 3);
    EXPECT_EQ(r.status[0], XL_ERR_LM_TARGET_TEST);
    EXPECT_EQ(r.status[1], 1);
    EXPECT_EQ(r.status[2], 2);
    EXPECT_EQ(r.status[3], int(uint64_t(bad) & 0xffffffffu));
    EXPECT_EQ(r.status[4], int(uint64_t(bad) >> 32));
  }
}

/// `count` > 0: the count dividing the gradient (else Σ mask).
std::vector<float> runLmLossGrad(const LossInputs &in, unsigned grid,
                                 std::vector<int> *status = nullptr, float count = 0) {
  Fixture &f = Fixture::get();
  Module *mod = lossModule();
  const int64_t R = kLB * kLNP;
  DevPtr dl = f.upload(in.logits), dt = f.upload(in.target),
         dm = f.upload(in.mask), dout = f.zeros<float>(R * kLV),
         dst = f.zeros<int>(XL_STATUS_WORDS_TEST),
         dc = count > 0 ? f.upload(std::vector<float>{count}) : DevPtr(0);
  unsigned long long seed = 1;
  f.launch(mod, "lm_loss_grad", grid, {&dl, &dt, &dm, &dc, &dout, &dst, &seed});
  if (status)
    *status = f.download<int>(dst, XL_STATUS_WORDS_TEST);
  return f.download<float>(dout, R * kLV);
}

TEST(DeviceLoss, LmLossGradMatchesHost) {
  ASSERT_NE(lossModule(), nullptr);
  const int64_t R = kLB * kLNP;
  for (bool allZero : {false, true}) {
    LossInputs in = lossInputs(8);
    if (allZero)
      std::fill(in.mask.begin(), in.mask.end(), 0.0f);
    Tensor logits = Tensor::fromF32({kLB, kLNP, kLV}, in.logits),
           target = Tensor::fromI64({kLB, kLNP}, in.target),
           mask = Tensor::fromF32({kLB, kLNP}, in.mask);
    Tensor ref = Tensor::zeros(DType::F32, {kLB, kLNP, kLV});
    ASSERT_TRUE(host::lmLossGrad(logits, target, mask, ref).isOk());
    std::vector<int> status;
    std::vector<float> got = runLmLossGrad(in, 4, &status);
    EXPECT_EQ(status[0], 0);
    double e = relErr(ref.f32(), got.data(), R * kLV);
    std::printf("lm_loss_grad (all-zero mask %d): rel err %.3g\n", allZero, e);
    EXPECT_LE(e, 1e-6);
    if (allZero) {
      EXPECT_EQ(maxAbs(got.data(), got.size()), 0.0f);
    }
    std::vector<float> again = runLmLossGrad(in, 23);
    EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * 4), 0);
  }
  // A given count divides instead of Σ mask (a micro-batch of gradient
  // accumulation): the host's bits, and 3x the count is a third.
  LossInputs withCount = lossInputs(8);
  Tensor logits = Tensor::fromF32({kLB, kLNP, kLV}, withCount.logits),
         target = Tensor::fromI64({kLB, kLNP}, withCount.target),
         mask = Tensor::fromF32({kLB, kLNP}, withCount.mask);
  float sum = 0;
  for (float m : withCount.mask)
    sum += m;
  ASSERT_GT(sum, 0.0f);
  Tensor count = Tensor::fromF32({}, {3 * sum});
  Tensor ref = Tensor::zeros(DType::F32, {kLB, kLNP, kLV}),
         plain = Tensor::zeros(DType::F32, {kLB, kLNP, kLV});
  ASSERT_TRUE(host::lmLossGrad(logits, target, mask, ref, &count).isOk());
  ASSERT_TRUE(host::lmLossGrad(logits, target, mask, plain).isOk());
  std::vector<float> got = runLmLossGrad(withCount, 4, nullptr, 3 * sum);
  EXPECT_LE(relErr(ref.f32(), got.data(), R * kLV), 1e-6);
  for (int64_t i = 0; i < R * kLV; ++i)
    ASSERT_NEAR(ref.f32()[i] * 3, plain.f32()[i], 1e-6f) << i;
  LossInputs in = lossInputs(9);
  in.target[3] = kLV + 5; // b = 0, slot 3
  std::vector<int> status;
  runLmLossGrad(in, 2, &status);
  EXPECT_EQ(status[0], XL_ERR_LM_TARGET_TEST);
  EXPECT_EQ(status[1], 0);
  EXPECT_EQ(status[2], 3);
  EXPECT_EQ(status[3], int(kLV + 5));
}

/// embedding_grad with shape kEmb[e] on `grid` blocks (both phases).
std::vector<float> runEmbeddingGrad(int e, const std::vector<int64_t> &ids,
                                    const std::vector<float> &dout,
                                    unsigned grid, std::vector<int> &status) {
  Fixture &f = Fixture::get();
  Module *mod = lossModule();
  const EmbShape &sh = kEmb[e];
  const int64_t N = sh.B * sh.S;
  DevPtr di = f.upload(ids), dd = f.upload(dout),
         dout_ = f.zeros<float>(sh.V * sh.D),
         dws = f.upload(std::vector<int>(2 * sh.V + 1 + N, 12345)),
         dst = f.zeros<int>(XL_STATUS_WORDS_TEST);
  unsigned long long seed = 3;
  std::vector<void *> params = {&di, &dd, &dout_, &dws, &dst, &seed};
  std::string k = "emb" + std::to_string(e) + "_";
  f.launch(mod, k + "0", grid, params);
  f.launch(mod, k + "1", grid, params);
  status = f.download<int>(dst, XL_STATUS_WORDS_TEST);
  return f.download<float>(dout_, sh.V * sh.D);
}

TEST(DeviceLoss, EmbeddingGradIsTheHostsBitForBitOnAnyGrid) {
  ASSERT_NE(lossModule(), nullptr);
  for (int e = 0; e < 2; ++e) {
    const EmbShape &sh = kEmb[e];
    const int64_t N = sh.B * sh.S;
    std::mt19937 rng(77 + e);
    std::vector<int64_t> ids(N);
    // Skewed ids: many repeats, some ids absent.
    for (auto &id : ids)
      id = rng() % 3 == 0 ? 7 : int64_t(rng() % (sh.V / 2)) * 2;
    std::vector<float> dout = randomFloats(N * sh.D, 90 + e, -3, 3);
    // Column 0 of id 7 makes the summation order visible through double
    // rounding: 1 + 2^60 - 2^60 = 0 in position order, 1 in reverse.
    {
      int seen = 0;
      for (int64_t p = 0; p < N; ++p)
        if (ids[p] == 7) {
          float v = seen == 0 ? 1.0f : seen == 1 ? 0x1p60f : seen == 2 ? -0x1p60f : 0.0f;
          dout[p * sh.D] = v;
          ++seen;
        }
      ASSERT_GE(seen, 3);
    }
    Tensor tids = Tensor::fromI64({sh.B, sh.S}, ids),
           tdout = Tensor::fromF32({sh.B, sh.S, sh.D}, dout),
           ref = Tensor::zeros(DType::F32, {sh.V, sh.D});
    ASSERT_TRUE(host::embeddingGrad(tids, tdout, ref).isOk());
    std::vector<int> status;
    std::vector<float> first;
    for (unsigned grid : {1u, 3u, 64u, 400u}) {
      std::vector<float> got = runEmbeddingGrad(e, ids, dout, grid, status);
      EXPECT_EQ(status[0], 0);
      EXPECT_EQ(std::memcmp(got.data(), ref.f32(), got.size() * 4), 0)
          << "shape " << e << " grid " << grid << " rel err "
          << relErr(ref.f32(), got.data(), got.size());
      if (first.empty())
        first = got;
      EXPECT_EQ(std::memcmp(got.data(), first.data(), got.size() * 4), 0);
    }
  }
  // A bad id.
  const EmbShape &sh = kEmb[0];
  std::vector<int64_t> ids(sh.B * sh.S, 3);
  ids[1 * sh.S + 4] = -(int64_t(1) << 40);
  std::vector<int> status;
  runEmbeddingGrad(0, ids, randomFloats(sh.B * sh.S * sh.D, 1), 2, status);
  EXPECT_EQ(status[0], XL_ERR_EMBEDDING_ID_TEST);
  EXPECT_EQ(status[1], 1);
  EXPECT_EQ(status[2], 4);
  EXPECT_EQ(status[3], 0);
  EXPECT_EQ(status[4], int(uint64_t(ids[1 * sh.S + 4]) >> 32));
}

TEST(DeviceLoss, MaskEmbeddingGradIsTheHostsBitForBit) {
  Fixture &f = Fixture::get();
  Module *mod = lossModule();
  ASSERT_NE(mod, nullptr);
  std::vector<float> dout = randomFloats(kMRows * kMD, 55, -2, 2);
  Tensor tdout = Tensor::fromF32({3, 7, kMD}, dout),
         ref = Tensor::zeros(DType::F32, {1, 1, kMD});
  host::maskEmbeddingGrad(tdout, ref);
  for (unsigned grid : {1u, 2u, 5u}) {
    DevPtr dd = f.upload(dout), dout_ = f.zeros<float>(kMD);
    unsigned long long seed = 0;
    f.launch(mod, "mask_emb_grad", grid, {&dd, &dout_, &seed});
    auto got = f.download<float>(dout_, kMD);
    EXPECT_EQ(std::memcmp(got.data(), ref.f32(), kMD * 4), 0) << grid;
  }
}

//===----------------------------------------------------------------------===//
// sm_90
//===----------------------------------------------------------------------===//

void expectNoSpillsOnSm90(const std::string &name, const std::string &text,
                          int expectEntries) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin out;
  Status st = xlnetc::rt::testing::compileForSm90(name, text, out);
  ASSERT_TRUE(st.isOk()) << st.message();
  int entries = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(out.log)) {
    entries += u.entry;
    if (u.entry)
      std::printf("sm_90 %s: %d registers, %lld B smem, %lld B spills\n",
                  u.kernel.c_str(), u.registers, (long long)u.smemBytes,
                  (long long)(u.spillStores + u.spillLoads));
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
    EXPECT_LE(u.smemBytes, 48 * 1024) << u.kernel;
  }
  EXPECT_EQ(entries, expectEntries) << out.log;
}

TEST(DeviceOptimSm90, OptimModuleCompilesWithoutSpills) {
  expectNoSpillsOnSm90("optim_test.cu", optimModuleText(), 9);
}

TEST(DeviceOptimSm90, LossModuleCompilesWithoutSpills) {
  expectNoSpillsOnSm90("loss_test.cu", lossModuleText(), 8);
}

} // namespace
