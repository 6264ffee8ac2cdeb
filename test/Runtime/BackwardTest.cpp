//===- BackwardTest.cpp - Backward kernels against finite differences -----===//
//
// Every backward kernel is checked against central differences of the
// forward kernel it differentiates: L = Σ w · forward(inputs) for a random
// w (accumulated in double), each input element perturbed by ±h, and
// (L+ - L-) / (x+ - x-) compared with the backward kernel's gradient for
// dout = w. The forward kernels store fp32, so the differences use h ~ 1e-2
// and a tolerance of ~1e-3; an indexing or sign error is O(0.1) or more.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <functional>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;
using xlnetc::rt::test::values;

namespace {

/// Uniform values in [lo, hi].
Tensor randomF32(std::vector<int64_t> shape, std::mt19937 &rng,
                 double lo = -1.0, double hi = 1.0) {
  Tensor t = Tensor::zeros(DType::F32, std::move(shape));
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = float(u(rng));
  return t;
}

/// Σ w · out in double.
double dotAll(const Tensor &w, const Tensor &out) {
  double s = 0.0;
  for (int64_t i = 0; i < out.numel(); ++i)
    s += double(w.f32()[i]) * double(out.f32()[i]);
  return s;
}

/// Compares `analytic` with central differences of `loss` over every element
/// of `input` (perturbed in place and restored): |a - fd| <= tol (1 + |fd|).
void expectGradient(const char *what, Tensor &input, const Tensor &analytic,
                    const std::function<double()> &loss, float h = 1e-2f,
                    double tol = 1e-3) {
  ASSERT_EQ(input.shape, analytic.shape) << what;
  for (int64_t i = 0; i < input.numel(); ++i) {
    float x = input.f32()[i];
    float xp = x + h, xm = x - h;
    input.f32()[i] = xp;
    double lp = loss();
    input.f32()[i] = xm;
    double lm = loss();
    input.f32()[i] = x;
    double fd = (lp - lm) / (double(xp) - double(xm));
    EXPECT_NEAR(analytic.f32()[i], fd, tol * (1.0 + std::abs(fd)))
        << what << " element " << i;
  }
}

//===----------------------------------------------------------------------===//
// rel_attention_grad
//===----------------------------------------------------------------------===//

/// A random rel_attention problem. B batch rows, S query positions, M
/// memory rows (K = M + S), P positional copies, T query rows (with `rows`
/// when useRows), N heads of size H.
struct AttnCase {
  int64_t B, S, M, P, T, N, H, K, R;
  bool useRows;
  Tensor q, k, v, kR, segEmbed, rw, rr, rs, segMat, mask, rows, w;
  double scale, dropatt = 0.0;
  int64_t site = 7;
  uint64_t seed = 11;

  AttnCase(int64_t B, int64_t S, int64_t M, int64_t P, int64_t T, int64_t N,
           int64_t H, bool useRows, unsigned rngSeed)
      : B(B), S(S), M(M), P(P), T(T), N(N), H(H), K(M + S), R(M + 2 * S),
        useRows(useRows) {
    std::mt19937 rng(rngSeed);
    q = randomF32({B, T, N, H}, rng);
    k = randomF32({B, K, N, H}, rng);
    v = randomF32({B, K, N, H}, rng);
    kR = randomF32({P, R, N, H}, rng);
    segEmbed = randomF32({2, N, H}, rng);
    rw = randomF32({N, H}, rng, -0.5, 0.5);
    rr = randomF32({N, H}, rng, -0.5, 0.5);
    rs = randomF32({N, H}, rng, -0.5, 0.5);
    segMat = Tensor::zeros(DType::Bool, {B, S, K});
    mask = Tensor::zeros(DType::Bool, {B, S, K});
    std::bernoulli_distribution coin(0.5), rare(0.25);
    for (int64_t i = 0; i < segMat.numel(); ++i) {
      segMat.b8()[i] = coin(rng);
      mask.b8()[i] = rare(rng);
    }
    rows = Tensor::zeros(DType::I64, {B, T});
    w = randomF32({B, T, N, H}, rng);
    scale = 1.0 / std::sqrt(double(H));
  }

