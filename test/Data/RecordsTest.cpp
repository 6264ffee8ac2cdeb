//===- RecordsTest.cpp - batchify, _split_a_and_b, _sample_mask, records --===//

#include "runtime/data/Records.h"
#include "runtime/data/LocalPerm.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>

#include <numeric>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

/// A corpus of `n` tokens 9, 10, ... (mod vocab) with sentences of
/// `sentLen` tokens.
Corpus makeCorpus(int64_t n, int64_t sentLen = 5, int64_t vocab = 1000) {
  Corpus c;
  c.vocabSize = vocab;
  c.startPiece.assign(size_t(vocab), 1);
  for (int64_t k = 0; k < n; ++k) {
    c.tokens.push_back(9 + k % (vocab - 9));
    c.sentIds.push_back(uint8_t((k / sentLen) % 2));
  }
  return c;
}

PipelineConfig smallConfig() {
  PipelineConfig c;
  c.batchSize = 4;
  c.seqLen = 32;
  c.reuseLen = 16;
  c.numPredict = 8;
  c.permSize = 8;
  c.biData = false;
  c.seed = 1;
  return c;
}

TEST(RngTest, PortableAndUnbiasedHelpers) {
  // std::mt19937_64's 10000th output is fixed by the C++ standard.
  Rng r(5489);
  for (int k = 0; k < 9999; ++k)
    r.next();
  EXPECT_EQ(r.next(), 9981545732273789042ull);
  Rng a(3), b(3);
  std::vector<int> counts(3);
  for (int k = 0; k < 3000; ++k) {
    uint64_t x = a.uniformInt(3);
    ASSERT_LT(x, 3u);
    ++counts[x];
    EXPECT_EQ(x, b.uniformInt(3));
  }
  for (int c : counts)
    EXPECT_GT(c, 850);
  double u = a.uniform01();
  EXPECT_GE(u, 0.0);
  EXPECT_LT(u, 1.0);
  EXPECT_NE(deriveSeed(1, 0, 1), deriveSeed(1, 1, 0));
}

TEST(RecordsTest, ValidateConfig) {
  PipelineConfig c = smallConfig();
  EXPECT_TRUE(validateConfig(c));
  c.biData = true;
  c.batchSize = 3;
  Status s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("bi_data needs an even batch size"),
            std::string::npos);
  c = smallConfig();
  c.reuseLen = 29;
  EXPECT_FALSE(validateConfig(c));
  c = smallConfig();
  c.permSize = 6;
  s = validateConfig(c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("must divide"), std::string::npos);
  c = smallConfig();
  c.permSize = 32;
  EXPECT_FALSE(validateConfig(c));
  c = smallConfig();
  c.numPredict = 33;
  EXPECT_FALSE(validateConfig(c));
  c = smallConfig();
  c.maskAlpha = 0;
  EXPECT_FALSE(validateConfig(c));
}

TEST(RecordsTest, BatchifyRowsAndBackwardCopies) {
  Corpus c = makeCorpus(23);
  BatchifiedData d;
  ASSERT_TRUE(batchify(c, 2, false, d));
  EXPECT_EQ(d.rows, 2);
  EXPECT_EQ(d.rowLen, 11); // 23 // 2; the last token is dropped
  EXPECT_EQ(d.row(1)[0], c.tokens[11]);
  ASSERT_TRUE(batchify(c, 4, true, d));
  EXPECT_EQ(d.rows, 4);
  EXPECT_EQ(d.rowLen, 11);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t k = 0; k < 11; ++k) {
      EXPECT_EQ(d.row(r)[k], c.tokens[size_t(r * 11 + k)]);
      EXPECT_EQ(d.row(2 + r)[k], d.row(r)[10 - k]);
      EXPECT_EQ(d.sentRow(2 + r)[k], d.sentRow(r)[10 - k]);
    }
  EXPECT_FALSE(batchify(c, 3, true, d));
  EXPECT_EQ(numWindows(11, 8, 2), 2);
  EXPECT_EQ(numWindows(7, 8, 2), 0);
}

