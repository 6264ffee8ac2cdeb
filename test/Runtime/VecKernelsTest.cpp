//===- VecKernelsTest.cpp - The host's vectorised loops, every level ------===//
//
// Every level this CPU runs (baseline, avx2, avx512) against float64
// formulas written out here or the double references of Kernels.h
// (activate, activateGrad): the fp32 polynomial exp and erfc must keep the
// activations, the softmax and its gradient within a few fp32 ulps, and the
// dropout masks must be the hash's bit for bit.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;

namespace {

/// Inputs over the range that matters, the tails and the special points.
std::vector<float> activationInputs() {
  std::vector<float> x = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-6f, -1e-6f, 0.5f, -0.5f,
                          1.0f, -1.0f, 3.0f,   -3.0f,   6.0f,  -6.0f,  9.0f, -9.0f,
                          12.0f, -12.0f, 40.0f, -40.0f, 100.0f, -100.0f};
  for (int i = 0; i <= 4000; ++i)
    x.push_back(-10.0f + 20.0f * float(i) / 4000.0f);
  return x;
}

/// act(x) in double, in forms that keep their relative accuracy in the
/// tails (Kernels.h's activate() computes 1 + tanh u, which is 0 in double
/// long before gelu_tanh(x) is).
double activationRef(Activation act, double x) {
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  switch (act) {
  case Activation::None:
    return x;
  case Activation::Relu:
    return x > 0 ? x : 0;
  case Activation::GeluTanh:
    return x / (1.0 + std::exp(-2.0 * c * (x + a * x * x * x)));
  case Activation::GeluErf:
    return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  }
  return x;
}

/// act'(x) in double, the same way.
double activationGradRef(Activation act, double x) {
  const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
  switch (act) {
  case Activation::None:
    return 1;
  case Activation::Relu:
    return x > 0 ? 1 : 0;
  case Activation::GeluTanh: {
    const double s = 1.0 / (1.0 + std::exp(-2.0 * c * (x + a * x * x * x)));
    return s + x * s * (1.0 - s) * 2.0 * c * (1.0 + 3.0 * a * x * x);
  }
  case Activation::GeluErf:
    return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  }
  return 1;
}

constexpr Activation kActs[] = {Activation::None, Activation::Relu, Activation::GeluTanh,
                                Activation::GeluErf};

TEST(VecKernels, TheRunningCpuHasAtLeastTheBaseline) {
  std::vector<const VecKernels *> levels = runnableVecKernels();
  ASSERT_FALSE(levels.empty());
  EXPECT_STREQ(levels.back()->isa, "baseline");
  const VecKernels *picked = nullptr;
  ASSERT_TRUE(selectVecKernels(picked));
  // Unless XLNETC_HOST_ISA forces one, the best level is picked.
  if (!std::getenv("XLNETC_HOST_ISA"))
    EXPECT_EQ(picked, levels.front());
}

