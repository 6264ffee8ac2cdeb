//===- KernelsTest.cpp - Host kernels on hand-checked examples ------------===//
//
// Every expected value is derived by hand (or from the op's formula, written
// out in the test), never by calling the code under test.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <omp.h>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;
using xlnetc::rt::test::values;
using xlnetc::rt::test::valuesBool;
using xlnetc::rt::test::valuesI64;

namespace {

void expectNear(const std::vector<float> &got, const std::vector<double> &want,
                double tol = 1e-6) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], tol) << "element " << k;
}

TEST(KernelsTest, EmbeddingGathersRowsAndRejectsBadIds) {
  Tensor table = Tensor::fromF32({3, 2}, {0, 1, 2, 3, 4, 5});
  Tensor out = Tensor::zeros(DType::F32, {1, 2, 2});
  ASSERT_TRUE(embedding(Tensor::fromI64({1, 2}, {2, 0}), table, out));
  expectNear(values(out), {4, 5, 0, 1});
  Status s = embedding(Tensor::fromI64({1, 2}, {1, 3}), table, out);
  EXPECT_EQ(s.message(), "id 3 at b=0, s=1 is outside [0, 3)");
}

TEST(KernelsTest, GemmKRank2TransposedWithBiasAndRelu) {
  // x [2,2,2] viewed as [2,4]: rows (1,2,3,4) and (-1,0,1,-2).
  Tensor x = Tensor::fromF32({2, 2, 2}, {1, 2, 3, 4, -1, 0, 1, -2});
  // w [3,2,2] with transpose_w is [Nw=3, Kx=4]: rows e0, e1+e2, all ones.
  Tensor w = Tensor::fromF32({3, 2, 2}, {1, 0, 0, 0, 0, 1, 1, 0, 1, 1, 1, 1});
  Tensor bias = Tensor::fromF32({3}, {-1, 0, -20});
  Tensor y = Tensor::zeros(DType::F32, {2, 3});
  // x·wᵀ = [[1, 5, 10], [-1, 1, -2]]; + bias = [[0, 5, -10], [-2, 1, -22]].
  gemm(x, w, &bias, /*kRank=*/2, /*transposeW=*/true, Activation::None, y);
  expectNear(values(y), {0, 5, -10, -2, 1, -22});
  gemm(x, w, &bias, /*kRank=*/2, /*transposeW=*/true, Activation::Relu, y);
  expectNear(values(y), {0, 5, 0, 0, 1, 0});
  // The same product with w stored [K=4, N=3] and no bias.
  Tensor wt = Tensor::fromF32({4, 3}, {1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 0, 1});
  Tensor x2 = Tensor::fromF32({2, 4}, {1, 2, 3, 4, -1, 0, 1, -2});
  gemm(x2, wt, nullptr, /*kRank=*/1, /*transposeW=*/false, Activation::None,
       y);
  expectNear(values(y), {1, 5, 10, -1, 1, -2});
}

TEST(KernelsTest, GemmGeluActivations) {
  Tensor one = Tensor::fromF32({1, 1}, {1});
  Tensor y = Tensor::zeros(DType::F32, {1, 1});
  // gelu_erf(1) = Φ(1) = 0.8413447460685429.
  gemm(one, one, nullptr, 1, false, Activation::GeluErf, y);
  EXPECT_NEAR(y.f32()[0], 0.8413447460685429, 1e-7);
  // gelu_tanh(x) = 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))) at x = 1.
  gemm(one, one, nullptr, 1, false, Activation::GeluTanh, y);
  double want = 0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * 1.044715));
  EXPECT_NEAR(y.f32()[0], want, 1e-7);
  EXPECT_NEAR(want, 0.8411919906, 1e-9);
}

