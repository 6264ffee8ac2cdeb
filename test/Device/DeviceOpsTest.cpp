//===- DeviceOpsTest.cpp - Device op templates against the host kernels ---===//
//
// The op templates of runtime/device/kernels/ (xlnetc_k_*.cuh), instantiated
// by a test module (one kernel wrapper per instantiation), run on the
// emulated device through the Device interface and compared with the fp32
// reference kernels of runtime/host/ on seeded random inputs: shapes with
// tails (sizes not multiples of BLOCK) and grids smaller than the work (the
// grid-stride loops), |ref - got| <= 1e-5 * max|ref| unless the op is a copy
// or a mask (bit-exact then). The same module compiles with NVRTC for sm_90
// without spills.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaApi.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/host/Kernels.h"

#include <fmt/format.h>
#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;

namespace {

using xlnetc::rt::testing::doubleBits;
using xlnetc::rt::testing::floatBits;

constexpr double kEpsA = 1e-12, kEpsB = 1e-5;
constexpr double kDropRate = 0.1;
constexpr double kDropRateHalf = 0.5;
constexpr uint64_t kSeedOfDeviceOps = 0x1234abcd5678ull;

//===----------------------------------------------------------------------===//
// The test module: every instantiation the tests launch
//===----------------------------------------------------------------------===//

std::string moduleText() {
  std::string s = R"(#include "xlnetc_prelude.cuh"
#include "xlnetc_k_elementwise.cuh"
#include "xlnetc_k_gather.cuh"
#include "xlnetc_k_norm.cuh"

typedef unsigned long long u64;

// Elementwise: N = 1000 with BLOCK 128 (a tail of 104), N = 335 with 64.
XL_KERNEL void add_1000(const float *a, const float *b, float *o, u64 seed) {
  xl_add<1000, 128>(a, b, o, seed);
}
XL_EXPORT(add_1000)
XL_KERNEL void add_335(const float *a, const float *b, float *o, u64 seed) {
  xl_add<335, 64>(a, b, o, seed);
}
XL_EXPORT(add_335)
)";
  // Dropout: two rates and two sites, plus rate 0 (a copy).
  s += fmt::format(R"(
XL_KERNEL void dropout_1000(const float *x, float *o, u64 seed) {{
  xl_dropout<1000, {}u, 128, 100>(x, o, 7, seed);
}}
XL_EXPORT(dropout_1000)
XL_KERNEL void dropout_335(const float *x, float *o, u64 seed) {{
  xl_dropout<335, {}u, 64, 335>(x, o, 3, seed);
}}
XL_EXPORT(dropout_335)
XL_KERNEL void dropout_0(const float *x, float *o, u64 seed) {{
  xl_dropout<335, 0u, 64, 335>(x, o, 3, seed);
}}
XL_EXPORT(dropout_0)
XL_KERNEL void dropout_rows(const float *x, float *o, u64 seed) {{
  XlStepRandom r(seed); // local rows 0..1 -> global 2, 3; rows 2.. -> 9, ...
  r.base0 = 2;
  r.base1 = 9;
  r.half = 2;
  xl_dropout<1000, {}u, 128, 100>(x, o, 7, r);
}}
XL_EXPORT(dropout_rows)
XL_KERNEL void dropout_shared(const float *x, float *o, u64 seed) {{
  XlStepRandom r(seed);
  r.base0 = 2;
  r.base1 = 9;
  r.half = 2;
  xl_dropout<1000, {}u, 128, 0>(x, o, 7, r);
}}
XL_EXPORT(dropout_shared)
)",
                   floatBits(kDropRate), floatBits(kDropRateHalf), floatBits(kDropRate),
                   floatBits(kDropRate));
  for (int act = 0; act < 4; ++act)
    s += fmt::format(R"(
XL_KERNEL void act{0}_1000(const float *x, float *o, u64 seed) {{
  xl_activation<1000, {0}, 128>(x, o, seed);
}}
XL_EXPORT(act{0}_1000)
XL_KERNEL void act{0}_335(const float *x, float *o, u64 seed) {{
  xl_activation<335, {0}, 64>(x, o, seed);
}}
XL_EXPORT(act{0}_335)
XL_KERNEL void actgrad{0}_1000(const float *dy, const float *x, float *o, u64 seed) {{
  xl_activation_grad<1000, {0}, 128>(dy, x, o, seed);
}}
XL_EXPORT(actgrad{0}_1000)
XL_KERNEL void actgrad{0}_335(const float *dy, const float *x, float *o, u64 seed) {{
  xl_activation_grad<335, {0}, 64>(dy, x, o, seed);
}}
XL_EXPORT(actgrad{0}_335)
)",
                     act);
  s += R"(