TEST(VecKernels, ActivationsMatchTheFloat64Formulas) {
  const std::vector<float> x = activationInputs();
  for (const VecKernels *vk : runnableVecKernels())
    for (Activation act : kActs) {
      SCOPED_TRACE(std::string(vk->isa) + " " + activationName(act));
      // With a bias row: y = act(x + bias); x laid out as rows of 7 with a
      // stride of 9 (the last two columns must stay untouched).
      const int64_t cols = 7, ld = 9, rows = int64_t(x.size()) / cols;
      std::vector<float> y(size_t(rows * ld), 123.0f), bias(cols);
      for (int64_t c = 0; c < cols; ++c)
        bias[size_t(c)] = 0.25f * float(c) - 0.75f;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          y[size_t(r * ld + c)] = x[size_t(r * cols + c)];
      vk->biasActivation(y.data(), rows, cols, ld, bias.data(), act);
      double worst = 0, worstAt = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
          const float in = x[size_t(r * cols + c)] + bias[size_t(c)];
          const double want = activationRef(act, in);
          const double got = y[size_t(r * ld + c)];
          // Relative to the value (the tails keep their accuracy), with a
          // floor far below any activation that matters (exp saturates at
          // exp(88): gelu_tanh(-12) is -7e-38 instead of -1e-61).
          const double err = std::fabs(got - want) / std::max(std::fabs(want), 1e-20);
          if (err > worst)
            worstAt = in;
          worst = std::max(worst, err);
        }
        EXPECT_EQ(y[size_t(r * ld + 7)], 123.0f);
        EXPECT_EQ(y[size_t(r * ld + 8)], 123.0f);
      }
      // 1e-5: in the tails exp's argument (2u ≈ 35 at x = -7) is itself
      // rounded to fp32, a relative error of |2u| · 6e-8 in the result.
      EXPECT_LE(worst, 1e-5) << "at x = " << worstAt;
      // The float64 reference of Kernels.h agrees where it is accurate.
      EXPECT_NEAR(activate(act, 1.5f), activationRef(act, 1.5), 1e-7);

      std::vector<float> dy(x.size()), out(x.size());
      std::mt19937 gen(5);
      std::uniform_real_distribution<float> u(-2.0f, 2.0f);
      for (float &g : dy)
        g = u(gen);
      vk->activationGrad(dy.data(), x.data(), out.data(), int64_t(x.size()), act);
      worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = double(dy[i]) * activationGradRef(act, x[i]);
        // The derivative crosses zero (gelu at x ≈ -0.75), where its two
        // terms (~0.3 each) cancel: relative to 0.05 there.
        const double err = std::fabs(out[i] - want) / std::max(std::fabs(want), 0.05);
        if (err > worst)
          worstAt = x[i];
        worst = std::max(worst, err);
      }
      EXPECT_LE(worst, 1e-5) << "at x = " << worstAt;
      EXPECT_NEAR(activateGrad(act, 1.5f), activationGradRef(act, 1.5), 1e-12);
    }
}

TEST(VecKernels, DropoutIsTheHashBitForBit) {
  // Lengths with and without a tail past the 8-lane blocks and the 512
  // blocks; a start index whose low 32 bits carry into the high ones inside
  // a block (the AVX2 level's 64-bit arithmetic).
  const uint64_t key = dropoutKey(99, 7);
  for (auto [n, index0] : {std::pair<int64_t, uint64_t>{5000, 1000}, {5003, 0xfffffffbull},
                           {13, (uint64_t(1) << 40) - 3}}) {
    std::vector<float> x(static_cast<size_t>(n)), out(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      x[size_t(i)] = float(i % 13) - 6.0f;
    for (const VecKernels *vk : runnableVecKernels()) {
      SCOPED_TRACE(fmt::format("{} n={} index0={}", vk->isa, n, index0));
      const float rate = 0.3f, scale = 1.0f / (1.0f - rate);
      vk->dropout(x.data(), out.data(), n, key, index0, rate, scale);
      int64_t kept = 0;
      for (int64_t i = 0; i < n; ++i) {
        const bool keep = dropoutKeep(key, index0 + uint64_t(i), rate);
        kept += keep;
        const float want = keep ? x[size_t(i)] * scale : 0.0f;
        ASSERT_EQ(std::memcmp(&out[size_t(i)], &want, 4), 0) << "element " << i;
      }
      if (n > 1000)
        EXPECT_NEAR(double(kept) / double(n), 0.7, 0.03);
    }
  }
}

/// One attention row, in double: the softmax of the masked, scaled scores.
std::vector<double> softmaxRef(const std::vector<float> &ac, const std::vector<float> &bd,
                               const std::vector<uint8_t> &differ,
                               const std::vector<uint8_t> &masked, double ef0, double ef1,
                               double scale) {
  const size_t K = ac.size();
  std::vector<double> s(K);
  double mx = -INFINITY;
  for (size_t j = 0; j < K; ++j) {
    s[j] = (double(ac[j]) + double(bd[j]) + (differ[j] ? ef1 : ef0)) * scale -
           (masked[j] ? 1e30 : 0.0);
    mx = std::max(mx, s[j]);
  }
  double sum = 0;
  for (double &v : s)
    sum += (v = std::exp(v - mx));
  for (double &v : s)
    v /= sum;
  return s;
}

struct Row {
  std::vector<float> ac, bd;
  std::vector<uint8_t> differ, masked;
};

Row randomRow(int64_t K, uint32_t seed, bool allMasked) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> n(0.0f, 3.0f);
  Row r;
  for (int64_t j = 0; j < K; ++j) {
    r.ac.push_back(n(gen));
    r.bd.push_back(n(gen));
    r.differ.push_back(uint8_t(gen() % 2));
    r.masked.push_back(uint8_t(allMasked || gen() % 3 == 0));
  }
  return r;
}