TEST(KernelsTest, RelPosEncodingBiDataAndClamp) {
  // klen 3, qlen 2 -> R = 5, D = 4: f_0 = 1, f_1 = 1/10000^(2/4) = 0.01.
  Tensor out = Tensor::zeros(DType::F32, {2, 5, 4});
  relPosEncoding(/*klen=*/3, /*clampLen=*/2, out);
  auto row = [&](int p, int r) {
    const float *v = out.f32() + (p * 5 + r) * 4;
    return std::vector<float>(v, v + 4);
  };
  auto enc = [](double pos) {
    return std::vector<double>{std::sin(pos), std::sin(pos * 0.01),
                               std::cos(pos), std::cos(pos * 0.01)};
  };
  // Copy 0: pos = 3, 2, 1, 0, -1, clipped to [-2, 2].
  expectNear(row(0, 0), enc(2));
  expectNear(row(0, 1), enc(2));
  expectNear(row(0, 3), {0, 0, 1, 1});
  expectNear(row(0, 4), enc(-1));
  // Copy 1: pos = -3, -2, -1, 0, 1, clipped.
  expectNear(row(1, 0), enc(-2));
  expectNear(row(1, 4), enc(1));
  // No clamp: row 0 of copy 0 is pos 3.
  Tensor plain = Tensor::zeros(DType::F32, {1, 5, 4});
  relPosEncoding(3, 0, plain);
  expectNear(std::vector<float>(plain.f32(), plain.f32() + 4), enc(3));
  // An odd D: the last column is written 0 (outputs are never pre-zeroed
  // by the host executor's arena).
  Tensor odd = Tensor::zeros(DType::F32, {1, 2, 3});
  std::fill(odd.f32(), odd.f32() + 6, NAN);
  relPosEncoding(1, 0, odd);
  EXPECT_EQ(odd.f32()[2], 0.0f);
  EXPECT_EQ(odd.f32()[5], 0.0f);
}

TEST(KernelsTest, RelSegmentMemoryColumnsAreSegmentZero) {
  // mlen 2, seg (0, 1): key segments are (0, 0 | 0, 1).
  Tensor out = Tensor::zeros(DType::Bool, {1, 2, 4});
  relSegment(Tensor::fromI64({1, 2}, {0, 1}), /*mlen=*/2, out);
  EXPECT_EQ(valuesBool(out), (std::vector<uint8_t>{0, 0, 0, 1, 1, 1, 1, 0}));
}

TEST(KernelsTest, AttnMaskQueryVersusContent) {
  // mlen 1, perm_mask [[1, 1], [0, 1]].
  Tensor pm = Tensor::fromF32({1, 2, 2}, {1, 1, 0, 1});
  Tensor q = Tensor::zeros(DType::Bool, {1, 2, 3});
  attnMask(pm, /*mlen=*/1, MaskStream::Query, q);
  EXPECT_EQ(valuesBool(q), (std::vector<uint8_t>{0, 1, 1, 0, 0, 1}));
  // Content opens (i, mlen + i): (0, 1) and (1, 2).
  Tensor c = Tensor::zeros(DType::Bool, {1, 2, 3});
  attnMask(pm, /*mlen=*/1, MaskStream::Content, c);
  EXPECT_EQ(valuesBool(c), (std::vector<uint8_t>{0, 0, 1, 0, 0, 0}));
}

TEST(KernelsTest, TargetPositions) {
  Tensor tm = Tensor::fromF32({1, 3, 4}, {0, 0, 1, 0, /**/ 0, 0, 0, 0,
                                          /**/ 1, 0, 0, 0});
  Tensor out = Tensor::zeros(DType::I64, {1, 3});
  ASSERT_TRUE(targetPositions(tm, out));
  EXPECT_EQ(valuesI64(out), (std::vector<int64_t>{2, -1, 0}));
  Tensor two = Tensor::fromF32({2, 1, 4}, {1, 0, 0, 0, /**/ 0, 1, 1, 0});
  EXPECT_EQ(targetPositions(two, out).message(),
            "target_mapping row b=1, row 0 is not one-hot: ones at columns 1 "
            "and 2");
  Tensor half = Tensor::fromF32({1, 2, 2}, {0, 1, /**/ 0.5f, 0});
  EXPECT_EQ(targetPositions(half, out).message(),
            "target_mapping row b=0, row 1 is not one-hot: value 0.5 at "
            "column 0");
}

