//===- GemmTest.cpp - GEMM calls with cuBLASLt's semantics -----------------===//
//
// gemmReference (what the emulated device runs) against a plain triple loop
// in double for every transpose, batching, beta (C aliasing D too) and
// epilogue; descriptor validation; the same calls through Device::gemm on the
// emulated device and, when a GPU answers, on cuBLASLt; and every epilogue
// unfused (GemmFallback.h: the GEMM, then an epilogue kernel), bitwise the
// fused call on the emulated device.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/Device.h"
#include "runtime/BFloat16.h"
#include "runtime/device/CudaApi.h"
#include "runtime/device/Gemm.h"
#include "runtime/device/GemmFallback.h"
#include "runtime/device/KernelCache.h"
#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;

namespace {

struct Case {
  GemmDesc desc;
  std::vector<float> a, b, c, bias, aux;
};

/// A case with random operands of the right spans (values in [-1, 1]).
/// `aligned`: every leading dimension and batch stride a multiple of 8
/// elements, as the model's are (else odd paddings).
Case makeCase(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
              int64_t batch, float beta, GemmEpilogue epi, uint32_t seed,
              bool aligned = false) {
  Case c;
  GemmDesc &d = c.desc;
  d.transA = ta;
  d.transB = tb;
  d.m = m;
  d.n = n;
  d.k = k;
  auto up8 = [](int64_t x) { return (x + 7) / 8 * 8; };
  d.lda = aligned ? up8(ta ? k : m) : (ta ? k : m) + 1; // padded leading dimensions
  d.ldb = aligned ? up8(tb ? n : k) : (tb ? n : k) + 2;
  d.ldc = (m + 3 + 7) / 8 * 8; // padded, a multiple of 8 (cuBLASLt's aux rule)
  d.batch = batch;
  GemmExtents probe = gemmExtents(d); // strides 0 here: one entry's span
  d.strideA = aligned ? up8(probe.a + 5) : probe.a + 5;
  d.strideB = aligned ? up8(probe.b + 7) : probe.b + 7;
  // An aux matrix lies strideC apart too, and cuBLASLt wants whole ldc·n
  // blocks for it.
  d.strideC = aligned ? up8(std::max(probe.cd + 1, d.ldc * n)) : probe.cd + 1;
  d.alpha = 0.75f;
  d.beta = beta;
  d.epilogue = epi;
  GemmExtents e = gemmExtents(d);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto fill = [&](std::vector<float> &v, int64_t n) {
    v.resize(size_t(n));
    for (float &x : v)
      x = u(rng);
  };
  fill(c.a, e.a);
  fill(c.b, e.b);
  fill(c.c, e.cd);
  fill(c.bias, m);
  fill(c.aux, e.cd);
  return c;
}

float gelu(double x) {
  return float(0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))));
}
double geluGrad(double x) {
  double c = 0.7978845608028654, u = c * (x + 0.044715 * x * x * x), t = std::tanh(u);
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * 0.044715 * x * x);
}

/// Expected D (and bias for dgelu_bgrad, aux for gelu_aux_bias), in double;
/// `biasAbs` (optional), for dgelu_bgrad: per row the sum of |D| the bias
/// gradient adds up (the scale of its rounding errors).
void expected(const Case &c, std::vector<float> &D, std::vector<float> &bias,
              std::vector<float> &aux, std::vector<double> *biasAbs = nullptr) {
  const GemmDesc &d = c.desc;
  D = c.c;
  bias = c.bias;
  aux = c.aux;
  std::vector<double> bsum(d.m, 0.0), babs(d.m, 0.0);
  for (int64_t i = 0; i < d.batch; ++i)
    for (int64_t col = 0; col < d.n; ++col)
      for (int64_t row = 0; row < d.m; ++row) {
        double acc = 0;
        for (int64_t kk = 0; kk < d.k; ++kk) {
          double av = d.transA ? c.a[i * d.strideA + kk + row * d.lda]
                               : c.a[i * d.strideA + row + kk * d.lda];
          double bv = d.transB ? c.b[i * d.strideB + col + kk * d.ldb]
                               : c.b[i * d.strideB + kk + col * d.ldb];
          acc += av * bv;
        }
        int64_t at = i * d.strideC + row + col * d.ldc;
        double x = d.alpha * acc + d.beta * c.c[at];
        switch (d.epilogue) {
        case GemmEpilogue::Default:
          break;
        case GemmEpilogue::Bias:
          x += c.bias[row];
          break;
        case GemmEpilogue::ReluBias:
          x = std::max(0.0, x + c.bias[row]);
          break;
        case GemmEpilogue::GeluBias:
          x = gelu(x + c.bias[row]);
          break;
        case GemmEpilogue::GeluAuxBias:
          x += c.bias[row];
          aux[at] = float(x);
          x = gelu(x);
          break;
        case GemmEpilogue::DGeluBGrad:
          x *= geluGrad(c.aux[at]);
          bsum[row] += x;
          babs[row] += std::fabs(x);
          break;
        }
        D[at] = float(x);
      }
  if (d.epilogue == GemmEpilogue::DGeluBGrad)
    for (int64_t row = 0; row < d.m; ++row)
      bias[row] = float(bsum[row]);
  if (biasAbs)
    *biasAbs = babs;
}