TEST(VecKernels, ScoreSoftmaxMatchesFloat64) {
  for (const VecKernels *vk : runnableVecKernels())
    for (int64_t K : {1, 7, 64, 192, 1000})
      for (bool allMasked : {false, true}) {
        SCOPED_TRACE(std::string(vk->isa) + " K=" + std::to_string(K) +
                     (allMasked ? " all masked" : ""));
        Row r = randomRow(K, uint32_t(K), allMasked);
        std::vector<float> prob(static_cast<size_t>(K));
        ScoreRow row{r.ac.data(), r.bd.data(), r.differ.data(), r.masked.data(),
                     0.7f, -1.3f, 0.125f, K};
        vk->scoreSoftmax(row, prob.data());
        std::vector<double> want =
            softmaxRef(r.ac, r.bd, r.differ, r.masked, 0.7f, -1.3f, 0.125f);
        double sum = 0;
        for (int64_t j = 0; j < K; ++j) {
          sum += prob[size_t(j)];
          if (r.masked[size_t(j)] && !allMasked)
            EXPECT_EQ(prob[size_t(j)], 0.0f) << "a masked key gets no weight";
          EXPECT_NEAR(prob[size_t(j)], want[size_t(j)], 2e-6 * want[size_t(j)] + 1e-12)
              << "key " << j;
        }
        EXPECT_NEAR(sum, 1.0, 1e-5);
        if (allMasked)
          EXPECT_NEAR(prob[0], 1.0 / double(K), 1e-7) << "a fully masked row is uniform";
      }
}