TEST(KernelsTest, MemConcatAndMemCache) {
  // mems [M=2, B=2, D=1]: time 0 = (10, 20), time 1 = (11, 21).
  Tensor mems = Tensor::fromF32({2, 2, 1}, {10, 20, 11, 21});
  Tensor h1 = Tensor::fromF32({2, 1, 1}, {1, 4});
  Tensor cat = Tensor::zeros(DType::F32, {2, 3, 1});
  memConcat(mems, h1, cat);
  expectNear(values(cat), {10, 11, 1, 20, 21, 4});

  // h [B=2, S=3, D=1]: rows (1,2,3) and (4,5,6); reuse_len 2.
  Tensor h = Tensor::fromF32({2, 3, 1}, {1, 2, 3, 4, 5, 6});
  // M=2, mem_len 3: L = min(3, 2+2) = 3; b0 [10,11,1,2] -> [11,1,2].
  Tensor l3 = Tensor::zeros(DType::F32, {3, 2, 1});
  memCache(&mems, h, /*reuseLen=*/2, l3);
  expectNear(values(l3), {11, 21, 1, 4, 2, 5});
  // mem_len 1: only the last cached row.
  Tensor l1 = Tensor::zeros(DType::F32, {1, 2, 1});
  memCache(&mems, h, 2, l1);
  expectNear(values(l1), {2, 5});
  // No incoming mems, mem_len 5: L = min(5, 0+2) = 2.
  Tensor l2 = Tensor::zeros(DType::F32, {2, 2, 1});
  memCache(nullptr, h, 2, l2);
  expectNear(values(l2), {1, 4, 2, 5});
}

TEST(KernelsTest, AddLayerNorm) {
  // x + residual = (2,3,4,5): mean 3.5, biased var 1.25.
  Tensor x = Tensor::fromF32({1, 4}, {1, 2, 3, 4});
  Tensor r = Tensor::fromF32({1, 4}, {1, 1, 1, 1});
  Tensor g = Tensor::fromF32({4}, {1, 2, 1, 1});
  Tensor b = Tensor::fromF32({4}, {0, 0, 1, 0});
  Tensor out = Tensor::zeros(DType::F32, {1, 4});
  addLayerNorm(x, r, g, b, /*eps=*/1e-12, out);
  double s = std::sqrt(1.25);
  expectNear(values(out), {-1.5 / s, -0.5 / s * 2, 0.5 / s + 1, 1.5 / s});
}

TEST(KernelsTest, LmLossOnHandExamples) {
  // 1x1x3: logits (1,2,3), target 2: log(e+e²+e³) - 3 = log(1+e⁻¹+e⁻²).
  Tensor loss = Tensor::zeros(DType::F32, {});
  Tensor ptl = Tensor::zeros(DType::F32, {1, 1});
  ASSERT_TRUE(lmLoss(Tensor::fromF32({1, 1, 3}, {1, 2, 3}),
                     Tensor::fromI64({1, 1}, {2}),
                     Tensor::fromF32({1, 1}, {1}), loss, ptl));
  EXPECT_NEAR(ptl.f32()[0], 0.4076059644, 1e-7);
  EXPECT_NEAR(loss.f32()[0], 0.4076059644, 1e-7);

  // Two slots: target 0 of (1,2,3) -> 2.4076059644; (0,0,0) -> log 3.
  Tensor logits = Tensor::fromF32({1, 2, 3}, {1, 2, 3, 0, 0, 0});
  Tensor target = Tensor::fromI64({1, 2}, {0, 1});
  Tensor ptl2 = Tensor::zeros(DType::F32, {1, 2});
  ASSERT_TRUE(lmLoss(logits, target, Tensor::fromF32({1, 2}, {1, 0}), loss,
                     ptl2));
  expectNear(values(ptl2), {2.4076059644, 1.0986122887});
  EXPECT_NEAR(loss.f32()[0], 2.4076059644, 1e-6);
  ASSERT_TRUE(lmLoss(logits, target, Tensor::fromF32({1, 2}, {1, 1}), loss,
                     ptl2));
  EXPECT_NEAR(loss.f32()[0], (2.4076059644 + 1.0986122887) / 2, 1e-6);
  EXPECT_EQ(lmLoss(logits, Tensor::fromI64({1, 2}, {0, 3}),
                   Tensor::fromF32({1, 2}, {1, 1}), loss, ptl2)
                .message(),
            "target 3 at b=0, slot 1 is outside [0, 3)");
}