/// max |got - want| over the elements D covers, relative to max |want|.
double relError(const GemmDesc &d, const std::vector<float> &got,
                const std::vector<float> &want) {
  double err = 0, scale = 1e-30;
  for (int64_t i = 0; i < d.batch; ++i)
    for (int64_t col = 0; col < d.n; ++col)
      for (int64_t row = 0; row < d.m; ++row) {
        int64_t at = i * d.strideC + row + col * d.ldc;
        err = std::max(err, double(std::fabs(got[at] - want[at])));
        scale = std::max(scale, double(std::fabs(want[at])));
      }
  return err / scale;
}

struct Variant {
  bool ta, tb;
  int64_t batch;
  float beta;
  GemmEpilogue epi;
};

std::vector<Variant> variants() {
  std::vector<Variant> v;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int64_t batch : {1, 3})
        v.push_back({ta, tb, batch, batch == 3 ? 0.5f : 0.0f, GemmEpilogue::Default});
  for (GemmEpilogue e : {GemmEpilogue::Bias, GemmEpilogue::ReluBias,
                         GemmEpilogue::GeluBias,
                         GemmEpilogue::GeluAuxBias, GemmEpilogue::DGeluBGrad})
    v.push_back({true, false, 1, 0.0f, e});
  return v;
}

TEST(GemmReference, MatchesALoopForEveryLayoutAndEpilogue) {
  uint32_t seed = 1;
  for (const Variant &v : variants()) {
    Case c = makeCase(v.ta, v.tb, 13, 11, 17, v.batch, v.beta, v.epi, seed++);
    std::vector<float> D(c.c.size(), -7.0f), bias = c.bias, aux = c.aux;
    std::vector<float> wantD, wantBias, wantAux;
    expected(c, wantD, wantBias, wantAux);
    GemmPointers p{c.a.data(), c.b.data(), c.c.data(), D.data(), bias.data(), aux.data()};
    Status st = gemmReference(c.desc, p);
    ASSERT_TRUE(st.isOk()) << st.message();
    SCOPED_TRACE(describeGemm(c.desc));
    EXPECT_LT(relError(c.desc, D, wantD), 1e-6);
    if (v.epi == GemmEpilogue::DGeluBGrad)
      for (int64_t r = 0; r < c.desc.m; ++r)
        EXPECT_NEAR(bias[r], wantBias[r], 1e-5) << "bias row " << r;
    if (v.epi == GemmEpilogue::GeluAuxBias)
      EXPECT_LT(relError(c.desc, aux, wantAux), 1e-6);
  }
}