typedef long long i64;
// embedding: [2,5] ids into [11,67] (BLOCK 128), [3,4] into [7,32] (64).
XL_KERNEL void emb_a(const i64 *ids, const float *t, float *o, int *st, u64 seed) {
  xl_embedding<2, 5, 11, 67, 128>(ids, t, o, st, seed);
}
XL_EXPORT(emb_a)
XL_KERNEL void emb_b(const i64 *ids, const float *t, float *o, int *st, u64 seed) {
  xl_embedding<3, 4, 7, 32, 64>(ids, t, o, st, seed);
}
XL_EXPORT(emb_b)
XL_KERNEL void mask_emb(const float *m, float *o, u64 seed) {
  xl_mask_embedding<10, 67, 64>(m, o, seed);
}
XL_EXPORT(mask_emb)
XL_KERNEL void memcat_a(const float *m, const float *h, float *o, u64 seed) {
  xl_mem_concat<3, 2, 5, 67, 128>(m, h, o, seed);
}
XL_EXPORT(memcat_a)
XL_KERNEL void memcat_b(const float *m, const float *h, float *o, u64 seed) {
  xl_mem_concat<4, 3, 2, 32, 64>(m, h, o, seed);
}
XL_EXPORT(memcat_b)
XL_KERNEL void memcat_grad(const float *d, float *o, u64 seed) {
  xl_mem_concat_grad<2, 8, 5, 67, 128>(d, (const float *)0, o, seed);
}
XL_EXPORT(memcat_grad)
XL_KERNEL void memcat_grad_i(const float *d, const float *init, float *o, u64 seed) {
  xl_mem_concat_grad<2, 8, 5, 67, 128>(d, init, o, seed);
}
XL_EXPORT(memcat_grad_i)
XL_KERNEL void memcache_a(const float *m, const float *h, float *o, u64 seed) {
  xl_mem_cache<3, 2, 5, 67, 4, 6, 128>(m, h, o, seed);
}
XL_EXPORT(memcache_a)
XL_KERNEL void memcache_nomems(const float *m, const float *h, float *o, u64 seed) {
  xl_mem_cache<0, 2, 5, 33, 5, 3, 64>(m, h, o, seed);
}
XL_EXPORT(memcache_nomems)
XL_KERNEL void relpos_a(float *o, u64 seed) {
  xl_rel_pos_encoding<2, 13, 66, 9, 0, 128>(o, seed);
}
XL_EXPORT(relpos_a)
XL_KERNEL void relpos_b(float *o, u64 seed) {
  xl_rel_pos_encoding<1, 20, 68, 20, 5, 64>(o, seed);
}
XL_EXPORT(relpos_b)
XL_KERNEL void tpos_a(const float *tm, i64 *o, int *st, u64 seed) {
  xl_target_positions<2, 3, 67, 64>(tm, o, st, seed);
}
XL_EXPORT(tpos_a)
XL_KERNEL void tpos_b(const float *tm, i64 *o, int *st, u64 seed) {
  xl_target_positions<2, 3, 200, 128>(tm, o, st, seed);
}
XL_EXPORT(tpos_b)
)";
  // Layer norm: 5 rows of 67 (BLOCK 64, two columns per thread, a tail) and
  // 7 rows of 256 (BLOCK 128), 3 rows of 1024 (BLOCK 128: eight columns per
  // thread, the registers of a large model); the gradient on 70 rows of 67
  // (parts of 32: 32, 32, 6), 5 rows of 256 (parts of 2) and 3 rows of 1024;
  // bias_grad on [70, 67] (parts
  // of 16) and [5, 300] (parts of 2).
  s += fmt::format(R"(
XL_KERNEL void ln_a(const float *x, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_add_layer_norm<5, 67, {0}ull, 64>(x, r, g, b, o, seed);
}}
XL_EXPORT(ln_a)
XL_KERNEL void ln_b(const float *x, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_add_layer_norm<7, 256, {1}ull, 128>(x, r, g, b, o, seed);
}}
XL_EXPORT(ln_b)
XL_KERNEL void ln_c(const float *x, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_add_layer_norm<3, 1024, {1}ull, 128>(x, r, g, b, o, seed);
}}
XL_EXPORT(ln_c)
)",
                   doubleBits(kEpsA), doubleBits(kEpsB));
  // Dropout fused into LayerNorm (the emitter's fusion) against the plain
  // kernels one after the other: [70, 67], rate 0.1, sites 5 (forward) and
  // 6 (the gradient's); y stored as f32 or bf16.
  s += fmt::format(R"(
XL_KERNEL void lnf_drop(const float *x, float *y, u64 seed) {{
  xl_dropout<70 * 67, {1}u, 64, 670>(x, y, 5, seed);
}}
XL_EXPORT(lnf_drop)
XL_KERNEL void lnf_drop_h(const float *x, xl_bf16 *y, u64 seed) {{
  xl_dropout<70 * 67, {1}u, 64, 670>(x, y, 5, seed);
}}
XL_EXPORT(lnf_drop_h)
XL_KERNEL void lnf_dgrad(const float *ds, float *dd, u64 seed) {{
  xl_dropout<70 * 67, {1}u, 64, 670>(ds, dd, 6, seed);
}}
XL_EXPORT(lnf_dgrad)
XL_KERNEL void lnf_plain(const float *y, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_add_layer_norm<70, 67, {0}ull, 64>(y, r, g, b, o, seed);
}}
XL_EXPORT(lnf_plain)
XL_KERNEL void lnf_plain_h(const xl_bf16 *y, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_add_layer_norm<70, 67, {0}ull, 64>(y, r, g, b, o, seed);
}}
XL_EXPORT(lnf_plain_h)
XL_KERNEL void lnf_fused(const float *x, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_dropout_add_layer_norm<70, 67, {0}ull, 64, {1}u, 0, 670>(x, r, g, b, o, 5, seed);
}}
XL_EXPORT(lnf_fused)
XL_KERNEL void lnf_fused_h(const float *x, const float *r, const float *g, const float *b, float *o, u64 seed) {{
  xl_dropout_add_layer_norm<70, 67, {0}ull, 64, {1}u, 1, 670>(x, r, g, b, o, 5, seed);
}}
XL_EXPORT(lnf_fused_h)
)",
                   doubleBits(kEpsA), floatBits(kDropRate));
  for (int phase = 0; phase < 2; ++phase)
    s += fmt::format(R"(
XL_KERNEL void lngrad_a{0}(const float *dy, const float *x, const float *r, const float *g,
    float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad<70, 67, {1}ull, 32, {0}, 64>(dy, x, r, g, ds, dg, db, ws, seed);
}}
XL_EXPORT(lngrad_a{0})
XL_KERNEL void lngrad_b{0}(const float *dy, const float *x, const float *r, const float *g,
    float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad<5, 256, {2}ull, 2, {0}, 128>(dy, x, r, g, ds, dg, db, ws, seed);
}}
XL_EXPORT(lngrad_b{0})
XL_KERNEL void lngrad_c{0}(const float *dy, const float *x, const float *r, const float *g,
    float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad<3, 1024, {2}ull, 32, {0}, 128>(dy, x, r, g, ds, dg, db, ws, seed);
}}
XL_EXPORT(lngrad_c{0})
XL_KERNEL void biasgrad_a{0}(const float *dy, float *o, double *ws, u64 seed) {{
  xl_bias_grad<70, 67, 16, {0}, 64>(dy, (const float *)0, o, ws, seed);
}}
XL_EXPORT(biasgrad_a{0})
XL_KERNEL void biasgrad_b{0}(const float *dy, float *o, double *ws, u64 seed) {{
  xl_bias_grad<5, 300, 2, {0}, 128>(dy, (const float *)0, o, ws, seed);
}}
XL_EXPORT(biasgrad_b{0})
XL_KERNEL void lnfgrad{0}(const float *dy, const float *x, const float *r, const float *g,
    float *ds, float *dd, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad_fused<70, 67, {1}ull, 32, {0}, 64, 1, {3}u, 0, 1, {3}u, 670>(
      dy, x, r, g, (const float *)0, (const float *)0, ds, dd, dg, db, ws, 5, 6, seed);
}}
XL_EXPORT(lnfgrad{0})
XL_KERNEL void lnfgrad_h{0}(const float *dy, const float *x, const float *r, const float *g,
    float *ds, float *dd, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad_fused<70, 67, {1}ull, 32, {0}, 64, 1, {3}u, 1, 0, 0u, 670>(
      dy, x, r, g, (const float *)0, (const float *)0, ds, (float *)0, dg, db, ws, 5, 6, seed);
}}
XL_EXPORT(lnfgrad_h{0})
XL_KERNEL void lngrad_i{0}(const float *dy, const float *x, const float *r, const float *g,
    const float *gi, const float *bi, float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad_fused<70, 67, {1}ull, 32, {0}, 64, 0, 0u, 0, 0, 0u, 0>(
      dy, x, r, g, gi, bi, ds, (float *)0, dg, db, ws, 0, 0, seed);
}}
XL_EXPORT(lngrad_i{0})
XL_KERNEL void lngrad_y{0}(const float *dy, const float *y, const float *r, const float *g,
    float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad<70, 67, {1}ull, 32, {0}, 64>(dy, y, r, g, ds, dg, db, ws, seed);
}}
XL_EXPORT(lngrad_y{0})
XL_KERNEL void lngrad_yh{0}(const float *dy, const xl_bf16 *y, const float *r, const float *g,
    float *ds, float *dg, float *db, double *ws, u64 seed) {{
  xl_add_layer_norm_grad<70, 67, {1}ull, 32, {0}, 64>(dy, y, r, g, ds, dg, db, ws, seed);
}}
XL_EXPORT(lngrad_yh{0})
XL_KERNEL void biasgrad_i{0}(const float *dy, const float *init, float *o, double *ws, u64 seed) {{
  xl_bias_grad<70, 67, 16, {0}, 64>(dy, init, o, ws, seed);
}}
XL_EXPORT(biasgrad_i{0})
)",
                     phase, doubleBits(kEpsA), doubleBits(kEpsB), floatBits(kDropRate));
  return s;
}

