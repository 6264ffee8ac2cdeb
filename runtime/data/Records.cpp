//===- Records.cpp - The official create_tfrecords loop -------------------===//
//
// Follows data_utils.py (zihangdai/xlnet) step by step; comments name the
// official variable where it helps to compare. Python's `random` and numpy's
// generator are both replaced by one Rng, so the streams are this project's
// own, but every probability and every boundary rule is the official one.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/Records.h"

#include "runtime/data/LocalPerm.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace xlnetc::rt::data {

Status validateConfig(const PipelineConfig &c) {
  if (c.batchSize < 1)
    return Status::error(
        fmt::format("batch size must be positive, got {}", c.batchSize));
  if (c.biData && c.batchSize % 2 != 0)
    return Status::error(fmt::format(
        "bi_data needs an even batch size (forward rows + their reversed "
        "copies), got {}",
        c.batchSize));
  if (c.reuseLen < 1)
    return Status::error(
        fmt::format("reuse_len must be positive, got {}", c.reuseLen));
  // [sep] x 2 + [cls], and at least one token of A.
  if (c.reuseLen >= c.seqLen - 3)
    return Status::error(fmt::format(
        "reuse_len {} must be below seq_len - 3 = {} (the record needs room "
        "for A, two SEPs and a CLS)",
        c.reuseLen, c.seqLen - 3));
  int64_t rest = c.seqLen - c.reuseLen;
  if (c.permSize < 1 || c.permSize > c.reuseLen || c.permSize > rest)
    return Status::error(fmt::format(
        "perm_size {} must be in [1, min(reuse_len {}, seq_len - reuse_len "
        "{})], or there will be data leaks",
        c.permSize, c.reuseLen, rest));
  if (c.reuseLen % c.permSize != 0 || rest % c.permSize != 0)
    return Status::error(fmt::format(
        "perm_size {} must divide reuse_len {} and seq_len - reuse_len {}",
        c.permSize, c.reuseLen, rest));
  int64_t np1 = c.numPredict / 2, np0 = c.numPredict - np1;
  if (c.numPredict < 1 || np0 > c.reuseLen || np1 > rest)
    return Status::error(fmt::format(
        "num_predict {} must be positive and split into {} (reuse part of {} "
        "tokens) + {} (rest of {} tokens) that fit",
        c.numPredict, np0, c.reuseLen, np1, rest));
  if (c.maskBeta < 1 || c.maskAlpha < c.maskBeta)
    return Status::error(fmt::format(
        "mask_alpha {} and mask_beta {} must satisfy mask_alpha >= mask_beta "
        ">= 1",
        c.maskAlpha, c.maskBeta));
  if (c.maxGram < 1)
    return Status::error(
        fmt::format("max_gram must be positive, got {}", c.maxGram));
  return Status::ok();
}

Status batchify(std::shared_ptr<const TokenStore> store, int64_t batchSize, bool biData,
                BatchifiedData &out) {
  if (batchSize < 1 || (biData && batchSize % 2 != 0))
    return Status::error(
        fmt::format("batchify: batch size {} is not positive{}", batchSize,
                    biData ? " and even" : ""));
  // data[:bsz * num_step].reshape(bsz, num_step): row r is a contiguous
  // run; bwd_data = fwd_data[..., ::-1], stacked after the forward rows.
  out.fwdRows = biData ? batchSize / 2 : batchSize;
  out.rowLen = store->size() / out.fwdRows; // num_step
  out.rows = batchSize;
  out.store = std::move(store);
  return Status::ok();
}

Status batchify(const Corpus &corpus, int64_t batchSize, bool biData, BatchifiedData &out) {
  if (corpus.sentIds.size() != corpus.tokens.size())
    return Status::error("batchify: tokens and sentence ids differ in length");
  return batchify(TokenStore::fromCorpus(corpus), batchSize, biData, out);
}

int64_t numWindows(int64_t rowLen, int64_t seqLen, int64_t reuseLen) {
  if (reuseLen < 1 || rowLen < seqLen)
    return 0;
  return (rowLen - seqLen) / reuseLen + 1;
}

int64_t minCorpusTokens(const PipelineConfig &config) {
  int64_t fwdRows = config.biData ? config.batchSize / 2 : config.batchSize;
  return fwdRows * config.seqLen;
}