/// bf16 storage (--precision bf16): A and B bf16 and D f32 (a weight
/// gradient), or everything bf16 (an activation). The result is the f32
/// computation on the bf16 values, a bf16 D rounded once; entries between
/// D's columns are not written.
TEST(GemmReference, Bf16OperandsAndResults) {
  uint32_t seed = 300;
  for (GemmType cd : {GemmType::F32, GemmType::BF16})
    for (const Variant &v : variants()) {
      if (cd == GemmType::F32 && v.epi != GemmEpilogue::Default)
        continue; // f32 results with bf16 operands: the weight gradients
      Case c = makeCase(v.ta, v.tb, 13, 11, 17, v.batch, v.beta, v.epi, seed++);
      c.desc.ab = GemmType::BF16;
      c.desc.cd = cd;
      SCOPED_TRACE(describeGemm(c.desc));
      auto toBf16 = [](std::vector<float> &v) {
        std::vector<uint16_t> h(v.size());
        for (size_t i = 0; i < v.size(); ++i) {
          h[i] = bf16FromFloat(v[i]);
          v[i] = floatFromBf16(h[i]); // what the expectation reads
        }
        return h;
      };
      std::vector<uint16_t> a = toBf16(c.a), b = toBf16(c.b);
      std::vector<uint16_t> cH, biasH, auxH, dH;
      if (cd == GemmType::BF16) {
        cH = toBf16(c.c), biasH = toBf16(c.bias), auxH = toBf16(c.aux);
        dH.assign(c.c.size(), 0x7777); // a sentinel between the columns
      }
      std::vector<float> wantD, wantBias, wantAux;
      expected(c, wantD, wantBias, wantAux);
      std::vector<float> D(c.c.size(), -7.0f), bias = c.bias, aux = c.aux;
      GemmPointers p{a.data(), b.data(), nullptr, nullptr, nullptr, nullptr};
      if (cd == GemmType::BF16)
        p.c = cH.data(), p.d = dH.data(), p.bias = biasH.data(), p.aux = auxH.data();
      else
        p.c = c.c.data(), p.d = D.data(), p.bias = bias.data(), p.aux = aux.data();
      Status st = gemmReference(c.desc, p);
      ASSERT_TRUE(st.isOk()) << st.message();
      if (cd == GemmType::F32) {
        EXPECT_LT(relError(c.desc, D, wantD), 1e-6);
        continue;
      }
      // One rounding to bf16 (8 significant bits): within 2^-8 relative of the f32
      // result, plus the f32 computation's own error.
      std::vector<float> got(dH.size());
      for (size_t i = 0; i < dH.size(); ++i)
        got[i] = floatFromBf16(dH[i]);
      EXPECT_LT(relError(c.desc, got, wantD), 1.0 / 256);
      for (int64_t i = 0; i < c.desc.batch; ++i)
        for (int64_t col = 0; col + 1 < c.desc.n; ++col)
          for (int64_t row = c.desc.m; row < c.desc.ldc; ++row)
            ASSERT_EQ(dH[size_t(i * c.desc.strideC + row + col * c.desc.ldc)], 0x7777)
                << "wrote between the columns";
      if (v.epi == GemmEpilogue::GeluAuxBias) {
        std::vector<float> gotAux(auxH.size());
        for (size_t i = 0; i < auxH.size(); ++i)
          gotAux[i] = floatFromBf16(auxH[i]);
        EXPECT_LT(relError(c.desc, gotAux, wantAux), 1.0 / 256);
      }
      if (v.epi == GemmEpilogue::DGeluBGrad)
        for (int64_t r = 0; r < c.desc.m; ++r)
          EXPECT_NEAR(floatFromBf16(biasH[size_t(r)]), wantBias[size_t(r)],
                      std::fabs(wantBias[size_t(r)]) / 128 + 1e-5)
              << "bias row " << r;
    }
}

TEST(GemmReference, BetaWithCAliasingD) {
  Case c = makeCase(false, true, 8, 9, 5, 2, 1.0f, GemmEpilogue::Default, 42);
  std::vector<float> wantD, wb, wa;
  expected(c, wantD, wb, wa);
  std::vector<float> D = c.c; // accumulate in place, as weight gradients will
  GemmPointers p{c.a.data(), c.b.data(), D.data(), D.data(), nullptr, nullptr};
  ASSERT_TRUE(gemmReference(c.desc, p).isOk());
  EXPECT_LT(relError(c.desc, D, wantD), 1e-6);
}

TEST(GemmReference, InvalidDescriptorsAreNamed) {
  Case c = makeCase(false, false, 4, 4, 4, 1, 0.0f, GemmEpilogue::Bias, 3);
  std::vector<float> D(c.c.size());
  GemmPointers p{c.a.data(), c.b.data(), nullptr, D.data(), nullptr, nullptr};
  Status st = gemmReference(c.desc, p);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("the epilogue needs a bias pointer"), std::string::npos)
      << st.message();
  c.desc.epilogue = GemmEpilogue::Default;
  c.desc.lda = 2;
  st = gemmReference(c.desc, p);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("lda 2 < 4 rows of A"), std::string::npos) << st.message();
  c.desc.lda = 5;
  c.desc.beta = 1.0f;
  st = gemmReference(c.desc, p);
  EXPECT_NE(st.message().find("beta != 0 needs C"), std::string::npos) << st.message();
  // The aux epilogues need an aux leading dimension that is a multiple of 8.
  Case g = makeCase(true, false, 4, 4, 4, 1, 0.0f, GemmEpilogue::GeluAuxBias, 4);
  std::vector<float> D2(g.c.size() + 64), aux(g.c.size() + 64);
  GemmPointers q{g.a.data(), g.b.data(), nullptr, D2.data(), g.bias.data(),
                 aux.data()};
  ASSERT_TRUE(gemmReference(g.desc, q).isOk());
  g.desc.ldc = 12;
  st = gemmReference(g.desc, q);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("(ldc) must be a multiple of 8"), std::string::npos)
      << st.message();
  // Batched, each entry's aux matrix must start a whole ldc·n block after
  // the last (cuBLASLt's aux batch stride; it refuses overlapping outputs).
  Case b = makeCase(true, false, 4, 4, 4, 2, 0.0f, GemmEpilogue::GeluAuxBias, 5, true);
  std::vector<float> D3(b.c.size()), aux3(b.c.size());
  GemmPointers r{b.a.data(), b.b.data(), nullptr, D3.data(), b.bias.data(), aux3.data()};
  ASSERT_TRUE(gemmReference(b.desc, r).isOk());
  b.desc.strideC = b.desc.ldc * b.desc.n - 8;
  st = gemmReference(b.desc, r);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("a batched aux matrix needs strideC"), std::string::npos)
      << st.message();
}