TEST(VecKernels, GradRowMatchesFloat64) {
  for (const VecKernels *vk : runnableVecKernels())
    for (bool drop : {false, true}) {
      SCOPED_TRACE(std::string(vk->isa) + (drop ? " dropatt" : ""));
      const int64_t K = 150;
      Row r = randomRow(K, 11, false);
      std::vector<double> p =
          softmaxRef(r.ac, r.bd, r.differ, r.masked, 0.2, 0.4, 0.125);
      const size_t k = static_cast<size_t>(K);
      std::vector<float> prob(p.begin(), p.end()), dp(k), a(k), dbd(k);
      std::mt19937 gen(3);
      std::normal_distribution<float> n(0.0f, 1.0f);
      for (float &d : dp)
        d = n(gen);
      const std::vector<float> dp0 = dp;
      const uint64_t key = dropoutKey(5, 2);
      const float rate = 0.25f, dropScale = 1.0f / (1.0f - rate);
      GradRow g{prob.data(), a.data(), dp.data(), dbd.data(), r.differ.data(),
                r.masked.data(), 0.125f, K, drop, key, 77, rate, dropScale};
      vk->gradRow(g);
      // The formula of RelAttentionGrad.cpp in double.
      std::vector<double> d(k, 1.0);
      if (drop)
        for (int64_t j = 0; j < K; ++j)
          d[size_t(j)] = dropoutKeep(key, uint64_t(77 + j), rate) ? double(dropScale) : 0.0;
      double dot = 0;
      for (int64_t j = 0; j < K; ++j)
        dot += double(prob[size_t(j)]) * double(dp0[size_t(j)]) * d[size_t(j)];
      double c0 = 0, c1 = 0, cMax = 0;
      std::vector<double> c(k);
      for (int64_t j = 0; j < K; ++j) {
        c[size_t(j)] = r.masked[size_t(j)]
                           ? 0.0
                           : double(prob[size_t(j)]) *
                                 (double(dp0[size_t(j)]) * d[size_t(j)] - dot) * 0.125;
        (r.differ[size_t(j)] ? c1 : c0) += c[size_t(j)];
        cMax = std::max(cMax, std::fabs(c[size_t(j)]));
      }
      for (int64_t j = 0; j < K; ++j) {
        EXPECT_NEAR(a[size_t(j)], double(prob[size_t(j)]) * d[size_t(j)],
                    1e-7 * double(prob[size_t(j)]) * d[size_t(j)])
            << "A " << j;
        EXPECT_NEAR(dp[size_t(j)], c[size_t(j)], 1e-5 * cMax) << "c " << j;
        EXPECT_EQ(dp[size_t(j)], dbd[size_t(j)]);
        if (r.masked[size_t(j)])
          EXPECT_EQ(dp[size_t(j)], 0.0f);
      }
      EXPECT_NEAR(g.c0, c0, 1e-5 * cMax * double(K));
      EXPECT_NEAR(g.c1, c1, 1e-5 * cMax * double(K));
    }
}

TEST(VecKernels, ExpSumIsLogSumExp) {
  std::mt19937 gen(4);
  std::normal_distribution<float> nd(0.0f, 8.0f);
  std::vector<float> x(8000), e(x.size());
  for (float &v : x)
    v = nd(gen);
  x[17] = -1e30f; // exp underflows to exactly 0
  for (const VecKernels *vk : runnableVecKernels()) {
    SCOPED_TRACE(vk->isa);
    double mx = -INFINITY, want = 0;
    for (float v : x)
      mx = std::max(mx, double(v));
    for (float v : x)
      want += std::exp(double(v) - mx);
    float gotMax = 0;
    const double got = vk->expSum(x.data(), int64_t(x.size()), e.data(), gotMax);
    EXPECT_EQ(double(gotMax), mx);
    EXPECT_NEAR(got, want, 1e-6 * want);
    EXPECT_EQ(e[17], 0.0f);
    // Each exp within 2 fp32 ulps of exp of its (fp32) argument x - max.
    for (size_t i = 0; i < x.size(); i += 97) {
      const double ref = std::exp(double(x[i] - gotMax));
      EXPECT_NEAR(e[i], ref, 2.4e-7 * ref) << "x = " << x[i];
    }
    float max2 = 0;
    EXPECT_EQ(vk->expSum(x.data(), int64_t(x.size()), nullptr, max2), got);
  }
}