ModuleSource opsModule() {
  ModuleSource m;
  m.name = "device_ops_test.cu";
  m.text = moduleText();
  return m;
}

//===----------------------------------------------------------------------===//
// Fixture: one emulated device and one module for the whole suite
//===----------------------------------------------------------------------===//

class DeviceOps : public xlnetc::rt::testing::EmuModuleSuite<DeviceOps> {
public:
  static ModuleSource suiteModule() { return opsModule(); }
  static constexpr uint64_t kSeed = kSeedOfDeviceOps;
};

/// Seeded uniform floats in [lo, hi).
Tensor randomF32(std::vector<int64_t> shape, uint32_t seed, float lo = -3.0f,
                 float hi = 3.0f) {
  return xlnetc::rt::testing::randomF32(std::move(shape), seed, lo, hi);
}

/// |ref - got| <= 1e-5 * max|ref| everywhere.
void expectClose(const Tensor &ref, const std::vector<float> &got,
                 const std::string &what) {
  ASSERT_EQ(size_t(ref.numel()), got.size()) << what;
  double mx = 0.0;
  for (int64_t i = 0; i < ref.numel(); ++i)
    mx = std::max(mx, double(std::fabs(ref.f32()[i])));
  double tol = 1e-5 * std::max(mx, 1e-30);
  int bad = 0;
  for (int64_t i = 0; i < ref.numel() && bad < 5; ++i)
    if (!(std::fabs(double(ref.f32()[i]) - double(got[size_t(i)])) <= tol)) {
      ADD_FAILURE() << what << ": at " << i << " ref " << ref.f32()[i]
                    << " got " << got[size_t(i)] << " (tol " << tol << ")";
      ++bad;
    }
}

/// Bitwise equality (copies, masks).
void expectBitEqual(const Tensor &ref, const std::vector<float> &got,
                    const std::string &what) {
  ASSERT_EQ(size_t(ref.numel()), got.size()) << what;
  EXPECT_EQ(std::memcmp(ref.f32(), got.data(), got.size() * 4), 0) << what;
  for (int64_t i = 0; i < ref.numel(); ++i)
    if (std::memcmp(ref.f32() + i, &got[size_t(i)], 4) != 0) {
      ADD_FAILURE() << what << ": first difference at " << i << " ref "
                    << ref.f32()[i] << " got " << got[size_t(i)];
      break;
    }
}