namespace {

/// splitAandB over `sentIds` (a pointer or a RowFlags).
template <class Flags>
bool splitAandBOf(const Flags &sentIds, int64_t len, int64_t beginIdx, int64_t totLen, Rng &rng,
                  SplitAB &out) {
  if (beginIdx + totLen >= len)
    return false;
  // 1. Sentence boundaries after beginIdx, up to the first one at or past
  //    totLen tokens (which ends the true continuation).
  int64_t endIdx = beginIdx + 1;
  std::vector<int64_t> cutPoints;
  for (; endIdx < len; ++endIdx) {
    if (sentIds[endIdx] != sentIds[endIdx - 1]) {
      if (endIdx - beginIdx >= totLen)
        break;
      cutPoints.push_back(endIdx);
    }
  }
  int64_t aBegin = beginIdx, aEnd, bBegin, bEnd, label;
  // 2. Random B (label 0) with p = 0.5, or always without a boundary; the
  //    coin is only tossed when there is a boundary, as in the official
  //    `len(cut_points) == 0 or random.random() < 0.5`.
  if (cutPoints.empty() || rng.bernoulli(0.5)) {
    label = 0;
    aEnd = cutPoints.empty() ? endIdx
                             : cutPoints[rng.uniformInt(cutPoints.size())];
    int64_t bLen = std::max<int64_t>(1, totLen - (aEnd - aBegin));
    // random.randint(0, data_len - 1 - b_len), both ends included; the
    // `- 1` leaves room for the extended target.
    bBegin = int64_t(rng.uniformInt(uint64_t(len - bLen)));
    bEnd = bBegin + bLen;
    // Widen B to whole sentences.
    while (bBegin > 0 && sentIds[bBegin - 1] == sentIds[bBegin])
      --bBegin;
    while (bEnd < len - 1 && sentIds[bEnd - 1] == sentIds[bEnd])
      ++bEnd;
  } else {
    label = 1;
    aEnd = cutPoints[rng.uniformInt(cutPoints.size())];
    bBegin = aEnd;
    bEnd = endIdx;
  }
  // 3. Trim the longer side on the right until both fit.
  while (aEnd - aBegin + bEnd - bBegin > totLen) {
    if (aEnd - aBegin > bEnd - bBegin)
      --aEnd;
    else
      --bEnd;
  }
  // extend_target needs data[a_end] and data[b_end].
  if (aEnd >= len || bEnd >= len)
    return false;
  out = SplitAB{aBegin, aEnd, bBegin, bEnd, label};
  return true;
}

} // namespace

bool splitAandB(const uint8_t *sentIds, int64_t len, int64_t beginIdx, int64_t totLen, Rng &rng,
                SplitAB &out) {
  return splitAandBOf(sentIds, len, beginIdx, totLen, rng, out);
}

bool splitAandB(const RowFlags &sentIds, int64_t len, int64_t beginIdx, int64_t totLen,
                Rng &rng, SplitAB &out) {
  return splitAandBOf(sentIds, len, beginIdx, totLen, rng, out);
}

std::vector<int64_t> sampleMask(const std::vector<int64_t> &seg,
                                const std::vector<uint8_t> &startPiece,
                                bool reverse, int64_t goal, int64_t maskAlpha,
                                int64_t maskBeta, int64_t maxGram, Rng &rng) {
  int64_t len = int64_t(seg.size());
  std::vector<int64_t> mask(size_t(len), 0);
  std::vector<int64_t> s = seg;
  if (reverse)
    std::reverse(s.begin(), s.end());
  auto isStart = [&](int64_t k) {
    int64_t id = s[size_t(k)];
    return id < 0 || id >= int64_t(startPiece.size()) || startPiece[id] != 0;
  };
  // p(n) ∝ 1/n for n = 1..max_gram.
  std::vector<double> pvals(static_cast<size_t>(maxGram));
  for (int64_t n = 1; n <= maxGram; ++n)
    pvals[size_t(n - 1)] = 1.0 / double(n);

  int64_t numPredict = 0, curLen = 0;
  while (curLen < len) {
    if (numPredict >= goal)
      break;
    // 1. Span length n and its context: about maskBeta of maskAlpha tokens.
    int64_t n = int64_t(rng.weighted(pvals)) + 1;
    n = std::min(n, goal - numPredict);
    int64_t ctxSize = (n * maskAlpha) / maskBeta;
    int64_t lCtx = int64_t(rng.uniformInt(uint64_t(ctxSize)));
    int64_t rCtx = ctxSize - lCtx;
    // 2. The span starts at a complete word.
    int64_t beg = curLen + lCtx;
    while (beg < len && !isStart(beg))
      ++beg;
    if (beg >= len)
      break;
    // 3. The span ends before the start of the (n+1)-th word.
    //    DECISION (docs/DataPipeline.md): the official loop tests
    //    _is_start_piece(seg[beg]) here, which is always true, so every
    //    token counts as a word and spans are n tokens, not n words. We test
    //    seg[end], the token the loop is looking at, as intended.
    int64_t end = beg + 1, cntNgram = 1;
    while (end < len) {
      if (isStart(end)) {
        ++cntNgram;
        if (cntNgram > n)
          break;
      }
      ++end;
    }
    if (end >= len)
      break;
    // With whole words a span may hold more tokens than remain in the goal
    // (the official n-token spans never could); cut it so exactly `goal`
    // tokens are masked, which the official code asserts.
    end = std::min(end, beg + (goal - numPredict));
    // 4. Update.
    for (int64_t k = beg; k < end; ++k)
      mask[size_t(k)] = 1;
    numPredict += end - beg;
    curLen = end + rCtx;
  }
  // 5. Top up with random single tokens.
  while (numPredict < goal) {
    int64_t k = int64_t(rng.uniformInt(uint64_t(len)));
    if (!mask[size_t(k)]) {
      mask[size_t(k)] = 1;
      ++numPredict;
    }
  }
  if (reverse)
    std::reverse(mask.begin(), mask.end());
  return mask;
}