TEST(KernelsTest, DropoutIsDeterministicInvertedAndExactAtRateZero) {
  std::vector<float> xs(10000);
  for (size_t k = 0; k < xs.size(); ++k)
    xs[k] = float(k % 7) - 3.0f + 0.125f;
  Tensor x = Tensor::fromF32({100, 100}, xs);
  Tensor a = Tensor::zeros(DType::F32, {100, 100});
  dropout(x, 0.0, /*site=*/1, /*seed=*/7, {}, 100, a);
  EXPECT_EQ(values(a), xs);

  Tensor b = Tensor::zeros(DType::F32, {100, 100});
  Tensor c = Tensor::zeros(DType::F32, {100, 100});
  Tensor d = Tensor::zeros(DType::F32, {100, 100});
  dropout(x, 0.25, 1, 7, {}, 100, b);
  dropout(x, 0.25, 1, 7, {}, 100, c);
  dropout(x, 0.25, 1, 8, {}, 100, d);
  EXPECT_EQ(values(b), values(c));
  EXPECT_NE(values(b), values(d));
  int kept = 0;
  for (size_t k = 0; k < xs.size(); ++k) {
    float v = b.f32()[k];
    // Kept elements are scaled by 1/(1-0.25).
    if (v != 0.0f) {
      EXPECT_FLOAT_EQ(v, xs[k] / 0.75f);
      ++kept;
    }
  }
  EXPECT_NEAR(kept / 10000.0, 0.75, 0.02);
}

// A part of the batch (a rank's rows, a micro-batch) draws the global
// batch's mask for its rows (DropoutRows); a tensor without a batch
// dimension (rowElems 0) draws one mask for every split.
TEST(KernelsTest, DropoutOfSomeRowsIsTheirMaskInTheWholeBatch) {
  const int64_t B = 8, T = 5, D = 7;
  std::vector<float> xs(size_t(B * T * D));
  for (size_t k = 0; k < xs.size(); ++k)
    xs[k] = 1.0f + float(k % 13);
  Tensor x = Tensor::fromF32({B, T, D}, xs);
  Tensor whole = Tensor::zeros(DType::F32, {B, T, D});
  dropout(x, 0.5, 3, 11, {}, T * D, whole);
  // Local rows -> global rows: plain {2, 3}; bi_data halves {1 | 5}, {2, 3 | 6, 7}.
  struct Split {
    DropoutRows rows;
    std::vector<int64_t> global;
  };
  for (const Split &sp : {Split{{2, 0, INT64_MAX}, {2, 3}}, Split{{1, 5, 1}, {1, 5}},
                          Split{{2, 6, 2}, {2, 3, 6, 7}}}) {
    const int64_t n = int64_t(sp.global.size());
    std::vector<float> part;
    for (int64_t g : sp.global)
      part.insert(part.end(), xs.begin() + g * T * D, xs.begin() + (g + 1) * T * D);
    Tensor px = Tensor::fromF32({n, T, D}, part);
    Tensor out = Tensor::zeros(DType::F32, {n, T, D});
    dropout(px, 0.5, 3, 11, sp.rows, T * D, out);
    for (int64_t b = 0; b < n; ++b)
      for (int64_t e = 0; e < T * D; ++e)
        ASSERT_EQ(out.f32()[b * T * D + e], whole.f32()[sp.global[size_t(b)] * T * D + e])
            << "local row " << b << " element " << e;
  }
  // rowElems 0: the rows map changes nothing.
  Tensor shared = Tensor::zeros(DType::F32, {B, T, D});
  dropout(x, 0.5, 3, 11, {3, 9, 1}, 0, shared);
  EXPECT_EQ(values(shared), values(whole));
}

} // namespace