TEST(VecKernels, AdamIsTheFloat64FormulaInFp32AndRunsInPlace) {
  const int64_t n = 1000;
  std::mt19937 gen(9);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> p(n), g(n), m(n), v(n);
  for (int64_t i = 0; i < n; ++i) {
    p[size_t(i)] = nd(gen);
    g[size_t(i)] = nd(gen);
    m[size_t(i)] = 0.1f * nd(gen);
    v[size_t(i)] = std::fabs(0.01f * nd(gen));
  }
  for (const VecKernels *vk : runnableVecKernels())
    for (bool corrected : {true, false}) {
      SCOPED_TRACE(std::string(vk->isa) + (corrected ? " corrected" : " weight decay"));
      std::vector<float> po = p, mo = m, vo = v; // in place
      AdamChunk c{po.data(), g.data(), mo.data(), vo.data(), po.data(), mo.data(), vo.data(),
                  n, 0.5, 0.9, 0.999, 1e-6, 1e-3, 0.01, corrected};
      vk->adam(c);
      for (int64_t i = 0; i < n; ++i) {
        const double gi = double(g[size_t(i)]) * 0.5;
        const double mi = 0.9 * double(m[size_t(i)]) + 0.1 * gi;
        const double vi = 0.999 * double(v[size_t(i)]) + 0.001 * gi * gi;
        const double up = mi / (std::sqrt(vi) + 1e-6), pi = double(p[size_t(i)]);
        const double want = corrected ? pi - 1e-3 * up : pi - 1e-3 * (up + 0.01 * pi);
        // fp32 arithmetic (as TF's Adam): a few ulps of the terms summed.
        const double ulps = 3 * 6e-8;
        EXPECT_NEAR(po[size_t(i)], want, ulps * (std::fabs(pi) + 1e-3 * std::fabs(up)));
        EXPECT_NEAR(mo[size_t(i)], mi, ulps * (0.9 * std::fabs(m[size_t(i)]) + 0.1 * std::fabs(gi)));
        EXPECT_NEAR(vo[size_t(i)], vi, ulps * vi);
      }
    }
}

} // namespace

TEST(VecKernels, LayerNormRowsMatchTheFloat64Formula) {
  std::mt19937 gen(11);
  std::normal_distribution<float> nd(0.3f, 2.0f);
  const int64_t D = 77; // not a multiple of any vector width
  std::vector<float> x(D), r(D), gamma(D), beta(D), dout(D);
  for (int64_t d = 0; d < D; ++d)
    x[d] = nd(gen), r[d] = nd(gen), gamma[d] = nd(gen), beta[d] = nd(gen), dout[d] = nd(gen);
  const double eps = 1e-12;
  // The formula in double: z = x + r (fp32), xhat, y, and the gradient.
  std::vector<double> z(D), xhat(D);
  double mean = 0, var = 0;
  for (int64_t d = 0; d < D; ++d)
    z[d] = double(x[d] + r[d]), mean += z[d];
  mean /= D;
  for (int64_t d = 0; d < D; ++d)
    var += (z[d] - mean) * (z[d] - mean);
  var /= D;
  const double inv = 1.0 / std::sqrt(var + eps);
  double mg = 0, mgx = 0;
  for (int64_t d = 0; d < D; ++d) {
    xhat[d] = (z[d] - mean) * inv;
    mg += double(dout[d]) * gamma[d];
    mgx += double(dout[d]) * gamma[d] * xhat[d];
  }
  mg /= D, mgx /= D;
  for (const VecKernels *vk : runnableVecKernels()) {
    SCOPED_TRACE(vk->isa);
    std::vector<float> y(D), ds(D);
    vk->layerNormRow(x.data(), r.data(), gamma.data(), beta.data(), eps, D, y.data());
    std::vector<double> scratch(D), pg(D, 1.0), pb(D, 2.0);
    vk->layerNormGradRow(dout.data(), x.data(), r.data(), gamma.data(), eps, D,
                         scratch.data(), pg.data(), pb.data(), ds.data());
    for (int64_t d = 0; d < D; ++d) {
      const double want = xhat[d] * gamma[d] + beta[d];
      EXPECT_NEAR(y[d], want, 2.4e-7 * std::abs(want) + 1e-6) << d;
      const double dsWant = inv * (double(dout[d]) * gamma[d] - mg - xhat[d] * mgx);
      EXPECT_NEAR(ds[d], dsWant, 2.4e-7 * std::abs(dsWant) + 1e-6) << d;
      // The partial sums are added to, not overwritten.
      EXPECT_NEAR(pg[d], 1.0 + double(dout[d]) * xhat[d], 1e-12) << d;
      EXPECT_EQ(pb[d], 2.0 + double(dout[d])) << d;
    }
  }
}