Status buildRecord(const BatchifiedData &data, int64_t row, int64_t i,
                   const PipelineConfig &config,
                   const std::vector<uint8_t> &startPiece, Rng &rng,
                   Record &out) {
  int64_t S = config.seqLen, R = config.reuseLen, L = data.rowLen;
  if (row < 0 || row >= data.rows || i < 0 || i + S > L)
    return Status::error(fmt::format(
        "buildRecord: window [{}, {}) of row {} is outside the {}×{} data", i,
        i + S, row, data.rows, L));
  const RowView d = data.row(row);
  auto slice = [&](int64_t b, int64_t e) {
    std::vector<int64_t> v(size_t(e - b));
    for (int64_t k = b; k < e; ++k)
      v[size_t(k - b)] = d[k];
    return v;
  };
  // 1. The reuse part and its next-token targets.
  std::vector<int64_t> inp = slice(i, i + R), tgt = slice(i + 1, i + R + 1);
  // 2. A and B.
  SplitAB ab;
  int64_t totLen = S - R - 3;
  if (!splitAandB(data.sentRow(row), L, i + R, totLen, rng, ab))
    return Status::error(fmt::format(
        "buildRecord: _split_a_and_b found no split for row {} at {}", row, i));
  std::vector<int64_t> a = slice(ab.aBegin, ab.aEnd);
  std::vector<int64_t> b = slice(ab.bBegin, ab.bEnd);
  std::vector<int64_t> aTarget = slice(ab.aBegin + 1, ab.aEnd + 1);
  std::vector<int64_t> bTarget = slice(ab.bBegin, ab.bEnd + 1);
  if (int64_t(a.size() + b.size()) != totLen)
    return Status::error(
        fmt::format("buildRecord: A ({}) + B ({}) != {} tokens", a.size(),
                    b.size(), totLen));
  // 3. Span masking per half; backward rows sample on the flipped text.
  bool reverse = config.biData && row >= config.batchSize / 2;
  int64_t np1 = config.numPredict / 2, np0 = config.numPredict - np1;
  std::vector<int64_t> rest = a;
  rest.push_back(kSepId);
  rest.insert(rest.end(), b.begin(), b.end());
  rest.push_back(kSepId);
  rest.push_back(kClsId);
  std::vector<int64_t> mask0 =
      sampleMask(inp, startPiece, reverse, np0, config.maskAlpha,
                 config.maskBeta, config.maxGram, rng);
  std::vector<int64_t> mask1 =
      sampleMask(rest, startPiece, reverse, np1, config.maskAlpha,
                 config.maskBeta, config.maxGram, rng);
  // 4. The record.
  out.input = inp;
  out.input.insert(out.input.end(), rest.begin(), rest.end());
  out.segId.assign(size_t(R + int64_t(a.size()) + 1), 0);
  out.segId.insert(out.segId.end(), b.size() + 1, 1);
  out.segId.push_back(2);
  // The last two CLS targets are padding, as in the official code.
  out.target = tgt;
  out.target.insert(out.target.end(), aTarget.begin(), aTarget.end());
  out.target.insert(out.target.end(), bTarget.begin(), bTarget.end());
  out.target.push_back(kClsId);
  out.target.push_back(kClsId);
  out.isMasked = mask0;
  out.isMasked.insert(out.isMasked.end(), mask1.begin(), mask1.end());
  out.label = ab.label;
  if (int64_t(out.input.size()) != S || int64_t(out.target.size()) != S ||
      int64_t(out.segId.size()) != S || int64_t(out.isMasked.size()) != S)
    return Status::error("buildRecord: record length differs from seq_len");
  return Status::ok();
}

Status samplePermIndex(int64_t seqLen, int64_t reuseLen, int64_t permSize,
                       Rng &rng, std::vector<int64_t> &index) {
  index.clear();
  for (int64_t len : {reuseLen, seqLen - reuseLen}) {
    // tf.random_shuffle over the rows of the [perm_size, blocks] index
    // matrix: one permutation of perm_size shared by every block.
    std::vector<int64_t> perm(static_cast<size_t>(permSize));
    std::iota(perm.begin(), perm.end(), 0);
    rng.shuffle(perm);
    std::vector<int64_t> half;
    XLNETC_RETURN_IF_ERROR(blockPermutationIndex(perm, len, half));
    index.insert(index.end(), half.begin(), half.end());
  }
  return Status::ok();
}

} // namespace xlnetc::rt::data