/// Device::gemm on `dev` for every variant, against the loop.
void runOnDevice(Device &dev, double tol) {
  uint32_t seed = 100;
  for (const Variant &v : variants()) {
    Case c = makeCase(v.ta, v.tb, 33, 20, 48, v.batch, v.beta, v.epi, seed++);
    SCOPED_TRACE(describeGemm(c.desc));
    std::vector<float> wantD, wantBias, wantAux;
    expected(c, wantD, wantBias, wantAux);
    auto put = [&](const std::vector<float> &h, DevPtr &p) {
      ASSERT_TRUE(dev.alloc(h.size() * 4, p).isOk());
      ASSERT_TRUE(dev.upload(p, h.data(), h.size() * 4).isOk());
    };
    GemmOperands ops;
    put(c.a, ops.a);
    put(c.b, ops.b);
    put(c.c, ops.c);
    put(c.c, ops.d);
    if (v.epi != GemmEpilogue::Default)
      put(c.bias, ops.bias);
    if (v.epi == GemmEpilogue::GeluAuxBias || v.epi == GemmEpilogue::DGeluBGrad)
      put(c.aux, ops.aux);
    Status st = dev.gemm(c.desc, ops, "gemm test");
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(dev.synchronize("gemm test").isOk());
    std::vector<float> D(c.c.size());
    ASSERT_TRUE(dev.download(D.data(), ops.d, D.size() * 4).isOk());
    EXPECT_LT(relError(c.desc, D, wantD), tol);
    if (v.epi == GemmEpilogue::DGeluBGrad) {
      std::vector<float> bias(c.bias.size());
      ASSERT_TRUE(dev.download(bias.data(), ops.bias, bias.size() * 4).isOk());
      for (size_t r = 0; r < bias.size(); ++r)
        EXPECT_NEAR(bias[r], wantBias[r], 1e-4) << "bias row " << r;
    }
    for (DevPtr p : {ops.a, ops.b, ops.c, ops.d, ops.bias, ops.aux})
      if (p)
        dev.free(p);
  }
}

