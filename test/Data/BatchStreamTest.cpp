//===- BatchStreamTest.cpp - Streaming, epochs, resume, memory alignment --===//

#include "runtime/data/BatchStream.h"
#include "runtime/data/LocalPerm.h"
#include "runtime/data/Batch.h"
#include "runtime/data/SyntheticCorpus.h"
#include "test/Data/DataTestUtil.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

/// `n` random ordinary tokens in sentences of 3..10 tokens, with an <eod>
/// now and then, like a read corpus.
Corpus randomCorpus(int64_t n, uint64_t seed, int64_t vocab = 300) {
  Corpus c;
  c.vocabSize = vocab;
  c.path = "random-corpus";
  Rng rng(seed);
  c.startPiece.assign(size_t(vocab), 0);
  for (int64_t id = 0; id < vocab; ++id)
    c.startPiece[size_t(id)] = id < 9 || rng.bernoulli(0.6);
  uint8_t sent = 1;
  while (int64_t(c.tokens.size()) < n) {
    int64_t len = 3 + int64_t(rng.uniformInt(8));
    for (int64_t k = 0; k < len && int64_t(c.tokens.size()) < n; ++k) {
      c.tokens.push_back(9 + int64_t(rng.uniformInt(uint64_t(vocab - 9))));
      c.sentIds.push_back(sent);
    }
    if (rng.bernoulli(0.1) && int64_t(c.tokens.size()) < n) {
      c.tokens.push_back(kEodId);
      c.sentIds.push_back(sent);
    }
    sent ^= 1;
  }
  return c;
}

PipelineConfig config(bool biData = false) {
  PipelineConfig c;
  c.batchSize = 4;
  c.seqLen = 32;
  c.reuseLen = 16;
  c.numPredict = 8;
  c.permSize = 8;
  c.biData = biData;
  c.seed = 42;
  return c;
}

BatchStream makeStream(const Corpus &corpus, const PipelineConfig &cfg) {
  BatchStream s;
  Status st = BatchStream::create(corpus, cfg, s);
  EXPECT_TRUE(st) << st.message();
  return s;
}

std::vector<Batch> take(BatchStream &s, int n) {
  std::vector<Batch> out;
  for (int k = 0; k < n; ++k) {
    Batch b;
    Status st = s.next(b);
    EXPECT_TRUE(st) << st.message();
    out.push_back(std::move(b));
  }
  return out;
}

bool sameBatch(const Batch &a, const Batch &b) {
  if (a.epoch != b.epoch || a.step != b.step || a.labels != b.labels ||
      a.tensors.size() != b.tensors.size())
    return false;
  for (const auto &[name, t] : a.tensors)
    if (!b.tensors.count(name) || !sameTensor(t, b.tensors.at(name)))
      return false;
  return true;
}

TEST(BatchStreamTest, TensorsHaveTheGoldenLayout) {
  BatchStream s = makeStream(randomCorpus(2000, 1), config());
  Batch b = take(s, 1)[0];
  const TensorMap &t = b.tensors;
  auto expect = [&](const char *name, DType dtype, std::vector<int64_t> shape) {
    ASSERT_TRUE(t.count(name)) << name;
    EXPECT_EQ(t.at(name).dtype, dtype) << name;
    EXPECT_EQ(t.at(name).shape, shape) << name;
  };
  expect("input_k", DType::I64, {4, 32});
  expect("seg_id", DType::I64, {4, 32});
  // The training pipeline builds no S×S mask: perm_rank is what the step
  // reads (docs/DataPipeline.md).
  EXPECT_EQ(t.count("perm_mask"), 0u);
  expect("perm_rank", DType::I64, {4, 2, 32});
  expect("target_mapping", DType::F32, {4, 8, 32});
  expect("target", DType::I64, {4, 8});
  expect("target_mask", DType::F32, {4, 8});
  for (const char *raw : {kRawInput, kRawTarget, kRawIsMasked, kRawPermIndex})
    expect(raw, DType::I64, {4, 32});
  EXPECT_EQ(t.size(), 10u);
  EXPECT_EQ(b.labels.size(), 4u);
  // Each real slot predicts the token at its mapped position, and the
  // derived tensors are exactly deriveBatchFromRaw of the raw ones.
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t m = 0; m < 8; ++m) {
      if (t.at("target_mask").f32()[r * 8 + m] == 0)
        continue;
      const float *row = t.at("target_mapping").f32() + (r * 8 + m) * 32;
      int64_t pos = std::find(row, row + 32, 1.0f) - row;
      ASSERT_LT(pos, 32);
      EXPECT_EQ(t.at("target").i64()[r * 8 + m],
                t.at("input_k").i64()[r * 32 + pos]);
    }
  TensorMap again; // with the official dense perm_mask this time
  ASSERT_TRUE(deriveBatchFromRaw(t, 16, 8, again));
  for (const auto &[name, tensor] : again)
    if (name != "perm_mask")
      EXPECT_TRUE(sameTensor(tensor, t.at(name))) << name;
  // The ranks stand for exactly that dense mask.
  const Tensor &rank = t.at("perm_rank"), &dense = again.at("perm_mask");
  for (int64_t r = 0; r < 4; ++r) {
    std::vector<int64_t> q(rank.i64() + r * 64, rank.i64() + r * 64 + 32),
        k(rank.i64() + r * 64 + 32, rank.i64() + r * 64 + 64);
    std::vector<float> fromRanks = permMaskFromRanks(q, k);
    EXPECT_TRUE(std::equal(fromRanks.begin(), fromRanks.end(), dense.f32() + r * 32 * 32))
        << "row " << r;
  }
}

