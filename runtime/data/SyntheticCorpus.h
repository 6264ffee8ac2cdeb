//===- SyntheticCorpus.h - Seeded corpora for demos and tests --*- C++ -*-===//
//
// Two deterministic corpus generators (same seed, same bytes):
//   - writeDemoCorpus: readable English-like text from a small grammar with
//     learnable regularities (each object has a usual colour and material,
//     each person a home town, documents keep one protagonist), documents
//     separated by blank lines; for the tokenizer and the demo run.
//   - writeMemoryCorpus: an ids corpus whose stream is random chunks of
//     exactly reuse_len tokens, each repeated once (X X Y Y Z Z ...), laid
//     out so that after batchify every row starts at a chunk pair. Then at
//     every odd step of an epoch a row's reuse part is a copy of its reuse
//     part at the previous step: its masked tokens can be predicted only
//     from the memory (the reuse half never sees the rest of its record).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_SYNTHETICCORPUS_H
#define XLNETC_RUNTIME_DATA_SYNTHETICCORPUS_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>

namespace xlnetc::rt::data {

/// Writes about `approxLines` sentence lines (plus the blank lines between
/// documents) of grammar-generated English to `path`; ~45 bytes per line,
/// so the default is about 230 KB.
Status writeDemoCorpus(const std::string &path, uint64_t seed,
                       int64_t approxLines = 5000);

/// Layout of the memory corpus; it must match the PipelineConfig used to
/// read it (batch size, bi_data, seq_len, reuse_len).
struct MemoryCorpusOptions {
  int64_t batchSize = 0;
  bool biData = false;
  int64_t seqLen = 0;
  int64_t reuseLen = 0;
  /// Random tokens are drawn from [firstId, vocabSize); the default skips
  /// the special ids 0..8 (no SEP, CLS or EOD in the text).
  int64_t vocabSize = 0;
  int64_t firstId = 9;
  /// At least this many steps per epoch.
  int64_t minStepsPerEpoch = 8;
};

/// Writes the memory corpus: every row of batchify holds L tokens, L the
/// smallest multiple of 2*reuse_len with at least minStepsPerEpoch windows,
/// and the file has exactly rows*L tokens, one chunk of reuse_len per line,
/// no blank lines (an <eod> would shift the alignment). `rowLength`, when
/// given, receives L.
Status writeMemoryCorpus(const std::string &path, uint64_t seed,
                         const MemoryCorpusOptions &options,
                         int64_t *rowLength = nullptr);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_SYNTHETICCORPUS_H