TEST(RecordsTest, SplitAandBInvariants) {
  // Sentences of varying length.
  std::vector<uint8_t> sent;
  Rng g(11);
  for (uint8_t id = 0; sent.size() < 400; id ^= 1)
    sent.insert(sent.end(), 1 + g.uniformInt(12), id);
  int64_t len = int64_t(sent.size());
  auto isCut = [&](int64_t k) { return k > 0 && sent[k] != sent[k - 1]; };
  Rng rng(5);
  int labels[2] = {0, 0};
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t begin = int64_t(rng.uniformInt(uint64_t(len - 40)));
    int64_t totLen = 5 + int64_t(rng.uniformInt(30));
    SplitAB ab;
    ASSERT_TRUE(splitAandB(sent.data(), len, begin, totLen, rng, ab));
    ++labels[ab.label];
    EXPECT_EQ(ab.aBegin, begin);
    EXPECT_GE(ab.aEnd - ab.aBegin, 1);
    EXPECT_EQ(ab.aEnd - ab.aBegin + ab.bEnd - ab.bBegin, totLen);
    EXPECT_LT(ab.aEnd, len);
    EXPECT_LT(ab.bEnd, len);
    if (ab.label == 1) {
      // B starts at the sentence boundary where A was cut. (When A is the
      // longer side the official trimming shortens A on the right, leaving a
      // gap between A and B.)
      EXPECT_TRUE(isCut(ab.bBegin));
      EXPECT_LE(ab.aEnd, ab.bBegin);
      EXPECT_TRUE(ab.aEnd == ab.bBegin || ab.aEnd - ab.aBegin >= totLen / 2);
    } else {
      // A random B starts at a sentence start.
      EXPECT_TRUE(ab.bBegin == 0 || isCut(ab.bBegin)) << ab.bBegin;
    }
  }
  EXPECT_GT(labels[0], 800);
  EXPECT_GT(labels[1], 800);
  SplitAB ab;
  EXPECT_FALSE(splitAandB(sent.data(), 20, 10, 10, rng, ab));
}

TEST(RecordsTest, SampleMaskHitsTheGoal) {
  std::vector<int64_t> seg(64);
  std::iota(seg.begin(), seg.end(), 9);
  std::vector<uint8_t> start(100, 1);
  Rng rng(3);
  for (int64_t goal : {0, 1, 5, 11, 64}) {
    std::vector<int64_t> m = sampleMask(seg, start, false, goal, 6, 1, 5, rng);
    EXPECT_EQ(std::accumulate(m.begin(), m.end(), int64_t(0)), goal);
  }
}

TEST(RecordsTest, SampleMaskSpansCoverWholeWords) {
  // Every word is three pieces: a start piece (even id) and two
  // continuations (odd ids). The fixed n-gram loop (seg[end]) masks whole
  // words; the official seg[beg] loop would mask n pieces (whole words only
  // when n = 3).
  std::vector<int64_t> seg;
  for (int w = 0; w < 100; ++w)
    seg.insert(seg.end(), {10, 11, 13});
  std::vector<uint8_t> start(20, 0);
  start[10] = 1;
  Rng rng(9);
  int64_t inWholeWords = 0, masked = 0;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<int64_t> m = sampleMask(seg, start, false, 45, 6, 1, 5, rng);
    for (size_t k = 0; k < m.size();) {
      if (!m[k]) {
        ++k;
        continue;
      }
      size_t e = k;
      while (e < m.size() && m[e])
        ++e;
      masked += int64_t(e - k);
      if (k % 3 == 0 && (e - k) % 3 == 0)
        inWholeWords += int64_t(e - k);
      k = e;
    }
  }
  EXPECT_GT(double(inWholeWords) / double(masked), 0.8)
      << inWholeWords << " of " << masked;
}

TEST(RecordsTest, SampleMaskReverseFlips) {
  std::vector<int64_t> seg(40);
  std::iota(seg.begin(), seg.end(), 9);
  std::vector<uint8_t> start(60, 0);
  for (int k = 0; k < 60; k += 3)
    start[k] = 1;
  std::vector<int64_t> flipped(seg.rbegin(), seg.rend());
  Rng a(4), b(4);
  std::vector<int64_t> rev = sampleMask(seg, start, true, 7, 6, 1, 5, a);
  std::vector<int64_t> fwd = sampleMask(flipped, start, false, 7, 6, 1, 5, b);
  EXPECT_EQ(rev, std::vector<int64_t>(fwd.rbegin(), fwd.rend()));
}