TEST(BatchStreamTest, DumpedBatchReadsBackLikeAGoldenOne) {
  PipelineConfig cfg = config(true);
  BatchStream s = makeStream(randomCorpus(2000, 8), cfg);
  Batch b = take(s, 2)[1];
  TempDir dir;
  Status st = writeBatch(dir.file("b.safetensors"), b, cfg);
  ASSERT_TRUE(st) << st.message();
  TensorMap m;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(readSafetensors(dir.file("b.safetensors"), m, &meta));
  EXPECT_EQ(meta.at("seq_len"), "32");
  EXPECT_EQ(meta.at("reuse_len"), "16");
  EXPECT_EQ(meta.at("perm_size"), "8");
  EXPECT_EQ(meta.at("step"), "1");
  ASSERT_EQ(m.size(), b.tensors.size());
  for (const auto &[name, t] : b.tensors)
    EXPECT_TRUE(sameTensor(t, m.at(name))) << name;
}

TEST(BatchStreamTest, RowsStreamConsecutiveText) {
  for (bool bi : {false, true}) {
    BatchStream s = makeStream(randomCorpus(3000, 2), config(bi));
    const BatchifiedData &d = s.layout();
    std::vector<Batch> bs = take(s, 5);
    for (int64_t t = 0; t < 5; ++t)
      for (int64_t r = 0; r < 4; ++r) {
        // Step t's reuse part is the row's window t*reuse_len.
        std::vector<int64_t> window;
        for (int64_t k = 0; k < 16; ++k)
          window.push_back(d.row(r)[t * 16 + k]);
        EXPECT_EQ(rowSlice(bs[t].tensors.at(kRawInput), r, 0, 16), window)
            << "bi=" << bi << " step " << t << " row " << r;
      }
    if (bi) { // Backward rows read the forward rows' text reversed.
      for (int64_t k = 0; k < d.rowLen; ++k)
        ASSERT_EQ(d.row(2)[k], d.row(0)[d.rowLen - 1 - k]);
    }
  }
}

TEST(BatchStreamTest, WrapsAroundIntoTheNextEpoch) {
  // 4 rows of 70 tokens: windows at 0, 16, 32 -> 3 steps per epoch; the
  // tail of each row and the last tokens (not filling a row) are dropped.
  BatchStream s = makeStream(randomCorpus(283, 3), config());
  ASSERT_EQ(s.layout().rowLen, 70);
  ASSERT_EQ(s.stepsPerEpoch(), 3);
  std::vector<Batch> bs = take(s, 8);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(bs[k].epoch, k / 3);
    EXPECT_EQ(bs[k].step, k % 3);
    EXPECT_EQ(bs[k].globalStep, k);
  }
  EXPECT_EQ(s.epoch(), 2);
  EXPECT_EQ(s.stepInEpoch(), 2);
  // Epoch 1 reads the same windows again with fresh masks and orders.
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(rowSlice(bs[3].tensors.at(kRawInput), r, 0, 16),
              rowSlice(bs[0].tensors.at(kRawInput), r, 0, 16));
  EXPECT_FALSE(sameTensor(bs[3].tensors.at(kRawPermIndex),
                          bs[0].tensors.at(kRawPermIndex)));
}