  RelAttentionArgs args() {
    RelAttentionArgs a{&q,
                       &k,
                       &v,
                       &kR,
                       &segEmbed,
                       &rw,
                       &rr,
                       &rs,
                       &segMat,
                       &mask,
                       useRows ? &rows : nullptr};
    a.scale = scale;
    a.dropatt = dropatt;
    a.dropoutSite = site;
    a.seed = seed;
    return a;
  }

  Tensor forward() {
    Tensor out = Tensor::zeros(DType::F32, {B, T, N, H});
    Status s = relAttention(args(), out);
    EXPECT_TRUE(s) << s.message();
    return out;
  }

  double loss() { return dotAll(w, forward()); }

  struct Grads {
    Tensor dq, dk, dv, dkR, dse, drw, drr, drs;
  };

  /// The gradients of `a`, from the probabilities `keptProbs` when given.
  Grads backward(const RelAttentionArgs &a, const float *keptProbs = nullptr) {
    Grads g{Tensor::zeros(DType::F32, q.shape),
            Tensor::zeros(DType::F32, k.shape),
            Tensor::zeros(DType::F32, v.shape),
            Tensor::zeros(DType::F32, kR.shape),
            Tensor::zeros(DType::F32, segEmbed.shape),
            Tensor::zeros(DType::F32, rw.shape),
            Tensor::zeros(DType::F32, rr.shape),
            Tensor::zeros(DType::F32, rs.shape)};
    Status s = relAttentionGrad(
        w, a, {&g.dq, &g.dk, &g.dv, &g.dkR, &g.dse, &g.drw, &g.drr, &g.drs}, keptProbs);
    EXPECT_TRUE(s) << s.message();
    return g;
  }
  Grads backward() { return backward(args()); }

  /// The backward reading the probabilities the forward kept (the host
  /// executor's reuse, runtime/host/HostFusion.h).
  Grads backwardFromKeptProbs() {
    std::vector<float> kept(size_t(B * N * T * K), -1.0f);
    Tensor out = Tensor::zeros(DType::F32, {B, T, N, H});
    Status s = relAttention(args(), out, kept.data());
    EXPECT_TRUE(s) << s.message();
    return backward(args(), kept.data());
  }