TEST(RecordsTest, RecordLayout) {
  PipelineConfig cfg = smallConfig();
  Corpus c = makeCorpus(4 * 200, 7, /*vocab=*/1000);
  BatchifiedData d;
  ASSERT_TRUE(batchify(c, cfg.batchSize, false, d));
  Rng rng(2);
  int64_t S = cfg.seqLen, R = cfg.reuseLen;
  int labels = 0;
  for (int64_t i = 0; i + S <= d.rowLen; i += R) {
    for (int64_t row = 0; row < 4; ++row) {
      Record rec;
      Status s = buildRecord(d, row, i, cfg, c.startPiece, rng, rec);
      ASSERT_TRUE(s) << s.message();
      const RowView x = d.row(row);
      // Reuse part: the row's window and its next tokens.
      for (int64_t k = 0; k < R; ++k) {
        EXPECT_EQ(rec.input[k], x[i + k]);
        EXPECT_EQ(rec.target[k], x[i + k + 1]);
        EXPECT_EQ(rec.segId[k], 0);
      }
      // [A | SEP | B | SEP | CLS] with seg ids 0…0 0 | 1…1 1 | 2.
      EXPECT_EQ(rec.input[S - 1], kClsId);
      EXPECT_EQ(rec.input[S - 2], kSepId);
      EXPECT_EQ(rec.segId[S - 1], 2);
      EXPECT_EQ(rec.segId[S - 2], 1);
      int64_t sepA = -1;
      for (int64_t k = R; k < S - 2; ++k)
        if (rec.input[k] == kSepId)
          sepA = k;
      ASSERT_GT(sepA, R);
      for (int64_t k = R; k <= sepA; ++k)
        EXPECT_EQ(rec.segId[k], 0) << k;
      for (int64_t k = sepA + 1; k < S - 1; ++k)
        EXPECT_EQ(rec.segId[k], 1) << k;
      // A continues the reuse part.
      for (int64_t k = R; k < sepA; ++k) {
        EXPECT_EQ(rec.input[k], x[i + k]);
        EXPECT_EQ(rec.target[k], x[i + k + 1]);
      }
      // B is a contiguous run of the row (token values count up by one in
      // this corpus); with label 1 it follows A.
      for (int64_t k = sepA + 2; k < S - 2; ++k)
        EXPECT_EQ(rec.input[k], rec.input[k - 1] + 1);
      if (rec.label == 1) {
        ++labels;
        EXPECT_GE(rec.input[sepA + 1], rec.input[sepA - 1] + 1);
      }
      // B's targets are its next tokens, shifted onto the SEP before it.
      for (int64_t k = sepA + 1; k < S - 2; ++k)
        EXPECT_EQ(rec.target[k - 1], rec.input[k]);
      EXPECT_EQ(rec.target[S - 1], kClsId);
      EXPECT_EQ(rec.target[S - 2], kClsId);
      // num_predict split ⌈np/2⌉ + ⌊np/2⌋.
      EXPECT_EQ(std::accumulate(rec.isMasked.begin(), rec.isMasked.begin() + R,
                                int64_t(0)),
                4);
      EXPECT_EQ(std::accumulate(rec.isMasked.begin() + R, rec.isMasked.end(),
                                int64_t(0)),
                4);
    }
  }
  EXPECT_GT(labels, 0);
  Record rec;
  EXPECT_FALSE(
      buildRecord(d, 0, d.rowLen - S + 1, cfg, c.startPiece, rng, rec));
}

TEST(RecordsTest, PermIndexIsOneBlockPermutationPerHalf) {
  Rng rng(8);
  std::vector<int64_t> index;
  ASSERT_TRUE(samplePermIndex(32, 16, 8, rng, index));
  ASSERT_EQ(index.size(), 32u);
  for (int64_t half : {0, 16}) {
    std::vector<int64_t> perm(index.begin() + half, index.begin() + half + 8);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> iota(8);
    std::iota(iota.begin(), iota.end(), 0);
    EXPECT_EQ(sorted, iota);
    std::vector<int64_t> expect;
    ASSERT_TRUE(blockPermutationIndex(perm, 16, expect));
    EXPECT_EQ(
        std::vector<int64_t>(index.begin() + half, index.begin() + half + 16),
        expect);
  }
}

} // namespace