TEST(BatchStreamTest, DeterministicFromTheSeed) {
  Corpus c = randomCorpus(2000, 4);
  BatchStream a = makeStream(c, config()), b = makeStream(c, config());
  PipelineConfig other = config();
  other.seed = 43;
  BatchStream d = makeStream(c, other);
  std::vector<Batch> x = take(a, 4), y = take(b, 4), z = take(d, 4);
  for (int k = 0; k < 4; ++k) {
    EXPECT_TRUE(sameBatch(x[k], y[k])) << k;
    EXPECT_FALSE(sameBatch(x[k], z[k])) << k;
  }
  EXPECT_EQ(a.fingerprint(), b.fingerprint());
  EXPECT_NE(a.fingerprint(), d.fingerprint());
}

TEST(BatchStreamTest, ResumeYieldsTheSameBatches) {
  // 5 steps per epoch (11 with bi_data); save after 4 and take 7 more,
  // crossing into the next epoch without bi_data.
  Corpus c = randomCorpus(4 * 100, 5);
  for (bool bi : {false, true}) {
    BatchStream s = makeStream(c, config(bi));
    take(s, 4);
    std::string pos = s.savePosition();
    std::vector<Batch> expected = take(s, 7);
    BatchStream fresh = makeStream(c, config(bi));
    Status st = fresh.restorePosition(pos);
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(fresh.globalStep(), 4);
    std::vector<Batch> got = take(fresh, 7);
    for (int k = 0; k < 7; ++k)
      EXPECT_TRUE(sameBatch(expected[k], got[k])) << "bi=" << bi << " " << k;
    // seek() is the same thing by step number.
    BatchStream sought = makeStream(c, config(bi));
    ASSERT_TRUE(sought.seek(4));
    EXPECT_TRUE(sameBatch(take(sought, 1)[0], expected[0]));
  }
}

TEST(BatchStreamTest, RestoreErrors) {
  Corpus c = randomCorpus(2000, 6);
  BatchStream s = makeStream(c, config());
  take(s, 2);
  std::string pos = s.savePosition();
  EXPECT_NE(pos.find("\"format\":\"xlnetc-batch-stream\""), std::string::npos)
      << pos;
  BatchStream t = makeStream(c, config());
  Status st = t.restorePosition("not json");
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "batch stream position: not a JSON object");
  PipelineConfig other = config();
  other.seed = 7;
  BatchStream u = makeStream(c, other);
  st = u.restorePosition(pos);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("saved with seed 42, this stream has seed 7"),
            std::string::npos)
      << st.message();
  BatchStream v = makeStream(randomCorpus(2000, 99), config());
  st = v.restorePosition(pos);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("different corpus or configuration"),
            std::string::npos)
      << st.message();
  st = t.restorePosition("{\"format\":\"xlnetc-batch-stream\",\"version\":1}");
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("missing or mistyped"), std::string::npos);
  // Nothing changed after the failures.
  EXPECT_EQ(t.globalStep(), 0);
}

TEST(BatchStreamTest, TooShortCorpus) {
  BatchStream s;
  Status st = BatchStream::create(randomCorpus(100, 7), config(), s);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "random-corpus: the corpus has 100 tokens; one "
                          "batch needs at least 128 (4 rows of seq_len 32)");
  st = BatchStream::create(randomCorpus(63, 7), config(true), s);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(),
            "random-corpus: the corpus has 63 tokens; one batch needs at least "
            "64 (2 rows of seq_len 32; bi_data's backward rows reuse them)");
  // Exactly enough works: one step per epoch.
  ASSERT_TRUE(BatchStream::create(randomCorpus(128, 7), config(), s));
  EXPECT_EQ(s.stepsPerEpoch(), 1);
  std::vector<Batch> bs = take(s, 3);
  EXPECT_EQ(bs[2].epoch, 2);
  // Bad settings are reported before anything else.
  PipelineConfig bad = config(true);
  bad.batchSize = 3;
  st = BatchStream::create(randomCorpus(2000, 7), bad, s);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("even batch size"), std::string::npos);
}

