//===- RelAttentionTest.cpp - rel_attention on hand-checked cases ---------===//
//
// With q = e0, k = 0, zero biases and seg_embed, and v[j] = e_j, the output
// row is exactly the softmax over j, and the scores come only from bd, so
// each case shows which row of k_r the rel_shift picked.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;
using xlnetc::rt::test::values;

namespace {

/// softmax(s) in double, the expected output row.
std::vector<double> softmax(const std::vector<double> &s) {
  double sum = 0;
  for (double v : s)
    sum += std::exp(v);
  std::vector<double> p;
  for (double v : s)
    p.push_back(std::exp(v) / sum);
  return p;
}

/// B batch rows, S = 2, M = 1 (K = 3, R = 5), N = 1, H = 3.
struct Case {
  int64_t B, P, T;
  Tensor q, k, v, kR, segEmbed, rw, rr, rs, segMat, mask, rows;
  bool useRows = false;

  explicit Case(int64_t B = 1, int64_t P = 1, int64_t T = 2)
      : B(B), P(P), T(T) {
    q = Tensor::zeros(DType::F32, {B, T, 1, 3});
    for (int64_t r = 0; r < B * T; ++r)
      q.f32()[r * 3] = 1.0f; // q = e0
    k = Tensor::zeros(DType::F32, {B, 3, 1, 3});
    v = Tensor::zeros(DType::F32, {B, 3, 1, 3});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t j = 0; j < 3; ++j)
        v.f32()[(b * 3 + j) * 3 + j] = 1.0f; // v[j] = e_j
    // k_r[p, r] = (c_r, 0, 0): c_r = 0.1 r² (copy 0), -0.1 r² (copy 1).
    kR = Tensor::zeros(DType::F32, {P, 5, 1, 3});
    for (int64_t p = 0; p < P; ++p)
      for (int64_t r = 0; r < 5; ++r)
        kR.f32()[(p * 5 + r) * 3] = float((p == 0 ? 0.1 : -0.1) * r * r);
    segEmbed = Tensor::zeros(DType::F32, {2, 1, 3});
    rw = rr = rs = Tensor::zeros(DType::F32, {1, 3});
    segMat = mask = Tensor::zeros(DType::Bool, {B, 2, 3});
    rows = Tensor::zeros(DType::I64, {B, T});
  }

  Tensor run(double scale = 1.0, double dropatt = 0.0, const DropoutRows &dropRows = {}) {
    RelAttentionArgs a{&q,  &k,  &v,      &kR,   &segEmbed,
                       &rw, &rr, &rs,     &segMat, &mask,
                       useRows ? &rows : nullptr};
    a.scale = scale;
    a.dropatt = dropatt;
    a.seed = 3;
    a.dropRows = dropRows;
    Tensor out = Tensor::zeros(DType::F32, {B, T, 1, 3});
    Status s = relAttention(a, out);
    EXPECT_TRUE(s) << s.message();
    return out;
  }
};

std::vector<float> row(const Tensor &out, int64_t b, int64_t t) {
  int64_t T = out.shape[1];
  const float *p = out.f32() + (b * T + t) * 3;
  return std::vector<float>(p, p + 3);
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k)
    EXPECT_NEAR(got[k], want[k], 1e-6) << "element " << k;
}

TEST(RelAttentionTest, RelShiftPicksKrAtQlenMinusIPlusJ) {
  Case c;
  Tensor out = c.run();
  // c_r = 0.1 r²: (0, .1, .4, .9, 1.6). Query i reads c[2 - i + j].
  expectNear(row(out, 0, 0), softmax({0.4, 0.9, 1.6})); // r = 2, 3, 4
  expectNear(row(out, 0, 1), softmax({0.1, 0.4, 0.9})); // r = 1, 2, 3
}

TEST(RelAttentionTest, ScaleMaskAndFullyMaskedRow) {
  Case c;
  c.mask.b8()[1 * 3 + 2] = 1; // query 1 may not see key 2
  c.mask.b8()[0] = c.mask.b8()[1] = c.mask.b8()[2] = 1; // query 0: nothing
  Tensor out = c.run(/*scale=*/0.5);
  // A fully masked row is uniform (-1e30 on every score, not -inf).
  expectNear(row(out, 0, 0), {1.0 / 3, 1.0 / 3, 1.0 / 3});
  std::vector<double> p = softmax({0.05, 0.2});
  expectNear(row(out, 0, 1), {p[0], p[1], 0.0});
}

TEST(RelAttentionTest, BiDataSecondHalfUsesCopyOne) {
  Case c(/*B=*/2, /*P=*/2);
  Tensor out = c.run();
  expectNear(row(out, 0, 1), softmax({0.1, 0.4, 0.9}));
  expectNear(row(out, 1, 1), softmax({-0.1, -0.4, -0.9}));
}