/// Device::gemm with bf16 storage on `dev`, what --precision bf16 runs:
/// every epilogue with a bf16 D; weight gradients (bf16 A and B, an f32 D
/// accumulated with beta 1); batches whose B has stride 0 (one operand for
/// every entry). Leading dimensions are multiples of 8, as the model's are.
void runBf16OnDevice(Device &dev) {
  struct Bf16Variant {
    Variant v;
    GemmType cd;
    bool strideZeroB;
  };
  std::vector<Bf16Variant> all;
  for (const Variant &v : variants())
    all.push_back({v, GemmType::BF16, false});
  all.push_back({{false, true, 1, 1.0f, GemmEpilogue::Default}, GemmType::F32, false});
  all.push_back({{true, false, 1, 1.0f, GemmEpilogue::Default}, GemmType::F32, false});
  all.push_back({{false, false, 3, 0.0f, GemmEpilogue::Default}, GemmType::BF16, true});
  all.push_back({{true, true, 3, 0.0f, GemmEpilogue::Default}, GemmType::BF16, true});
  uint32_t seed = 500;
  for (const Bf16Variant &bv : all) {
    const Variant &v = bv.v;
    Case c = makeCase(v.ta, v.tb, 40, 24, 64, v.batch, v.beta, v.epi, seed++,
                      /*aligned=*/true);
    c.desc.ab = GemmType::BF16;
    c.desc.cd = bv.cd;
    if (bv.strideZeroB)
      c.desc.strideB = 0;
    SCOPED_TRACE(describeGemm(c.desc) + (bv.strideZeroB ? " strideB=0" : "") +
                 (bv.cd == GemmType::F32 ? " D f32" : " D bf16"));
    // The operands rounded to bf16; the expectation reads the rounded values.
    auto toBf16 = [](std::vector<float> &x) {
      std::vector<uint16_t> h(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        h[i] = bf16FromFloat(x[i]);
        x[i] = floatFromBf16(h[i]);
      }
      return h;
    };
    std::vector<uint16_t> a = toBf16(c.a), b = toBf16(c.b), cH, biasH, auxH;
    const bool bf16D = bv.cd == GemmType::BF16;
    if (bf16D)
      cH = toBf16(c.c), biasH = toBf16(c.bias), auxH = toBf16(c.aux);
    std::vector<float> wantD, wantBias, wantAux;
    std::vector<double> biasAbs;
    expected(c, wantD, wantBias, wantAux, &biasAbs);
    auto put = [&](const void *h, size_t bytes, DevPtr &p) {
      ASSERT_TRUE(dev.alloc(bytes, p).isOk());
      ASSERT_TRUE(dev.upload(p, h, bytes).isOk());
    };
    GemmOperands ops;
    put(a.data(), a.size() * 2, ops.a);
    put(b.data(), b.size() * 2, ops.b);
    if (bf16D) {
      put(cH.data(), cH.size() * 2, ops.c);
      put(cH.data(), cH.size() * 2, ops.d);
      if (v.epi != GemmEpilogue::Default)
        put(biasH.data(), biasH.size() * 2, ops.bias);
      if (v.epi == GemmEpilogue::GeluAuxBias || v.epi == GemmEpilogue::DGeluBGrad)
        put(auxH.data(), auxH.size() * 2, ops.aux);
    } else {
      put(c.c.data(), c.c.size() * 4, ops.c);
      ops.d = ops.c; // accumulated in place, as the weight gradients are
    }
    Status st = dev.gemm(c.desc, ops, "bf16 gemm test");
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(dev.synchronize("bf16 gemm test").isOk());
    // A bf16 result is rounded once: within 2^-8 of max |D|, and a GPU's
    // other summation order may round the other way (2^-7 covers both).
    auto widened = [&](DevPtr p, size_t n) {
      std::vector<uint16_t> h(n);
      EXPECT_TRUE(dev.download(h.data(), p, n * 2).isOk());
      std::vector<float> f(n);
      for (size_t i = 0; i < n; ++i)
        f[i] = floatFromBf16(h[i]);
      return f;
    };
    if (bf16D) {
      EXPECT_LT(relError(c.desc, widened(ops.d, c.c.size()), wantD), 1.0 / 128);
      if (v.epi == GemmEpilogue::GeluAuxBias)
        EXPECT_LT(relError(c.desc, widened(ops.aux, c.aux.size()), wantAux), 1.0 / 128);
      if (v.epi == GemmEpilogue::DGeluBGrad) {
        // cuBLASLt (13.1, H200) sums the bf16-rounded D: each term off by up
        // to 2^-9 of itself, then the sum rounded once more.
        std::vector<float> bias = widened(ops.bias, c.bias.size());
        for (int64_t r = 0; r < c.desc.m; ++r)
          EXPECT_NEAR(bias[size_t(r)], wantBias[size_t(r)],
                      biasAbs[size_t(r)] / 256 + std::fabs(wantBias[size_t(r)]) / 128 + 1e-4)
              << "bias row " << r;
      }
    } else {
      std::vector<float> D(c.c.size());
      ASSERT_TRUE(dev.download(D.data(), ops.d, D.size() * 4).isOk());
      EXPECT_LT(relError(c.desc, D, wantD), 1e-5);
    }
    for (DevPtr p : {ops.a, ops.b, ops.c, bf16D ? ops.d : 0, ops.bias, ops.aux})
      if (p)
        dev.free(p);
  }
}

TEST(GemmOnDevice, Bf16Emulated) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  runBf16OnDevice(*dev);
}

TEST(GemmOnDevice, Bf16CublasLtOnAGpu) {
  std::unique_ptr<Device> dev;
  Status st = openDevice(DeviceKind::Cuda, {}, dev);
  if (!st.isOk())
    GTEST_SKIP() << "no GPU: " << st.message();
  runBf16OnDevice(*dev);
}

TEST(GemmOnDevice, Emulated) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  runOnDevice(*dev, 1e-6);
  // An operand outside its allocation is an error naming it.
  Case c = makeCase(false, false, 8, 8, 8, 1, 0.0f, GemmEpilogue::Default, 9);
  GemmOperands ops;
  ASSERT_TRUE(dev->alloc(16, ops.a).isOk()); // far too small for A
  ASSERT_TRUE(dev->alloc(c.b.size() * 4, ops.b).isOk());
  ASSERT_TRUE(dev->alloc(c.c.size() * 4, ops.d).isOk());
  Status st = dev->gemm(c.desc, ops, "step 3 (gemm, loc 'q')");
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("step 3 (gemm, loc 'q'): "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("GEMM operand A"), std::string::npos) << st.message();
}