/// The memory corpus: at every odd step of an epoch a row's reuse part is
/// its reuse part of the step before, so it is predictable from memory.
void checkMemoryCorpus(bool biData) {
  TempDir dir;
  PipelineConfig cfg = config(biData);
  MemoryCorpusOptions o;
  o.batchSize = cfg.batchSize;
  o.biData = biData;
  o.seqLen = cfg.seqLen;
  o.reuseLen = cfg.reuseLen;
  o.vocabSize = 64;
  o.minStepsPerEpoch = 6;
  int64_t rowLen = 0;
  std::string path = dir.file("memory.ids");
  Status st = writeMemoryCorpus(path, /*seed=*/3, o, &rowLen);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(rowLen % (2 * cfg.reuseLen), 0);
  Corpus c;
  st = readIdsCorpus(path, 64, {}, c);
  ASSERT_TRUE(st) << st.message();
  int64_t fwdRows = biData ? cfg.batchSize / 2 : cfg.batchSize;
  EXPECT_EQ(int64_t(c.tokens.size()), fwdRows * rowLen);
  for (int64_t id : c.tokens)
    ASSERT_GE(id, 9); // no SEP, CLS, EOD or other special id
  BatchStream s = makeStream(c, cfg);
  ASSERT_EQ(s.layout().rowLen, rowLen);
  ASSERT_GE(s.stepsPerEpoch(), 6);
  int64_t n = s.stepsPerEpoch() + 3; // into the second epoch
  std::vector<Batch> bs = take(s, int(n));
  for (int64_t k = 1; k < n; ++k) {
    if (bs[k].step == 0)
      continue; // a new epoch starts over
    const Tensor &now = bs[k].tensors.at(kRawInput);
    const Tensor &before = bs[k - 1].tensors.at(kRawInput);
    for (int64_t r = 0; r < cfg.batchSize; ++r) {
      std::vector<int64_t> a = rowSlice(now, r, 0, cfg.reuseLen);
      std::vector<int64_t> b = rowSlice(before, r, 0, cfg.reuseLen);
      if (bs[k].step % 2 == 1)
        EXPECT_EQ(a, b) << "bi=" << biData << " step " << bs[k].step << " row "
                        << r;
      else
        EXPECT_NE(a, b) << "bi=" << biData << " step " << bs[k].step << " row "
                        << r;
    }
  }
}

TEST(BatchStreamTest, MemoryCorpusAlignsChunkPairsWithSteps) {
  checkMemoryCorpus(false);
}
TEST(BatchStreamTest, MemoryCorpusAlignsWithBiData) { checkMemoryCorpus(true); }

} // namespace

//===----------------------------------------------------------------------===//
// Token stores: the corpus's tokens in pieces (prepared data's shards),
// packed in 2 or 4 bytes, a piece's flags stored inverted.
//===----------------------------------------------------------------------===//

namespace {

/// Owned packed pieces of `c`, cut at `cuts`; piece i of width widths[i],
/// its flags stored inverted when invert[i] (as a shard whose file started
/// on the other flag).
std::shared_ptr<const TokenStore> piecesOf(const Corpus &c, const std::vector<size_t> &cuts,
                                           const std::vector<int> &widths,
                                           const std::vector<bool> &invert) {
  auto buffers = std::make_shared<std::vector<std::vector<uint32_t>>>();
  std::vector<TokenStore::Piece> pieces;
  size_t from = 0;
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const size_t to = i < cuts.size() ? cuts[i] : c.tokens.size();
    std::vector<uint32_t> &b = buffers->emplace_back();
    const int w = widths[i];
    for (size_t k = from; k < to; ++k) {
      const uint32_t v = packToken(c.tokens[k], uint8_t(c.sentIds[k] ^ invert[i]), w);
      if (w == 2) { // two 16-bit elements per 32-bit word
        if ((k - from) % 2 == 0)
          b.push_back(0);
        b.back() |= v << (16 * ((k - from) % 2));
      } else {
        b.push_back(v);
      }
    }
    pieces.push_back({b.data(), int64_t(to - from), w, bool(invert[i])});
    from = to;
  }
  return std::make_shared<TokenStore>(pieces, buffers);
}

StreamSource sourceOf(const Corpus &c, std::shared_ptr<const TokenStore> store) {
  StreamSource s;
  s.store = std::move(store);
  s.startPiece = c.startPiece;
  s.vocabSize = c.vocabSize;
  s.path = "pieces";
  s.digest = s.store->digest();
  return s;
}

} // namespace

