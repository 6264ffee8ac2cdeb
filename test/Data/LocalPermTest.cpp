//===- LocalPermTest.cpp - _local_perm, halves and target padding ---------===//

#include "runtime/io/Safetensors.h"
#include "runtime/data/LocalPerm.h"
#include "runtime/host/Kernels.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <random>
#include <tuple>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;

namespace {

/// The worked example of seed 002 (data_utils._local_perm walk-through).
const std::vector<int64_t> kInputs = {10, 13, 15, 20, 21, 22, 4, 16,
                                      33, 34, 35, 36, 37, 38, 4,  3};
const std::vector<int64_t> kTargets = {13, 15, 20, 21, 22, 4,  16, 33,
                                       34, 35, 36, 37, 38, 10, 3,  3};
const std::vector<int64_t> kIsMasked = {0, 0, 0, 0, 1, 1, 0, 0,
                                        0, 0, 0, 0, 1, 1, 0, 0};
const std::vector<int64_t> kIndex = {4,  6,  7,  2,  3,  5,  0, 1,
                                     12, 14, 15, 10, 11, 13, 8, 9};

/// The perm_mask printed in seed 002, copied verbatim (1 = may not attend).
const float kPrintedPermMask[16][16] = {
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0}};

TEST(LocalPermTest, BlockIndexOfTheWorkedExample) {
  std::vector<int64_t> index;
  ASSERT_TRUE(blockPermutationIndex({4, 6, 7, 2, 3, 5, 0, 1}, 16, index));
  EXPECT_EQ(index, kIndex);
  EXPECT_FALSE(blockPermutationIndex({0, 0}, 4, index));
  EXPECT_FALSE(blockPermutationIndex({1, 0, 2}, 4, index));
}

TEST(LocalPermTest, WorkedExampleMatchesThePrintedMatrix) {
  LocalPermResult r;
  Status s = localPerm(kInputs, kTargets, kIsMasked, kIndex, r);
  ASSERT_TRUE(s) << s.message();
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j)
      EXPECT_EQ(r.permMask[i * 16 + j], kPrintedPermMask[i][j])
          << "perm_mask[" << i << "][" << j << "]";
  // Printed in the document: new_targets and target_mask.
  EXPECT_EQ(r.newTargets, (std::vector<int64_t>{10, 13, 15, 20, 21, 22, 4, 16,
                                                33, 34, 35, 36, 37, 38, 10,
                                                3}));
  EXPECT_EQ(r.targetMask, (std::vector<float>{0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0,
                                              0, 1, 1, 0, 0}));
  EXPECT_EQ(r.inputQ, r.targetMask);
  EXPECT_EQ(r.inputK, kInputs);
}

TEST(LocalPermTest, WorkedExampleThroughAttnMask) {
  LocalPermResult r;
  ASSERT_TRUE(localPerm(kInputs, kTargets, kIsMasked, kIndex, r));
  Tensor pm = Tensor::fromF32({1, 16, 16}, r.permMask);
  const int64_t mlen = 2, K = mlen + 16;
  Tensor query = Tensor::zeros(DType::Bool, {1, 16, K});
  Tensor content = Tensor::zeros(DType::Bool, {1, 16, K});
  host::attnMask(pm, mlen, MaskStream::Query, query);
  host::attnMask(pm, mlen, MaskStream::Content, content);
  for (int i = 0; i < 16; ++i) {
    const uint8_t *q = query.b8() + i * K, *c = content.b8() + i * K;
    // Memory columns are visible to both streams.
    EXPECT_EQ(q[0] + q[1] + c[0] + c[1], 0) << "row " << i;
    for (int j = 0; j < 16; ++j) {
      uint8_t printed = kPrintedPermMask[i][j] > 0;
      EXPECT_EQ(q[mlen + j], printed) << "query " << i << "," << j;
      // Content opens only the diagonal.
      EXPECT_EQ(c[mlen + j], i == j ? 0 : printed) << "content " << i << ","
                                                   << j;
    }
    // The targets (4, 5, 12, 13) cannot see themselves in the query stream.
    bool target = i == 4 || i == 5 || i == 12 || i == 13;
    EXPECT_EQ(q[mlen + i], target ? 1 : 0) << "diagonal " << i;
  }
}

