//===- BatchTest.cpp - deriveBatchFromRaw against the golden batches ------===//

#include "runtime/data/Batch.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

const char *const kDerived[] = {"input_k",        "seg_id", "perm_mask",
                                "target_mapping", "target", "target_mask"};

/// Derives the batch tensors of golden case `name` from its raw.* tensors
/// and compares them bit for bit with the stored ones.
void checkGolden(const std::string &name) {
  std::string path = goldenBatchPath(name);
  if (path.empty())
    GTEST_SKIP() << "golden case " << name << " not found in "
                 << XLNETC_GOLDEN_DIR;
  TensorMap golden;
  std::map<std::string, std::string> meta;
  Status s = readSafetensors(path, golden, &meta);
  ASSERT_TRUE(s) << s.message();
  int64_t reuseLen = std::stoll(meta.at("reuse_len"));
  int64_t seqLen = std::stoll(meta.at("seq_len"));
  ASSERT_EQ(golden.at("raw.input").shape[1], seqLen);
  int64_t numPredict = golden.at("target").shape[1];
  TensorMap raw;
  for (const char *key :
       {kRawInput, kRawTarget, kRawIsMasked, kRawPermIndex, "seg_id"})
    raw[key] = golden.at(key);
  TensorMap out;
  s = deriveBatchFromRaw(raw, reuseLen, numPredict, out);
  ASSERT_TRUE(s) << s.message();
  for (const char *key : kDerived) {
    ASSERT_TRUE(out.count(key)) << key;
    EXPECT_TRUE(sameTensor(out.at(key), golden.at(key)))
        << name << ": " << key << " differs (" << out.at(key).typeStr()
        << " vs " << golden.at(key).typeStr() << ")";
  }
}

TEST(BatchTest, GoldenTiny) { checkGolden("tiny"); }
TEST(BatchTest, GoldenSmall) { checkGolden("small"); }
TEST(BatchTest, GoldenTinyNomem) { checkGolden("tiny-nomem"); }

/// A consistent 2×8 raw batch (reuse_len 4) built by hand.
TensorMap handRaw() {
  TensorMap raw;
  raw[kRawInput] = Tensor::fromI64(
      {2, 8}, {10, 11, 12, 13, 14, 4, 15, 3, 20, 21, 22, 23, 24, 4, 25, 3});
  raw[kRawTarget] = Tensor::fromI64(
      {2, 8}, {11, 12, 13, 14, 15, 15, 3, 3, 21, 22, 23, 24, 25, 25, 3, 3});
  raw[kRawIsMasked] =
      Tensor::fromI64({2, 8}, {0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0});
  raw[kRawPermIndex] =
      Tensor::fromI64({2, 8}, {2, 0, 3, 1, 1, 3, 0, 2, 0, 1, 2, 3, 3, 2, 1, 0});
  raw["seg_id"] =
      Tensor::fromI64({2, 8}, {0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 1, 2});
  return raw;
}

TEST(BatchTest, HandBatchTargetsAndMapping) {
  TensorMap out;
  Status s = deriveBatchFromRaw(handRaw(), 4, 3, out);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(out.at("target").shape, (std::vector<int64_t>{2, 3}));
  // Row 0: targets at positions 1 and 4 (tokens 11 and 14), one pad slot.
  EXPECT_EQ(rowSlice(out.at("target"), 0, 0, 3),
            (std::vector<int64_t>{11, 14, 0}));
  const float *tm = out.at("target_mask").f32();
  EXPECT_EQ(std::vector<float>(tm, tm + 6),
            (std::vector<float>{1, 1, 0, 1, 1, 0}));
  const float *map = out.at("target_mapping").f32();
  EXPECT_EQ(map[0 * 8 + 1], 1.0f);
  EXPECT_EQ(map[1 * 8 + 4], 1.0f);
  // The raw dtypes may carry is_masked as bool.
  TensorMap raw = handRaw();
  const Tensor &im = raw.at(kRawIsMasked);
  std::vector<uint8_t> b(im.i64(), im.i64() + im.numel());
  raw[kRawIsMasked] = Tensor::fromBool({2, 8}, b);
  TensorMap out2;
  ASSERT_TRUE(deriveBatchFromRaw(raw, 4, 3, out2));
  EXPECT_TRUE(sameTensor(out.at("perm_mask"), out2.at("perm_mask")));
}

/// The error of deriving `raw` with reuse_len 4, num_predict 3.
std::string errorOf(const TensorMap &raw, int64_t numPredict = 3) {
  TensorMap out;
  Status s = deriveBatchFromRaw(raw, 4, numPredict, out);
  EXPECT_FALSE(s);
  return s.message();
}