TEST(GemmOnDevice, CublasLtOnAGpu) {
  std::unique_ptr<Device> dev;
  Status st = openDevice(DeviceKind::Cuda, {}, dev);
  if (!st.isOk())
    GTEST_SKIP() << "no GPU: " << st.message();
  // fp32 compute on tensor cores may use TF32 only when asked; 1e-5 covers
  // a different summation order.
  runOnDevice(*dev, 1e-5);
}

//===----------------------------------------------------------------------===//
// The unfused epilogues (GemmFallback.h)
//===----------------------------------------------------------------------===//

/// `v` in storage type `t` (bf16: rounded, and `v` then holds the rounded
/// values, which the expectation reads).
std::vector<unsigned char> stored(std::vector<float> &v, GemmType t) {
  std::vector<unsigned char> bytes(v.size() * size_t(gemmTypeSize(t)));
  if (t == GemmType::F32) {
    std::memcpy(bytes.data(), v.data(), bytes.size());
    return bytes;
  }
  for (size_t i = 0; i < v.size(); ++i) {
    uint16_t h = bf16FromFloat(v[i]);
    v[i] = floatFromBf16(h);
    std::memcpy(&bytes[2 * i], &h, 2);
  }
  return bytes;
}

/// The first byte where `a` and `b` differ (-1: none).
int64_t firstDifference(const std::vector<unsigned char> &a, const std::vector<unsigned char> &b) {
  if (a.size() != b.size())
    return 0;
  auto at = std::mismatch(a.begin(), a.end(), b.begin());
  return at.first == a.end() ? -1 : int64_t(at.first - a.begin());
}

/// The outputs of one call on the device: D (every byte a sentinel, 0x77,
/// before the call), the bias and aux (their inputs, or sentinels where the
/// call writes them).
struct Outputs {
  DevPtr d = 0, bias = 0, aux = 0;
};