TEST(LocalPermTest, CombineHalvesReuseCannotSeeTheRest) {
  // Two halves of length 2 with hand-made perm masks.
  LocalPermResult a, b;
  a.permMask = {0, 1, 0, 0};
  b.permMask = {1, 0, 1, 1};
  a.newTargets = {1, 2}, b.newTargets = {3, 4};
  a.targetMask = {0, 1}, b.targetMask = {1, 0};
  a.inputK = {5, 6}, b.inputK = {7, 8};
  a.inputQ = a.targetMask, b.inputQ = b.targetMask;
  LocalPermResult c = combinePermHalves(a, b);
  EXPECT_EQ(c.permMask, (std::vector<float>{0, 1, 1, 1, //
                                            0, 0, 1, 1, //
                                            0, 0, 1, 0, //
                                            0, 0, 1, 1}));
  EXPECT_EQ(c.newTargets, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(c.targetMask, (std::vector<float>{0, 1, 1, 0}));
  EXPECT_EQ(c.inputK, (std::vector<int64_t>{5, 6, 7, 8}));
}

TEST(LocalPermTest, RanksReproduceTheWorkedExample) {
  LocalPermResult r;
  ASSERT_TRUE(localPerm(kInputs, kTargets, kIsMasked, kIndex, r));
  std::vector<float> printed(&kPrintedPermMask[0][0],
                             &kPrintedPermMask[0][0] + 16 * 16);
  EXPECT_EQ(permMaskFromRanks(r.queryRank, r.keyRank), printed);
  // The official vectors: self_rev_index and rev_index (-1: visible key).
  EXPECT_EQ(r.keyRank, (std::vector<int64_t>{-1, -1, -1, -1, 3, 5, 0, -1, -1,
                                             -1, -1, -1, 11, 13, 8, 9}));
  std::vector<int64_t> q, k;
  ASSERT_TRUE(permMaskRanks(printed.data(), 16, q, k));
  EXPECT_EQ(permMaskFromRanks(q, k), printed);
}

/// Random examples of several lengths, reuse splits, block permutations and
/// masking rates: the pipeline's ranks reproduce its dense perm_mask, and so
/// do the ranks recovered from the dense mask.
TEST(LocalPermTest, RanksReproduceGeneratedExamples) {
  std::mt19937_64 rng(20261123);
  int checked = 0;
  for (auto [len, reuse, ps] : {std::tuple{16, 8, 8}, std::tuple{24, 8, 4},
                                std::tuple{64, 32, 32}, std::tuple{40, 0, 8},
                                std::tuple{12, 12, 4}, std::tuple{30, 10, 5}}) {
    for (int trial = 0; trial < 25; ++trial) {
      std::vector<int64_t> in(len), tg(len), masked(len), index;
      for (int i = 0; i < len; ++i) {
        in[i] = int64_t(rng() % 40); // includes SEP (4) and CLS (3)
        tg[i] = int64_t(rng() % 40);
        masked[i] = rng() % (trial % 3 + 2) == 0;
      }
      auto half = [&](int n) {
        std::vector<int64_t> perm(ps);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        std::vector<int64_t> idx;
        if (n > 0)
          EXPECT_TRUE(blockPermutationIndex(perm, n, idx));
        return idx;
      };
      index = half(reuse);
      std::vector<int64_t> rest = half(len - reuse);
      index.insert(index.end(), rest.begin(), rest.end());
      LocalPermResult r;
      ASSERT_TRUE(permuteExample(in, tg, masked, index, reuse, r));
      ASSERT_EQ(r.queryRank.size(), size_t(len));
      EXPECT_EQ(permMaskFromRanks(r.queryRank, r.keyRank), r.permMask)
          << "len " << len << " reuse " << reuse << " trial " << trial;
      std::vector<int64_t> q, k;
      ASSERT_TRUE(permMaskRanks(r.permMask.data(), len, q, k));
      EXPECT_EQ(permMaskFromRanks(q, k), r.permMask);
      // The training pipeline's ranks-only call: the same ranks, no mask.
      LocalPermResult ranksOnly;
      ASSERT_TRUE(permuteExample(in, tg, masked, index, reuse, ranksOnly, kSepId, kClsId,
                                 /*densePermMask=*/false));
      EXPECT_TRUE(ranksOnly.permMask.empty());
      EXPECT_EQ(ranksOnly.queryRank, r.queryRank);
      EXPECT_EQ(ranksOnly.keyRank, r.keyRank);
      EXPECT_EQ(ranksOnly.newTargets, r.newTargets);
      EXPECT_EQ(ranksOnly.targetMask, r.targetMask);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 150);
}

TEST(LocalPermTest, MasksWithoutTheRankFormAreRefused) {
  // Rows mask {1} and {0}: not nested, no ranks can say it.
  std::vector<float> crossed = {0, 1, //
                                1, 0};
  std::vector<int64_t> q = {7}, k = {7};
  EXPECT_FALSE(permMaskRanks(crossed.data(), 2, q, k));
  EXPECT_TRUE(q.empty() && k.empty());
  // Nested rows (a causal mask) have ranks; all-zero and all-one too.
  std::vector<float> causal = {0, 1, 1, //
                               0, 0, 1, //
                               0, 0, 0};
  ASSERT_TRUE(permMaskRanks(causal.data(), 3, q, k));
  EXPECT_EQ(permMaskFromRanks(q, k), causal);
  for (float v : {0.0f, 1.0f}) {
    std::vector<float> flat(9, v);
    ASSERT_TRUE(permMaskRanks(flat.data(), 3, q, k));
    EXPECT_EQ(permMaskFromRanks(q, k), flat);
  }
}

TEST(LocalPermTest, PredictionTargetsArePaddedInPositionOrder) {
  PredictionTargets t;
  ASSERT_TRUE(buildPredictionTargets({0, 1, 0, 1}, {9, 8, 7, 6}, 3, t));
  EXPECT_EQ(t.targetMapping, (std::vector<float>{0, 1, 0, 0, //
                                                 0, 0, 0, 1, //
                                                 0, 0, 0, 0}));
  EXPECT_EQ(t.target, (std::vector<int64_t>{8, 6, 0}));
  EXPECT_EQ(t.targetMask, (std::vector<float>{1, 1, 0}));
  EXPECT_FALSE(buildPredictionTargets({1, 1, 1, 0}, {1, 2, 3, 4}, 2, t));
}

/// Rebuilds perm_mask / target_mapping / target / target_mask of a golden
/// batch from its raw.* tensors (skipped when ../shared/golden is absent).
void checkGoldenBatch(const std::string &name) {
  std::string path = std::string(XLNETC_GOLDEN_DIR) + "/" + name +
                     ".batch.safetensors";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " not found";
  TensorMap m;
  std::map<std::string, std::string> meta;
  Status s = readSafetensors(path, m, &meta);
  ASSERT_TRUE(s) << s.message();
  int64_t reuseLen = std::stoll(meta.at("reuse_len"));
  const Tensor &input = m.at("raw.input");
  int64_t B = input.shape[0], S = input.shape[1];
  int64_t NP = m.at("target").shape[1];
  auto rowOf = [&](const char *key, int64_t b) {
    const int64_t *p = m.at(key).i64() + b * S;
    return std::vector<int64_t>(p, p + S);
  };
  for (int64_t b = 0; b < B; ++b) {
    LocalPermResult r;
    ASSERT_TRUE(permuteExample(rowOf("raw.input", b), rowOf("raw.target", b),
                               rowOf("raw.is_masked", b),
                               rowOf("raw.perm_index", b), reuseLen, r));
    PredictionTargets t;
    ASSERT_TRUE(buildPredictionTargets(r.targetMask, r.newTargets, NP, t));
    const float *pm = m.at("perm_mask").f32() + b * S * S;
    EXPECT_EQ(r.permMask, std::vector<float>(pm, pm + S * S)) << "b=" << b;
    // The compact form: the pipeline's ranks, and the ranks recovered from
    // the golden dense mask, both reproduce it exactly.
    EXPECT_EQ(permMaskFromRanks(r.queryRank, r.keyRank),
              std::vector<float>(pm, pm + S * S))
        << "b=" << b;
    std::vector<int64_t> q, k;
    ASSERT_TRUE(permMaskRanks(pm, S, q, k)) << "b=" << b;
    EXPECT_EQ(permMaskFromRanks(q, k), std::vector<float>(pm, pm + S * S));
    const float *tm = m.at("target_mapping").f32() + b * NP * S;
    EXPECT_EQ(t.targetMapping, std::vector<float>(tm, tm + NP * S));
    const int64_t *tg = m.at("target").i64() + b * NP;
    EXPECT_EQ(t.target, std::vector<int64_t>(tg, tg + NP));
    const float *mk = m.at("target_mask").f32() + b * NP;
    EXPECT_EQ(t.targetMask, std::vector<float>(mk, mk + NP));
  }
}

TEST(LocalPermTest, GoldenTinyBatch) { checkGoldenBatch("tiny"); }
TEST(LocalPermTest, GoldenSmallBatch) { checkGoldenBatch("small"); }
TEST(LocalPermTest, GoldenTinyNomemBatch) { checkGoldenBatch("tiny-nomem"); }

} // namespace