  /// FD check of all eight gradients.
  void check() {
    Grads g = backward();
    auto L = [this] { return loss(); };
    expectGradient("dq", q, g.dq, L);
    expectGradient("dk", k, g.dk, L);
    expectGradient("dv", v, g.dv, L);
    expectGradient("dk_r", kR, g.dkR, L);
    expectGradient("dseg_embed", segEmbed, g.dse, L);
    expectGradient("dr_w_bias", rw, g.drw, L);
    expectGradient("dr_r_bias", rr, g.drr, L);
    expectGradient("dr_s_bias", rs, g.drs, L);
  }
};

TEST(BackwardTest, RelAttentionGradMatchesFiniteDifferences) {
  AttnCase c(/*B=*/2, /*S=*/3, /*M=*/0, /*P=*/1, /*T=*/3, /*N=*/2, /*H=*/3,
             /*useRows=*/false, 1);
  c.check();
}

TEST(BackwardTest, RelAttentionGradWithMemory) {
  AttnCase c(/*B=*/2, /*S=*/3, /*M=*/2, /*P=*/1, /*T=*/3, /*N=*/2, /*H=*/2,
             /*useRows=*/false, 2);
  c.check();
}

TEST(BackwardTest, RelAttentionGradRowsWithPadding) {
  // The query stream: T = 3 prediction slots of S = 4 positions, one padding
  // slot (-1) per batch row, M = 1.
  AttnCase c(/*B=*/2, /*S=*/4, /*M=*/1, /*P=*/1, /*T=*/3, /*N=*/2, /*H=*/2,
             /*useRows=*/true, 3);
  c.rows = Tensor::fromI64({2, 3}, {2, -1, 0, 3, 1, -1});
  c.check();
  // The padding slots' dq rows are exactly 0 whatever dout says.
  AttnCase::Grads g = c.backward();
  for (int64_t h = 0; h < 2 * 2; ++h) {
    EXPECT_EQ(g.dq.f32()[(0 * 3 + 1) * 4 + h], 0.0f);
    EXPECT_EQ(g.dq.f32()[(1 * 3 + 2) * 4 + h], 0.0f);
  }
}

TEST(BackwardTest, RelAttentionGradBiData) {
  // P = 2 with two batch rows per copy, so dk_r sums over batch rows.
  AttnCase c(/*B=*/4, /*S=*/2, /*M=*/1, /*P=*/2, /*T=*/2, /*N=*/2, /*H=*/2,
             /*useRows=*/false, 4);
  c.check();
}

TEST(BackwardTest, RelAttentionGradFullyMaskedRow) {
  AttnCase c(/*B=*/1, /*S=*/3, /*M=*/1, /*P=*/1, /*T=*/3, /*N=*/2, /*H=*/2,
             /*useRows=*/false, 5);
  for (int64_t j = 0; j < c.K; ++j)
    c.mask.b8()[1 * c.K + j] = 1; // query 1 sees nothing
  c.check();
  // The forward of that row is the uniform average of v, independent of
  // its scores: no gradient reaches its q row.
  AttnCase::Grads g = c.backward();
  for (int64_t h = 0; h < c.N * c.H; ++h)
    EXPECT_EQ(g.dq.f32()[1 * c.N * c.H + h], 0.0f) << h;
}

TEST(BackwardTest, RelAttentionGradDropattUsesTheForwardMask) {
  AttnCase c(/*B=*/2, /*S=*/3, /*M=*/1, /*P=*/2, /*T=*/2, /*N=*/2, /*H=*/2,
             /*useRows=*/true, 6);
  c.rows = Tensor::fromI64({2, 2}, {2, 0, -1, 1});
  c.dropatt = 0.4;
  // The mask really drops something: the output differs from dropatt 0.
  Tensor withDrop = c.forward();
  c.dropatt = 0.0;
  EXPECT_NE(values(withDrop), values(c.forward()));
  c.dropatt = 0.4;
  // FD of the forward with the same seed and site equals the gradient.
  c.check();
  // A different seed gives a different (wrong) gradient for v.
  RelAttentionArgs other = c.args();
  other.seed = c.seed + 1;
  EXPECT_NE(values(c.backward(other).dv), values(c.backward().dv));
}

/// The gradient from the forward's kept probabilities is the recomputing
/// one: padding rows, a fully masked row, dropatt, memory, bi_data, rows
/// blocked by the forward (T > 64) and not by the backward.
TEST(BackwardTest, RelAttentionGradFromKeptProbabilities) {
  struct Shape {
    int64_t B, S, M, P, T, N, H;
    bool useRows;
    double dropatt;
  };
  for (const Shape &sh : {Shape{2, 4, 1, 1, 3, 2, 2, true, 0.0},
                          Shape{2, 3, 1, 2, 2, 2, 2, true, 0.4},
                          Shape{4, 2, 1, 2, 2, 2, 2, false, 0.0},
                          Shape{1, 3, 1, 1, 3, 2, 2, false, 0.2},
                          Shape{2, 70, 10, 1, 70, 2, 8, false, 0.1}}) {
    SCOPED_TRACE(::testing::Message() << "B " << sh.B << " S " << sh.S << " T " << sh.T
                                      << " rows " << sh.useRows << " dropatt " << sh.dropatt);
    AttnCase c(sh.B, sh.S, sh.M, sh.P, sh.T, sh.N, sh.H, sh.useRows, 21);
    c.dropatt = sh.dropatt;
    if (sh.useRows) {
      std::vector<int64_t> r(size_t(sh.B * sh.T));
      for (size_t i = 0; i < r.size(); ++i)
        r[i] = i % 3 == 1 ? -1 : int64_t(i) % sh.S; // one padding slot in three
      c.rows = Tensor::fromI64({sh.B, sh.T}, r);
    } else if (sh.S == 3) {
      for (int64_t j = 0; j < c.K; ++j)
        c.mask.b8()[1 * c.K + j] = 1; // query 1 of batch row 0 sees nothing
    }
    AttnCase::Grads kept = c.backwardFromKeptProbs(), recomputed = c.backward();
    const std::pair<const char *, const Tensor *> pairs[] = {
        {"dq", &kept.dq}, {"dk", &kept.dk}, {"dv", &kept.dv}, {"dk_r", &kept.dkR},
        {"dseg_embed", &kept.dse}, {"dr_w_bias", &kept.drw}, {"dr_r_bias", &kept.drr},
        {"dr_s_bias", &kept.drs}};
    const Tensor *others[] = {&recomputed.dq, &recomputed.dk, &recomputed.dv, &recomputed.dkR,
                              &recomputed.dse, &recomputed.drw, &recomputed.drr,
                              &recomputed.drs};
    for (size_t g = 0; g < 8; ++g) {
      const Tensor &a = *pairs[g].second, &b = *others[g];
      double scale = 0, worst = 0;
      for (int64_t i = 0; i < a.numel(); ++i) {
        scale = std::max(scale, std::fabs(double(b.f32()[i])));
        worst = std::max(worst, std::fabs(double(a.f32()[i]) - double(b.f32()[i])));
      }
      EXPECT_LE(worst, 1e-6 * std::max(scale, 1.0)) << pairs[g].first;
    }
  }
}

TEST(BackwardTest, RelAttentionGradDoesNotDependOnThreads) {
  // Large enough to take the OpenMP path (B·T·N·K·H >= 2^16).
  AttnCase c(/*B=*/2, /*S=*/16, /*M=*/16, /*P=*/2, /*T=*/16, /*N=*/4,
             /*H=*/16, /*useRows=*/false, 8);
  c.dropatt = 0.1;
  int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  AttnCase::Grads one = c.backward();
  omp_set_num_threads(std::max(2, saved));
  AttnCase::Grads many = c.backward();
  omp_set_num_threads(saved);
  EXPECT_EQ(values(one.dq), values(many.dq));
  EXPECT_EQ(values(one.dk), values(many.dk));
  EXPECT_EQ(values(one.dkR), values(many.dkR));
  EXPECT_EQ(values(one.drs), values(many.drs));
}

TEST(BackwardTest, RelAttentionGradRejectsBadRows) {
  AttnCase c(/*B=*/1, /*S=*/2, /*M=*/0, /*P=*/1, /*T=*/2, /*N=*/1, /*H=*/2,
             /*useRows=*/true, 9);
  c.rows = Tensor::fromI64({1, 2}, {0, 2});
  Tensor d[8];
  for (Tensor &t : d)
    t = Tensor::zeros(DType::F32, {1});
  Status s = relAttentionGrad(
      c.w, c.args(), {&d[0], &d[1], &d[2], &d[3], &d[4], &d[5], &d[6], &d[7]});
  EXPECT_EQ(s.message(), "query row 2 at b=0, t=1 is outside [-1, 2)");
}

//===----------------------------------------------------------------------===//
// add_layer_norm_grad, lm_loss_grad
//===----------------------------------------------------------------------===//

TEST(BackwardTest, AddLayerNormGradMatchesFiniteDifferences) {
  std::mt19937 rng(21);
  // 70 rows: more than one block of the row-block sums of dgamma/dbeta.
  Tensor x = randomF32({2, 35, 5}, rng), res = randomF32({2, 35, 5}, rng);
  Tensor gamma = randomF32({5}, rng, 0.5, 1.5), beta = randomF32({5}, rng);
  Tensor w = randomF32({2, 35, 5}, rng);
  auto L = [&] {
    Tensor out = Tensor::zeros(DType::F32, x.shape);
    addLayerNorm(x, res, gamma, beta, 1e-12, out);
    return dotAll(w, out);
  };
  Tensor dsum = Tensor::zeros(DType::F32, x.shape);
  Tensor dgamma = Tensor::zeros(DType::F32, {5}),
         dbeta = Tensor::zeros(DType::F32, {5});
  addLayerNormGrad(w, x, res, gamma, 1e-12, dsum, dgamma, dbeta);
  expectGradient("dx", x, dsum, L);
  expectGradient("dresidual", res, dsum, L);
  expectGradient("dgamma", gamma, dgamma, L);
  expectGradient("dbeta", beta, dbeta, L);
}

/// lm_loss's scalar loss.
double lmLossValue(const Tensor &logits, const Tensor &target,
                   const Tensor &mask) {
  Tensor loss = Tensor::zeros(DType::F32, {});
  Tensor ptl = Tensor::zeros(DType::F32, target.shape);
  Status s = lmLoss(logits, target, mask, loss, ptl);
  EXPECT_TRUE(s) << s.message();
  return loss.f32()[0];
}

TEST(BackwardTest, LmLossGradMatchesFiniteDifferences) {
  std::mt19937 rng(22);
  Tensor logits = randomF32({2, 3, 5}, rng, -2, 2);
  Tensor target = Tensor::fromI64({2, 3}, {4, 0, 2, 1, 1, 3});
  Tensor mask = Tensor::fromF32({2, 3}, {1, 0, 1, 1, 0, 1});
  Tensor d = Tensor::zeros(DType::F32, logits.shape);
  ASSERT_TRUE(lmLossGrad(logits, target, mask, d));
  expectGradient("dlogits", logits, d,
                 [&] { return lmLossValue(logits, target, mask); });
  // Masked rows get exactly 0.
  for (int64_t v = 0; v < 5; ++v) {
    EXPECT_EQ(d.f32()[1 * 5 + v], 0.0f);
    EXPECT_EQ(d.f32()[4 * 5 + v], 0.0f);
  }
}

TEST(BackwardTest, LmLossGradDividesByAGivenCount) {
  // A micro-batch of gradient accumulation divides by the step's count:
  // with 3 × Σ mask, a third of the plain gradient; with a count of 0, zeros.
  std::mt19937 rng(24);
  Tensor logits = randomF32({2, 3, 5}, rng, -2, 2);
  Tensor target = Tensor::fromI64({2, 3}, {4, 0, 2, 1, 1, 3});
  Tensor mask = Tensor::fromF32({2, 3}, {1, 0, 1, 1, 0, 1});
  Tensor plain = Tensor::zeros(DType::F32, logits.shape), d = plain;
  Tensor count = Tensor::fromF32({}, {12.0f});
  ASSERT_TRUE(lmLossGrad(logits, target, mask, plain));
  ASSERT_TRUE(lmLossGrad(logits, target, mask, d, &count));
  for (int64_t i = 0; i < d.numel(); ++i)
    EXPECT_NEAR(d.f32()[i] * 3, plain.f32()[i], 1e-7f) << i;
  Tensor zero = Tensor::fromF32({}, {0.0f});
  ASSERT_TRUE(lmLossGrad(logits, target, mask, d, &zero));
  EXPECT_EQ(values(d), std::vector<float>(30, 0.0f));
}

TEST(BackwardTest, LmLossGradAllZeroMaskIsZero) {
  std::mt19937 rng(23);
  Tensor logits = randomF32({1, 2, 4}, rng);
  Tensor target = Tensor::fromI64({1, 2}, {0, 3});
  Tensor d = Tensor::zeros(DType::F32, logits.shape);
  for (int64_t i = 0; i < d.numel(); ++i)
    d.f32()[i] = 5.0f; // overwritten
  ASSERT_TRUE(lmLossGrad(logits, target, Tensor::zeros(DType::F32, {1, 2}), d));
  EXPECT_EQ(values(d), std::vector<float>(8, 0.0f));
  Status s = lmLossGrad(logits, Tensor::fromI64({1, 2}, {0, 4}),
                        Tensor::zeros(DType::F32, {1, 2}), d);
  EXPECT_EQ(s.message(), "target 4 at b=0, slot 1 is outside [0, 4)");
}

//===----------------------------------------------------------------------===//
// gemm_wgrad, bias_grad, activation_grad
//===----------------------------------------------------------------------===//

struct GemmCase {
  std::vector<int64_t> x, w, y; // shapes
  int kRank;
  bool transposeW;
};

TEST(BackwardTest, GemmWgradAndDxMatchFiniteDifferences) {
  const GemmCase cases[] = {
      // x [2,3,4] · w [4,5] -> [2,3,5]
      {{2, 3, 4}, {4, 5}, {2, 3, 5}, 1, false},
      // x [2,3,4] · w[5,4]ᵀ -> [2,3,5] (the tied LM head)
      {{2, 3, 4}, {5, 4}, {2, 3, 5}, 1, true},
      // x [3,2,2] (K dims [2,2]) · w [2,2,3] -> [3,3] (the o-projection)
      {{3, 2, 2}, {2, 2, 3}, {3, 3}, 2, false},
      // x [3,2,2] · w [3,2,2] with the K dims last (transpose_w)
      {{3, 2, 2}, {3, 2, 2}, {3, 3}, 2, true},
      // w with two N dims: x [2,4] · w [4,2,3] -> [2,2,3] (the q-projection)
      {{2, 4}, {4, 2, 3}, {2, 2, 3}, 1, false},
  };
  std::mt19937 rng(31);
  for (const GemmCase &gc : cases) {
    SCOPED_TRACE(testing::Message()
                 << "k_rank " << gc.kRank << " transpose_w " << gc.transposeW);
    Tensor x = randomF32(gc.x, rng), w = randomF32(gc.w, rng);
    Tensor dy = randomF32(gc.y, rng);
    auto L = [&] {
      Tensor y = Tensor::zeros(DType::F32, gc.y);
      gemm(x, w, nullptr, gc.kRank, gc.transposeW, Activation::None, y);
      return dotAll(dy, y);
    };
    Tensor dw = Tensor::zeros(DType::F32, gc.w);
    gemmWgrad(x, dy, gc.kRank, gc.transposeW, dw);
    expectGradient("dw", w, dw, L);
    // dx is the forward gemm of dy with w, contracting w's N dims.
    int nRank = int(gc.w.size()) - gc.kRank;
    Tensor dx = Tensor::zeros(DType::F32, gc.x);
    gemm(dy, w, nullptr, nRank, !gc.transposeW, Activation::None, dx);
    expectGradient("dx", x, dx, L);
  }
}

TEST(BackwardTest, GemmWgradLargeMatchesDoubleProduct) {
  // Large enough for the OpenMP row blocks; compared with a double loop.
  for (bool transposeW : {false, true}) {
    std::mt19937 rng(32);
    int64_t Mx = 128, Kx = 96, Nw = 112;
    Tensor x = randomF32({Mx, Kx}, rng), dy = randomF32({Mx, Nw}, rng);
    Tensor dw =
        Tensor::zeros(DType::F32, transposeW ? std::vector<int64_t>{Nw, Kx}
                                             : std::vector<int64_t>{Kx, Nw});
    gemmWgrad(x, dy, 1, transposeW, dw);
    for (int64_t kk = 0; kk < Kx; ++kk)
      for (int64_t nn = 0; nn < Nw; ++nn) {
        double want = 0.0;
        for (int64_t m = 0; m < Mx; ++m)
          want += double(x.f32()[m * Kx + kk]) * double(dy.f32()[m * Nw + nn]);
        float got =
            transposeW ? dw.f32()[nn * Kx + kk] : dw.f32()[kk * Nw + nn];
        ASSERT_NEAR(got, want, 1e-4) << kk << "," << nn;
      }
  }
}

TEST(BackwardTest, BiasGradMatchesFiniteDifferences) {
  std::mt19937 rng(33);
  Tensor x = randomF32({2, 3, 4}, rng), w = randomF32({4, 2, 3}, rng);
  Tensor bias = randomF32({6}, rng);
  Tensor dy = randomF32({2, 3, 2, 3}, rng);
  auto L = [&] {
    Tensor y = Tensor::zeros(DType::F32, {2, 3, 2, 3});
    gemm(x, w, &bias, 1, false, Activation::None, y);
    return dotAll(dy, y);
  };
  Tensor db = Tensor::zeros(DType::F32, {6});
  biasGrad(dy, db);
  expectGradient("dbias", bias, db, L);
  // Summing everything into a scalar.
  Tensor all = Tensor::zeros(DType::F32, {});
  biasGrad(dy, all);
  double want = 0.0;
  for (float f : values(dy))
    want += f;
  EXPECT_NEAR(all.f32()[0], want, 1e-5);
}

TEST(BackwardTest, ActivationGradMatchesFiniteDifferences) {
  std::mt19937 rng(34);
  Tensor x = randomF32({3, 7}, rng, -3, 3);
  // Keep relu's kink out of reach of the perturbation.
  for (int64_t i = 0; i < x.numel(); ++i)
    if (std::abs(x.f32()[i]) < 0.05f)
      x.f32()[i] = 0.5f;
  Tensor dy = randomF32({3, 7}, rng);
  for (Activation act : {Activation::None, Activation::Relu,
                         Activation::GeluTanh, Activation::GeluErf}) {
    SCOPED_TRACE(activationName(act));
    auto L = [&] {
      Tensor y = Tensor::zeros(DType::F32, x.shape);
      applyActivation(x, act, y);
      return dotAll(dy, y);
    };
    Tensor dx = Tensor::zeros(DType::F32, x.shape);
    activationGrad(dy, x, act, dx);
    expectGradient("dx", x, dx, L, 1e-2f, 2e-4);
  }
  // relu' is 1 for x > 0, else 0 (0 at the kink).
  EXPECT_EQ(activateGrad(Activation::Relu, 0.0f), 0.0);
  EXPECT_EQ(activateGrad(Activation::Relu, 1e-30f), 1.0);
  // gelu_erf'(0) = Φ(0) = 0.5; gelu_tanh'(0) = 0.5.
  EXPECT_DOUBLE_EQ(activateGrad(Activation::GeluErf, 0.0f), 0.5);
  EXPECT_DOUBLE_EQ(activateGrad(Activation::GeluTanh, 0.0f), 0.5);
}

//===----------------------------------------------------------------------===//
// embedding_grad, mask_embedding_grad, mem_concat_grad, add
//===----------------------------------------------------------------------===//

TEST(BackwardTest, EmbeddingGradMatchesFiniteDifferences) {
  std::mt19937 rng(41);
  // Repeated ids (3 three times) and unused rows (1, 5).
  Tensor ids = Tensor::fromI64({2, 3}, {3, 0, 3, 4, 3, 2});
  Tensor table = randomF32({6, 4}, rng), w = randomF32({2, 3, 4}, rng);
  auto L = [&] {
    Tensor out = Tensor::zeros(DType::F32, {2, 3, 4});
    EXPECT_TRUE(embedding(ids, table, out));
    return dotAll(w, out);
  };
  Tensor d = Tensor::zeros(DType::F32, {6, 4});
  for (int64_t i = 0; i < d.numel(); ++i)
    d.f32()[i] = 9.0f; // the kernel zeroes first
  ASSERT_TRUE(embeddingGrad(ids, w, d));
  expectGradient("dtable", table, d, L);
  Status s = embeddingGrad(Tensor::fromI64({2, 3}, {0, 0, 0, 0, -2, 0}), w, d);
  EXPECT_EQ(s.message(), "id -2 at b=1, s=1 is outside [0, 6)");
}

TEST(BackwardTest, MaskEmbeddingGradMatchesFiniteDifferences) {
  std::mt19937 rng(42);
  Tensor me = randomF32({1, 1, 3}, rng), w = randomF32({2, 4, 3}, rng);
  auto L = [&] {
    Tensor out = Tensor::zeros(DType::F32, {2, 4, 3});
    maskEmbedding(me, out);
    return dotAll(w, out);
  };
  Tensor d = Tensor::zeros(DType::F32, {1, 1, 3});
  maskEmbeddingGrad(w, d);
  expectGradient("dmask_emb", me, d, L);
}

TEST(BackwardTest, MemConcatGradMatchesFiniteDifferences) {
  std::mt19937 rng(43);
  // mems [M=2, B=2, D=3], h [B=2, S=3, D=3] -> [2, 5, 3].
  Tensor mems = randomF32({2, 2, 3}, rng), h = randomF32({2, 3, 3}, rng);
  Tensor w = randomF32({2, 5, 3}, rng);
  auto L = [&] {
    Tensor out = Tensor::zeros(DType::F32, {2, 5, 3});
    memConcat(mems, h, out);
    return dotAll(w, out);
  };
  Tensor d = Tensor::zeros(DType::F32, {2, 3, 3});
  memConcatGrad(w, d);
  expectGradient("dh", h, d, L);
}

TEST(BackwardTest, AddAddsElementwise) {
  Tensor a = Tensor::fromF32({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::fromF32({2, 2}, {0.5f, -2, 0, 1});
  Tensor out = Tensor::zeros(DType::F32, {2, 2});
  add(a, b, out);
  EXPECT_EQ(values(out), (std::vector<float>{1.5f, 0, 3, 5}));
}

} // namespace