/// Every epilogue fused (Device::gemm) and unfused (the GEMM, then the
/// epilogue kernel, launched with the planned grid and with one block): f32
/// and bf16 storage, single and batched (beta 0.5 with f32: the GEMM does
/// it), against the loop with GemmTest's tolerances and, when `bitwise`
/// (the emulated device: the kernels compute gemmReference's operations in
/// its order), bit for bit against the fused call, bytes between D's
/// columns included.
void runUnfusedOnDevice(Device &dev, bool bitwise) {
  std::unique_ptr<Module> mod;
  Status st = dev.loadModule(gemmEpilogueModule(), mod);
  ASSERT_TRUE(st.isOk()) << st.message();
  uint32_t seed = 700;
  for (GemmType t : {GemmType::F32, GemmType::BF16})
    for (GemmEpilogue epi : {GemmEpilogue::Bias, GemmEpilogue::ReluBias, GemmEpilogue::GeluBias,
                             GemmEpilogue::GeluAuxBias, GemmEpilogue::DGeluBGrad})
      for (int64_t batch : {1, 3}) {
        if (epi == GemmEpilogue::DGeluBGrad && batch > 1)
          continue; // not batched (validateGemm)
        const float beta = t == GemmType::F32 && batch > 1 ? 0.5f : 0.0f;
        Case c = makeCase(true, false, 40, 24, 64, batch, beta, epi, seed++, /*aligned=*/true);
        c.desc.ab = c.desc.cd = t;
        SCOPED_TRACE(describeGemm(c.desc));
        std::vector<unsigned char> a = stored(c.a, t), b = stored(c.b, t), cBytes = stored(c.c, t),
                                   bias = stored(c.bias, t), aux = stored(c.aux, t);
        std::vector<float> wantD, wantBias, wantAux;
        std::vector<double> biasAbs;
        expected(c, wantD, wantBias, wantAux, &biasAbs);
        std::vector<DevPtr> live;
        auto put = [&](const std::vector<unsigned char> *bytes, size_t n) {
          DevPtr p = 0;
          EXPECT_TRUE(dev.alloc(n, p).isOk());
          std::vector<unsigned char> sentinel(n, 0x77);
          EXPECT_TRUE(dev.upload(p, bytes ? bytes->data() : sentinel.data(), n).isOk());
          live.push_back(p);
          return p;
        };
        const bool writesBias = epi == GemmEpilogue::DGeluBGrad,
                   readsAux = epi == GemmEpilogue::DGeluBGrad,
                   writesAux = epi == GemmEpilogue::GeluAuxBias;
        GemmOperands in;
        in.a = put(&a, a.size());
        in.b = put(&b, b.size());
        in.c = put(&cBytes, cBytes.size());
        auto outputs = [&] {
          Outputs o;
          o.d = put(nullptr, cBytes.size());
          o.bias = put(writesBias ? nullptr : &bias, bias.size());
          if (readsAux || writesAux)
            o.aux = put(writesAux ? nullptr : &aux, aux.size());
          return o;
        };
        auto operands = [&](const Outputs &o) {
          GemmOperands ops = in;
          ops.d = o.d;
          ops.bias = o.bias;
          ops.aux = o.aux;
          return ops;
        };
        auto download = [&](DevPtr p, size_t n) {
          std::vector<unsigned char> h(n);
          EXPECT_TRUE(dev.download(h.data(), p, n).isOk());
          return h;
        };
        auto widened = [&](const std::vector<unsigned char> &h) {
          std::vector<float> f(h.size() / size_t(gemmTypeSize(t)));
          for (size_t i = 0; i < f.size(); ++i) {
            if (t == GemmType::F32) {
              std::memcpy(&f[i], &h[4 * i], 4);
            } else {
              uint16_t x;
              std::memcpy(&x, &h[2 * i], 2);
              f[i] = floatFromBf16(x);
            }
          }
          return f;
        };
        const Outputs fused = outputs();
        st = dev.gemm(c.desc, operands(fused), "fused");
        ASSERT_TRUE(st.isOk()) << st.message();
        ASSERT_TRUE(dev.synchronize("fused").isOk());
        // The fused call itself against the loop, batched entries included
        // (cuBLASLt placed every entry's aux on the first one's until it
        // was told their stride).
        const double tol = t == GemmType::BF16 ? 1.0 / 128 : bitwise ? 1e-6 : 1e-5;
        EXPECT_LT(relError(c.desc, widened(download(fused.d, cBytes.size())), wantD), tol)
            << "fused D";
        if (writesAux)
          EXPECT_LT(relError(c.desc, widened(download(fused.aux, aux.size())), wantAux), tol)
              << "fused aux";
        DevPtr scratch = 0;
        if (int64_t bytes = gemmFallbackScratchBytes(c.desc)) {
          ASSERT_TRUE(dev.alloc(size_t(bytes), scratch).isOk());
          live.push_back(scratch);
        }
        for (unsigned grid : {0u, 1u}) { // 0: the planned grid
          SCOPED_TRACE(grid ? "one block" : "the planned grid");
          const Outputs o = outputs();
          GemmFallback fb;
          st = gemmFallback(c.desc, operands(o), scratch, fb);
          ASSERT_TRUE(st.isOk()) << st.message();
          EXPECT_EQ(fb.gemm.epilogue, GemmEpilogue::Default);
          EXPECT_EQ(fb.gemm.cd, GemmType::F32) << "the product is never rounded to bf16";
          EXPECT_EQ(fb.ops.d, t == GemmType::BF16 ? scratch : o.d);
          st = dev.gemm(fb.gemm, fb.ops, "unfused");
          ASSERT_TRUE(st.isOk()) << st.message();
          Kernel k;
          st = dev.getKernel(*mod, fb.kernel, k);
          ASSERT_TRUE(st.isOk()) << st.message();
          LaunchDims dims = fb.dims;
          if (grid)
            dims.grid[0] = grid;
          std::vector<void *> params;
          for (uint64_t &arg : fb.args)
            params.push_back(&arg);
          st = dev.launch(k, dims, params.data(), fb.kernel);
          ASSERT_TRUE(st.isOk()) << st.message();
          ASSERT_TRUE(dev.synchronize("unfused").isOk());
          const std::vector<unsigned char> d = download(o.d, cBytes.size()),
                                           bi = download(o.bias, bias.size());
          if (bitwise) {
            EXPECT_EQ(firstDifference(d, download(fused.d, cBytes.size())), -1) << "D";
            EXPECT_EQ(firstDifference(bi, download(fused.bias, bias.size())), -1) << "bias";
            if (o.aux)
              EXPECT_EQ(firstDifference(download(o.aux, aux.size()),
                                        download(fused.aux, aux.size())),
                        -1)
                  << "aux";
          }
          // Against the loop, as the fused calls are held (runOnDevice,
          // runBf16OnDevice); nothing written between D's columns.
          EXPECT_LT(relError(c.desc, widened(d), wantD), tol);
          if (writesAux)
            EXPECT_LT(relError(c.desc, widened(download(o.aux, aux.size())), wantAux), tol);
          if (writesBias) {
            const std::vector<float> got = widened(bi);
            for (int64_t r = 0; r < c.desc.m; ++r) {
              const double want = wantBias[size_t(r)],
                           tolBias = t == GemmType::BF16
                                         ? biasAbs[size_t(r)] / 256 + std::fabs(want) / 128 + 1e-4
                                         : 1e-4;
              EXPECT_NEAR(got[size_t(r)], want, tolBias) << "bias row " << r;
            }
          }
          const size_t size = size_t(gemmTypeSize(t));
          for (int64_t i = 0; i < batch; ++i)
            for (int64_t col = 0; col + 1 < c.desc.n; ++col)
              for (int64_t row = c.desc.m; row < c.desc.ldc; ++row)
                ASSERT_EQ(d[size_t(i * c.desc.strideC + row + col * c.desc.ldc) * size], 0x77)
                    << "wrote between the columns";
        }
        for (DevPtr p : live)
          dev.free(p);
      }
}