/// Grids to try for a problem of `work` blocks' worth: one block, a few (a
/// grid smaller than the work) and enough for every item.
std::vector<unsigned> gridsFor(int64_t items, unsigned block) {
  unsigned full = unsigned((items + block - 1) / block);
  return {1u, 3u, std::max(full, 1u)};
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

TEST_F(DeviceOps, Add) {
  for (auto [n, block] : {std::pair<int64_t, unsigned>{1000, 128}, {335, 64}}) {
    Tensor a = randomF32({n}, 1), b = randomF32({n}, 2);
    Tensor ref = Tensor::zeros(DType::F32, {n});
    host::add(a, b, ref);
    DevPtr da = put(a), db = put(b);
    for (unsigned grid : gridsFor(n, block)) {
      DevPtr o = zerosF32(n);
      launch(fmt::format("add_{}", n), grid, block, {da, db, o});
      expectBitEqual(ref, get<float>(o, n),
                     fmt::format("add n={} grid={}", n, grid));
    }
  }
}

// A step of some rows of the batch (a rank's, a micro-batch's) draws the
// host's mask for those global rows; without a batch dimension, the rows
// change nothing.
TEST_F(DeviceOps, DropoutOfSomeRowsMatchesTheHost) {
  Tensor x = randomF32({10, 100}, 5);
  const host::DropoutRows rows{2, 9, 2};
  for (bool shared : {false, true}) {
    Tensor ref = Tensor::zeros(DType::F32, {10, 100});
    host::dropout(x, kDropRate, 7, kSeed, rows, shared ? 0 : 100, ref);
    DevPtr dx = put(x);
    DevPtr o = zerosF32(1000);
    launch(shared ? "dropout_shared" : "dropout_rows", 3, 128, {dx, o}, kSeed);
    expectBitEqual(ref, get<float>(o, 1000), shared ? "dropout_shared" : "dropout_rows");
  }
}

TEST_F(DeviceOps, DropoutMasksMatchTheHost) {
  struct Case {
    const char *kernel;
    int64_t n;
    unsigned block;
    double rate;
    int64_t site;
  };
  for (const Case &c : {Case{"dropout_1000", 1000, 128, kDropRate, 7},
                        Case{"dropout_335", 335, 64, kDropRateHalf, 3},
                        Case{"dropout_0", 335, 64, 0.0, 3}}) {
    Tensor x = randomF32({c.n}, 3);
    for (uint64_t seed : {kSeed, uint64_t(42)}) {
      Tensor ref = Tensor::zeros(DType::F32, {c.n});
      host::dropout(x, c.rate, c.site, seed, {}, c.n, ref);
      DevPtr dx = put(x);
      for (unsigned grid : gridsFor(c.n, c.block)) {
        DevPtr o = zerosF32(c.n);
        launch(c.kernel, grid, c.block, {dx, o}, seed);
        expectBitEqual(ref, get<float>(o, c.n),
                       fmt::format("{} seed={} grid={}", c.kernel, seed, grid));
      }
    }
  }
}

TEST_F(DeviceOps, ActivationAndItsGradient) {
  const Activation acts[] = {Activation::None, Activation::Relu,
                             Activation::GeluTanh, Activation::GeluErf};
  for (int act = 0; act < 4; ++act)
    for (auto [n, block] :
         {std::pair<int64_t, unsigned>{1000, 128}, {335, 64}}) {
      Tensor x = randomF32({n}, 10 + act), dy = randomF32({n}, 20 + act);
      Tensor ref = Tensor::zeros(DType::F32, {n});
      Tensor refGrad = Tensor::zeros(DType::F32, {n});
      host::applyActivation(x, acts[act], ref);
      host::activationGrad(dy, x, acts[act], refGrad);
      DevPtr dx = put(x), ddy = put(dy);
      for (unsigned grid : gridsFor(n, block)) {
        DevPtr o = zerosF32(n), g = zerosF32(n);
        launch(fmt::format("act{}_{}", act, n), grid, block, {dx, o});
        launch(fmt::format("actgrad{}_{}", act, n), grid, block, {ddy, dx, g});
        std::string what = fmt::format("act={} n={} grid={}", act, n, grid);
        expectClose(ref, get<float>(o, n), "activation " + what);
        expectClose(refGrad, get<float>(g, n), "activation_grad " + what);
      }
    }
}

//===----------------------------------------------------------------------===//
// Embedding, memory and positions
//===----------------------------------------------------------------------===//

Tensor randomIds(std::vector<int64_t> shape, int64_t V, uint32_t seed) {
  Tensor t = Tensor::zeros(DType::I64, shape);
  std::mt19937 gen(seed);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.i64()[i] = int64_t(gen() % uint32_t(V));
  return t;
}

TEST_F(DeviceOps, EmbeddingIsABitExactGather) {
  struct Case {
    const char *kernel;
    int64_t B, S, V, D;
    unsigned block;
  };
  for (const Case &c :
       {Case{"emb_a", 2, 5, 11, 67, 128}, Case{"emb_b", 3, 4, 7, 32, 64}}) {
    Tensor ids = randomIds({c.B, c.S}, c.V, 5);
    Tensor table = randomF32({c.V, c.D}, 6);
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.S, c.D});
    ASSERT_TRUE(host::embedding(ids, table, ref).isOk());
    DevPtr di = put(ids), dt = put(table);
    int64_t n = c.B * c.S * c.D;
    for (unsigned grid : gridsFor(n, c.block)) {
      DevPtr o = zerosF32(n), st = put(nullptr, 5 * 4);
      launch(c.kernel, grid, c.block, {di, dt, o, st});
      expectBitEqual(ref, get<float>(o, n),
                     fmt::format("{} grid={}", c.kernel, grid));
      EXPECT_EQ(get<int>(st, 1)[0], 0);
    }
  }
}