TEST(VecKernels, AttentionRowLoopsMatchTheirScalarForms) {
  std::mt19937 gen(5);
  std::normal_distribution<float> nd(0.0f, 1.5f);
  std::uniform_int_distribution<int64_t> ids(-3, 3);
  const int64_t n = 45, H = 37; // tails at every vector width
  std::vector<int64_t> rank(n), seg(n);
  for (int64_t j = 0; j < n; ++j)
    rank[j] = ids(gen), seg[j] = ids(gen) & 1;
  std::vector<float> q(H), rs(H), se0(H), se1(H), dqw(H), dqr(H), x(n);
  for (int64_t h = 0; h < H; ++h)
    q[h] = nd(gen), rs[h] = nd(gen), se0[h] = nd(gen), se1[h] = nd(gen), dqw[h] = nd(gen),
    dqr[h] = nd(gen);
  for (float &v : x)
    v = nd(gen);
  for (const VecKernels *vk : runnableVecKernels()) {
    SCOPED_TRACE(vk->isa);
    std::vector<uint8_t> m(n), d(n);
    vk->rankMaskRow(1, rank.data(), n, m.data());
    vk->segDifferRow(1, seg.data(), n, d.data());
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(m[j], uint8_t(1 <= rank[j])) << j;
      EXPECT_EQ(d[j], uint8_t(1 != seg[j])) << j;
    }
    // The segment term and its gradient.
    std::vector<double> qs(H), dqs(H), accRs(H, 0.5), accSe0(H, 0.25), accSe1(H, -1.0);
    double ef0 = 0, ef1 = 0, want0 = 0, want1 = 0;
    vk->segTermRow(q.data(), rs.data(), se0.data(), se1.data(), H, qs.data(), ef0, ef1);
    for (int64_t h = 0; h < H; ++h) {
      const double x2 = double(q[h]) + double(rs[h]);
      EXPECT_EQ(qs[h], x2);
      want0 += x2 * se0[h], want1 += x2 * se1[h];
    }
    EXPECT_NEAR(ef0, want0, 1e-12 * (1 + std::abs(want0)));
    EXPECT_NEAR(ef1, want1, 1e-12 * (1 + std::abs(want1)));
    const double c0 = 0.75, c1 = -0.5;
    vk->segTermGradRow(c0, c1, se0.data(), se1.data(), qs.data(), H, dqs.data(), accRs.data(),
                       accSe0.data(), accSe1.data());
    for (int64_t h = 0; h < H; ++h) {
      const double dd = c0 * se0[h] + c1 * se1[h];
      EXPECT_NEAR(dqs[h], dd, 1e-15 * (1 + std::abs(dd)));
      EXPECT_NEAR(accRs[h], 0.5 + dd, 1e-15 * (1 + std::abs(dd)));
      EXPECT_NEAR(accSe0[h], 0.25 + c0 * qs[h], 1e-15 * (1 + std::abs(qs[h])));
      EXPECT_NEAR(accSe1[h], -1.0 + c1 * qs[h], 1e-15 * (1 + std::abs(qs[h])));
    }
    // dq and the bias sums; accumulate.
    std::vector<float> dq(H);
    std::vector<double> accRw(H, 1.0), accRr(H, 2.0), acc(n, 3.0);
    vk->dqRow(dqw.data(), dqr.data(), dqs.data(), H, dq.data(), accRw.data(), accRr.data());
    vk->accumulate(acc.data(), x.data(), n);
    for (int64_t h = 0; h < H; ++h) {
      EXPECT_EQ(dq[h], float(double(dqw[h]) + double(dqr[h]) + dqs[h]));
      EXPECT_EQ(accRw[h], 1.0 + double(dqw[h]));
      EXPECT_EQ(accRr[h], 2.0 + double(dqr[h]));
    }
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(acc[j], 3.0 + double(x[j]));
  }
}