namespace {

Tensor uniformF32(std::vector<int64_t> shape, std::mt19937 &rng) {
  Tensor t = Tensor::zeros(DType::F32, std::move(shape));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = u(rng);
  return t;
}

/// gemm and gemmWgrad with an init operand (the host executor's adds in
/// GEMMs, host/HostFusion.h): out = init + the product, against a double
/// reference, on problems large enough to be split across threads by rows
/// (N <= M) and by columns (N > M), with odd extents, on 1 and 3 threads.
TEST(KernelsTest, GemmWithInitAddsToEveryBlock) {
  struct Shape {
    int64_t M, K, N;
  };
  const int saved = omp_get_max_threads();
  for (int threads : {1, 3})
    for (const Shape &sh : {Shape{301, 35, 257}, Shape{41, 67, 701}}) {
      SCOPED_TRACE(::testing::Message() << threads << " threads, M " << sh.M << " K " << sh.K
                                        << " N " << sh.N);
      omp_set_num_threads(threads);
      std::mt19937 rng(unsigned(sh.M + sh.N));
      Tensor x = uniformF32({sh.M, sh.K}, rng);
      Tensor w = uniformF32({sh.K, sh.N}, rng);
      Tensor init = uniformF32({sh.M, sh.N}, rng);
      Tensor out = Tensor::zeros(DType::F32, {sh.M, sh.N});
      gemm(x, w, nullptr, 1, false, Activation::None, out, &init);
      // The weight gradient's layout: dy [M, N] with x [M, K] -> [K, N].
      Tensor dy = uniformF32({sh.M, sh.N}, rng);
      Tensor winit = uniformF32({sh.K, sh.N}, rng);
      Tensor dw = Tensor::zeros(DType::F32, {sh.K, sh.N});
      gemmWgrad(x, dy, 1, false, dw, &winit);
      // c [rows, N] = init + Σ_k a(r, k) · b(k, n), in double.
      auto worstError = [&](const Tensor &c, const Tensor &c0, int64_t rows, int64_t inner,
                            auto a, auto b) {
        double worst = 0;
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t n = 0; n < sh.N; ++n) {
            double ref = c0.f32()[r * sh.N + n];
            for (int64_t k = 0; k < inner; ++k)
              ref += double(a(r, k)) * b(k, n);
            worst = std::max(worst, std::fabs(ref - c.f32()[r * sh.N + n]));
          }
        return worst;
      };
      const double worst = worstError(
          out, init, sh.M, sh.K, [&](int64_t m, int64_t k) { return x.f32()[m * sh.K + k]; },
          [&](int64_t k, int64_t n) { return w.f32()[k * sh.N + n]; });
      const double worstW = worstError(
          dw, winit, sh.K, sh.M, [&](int64_t k, int64_t m) { return x.f32()[m * sh.K + k]; },
          [&](int64_t m, int64_t n) { return dy.f32()[m * sh.N + n]; });
      EXPECT_LT(worst, 1e-4);
      EXPECT_LT(worstW, 1e-3);
    }
  omp_set_num_threads(saved);
}

} // namespace