TEST(RelAttentionTest, RowsSelectQueryPositionAndPadWithZero) {
  Case c(/*B=*/1, /*P=*/1, /*T=*/2);
  c.useRows = true;
  c.rows = Tensor::fromI64({1, 2}, {1, -1});
  Tensor out = c.run();
  expectNear(row(out, 0, 0), softmax({0.1, 0.4, 0.9})); // position 1
  expectNear(row(out, 0, 1), {0, 0, 0});                // padding slot
  c.rows = Tensor::fromI64({1, 2}, {1, 2});
  RelAttentionArgs a{&c.q,  &c.k,  &c.v,  &c.kR,     &c.segEmbed, &c.rw,
                     &c.rr, &c.rs, &c.segMat, &c.mask, &c.rows};
  Tensor bad = Tensor::zeros(DType::F32, {1, 2, 1, 3});
  EXPECT_EQ(relAttention(a, bad).message(),
            "query row 2 at b=0, t=1 is outside [-1, 2)");
}

TEST(RelAttentionTest, ContentAndSegmentTermsAdd) {
  Case c;
  // ac: k[j] = (a_j, 0, 0) with a = (0.3, 0, -0.2); r_w_bias adds e1 (k has
  // no e1 part, so it changes nothing).
  c.k.f32()[0 * 3] = 0.3f;
  c.k.f32()[2 * 3] = -0.2f;
  c.rw.f32()[1] = 5.0f;
  // ef: r_s_bias = e1, so q + r_s_bias = (1, 1, 0); seg_embed[1] = (.5,.5,0)
  // gives ef = 1 where seg_mat is set, seg_embed[0] = 0 gives 0.
  c.rs.f32()[1] = 1.0f;
  c.segEmbed.f32()[3] = c.segEmbed.f32()[4] = 0.5f;
  c.segMat.b8()[1 * 3 + 0] = 1; // query 1, key 0: different segments
  Tensor out = c.run();
  // Query 1: bd = (.1, .4, .9), ac = (.3, 0, -.2), ef = (1, 0, 0).
  expectNear(row(out, 0, 1), softmax({1.4, 0.4, 0.7}));
  // Query 0: bd = (.4, .9, 1.6), ac as above, no ef.
  expectNear(row(out, 0, 0), softmax({0.7, 0.9, 1.4}));
}

TEST(RelAttentionTest, DropattScalesKeptProbabilities) {
  Case c;
  RelAttentionArgs a{&c.q,  &c.k,  &c.v,  &c.kR,     &c.segEmbed, &c.rw,
                     &c.rr, &c.rs, &c.segMat, &c.mask, nullptr};
  a.dropatt = 0.5;
  a.seed = 3;
  Tensor out = Tensor::zeros(DType::F32, {1, 2, 1, 3});
  ASSERT_TRUE(relAttention(a, out));
  std::vector<double> p = softmax({0.1, 0.4, 0.9});
  for (int j = 0; j < 3; ++j) {
    float got = row(out, 0, 1)[j];
    // Each probability is dropped (0) or kept and scaled by 1/(1-0.5).
    EXPECT_TRUE(got == 0.0f || std::abs(got - 2 * p[j]) < 1e-6)
        << "j=" << j << " got " << got;
  }
}

// A step over some rows of the batch (a rank's, a micro-batch's; with
// bi_data a forward half and its backward copy) draws the dropatt masks its
// rows have in the whole batch (DropoutRows): every row here has the same
// operands, so the rows' outputs differ only by their masks.
TEST(RelAttentionTest, DropattOfSomeRowsIsTheirMaskInTheWholeBatch) {
  Case whole(4, 2);
  const Tensor all = whole.run(1.0, 0.5);
  Case part(2, 2); // global rows 1 (copy 0) and 3 (copy 1)
  const Tensor mine = part.run(1.0, 0.5, DropoutRows{1, 3, 1});
  for (int64_t t = 0; t < 2; ++t) {
    EXPECT_EQ(row(mine, 0, t), row(all, 1, t)) << "t=" << t;
    EXPECT_EQ(row(mine, 1, t), row(all, 3, t)) << "t=" << t;
  }
  // Indexed by the local rows instead, the masks are rows 0 and 1's.
  const Tensor local = part.run(1.0, 0.5);
  bool differs = false;
  for (int64_t t = 0; t < 2; ++t)
    differs = differs || row(local, 0, t) != row(all, 1, t) || row(local, 1, t) != row(all, 3, t);
  EXPECT_TRUE(differs);
}

} // namespace