TEST(BatchTest, Errors) {
  TensorMap raw = handRaw();
  raw.erase(kRawPermIndex);
  EXPECT_NE(errorOf(raw).find("missing tensor 'raw.perm_index'"),
            std::string::npos)
      << errorOf(raw);

  raw = handRaw();
  raw[kRawTarget] = Tensor::zeros(DType::F32, {2, 8});
  EXPECT_NE(errorOf(raw).find("'raw.target' is f32[2, 8]; expected i64"),
            std::string::npos)
      << errorOf(raw);

  raw = handRaw();
  raw["seg_id"] = Tensor::zeros(DType::I64, {2, 7});
  EXPECT_NE(errorOf(raw).find("'seg_id' has shape [2, 7] but 'raw.input' has "
                              "[2, 8]"),
            std::string::npos)
      << errorOf(raw);

  raw = handRaw();
  raw[kRawInput] = Tensor::zeros(DType::I64, {16});
  EXPECT_NE(errorOf(raw).find("expected rank 2"), std::string::npos);

  // Row 1's second half repeats 2.
  raw = handRaw();
  raw[kRawPermIndex].i64()[8 + 7] = 2;
  std::string e = errorOf(raw);
  EXPECT_NE(e.find("row 1: raw.perm_index: the second half (positions 4..7) "
                   "is not a permutation of 0..3: position 7 holds 2 twice"),
            std::string::npos)
      << e;
  // An index that is global instead of local to its half.
  raw = handRaw();
  raw[kRawPermIndex].i64()[4] = 5;
  e = errorOf(raw);
  EXPECT_NE(e.find("row 0: raw.perm_index: the second half"), std::string::npos)
      << e;

  // Row 0 has two targets: num_predict 1 is too small.
  e = errorOf(handRaw(), 1);
  EXPECT_NE(e.find("row 0: buildPredictionTargets: 2 targets exceed "
                   "num_predict 1"),
            std::string::npos)
      << e;

  TensorMap out;
  EXPECT_FALSE(deriveBatchFromRaw(handRaw(), 9, 3, out));
}

} // namespace

namespace {

/// A dense perm_mask f32 [B,S,S] from a rule.
template <class F> Tensor denseMask(int64_t B, int64_t S, F masked) {
  Tensor t = Tensor::zeros(DType::F32, {B, S, S});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j)
        t.f32()[(b * S + i) * S + j] = masked(b, i, j) ? 1.0f : 0.0f;
  return t;
}

} // namespace

// The compact form a step reads (docs/DataPipeline.md): ranks when every
// row has them, else the bits of the whole mask, checked against it entry
// by entry (two words per row at S = 70).
TEST(BatchTest, CompactPermMaskRanksOrBits) {
  const int64_t B = 2, S = 70;
  TensorMap ranked{{"perm_mask", denseMask(B, S, [](int64_t, int64_t i, int64_t j) {
                      return (i * 7) % 5 <= (j * 3) % 5;
                    })}};
  PermMaskForm form;
  int64_t without = 7;
  ASSERT_TRUE(compactPermMask(ranked, form, &without));
  EXPECT_EQ(form, PermMaskForm::Ranks);
  EXPECT_EQ(without, -1);
  EXPECT_EQ(ranked.count("perm_rank"), 1u);
  EXPECT_EQ(ranked.count("perm_bits"), 0u);

  // Row 1 crossed: query 0 masks key 1 only, query 1 key 0 only.
  Tensor dense = denseMask(B, S, [](int64_t b, int64_t i, int64_t j) {
    if (b == 1)
      return (i == 0 && j == 1) || (i == 1 && j == 0) || (i > 1 && j == 69);
    return i < j;
  });
  TensorMap crossed{{"perm_mask", dense}};
  ASSERT_TRUE(compactPermMask(crossed, form, &without));
  EXPECT_EQ(form, PermMaskForm::Bits);
  EXPECT_EQ(without, 1);
  ASSERT_EQ(crossed.count("perm_bits"), 1u);
  const Tensor &bits = crossed.at("perm_bits");
  ASSERT_EQ(bits.shape, (std::vector<int64_t>{B, S, 2}));
  for (int64_t row = 0; row < B * S; ++row)
    for (int64_t j = 0; j < S; ++j) {
      uint64_t word = uint64_t(bits.i64()[row * 2 + j / 64]);
      EXPECT_EQ(bool((word >> (j % 64)) & 1u), dense.f32()[row * S + j] > 0.0f)
          << "row " << row << " key " << j;
    }
  // perm_rank alone errs on such a mask, naming the row.
  Tensor rank;
  Status st = permRankFromMask(dense, rank);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("perm_mask row b=1 has no rank form"), std::string::npos);

  // A perm_bits given with a perm_mask that says otherwise is refused.
  Tensor stale = bits;
  stale.i64()[(1 * S + 0) * 2] = 0; // row (1, 0): key 1 visible now
  TensorMap both{{"perm_mask", dense}, {"perm_bits", stale}};
  st = compactPermMask(both, form);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(),
            "perm_bits and perm_mask disagree at batch row b=1, query 0, key 1");
  both["perm_bits"] = bits;
  EXPECT_TRUE(compactPermMask(both, form));
  EXPECT_EQ(form, PermMaskForm::Bits);
}