TEST_F(DeviceOps, EmbeddingIdOutOfRangeSetsTheStatus) {
  for (int64_t badId : {int64_t(11), int64_t(-5), int64_t(1) << 40}) {
    Tensor ids = randomIds({2, 5}, 11, 7);
    ids.i64()[1 * 5 + 3] = badId; // b=1, s=3
    Tensor table = randomF32({11, 67}, 8);
    Tensor ref = Tensor::zeros(DType::F32, {2, 5, 67});
    ASSERT_FALSE(host::embedding(ids, table, ref).isOk());
    DevPtr di = put(ids), dt = put(table), o = zerosF32(2 * 5 * 67),
           st = put(nullptr, 5 * 4);
    launch("emb_a", 2, 128, {di, dt, o, st});
    std::vector<int> s = get<int>(st, 5);
    EXPECT_EQ(s[0], 1) << "XL_ERR_EMBEDDING_ID";
    EXPECT_EQ(s[1], 1);
    EXPECT_EQ(s[2], 3);
    uint64_t id = uint64_t(uint32_t(s[3])) | (uint64_t(uint32_t(s[4])) << 32);
    EXPECT_EQ(int64_t(id), badId);
  }
}

TEST_F(DeviceOps, MaskEmbedding) {
  Tensor m = randomF32({1, 1, 67}, 9);
  Tensor ref = Tensor::zeros(DType::F32, {2, 5, 67});
  host::maskEmbedding(m, ref);
  DevPtr dm = put(m);
  for (unsigned grid : gridsFor(670, 64)) {
    DevPtr o = zerosF32(670);
    launch("mask_emb", grid, 64, {dm, o});
    expectBitEqual(ref, get<float>(o, 670), fmt::format("grid={}", grid));
  }
}

TEST_F(DeviceOps, MemConcatAndItsGradient) {
  struct Case {
    const char *kernel;
    int64_t M, B, S, D;
    unsigned block;
  };
  for (const Case &c : {Case{"memcat_a", 3, 2, 5, 67, 128},
                        Case{"memcat_b", 4, 3, 2, 32, 64}}) {
    Tensor mems = randomF32({c.M, c.B, c.D}, 11),
           h = randomF32({c.B, c.S, c.D}, 12);
    Tensor ref = Tensor::zeros(DType::F32, {c.B, c.M + c.S, c.D});
    host::memConcat(mems, h, ref);
    DevPtr dm = put(mems), dh = put(h);
    int64_t n = ref.numel();
    for (unsigned grid : gridsFor(n, c.block)) {
      DevPtr o = zerosF32(n);
      launch(c.kernel, grid, c.block, {dm, dh, o});
      expectBitEqual(ref, get<float>(o, n),
                     fmt::format("{} grid={}", c.kernel, grid));
    }
  }
  Tensor dout = randomF32({2, 8, 67}, 13);
  Tensor ref = Tensor::zeros(DType::F32, {2, 5, 67});
  host::memConcatGrad(dout, ref);
  DevPtr dd = put(dout);
  for (unsigned grid : gridsFor(ref.numel(), 128)) {
    DevPtr o = zerosF32(ref.numel());
    launch("memcat_grad", grid, 128, {dd, o});
    expectBitEqual(ref, get<float>(o, ref.numel()),
                   fmt::format("mem_concat_grad grid={}", grid));
  }
  // With an init operand: bitwise the add of the slice to it.
  Tensor init = randomF32({2, 5, 67}, 14);
  Tensor sum = Tensor::zeros(DType::F32, {2, 5, 67});
  host::add(init, ref, sum);
  DevPtr di = put(init);
  for (unsigned grid : gridsFor(ref.numel(), 128)) {
    DevPtr o = zerosF32(ref.numel());
    launch("memcat_grad_i", grid, 128, {dd, di, o});
    expectBitEqual(sum, get<float>(o, ref.numel()),
                   fmt::format("mem_concat_grad + init grid={}", grid));
  }
}

TEST_F(DeviceOps, MemCache) {
  // M=3, B=2, S=5, D=67, reuse 4, L 6; and no mems: B=2, S=5, D=33, reuse 5,
  // L 3.
  {
    Tensor mems = randomF32({3, 2, 67}, 14), h = randomF32({2, 5, 67}, 15);
    Tensor ref = Tensor::zeros(DType::F32, {6, 2, 67});
    host::memCache(&mems, h, 4, ref);
    DevPtr dm = put(mems), dh = put(h);
    for (unsigned grid : gridsFor(ref.numel(), 128)) {
      DevPtr o = zerosF32(ref.numel());
      launch("memcache_a", grid, 128, {dm, dh, o});
      expectBitEqual(ref, get<float>(o, ref.numel()),
                     fmt::format("mem_cache grid={}", grid));
    }
  }
  {
    Tensor h = randomF32({2, 5, 33}, 16);
    Tensor ref = Tensor::zeros(DType::F32, {3, 2, 33});
    host::memCache(nullptr, h, 5, ref);
    DevPtr dh = put(h);
    for (unsigned grid : gridsFor(ref.numel(), 64)) {
      DevPtr o = zerosF32(ref.numel());
      launch("memcache_nomems", grid, 64, {0, dh, o});
      expectBitEqual(ref, get<float>(o, ref.numel()),
                     fmt::format("mem_cache without mems grid={}", grid));
    }
  }
}