TEST(GemmFallback, UnfusedIsBitwiseTheFusedCallEmulated) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  runUnfusedOnDevice(*dev, /*bitwise=*/true);
}

TEST(GemmFallback, UnfusedOnAGpu) {
  std::unique_ptr<Device> dev;
  Status st = openDevice(DeviceKind::Cuda, {}, dev);
  if (!st.isOk())
    GTEST_SKIP() << "no GPU: " << st.message();
  runUnfusedOnDevice(*dev, /*bitwise=*/false);
}

TEST(GemmFallback, TheDefaultEpilogueAndABf16BetaHaveNoUnfusedForm) {
  Case c = makeCase(true, false, 8, 8, 8, 1, 0.0f, GemmEpilogue::Default, 5, true);
  GemmFallback fb;
  Status st = gemmFallback(c.desc, {1, 2, 3, 4, 0, 0}, 0, fb);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("the default epilogue has no unfused form"), std::string::npos)
      << st.message();
  c.desc.epilogue = GemmEpilogue::Bias;
  c.desc.ab = c.desc.cd = GemmType::BF16;
  c.desc.beta = 1.0f;
  st = gemmFallback(c.desc, {1, 2, 3, 4, 5, 0}, 6, fb);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("a bf16 D with beta != 0 has no unfused form"), std::string::npos)
      << st.message();
}

/// The emulated device runs every epilogue fused; XLNETC_FAULT_GEMM_EPILOGUE
/// =unsupported (the test hook) says otherwise of all but the default, and
/// another value is refused, naming the variable.
TEST(GemmFallback, EmulatedSupportsEveryEpilogueUnlessTheHookSaysNo) {
  using xlnetc::rt::testing::ScopedEnv;
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  for (const char *hook : {(const char *)nullptr, "unsupported", "sometimes"}) {
    SCOPED_TRACE(hook ? hook : "no hook");
    ScopedEnv env("XLNETC_FAULT_GEMM_EPILOGUE", hook);
    for (GemmEpilogue epi : {GemmEpilogue::Default, GemmEpilogue::Bias, GemmEpilogue::ReluBias,
                             GemmEpilogue::GeluBias, GemmEpilogue::GeluAuxBias,
                             GemmEpilogue::DGeluBGrad}) {
      Case c = makeCase(true, false, 8, 8, 8, 1, 0.0f, epi, 6, true);
      bool supported = false;
      std::string why;
      Status st = dev->gemmSupported(c.desc, {1, 2, 3, 4, 5, 6}, "step 7", supported, why);
      if (hook && std::string(hook) == "sometimes") {
        ASSERT_FALSE(st.isOk());
        EXPECT_NE(st.message().find("step 7: XLNETC_FAULT_GEMM_EPILOGUE is 'sometimes'"),
                  std::string::npos)
            << st.message();
        continue;
      }
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_EQ(supported, !hook || epi == GemmEpilogue::Default) << gemmEpilogueName(epi);
      EXPECT_EQ(why.empty(), supported);
    }
  }
}

/// The epilogue kernels compile with NVRTC for sm_90, every one exported
/// and without spills.
TEST(GemmFallback, EpilogueModuleCompilesForSm90WithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  const ModuleSource src = gemmEpilogueModule();
  CompiledCubin out;
  Status st = xlnetc::rt::testing::compileForSm90(src.name, src.text, out);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(isElf(out.cubin));
  int entries = 0;
  for (const KernelResourceUsage &u : parsePtxasLog(out.log)) {
    entries += u.entry;
    EXPECT_EQ(u.spillStores + u.spillLoads, 0) << u.kernel;
  }
  EXPECT_EQ(entries, 10) << out.log; // 5 epilogues, f32 and bf16
}

} // namespace
