//===- Records.h - The official create_tfrecords loop ----------*- C++ -*-===//
//
// Record building of data_utils.create_tfrecords, sampled on the fly:
// batchify (with bi_data's reversed rows), _split_a_and_b, _sample_mask and
// the record layout
//   [reuse part (reuse_len) | A | SEP | B | SEP | CLS]
//   seg ids 0…0 | 0…0 0 | 1…1 1 | 2, targets = next tokens.
// Randomness comes from the caller's Rng; docs/DataPipeline.md describes the
// choices and the one deliberate difference (seg[end] in _sample_mask).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_RECORDS_H
#define XLNETC_RUNTIME_DATA_RECORDS_H

#include "runtime/Status.h"
#include "runtime/data/Corpus.h"
#include "runtime/data/Rng.h"
#include "runtime/data/TokenStore.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

/// The pipeline's settings (the official create_data / train flags).
struct PipelineConfig {
  /// Rows per batch (bsz_per_host); even when biData.
  int64_t batchSize = 0;
  /// Record length (seq_len).
  int64_t seqLen = 0;
  /// Tokens reused as memory; the window advances by this much per step.
  int64_t reuseLen = 0;
  /// Masked tokens per record (num_predict): ⌈np/2⌉ in the reuse part,
  /// ⌊np/2⌋ in the rest.
  int64_t numPredict = 0;
  /// Block length of the factorisation-order permutation (perm_size).
  int64_t permSize = 0;
  /// Backward rows: the second half of the batch is the first half reversed.
  bool biData = false;
  /// About mask_beta of every mask_alpha tokens are masked.
  int64_t maskAlpha = 6;
  int64_t maskBeta = 1;
  /// Longest n-gram span (official max_gram).
  int64_t maxGram = 5;
  /// Seed of every random choice.
  uint64_t seed = 0;
};

/// Checks the settings (positive sizes, reuse_len < seq_len - 3, perm_size
/// dividing both halves and not above either, num_predict fitting each half,
/// even batch with bi_data, mask_alpha >= mask_beta >= 1).
Status validateConfig(const PipelineConfig &config);

/// Row `r` of the batch layout: `len` tokens of the store from `start`,
/// read backwards for bi_data's backward rows. operator[] is the token.
struct RowView {
  const TokenStore *store = nullptr;
  int64_t start = 0, len = 0;
  bool reversed = false;

  int64_t position(int64_t k) const { return reversed ? start + len - 1 - k : start + k; }
  int64_t operator[](int64_t k) const { return store->token(position(k)); }
  uint8_t sent(int64_t k) const { return store->flag(position(k)); }
};

/// A row's sentence flags (operator[]), for splitAandB.
struct RowFlags {
  RowView row;
  uint8_t operator[](int64_t k) const { return row.sent(k); }
};

/// The corpus laid out as batch rows (official batchify), without a copy:
/// row r < fwdRows is tokens [r*rowLen, (r+1)*rowLen) of the stream; with
/// biData row fwdRows + r is row r reversed.
struct BatchifiedData {
  int64_t rows = 0;
  int64_t rowLen = 0;
  int64_t fwdRows = 0;
  std::shared_ptr<const TokenStore> store;

  RowView row(int64_t r) const {
    const bool backward = r >= fwdRows;
    return {store.get(), (backward ? r - fwdRows : r) * rowLen, rowLen, backward};
  }
  RowFlags sentRow(int64_t r) const { return {row(r)}; }
};

/// Lays `store` out as batch rows; the tail that does not fill a row is
/// dropped, as batchify does.
Status batchify(std::shared_ptr<const TokenStore> store, int64_t batchSize, bool biData,
                BatchifiedData &out);
/// The same for a corpus in memory (packed into a store first).
Status batchify(const Corpus &corpus, int64_t batchSize, bool biData, BatchifiedData &out);

/// Records per row per pass over the data: windows i = 0, reuse_len, ...
/// with i + seq_len <= rowLen.
int64_t numWindows(int64_t rowLen, int64_t seqLen, int64_t reuseLen);

/// Corpus tokens needed for one batch: (rows of one direction) × seq_len.
int64_t minCorpusTokens(const PipelineConfig &config);

/// The outcome of _split_a_and_b on one row: A = [aBegin, aEnd),
/// B = [bBegin, bEnd); label 1 when B is A's true continuation.
struct SplitAB {
  int64_t aBegin = 0, aEnd = 0, bBegin = 0, bEnd = 0;
  int64_t label = 0;
};

/// The official _split_a_and_b(extend_target=True) on a row of `len` tokens
/// with sentence flags `sentIds`: A starts at beginIdx and ends at a random
/// sentence boundary; B is the rest up to the boundary past totLen (label 1)
/// or, with p = 0.5 or when there is no boundary, a random whole-sentence
/// span of the row (label 0); the longer of A and B is trimmed on the right
/// until |A| + |B| <= totLen. False where the official code returns None.
bool splitAandB(const uint8_t *sentIds, int64_t len, int64_t beginIdx,
                int64_t totLen, Rng &rng, SplitAB &out);
bool splitAandB(const RowFlags &sentIds, int64_t len, int64_t beginIdx, int64_t totLen,
                Rng &rng, SplitAB &out);

/// The official _sample_mask with the n-gram counting fixed (see .cpp):
/// spans of n whole words, n in 1..maxGram with p(n) ∝ 1/n, one span per
/// context of n*maskAlpha/maskBeta tokens with a random left context,
/// starting at a start piece; then random single tokens until exactly
/// `goal` tokens are masked. reverse samples on the flipped sequence and
/// flips the mask back. Returns 0/1 per token.
std::vector<int64_t> sampleMask(const std::vector<int64_t> &seg,
                                const std::vector<uint8_t> &startPiece,
                                bool reverse, int64_t goal, int64_t maskAlpha,
                                int64_t maskBeta, int64_t maxGram, Rng &rng);

/// One record before permutation (the fields of the official tfrecord).
struct Record {
  std::vector<int64_t> input;    ///< seq_len token ids
  std::vector<int64_t> target;   ///< seq_len next-token targets
  std::vector<int64_t> segId;    ///< seq_len segment ids (0, 1, 2)
  std::vector<int64_t> isMasked; ///< seq_len, 1 = chosen by span masking
  int64_t label = 0;             ///< 1 = B continues A
};

/// Builds the record of row `row` at window start `i` (the body of the
/// official create_tfrecords loop). The row is reversed for masking when it
/// is a backward row (biData, row >= batchSize/2).
Status buildRecord(const BatchifiedData &data, int64_t row, int64_t i,
                   const PipelineConfig &config,
                   const std::vector<uint8_t> &startPiece, Rng &rng,
                   Record &out);

/// One permutation of 0..permSize-1 per half, expanded over the half's
/// blocks with blockPermutationIndex and concatenated: the raw.perm_index
/// row (first reuseLen entries for the reuse half, local to it, then the
/// rest).
Status samplePermIndex(int64_t seqLen, int64_t reuseLen, int64_t permSize,
                       Rng &rng, std::vector<int64_t> &index);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_RECORDS_H