TEST_F(DeviceOps, RelPosEncoding) {
  struct Case {
    const char *kernel;
    int64_t P, R, D, klen, clamp;
    unsigned block;
  };
  for (const Case &c : {Case{"relpos_a", 2, 13, 66, 9, 0, 128},
                        Case{"relpos_b", 1, 20, 68, 20, 5, 64}}) {
    Tensor ref = Tensor::zeros(DType::F32, {c.P, c.R, c.D});
    host::relPosEncoding(c.klen, c.clamp, ref);
    for (unsigned grid : gridsFor(ref.numel(), c.block)) {
      DevPtr o = zerosF32(ref.numel());
      launch(c.kernel, grid, c.block, {o});
      std::vector<float> got = get<float>(o, ref.numel());
      for (int64_t i = 0; i < ref.numel(); ++i)
        ASSERT_NEAR(got[size_t(i)], ref.f32()[i], 1e-6)
            << c.kernel << " grid=" << grid << " at " << i;
    }
  }
}

/// A [B,NP,S] target mapping: row r of batch b has its 1 at (7b + 13r) % S,
/// except row 1 of batch 1, all zeros.
Tensor oneHotMapping(int64_t B, int64_t NP, int64_t S) {
  Tensor t = Tensor::zeros(DType::F32, {B, NP, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < NP; ++r)
      if (!(b == 1 && r == 1))
        t.f32()[(b * NP + r) * S + (7 * b + 13 * r + 70) % S] = 1.0f;
  return t;
}

TEST_F(DeviceOps, TargetPositions) {
  for (auto [kernel, S, block] :
       {std::tuple<const char *, int64_t, unsigned>{"tpos_a", 67, 64},
        {"tpos_b", 200, 128}}) {
    Tensor tm = oneHotMapping(2, 3, S);
    Tensor ref = Tensor::zeros(DType::I64, {2, 3});
    ASSERT_TRUE(host::targetPositions(tm, ref).isOk());
    DevPtr dt = put(tm);
    for (unsigned grid : {1u, 2u, 6u}) {
      DevPtr o = put(nullptr, 6 * 8), st = put(nullptr, 5 * 4);
      launch(kernel, grid, block, {dt, o, st});
      std::vector<int64_t> got = get<int64_t>(o, 6);
      for (int i = 0; i < 6; ++i)
        EXPECT_EQ(got[size_t(i)], ref.i64()[i]) << kernel << " grid=" << grid;
      EXPECT_EQ(get<int>(st, 1)[0], 0);
    }
  }
}

TEST_F(DeviceOps, TargetPositionsNotOneHotSetsTheStatus) {
  // Row (b=1, r=2) of a [2,3,200] mapping; columns chosen on both sides of
  // BLOCK so different threads see them. Expected: the host's first error.
  struct Case {
    std::vector<std::pair<int, float>> entries;
    int code, d3, d4; // d3 for code 2 is the value's bits
  };
  auto bits = [](float f) {
    int i;
    std::memcpy(&i, &f, 4);
    return i;
  };
  const Case cases[] = {
      {{{150, 0.5f}}, 2, bits(0.5f), 150},
      {{{130, 1.0f}, {5, 1.0f}}, 3, 5, 130},
      {{{5, 1.0f}, {130, 1.0f}, {190, 2.0f}}, 3, 5, 130},
      {{{5, 1.0f}, {130, 1.0f}, {129, -1.0f}}, 2, bits(-1.0f), 129},
      {{{140, 1.0f}, {3, 1.0f}, {131, 1.0f}}, 3, 3, 131},
  };
  for (const Case &c : cases) {
    Tensor tm = oneHotMapping(2, 3, 200);
    float *row = tm.f32() + (1 * 3 + 2) * 200;
    std::fill(row, row + 200, 0.0f);
    for (auto [col, v] : c.entries)
      row[col] = v;
    Tensor ref = Tensor::zeros(DType::I64, {2, 3});
    Status hs = host::targetPositions(tm, ref);
    ASSERT_FALSE(hs.isOk());
    DevPtr dt = put(tm);
    for (unsigned grid : {1u, 4u}) {
      DevPtr o = put(nullptr, 6 * 8), st = put(nullptr, 5 * 4);
      launch("tpos_b", grid, 128, {dt, o, st});
      std::vector<int> s = get<int>(st, 5);
      EXPECT_EQ(s[0], c.code) << hs.message();
      EXPECT_EQ(s[1], 1);
      EXPECT_EQ(s[2], 2);
      EXPECT_EQ(s[3], c.d3) << hs.message();
      EXPECT_EQ(s[4], c.d4) << hs.message();
    }
  }
}

//===----------------------------------------------------------------------===//
// Layer norm and row sums
//===----------------------------------------------------------------------===//

TEST_F(DeviceOps, AddLayerNorm) {
  struct Case {
    const char *kernel;
    int64_t rows, D;
    double eps;
    unsigned block;
  };
  for (const Case &c :
       {Case{"ln_a", 5, 67, kEpsA, 64}, Case{"ln_b", 7, 256, kEpsB, 128},
        Case{"ln_c", 3, 1024, kEpsB, 128}}) {
    Tensor x = randomF32({c.rows, c.D}, 30), r = randomF32({c.rows, c.D}, 31);
    Tensor g = randomF32({c.D}, 32, 0.5f, 1.5f), b = randomF32({c.D}, 33);
    Tensor ref = Tensor::zeros(DType::F32, {c.rows, c.D});
    host::addLayerNorm(x, r, g, b, c.eps, ref);
    DevPtr dx = put(x), dr = put(r), dg = put(g), db = put(b);
    for (unsigned grid : {1u, 2u, unsigned(c.rows)}) {
      DevPtr o = zerosF32(ref.numel());
      launch(c.kernel, grid, c.block, {dx, dr, dg, db, o});
      expectClose(ref, get<float>(o, ref.numel()),
                  fmt::format("{} grid={}", c.kernel, grid));
    }
  }
}

TEST_F(DeviceOps, AddLayerNormGradIsDeterministic) {
  struct Case {
    const char *kernel;
    int64_t rows, D, rowsPerPart;
    double eps;
    unsigned block;
  };
  for (const Case &c : {Case{"lngrad_a", 70, 67, 32, kEpsA, 64},
                        Case{"lngrad_b", 5, 256, 2, kEpsB, 128},
                        Case{"lngrad_c", 3, 1024, 32, kEpsB, 128}}) {
    Tensor dy = randomF32({c.rows, c.D}, 40), x = randomF32({c.rows, c.D}, 41),
           r = randomF32({c.rows, c.D}, 42),
           g = randomF32({c.D}, 43, 0.5f, 1.5f);
    Tensor refDs = Tensor::zeros(DType::F32, {c.rows, c.D});
    Tensor refDg = Tensor::zeros(DType::F32, {c.D});
    Tensor refDb = Tensor::zeros(DType::F32, {c.D});
    host::addLayerNormGrad(dy, x, r, g, c.eps, refDs, refDg, refDb);
    DevPtr ddy = put(dy), dx = put(x), dr = put(r), dg = put(g);
    int64_t parts = (c.rows + c.rowsPerPart - 1) / c.rowsPerPart;
    std::vector<float> firstDs, firstDg, firstDb;
    for (unsigned grid : {1u, 2u, unsigned(parts)}) {
      DevPtr ds = zerosF32(refDs.numel()), ogam = zerosF32(c.D),
             obet = zerosF32(c.D),
             ws = put(nullptr, size_t(parts * 2 * c.D) * 8);
      std::vector<DevPtr> args = {ddy, dx, dr, dg, ds, ogam, obet, ws};
      launch(std::string(c.kernel) + "0", grid, c.block, args);
      // Phase 1 on its own grid: one block, or enough for every column.
      launch(std::string(c.kernel) + "1", grid == 1 ? 1u : 3u, c.block, args);
      std::string what = fmt::format("{} grid={}", c.kernel, grid);
      std::vector<float> gotDs = get<float>(ds, refDs.numel()),
                         gotDg = get<float>(ogam, c.D),
                         gotDb = get<float>(obet, c.D);
      expectClose(refDs, gotDs, "dsum " + what);
      expectClose(refDg, gotDg, "dgamma " + what);
      expectClose(refDb, gotDb, "dbeta " + what);
      if (firstDs.empty()) {
        firstDs = gotDs, firstDg = gotDg, firstDb = gotDb;
      } else {
        EXPECT_EQ(gotDs, firstDs) << "bitwise equal across grids: " << what;
        EXPECT_EQ(gotDg, firstDg) << "bitwise equal across grids: " << what;
        EXPECT_EQ(gotDb, firstDb) << "bitwise equal across grids: " << what;
      }
    }
  }
}

TEST_F(DeviceOps, BiasGradIsDeterministic) {
  struct Case {
    const char *kernel;
    int64_t rows, n, rowsPerPart;
    unsigned block;
  };
  for (const Case &c : {Case{"biasgrad_a", 70, 67, 16, 64},
                        Case{"biasgrad_b", 5, 300, 2, 128}}) {
    Tensor dy = randomF32({c.rows, c.n}, 50);
    Tensor ref = Tensor::zeros(DType::F32, {c.n});
    host::biasGrad(dy, ref);
    DevPtr ddy = put(dy);
    int64_t parts = (c.rows + c.rowsPerPart - 1) / c.rowsPerPart;
    std::vector<float> first;
    for (unsigned grid : gridsFor(parts * c.n, c.block)) {
      DevPtr o = zerosF32(c.n), ws = put(nullptr, size_t(parts * c.n) * 8);
      launch(std::string(c.kernel) + "0", grid, c.block, {ddy, o, ws});
      launch(std::string(c.kernel) + "1", grid, c.block, {ddy, o, ws});
      std::vector<float> got = get<float>(o, c.n);
      std::string what = fmt::format("{} grid={}", c.kernel, grid);
      expectClose(ref, got, what);
      if (first.empty())
        first = got;
      else
        EXPECT_EQ(got, first) << "bitwise equal across grids: " << what;
    }
  }
}

/// The emitter's LayerNorm-dropout fusion: xl_dropout_add_layer_norm(_grad)
/// recompute the forward's dropout from the hash (y never stored, in f32 or
/// rounded to bf16 like a bf16 y) and write the gradient through the
/// backward's dropout, bitwise what the plain kernels give one after the
/// other.
TEST_F(DeviceOps, LayerNormDropoutFusionIsBitwiseThePlainKernels) {
  const int64_t rows = 70, D = 67, n = rows * D, parts = 3;
  Tensor x = randomF32({rows, D}, 60), r = randomF32({rows, D}, 61);
  Tensor g = randomF32({D}, 62, 0.5f, 1.5f), b = randomF32({D}, 63);
  Tensor dy = randomF32({rows, D}, 64);
  DevPtr dx = put(x), dr = put(r), dg = put(g), dbeta = put(b), ddy = put(dy);
  for (bool half : {false, true}) {
    const std::string h = half ? "_h" : "";
    DevPtr y = put(nullptr, size_t(n) * (half ? 2 : 4));
    launch("lnf_drop" + h, 4, 64, {dx, y});
    DevPtr plain = zerosF32(n), fused = zerosF32(n);
    launch("lnf_plain" + h, 5, 64, {y, dr, dg, dbeta, plain});
    launch("lnf_fused" + h, 5, 64, {dx, dr, dg, dbeta, fused});
    EXPECT_EQ(get<float>(plain, n), get<float>(fused, n)) << "forward, bf16 y: " << half;
    // The gradient: plain LayerNorm gradient on y (then, in f32, the
    // dropout of dsum), against the fused kernel on x.
    std::vector<DevPtr> pl, fu;
    for (int k = 0; k < 2; ++k) {
      DevPtr ws = put(nullptr, size_t(parts * 2 * D) * 8);
      std::vector<DevPtr> &v = k ? fu : pl;
      v = {zerosF32(n), zerosF32(n), zerosF32(D), zerosF32(D), ws};
    }
    for (int phase = 0; phase < 2; ++phase) {
      launch(fmt::format("lngrad_y{}{}", half ? "h" : "", phase), 2, 64,
             {ddy, y, dr, dg, pl[0], pl[2], pl[3], pl[4]});
      launch(fmt::format("lnfgrad{}{}", h, phase), 2, 64,
             {ddy, dx, dr, dg, fu[0], fu[1], fu[2], fu[3], fu[4]});
    }
    if (!half)
      launch("lnf_dgrad", 4, 64, {pl[0], pl[1]});
    for (int k : {0, 2, 3})
      EXPECT_EQ(get<float>(pl[k], k ? D : n), get<float>(fu[k], k ? D : n))
          << "gradient output " << k << ", bf16 y: " << half;
    if (!half) {
      const std::vector<float> dd = get<float>(fu[1], n);
      EXPECT_EQ(get<float>(pl[1], n), dd) << "the gradient through the dropout";
      EXPECT_GT(std::count(dd.begin(), dd.end(), 0.0f), n / 20) << "some elements dropped";
    }
  }
}

/// With init operands the LayerNorm gradient writes init + each gain's
/// gradient, bitwise the plan's add_layer_norm_grad followed by two adds.
TEST_F(DeviceOps, LayerNormGradAddsGainsIntoInits) {
  const int64_t rows = 70, D = 67;
  Tensor dy = randomF32({rows, D}, 70), x = randomF32({rows, D}, 71),
         r = randomF32({rows, D}, 72), g = randomF32({D}, 73, 0.5f, 1.5f);
  Tensor gi = randomF32({D}, 74), bi = randomF32({D}, 75);
  Tensor ds = Tensor::zeros(DType::F32, {rows, D}), dg = Tensor::zeros(DType::F32, {D}),
         db = Tensor::zeros(DType::F32, {D});
  host::addLayerNormGrad(dy, x, r, g, kEpsA, ds, dg, db);
  Tensor sg = Tensor::zeros(DType::F32, {D}), sb = Tensor::zeros(DType::F32, {D});
  host::add(gi, dg, sg);
  host::add(bi, db, sb);
  // The device's own gradients first (the f32 reductions are not the
  // host's bit for bit), then the same with inits.
  DevPtr ddy = put(dy), dx = put(x), dr = put(r), dgam = put(g), dgi = put(gi), dbi = put(bi);
  DevPtr pds = zerosF32(rows * D), pg = zerosF32(D), pb = zerosF32(D),
         ws = put(nullptr, size_t(3 * 2 * D) * 8);
  DevPtr ids = zerosF32(rows * D), ig = zerosF32(D), ib = zerosF32(D),
         ws2 = put(nullptr, size_t(3 * 2 * D) * 8);
  for (int phase = 0; phase < 2; ++phase) {
    launch(fmt::format("lngrad_a{}", phase), 2, 64, {ddy, dx, dr, dgam, pds, pg, pb, ws});
    launch(fmt::format("lngrad_i{}", phase), 2, 64,
           {ddy, dx, dr, dgam, dgi, dbi, ids, ig, ib, ws2});
  }
  EXPECT_EQ(get<float>(pds, rows * D), get<float>(ids, rows * D)) << "dsum unchanged";
  const std::vector<float> g0 = get<float>(pg, D), b0 = get<float>(pb, D);
  const std::vector<float> g1 = get<float>(ig, D), b1 = get<float>(ib, D);
  for (int64_t d = 0; d < D; ++d) {
    EXPECT_EQ(g1[size_t(d)], gi.f32()[d] + g0[size_t(d)]) << "dgamma " << d;
    EXPECT_EQ(b1[size_t(d)], bi.f32()[d] + b0[size_t(d)]) << "dbeta " << d;
  }
  expectClose(sg, g1, "dgamma + init against the host");
  expectClose(sb, b1, "dbeta + init against the host");
}

/// With an `init` operand bias_grad writes init + its result, bitwise what
/// the plan's bias_grad followed by add gives on the host.
TEST_F(DeviceOps, BiasGradAddsIntoInit) {
  Tensor dy = randomF32({70, 67}, 51), init = randomF32({67}, 52);
  Tensor g = Tensor::zeros(DType::F32, {67}), ref = Tensor::zeros(DType::F32, {67});
  host::biasGrad(dy, g);
  host::add(init, g, ref);
  DevPtr ddy = put(dy), dinit = put(init);
  for (unsigned grid : gridsFor(5 * 67, 64)) {
    DevPtr o = zerosF32(67), ws = put(nullptr, size_t(5 * 67) * 8);
    launch("biasgrad_i0", grid, 64, {ddy, dinit, o, ws});
    launch("biasgrad_i1", grid, 64, {ddy, dinit, o, ws});
    std::vector<float> got = get<float>(o, 67);
    EXPECT_EQ(std::memcmp(got.data(), ref.f32(), 67 * 4), 0) << "grid " << grid;
  }
}

//===----------------------------------------------------------------------===//
// NVRTC for sm_90
//===----------------------------------------------------------------------===//

TEST(DeviceOpsSm90, TestModuleCompilesWithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin out;
  Status st = xlnetc::rt::testing::compileForSm90("device_ops_test.cu",
                                                  moduleText(), out);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(isElf(out.cubin));
  if (std::getenv("XLNETC_PRINT_PTXAS")) // registers and spills per kernel
    std::printf("%s\n", out.log.c_str());
  int entries = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(out.log)) {
    entries += u.entry;
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
    EXPECT_LE(u.smemBytes, 48 * 1024) << u.kernel;
  }
  EXPECT_EQ(entries, 68) << out.log; // every wrapper of moduleText()
}

} // namespace