TEST(TokenStoreTest, PiecesReadBackAndDigestAsTheWhole) {
  Corpus c = randomCorpus(1000, 11);
  StreamDigest whole;
  for (size_t k = 0; k < c.tokens.size(); ++k)
    whole.add(c.tokens[k], c.sentIds[k]);
  auto store = piecesOf(c, {0, 301, 302, 777}, {4, 2, 4, 2, 4}, {false, true, false, true, true});
  ASSERT_EQ(store->size(), 1000);
  for (int64_t k = 0; k < 1000; ++k) {
    ASSERT_EQ(store->token(k), c.tokens[size_t(k)]) << k;
    ASSERT_EQ(store->flag(k), c.sentIds[size_t(k)]) << k;
  }
  const StreamDigest d = store->digest();
  EXPECT_EQ(d.count, whole.count);
  EXPECT_EQ(d.hash, whole.hash);
  EXPECT_EQ(d.flagPart, whole.flagPart);
  // One token or one flag changed changes the digest.
  Corpus e = c;
  e.sentIds[500] ^= 1;
  EXPECT_NE(piecesOf(e, {301}, {4, 2}, {false, true})->digest().hash, whole.hash);
  e = c;
  e.tokens[999] += 1;
  EXPECT_NE(TokenStore::fromCorpus(e)->digest().hash, whole.hash);
}

TEST(TokenStoreTest, BatchesOverPiecesAreTheCorpusBatches) {
  Corpus c = randomCorpus(4 * 150, 12);
  for (bool bi : {false, true}) {
    BatchStream a = makeStream(c, config(bi)), b;
    Status st = BatchStream::create(
        sourceOf(c, piecesOf(c, {100, 333}, {2, 4, 2}, {true, false, true})), config(bi), b);
    ASSERT_TRUE(st) << st.message();
    EXPECT_EQ(a.fingerprint(), b.fingerprint());
    EXPECT_EQ(a.stepsPerEpoch(), b.stepsPerEpoch());
    std::vector<Batch> x = take(a, 12), y = take(b, 12);
    for (int k = 0; k < 12; ++k)
      EXPECT_TRUE(sameBatch(x[k], y[k])) << "bi=" << bi << " step " << k;
    // A position saved over one restores over the other.
    BatchStream r;
    ASSERT_TRUE(BatchStream::create(sourceOf(c, TokenStore::fromCorpus(c)), config(bi), r));
    ASSERT_TRUE(r.restorePosition(a.savePosition()));
    EXPECT_EQ(r.globalStep(), 12);
  }
}

TEST(TokenStoreTest, AnIdOutsideTheVocabularyIsAnErrorWhenItIsRead) {
  Corpus c = randomCorpus(4 * 150, 13);
  StreamSource s = sourceOf(c, TokenStore::fromCorpus(c));
  s.vocabSize = 100; // the "prepared data" holds ids up to 299
  BatchStream b;
  ASSERT_TRUE(BatchStream::create(s, config(), b));
  Batch batch;
  Status st = b.next(batch);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("pieces: token id "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("outside the vocabulary [0, 100)"), std::string::npos)
      << st.message();
}

TEST(TokenStoreTest, AVersion1PositionRestoresOverACorpusInMemoryOnly) {
  // Version 1's fingerprint, as the earlier xlnetc wrote it: FNV-1a over the
  // settings, the seed, the token count, 2·token + flag per token and the
  // start pieces.
  Corpus c = randomCorpus(2000, 14);
  const PipelineConfig cfg = config();
  uint64_t h = 0xcbf29ce484222325ull;
  auto add = [&](uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h ^= (v >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  for (int64_t v : {cfg.batchSize, cfg.seqLen, cfg.reuseLen, cfg.numPredict, cfg.permSize,
                    int64_t(cfg.biData), cfg.maskAlpha, cfg.maskBeta, cfg.maxGram})
    add(uint64_t(v));
  add(cfg.seed);
  add(c.tokens.size());
  for (size_t k = 0; k < c.tokens.size(); ++k)
    add(uint64_t(c.tokens[k]) * 2 + c.sentIds[k]);
  add(c.startPiece.size());
  for (uint8_t s : c.startPiece)
    add(s);
  BatchStream s = makeStream(c, cfg);
  const std::string v1 = fmt::format(
      "{{\"format\":\"xlnetc-batch-stream\",\"version\":1,\"epoch\":0,\"step\":3,"
      "\"global_step\":3,\"steps_per_epoch\":{},\"seed\":\"42\",\"fingerprint\":\"{:016x}\"}}",
      s.stepsPerEpoch(), h);
  Status st = s.restorePosition(v1);
  ASSERT_TRUE(st) << st.message();
  EXPECT_EQ(s.globalStep(), 3);
  BatchStream p;
  ASSERT_TRUE(BatchStream::create(sourceOf(c, TokenStore::fromCorpus(c)), cfg, p));
  st = p.restorePosition(v1);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("position version 1"), std::string::npos) << st.message();
}
