//===- BatchStream.h - One pretraining batch per step ----------*- C++ -*-===//
//
// The training-time data source: the corpus is batchified once; step t of an
// epoch builds, for every row b, the record at window t*reuse_len of row b,
// samples its masks and permutation, and derives the batch tensors. Row b of
// step t+1 therefore continues row b of step t (the Transformer-XL memory
// sees the text that precedes each segment).
//
// Epochs: when the windows of a row are used up the stream starts the next
// epoch at window 0 with the same row layout (no reshuffle); masks, A/B
// splits and permutations are sampled afresh. So it never runs dry and every
// batch is full.
//
// Determinism: the random numbers of step (epoch e, step t) come from
// Rng(deriveSeed(seed, e, t)), a counter-based scheme: the whole generator
// state is (seed, epoch, step), which is what savePosition() writes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_BATCHSTREAM_H
#define XLNETC_RUNTIME_DATA_BATCHSTREAM_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/data/Corpus.h"
#include "runtime/data/Records.h"
#include "runtime/data/TokenStore.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

/// One training step's batch.
struct Batch {
  /// Epoch (0-based), step within the epoch, and step since the start.
  int64_t epoch = 0;
  int64_t step = 0;
  int64_t globalStep = 0;
  /// input_k, seg_id, perm_mask, target_mapping, target, target_mask and
  /// raw.input, raw.target, raw.is_masked, raw.perm_index (Batch.h).
  TensorMap tensors;
  /// Per row: 1 when B is A's true continuation (the record's label).
  std::vector<int64_t> labels;
};

/// The safetensors metadata of a dumped batch: seq_len, reuse_len,
/// perm_size (as in the golden batch files), plus num_predict, bi_data,
/// mask_alpha, mask_beta, seed, epoch, step and global_step.
std::map<std::string, std::string> batchMetadata(const Batch &batch,
                                                 const PipelineConfig &config);

/// Writes `batch.tensors` (batch tensors and raw.*) with batchMetadata to
/// `path` (the --dump-batch format; deriveBatchFromRaw of the raw tensors
/// gives the batch tensors back).
Status writeBatch(const std::string &path, const Batch &batch,
                  const PipelineConfig &config);

/// What a batch stream reads: a corpus's tokens (in memory or prepared)
/// and what the pipeline needs to know of its vocabulary.
struct StreamSource {
  std::shared_ptr<const TokenStore> store;
  /// Word starts per vocab id (Corpus::startPiece).
  std::vector<uint8_t> startPiece;
  /// Every id the batches take must be below it.
  int64_t vocabSize = 0;
  /// The corpus or prepared directory (for messages).
  std::string path;
  /// The store's digest (StreamDigest): a prepared directory's manifest
  /// records it, so nothing is hashed at start-up.
  StreamDigest digest;
  /// The fingerprint of a version-1 position over the same corpus (a
  /// corpus read into memory; 0 otherwise).
  uint64_t legacyFingerprint = 0;
};

/// Batches for consecutive steps, resumable from a saved position.
class BatchStream {
public:
  BatchStream() = default;

  /// Batchifies `source` for `config`. Errors: invalid settings, or a
  /// corpus too short for one batch (the message says how many tokens it
  /// needs).
  static Status create(StreamSource source, const PipelineConfig &config, BatchStream &out);
  /// The same for a corpus read into memory (its ids checked against its
  /// vocabulary, packed into a store, digested).
  static Status create(Corpus corpus, const PipelineConfig &config,
                       BatchStream &out);

  /// Builds the batch at the current position and advances by one step.
  Status next(Batch &out);

  /// Position of the next batch.
  int64_t epoch() const { return epoch_; }
  int64_t stepInEpoch() const { return step_; }
  int64_t globalStep() const { return epoch_ * stepsPerEpoch_ + step_; }
  /// Batches per epoch (windows per row).
  int64_t stepsPerEpoch() const { return stepsPerEpoch_; }
  /// Moves to global step `step` (epoch = step / stepsPerEpoch).
  Status seek(int64_t globalStep);

  /// The position as JSON: {"format": "xlnetc-batch-stream", "version": 2,
  /// "epoch", "step", "global_step", "steps_per_epoch", "seed",
  /// "fingerprint"}. The fingerprint hashes the settings and the corpus's
  /// digest (the same for a text corpus and its prepared directory).
  std::string savePosition() const;
  /// Restores a position saved by a stream over the same corpus and
  /// settings; the next batches are then exactly those the saving stream
  /// would have produced. Errors for malformed text or a fingerprint/seed
  /// mismatch. A version-1 position (its fingerprint hashed the tokens
  /// themselves) is checked against a corpus read into memory only.
  Status restorePosition(const std::string &json);

  const PipelineConfig &config() const { return config_; }
  /// The batchified rows (for tests and diagnostics).
  const BatchifiedData &layout() const { return data_; }
  /// The corpus file the stream reads (for messages).
  const std::string &corpusPath() const { return corpusPath_; }
  /// Hash of the corpus's digest and the settings.
  uint64_t fingerprint() const { return fingerprint_; }

private:
  std::string corpusPath_;
  /// Word starts per vocab id (Corpus::startPiece); the tokens themselves
  /// live only in data_.
  std::vector<uint8_t> startPiece_;
  int64_t vocabSize_ = 0;
  uint64_t legacyFingerprint_ = 0;
  PipelineConfig config_;
  BatchifiedData data_;
  int64_t stepsPerEpoch_ = 0;
  int64_t epoch_ = 0, step_ = 0;
  uint64_t fingerprint_ = 0;
};

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_BATCHSTREAM_H
