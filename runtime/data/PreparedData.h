//===- PreparedData.h - Corpora tokenized once, read memory-mapped -*- C++ -*-===//
//
// `xlnetc prepare-data` tokenizes text corpora once, on every core, into a
// directory of shards; `train --data DIR` memory-maps them, so neither its
// memory nor its start-up grows with the corpus (docs/DataPipeline.md
// "Prepared data" gives the format).
//
// The inputs are cut into units: byte ranges of a plain file that start at
// a line (about unitBytes each), or a whole compressed file. Each unit runs
// the official _create_data loop (readLines) from the state its range
// starts in, writing one shard: its tokens packed as the TokenStore holds
// them (uint16 when the vocabulary has at most 2^15 ids, else uint32; the
// sentence flag in the top bit, counted from "true" at the unit's start)
// and an index of the unit's line and document starts. A unit finished is
// recorded by its own JSON file, so an interrupted preparation resumes
// where it stopped; the manifest is written last, once every unit is done.
// How units and files join follows the official create_data: within a file
// the flags run on (a shard whose unit starts on "false" is read inverted);
// a file whose first flag equals the last one before it is flipped whole.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_PREPAREDDATA_H
#define XLNETC_RUNTIME_DATA_PREPAREDDATA_H

#include "runtime/Status.h"
#include "runtime/data/BatchStream.h"
#include "runtime/data/Corpus.h"
#include "runtime/data/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

inline constexpr const char *kPreparedFormat = "xlnetc-prepared-data";
inline constexpr int kPreparedVersion = 1;
/// The files of a prepared directory.
inline constexpr const char *kPreparedManifest = "manifest.json";
inline constexpr const char *kPreparedPlan = "plan.json";
inline constexpr const char *kPreparedTokenizer = "spiece.model";

/// Whether `path` is a directory holding a prepared-data manifest or plan.
bool isPreparedDataDir(const std::string &path);

/// What prepare-data reports while it works (called from one thread).
struct PrepareProgress {
  int64_t bytesDone = 0, bytesTotal = 0; // input bytes on disk
  int64_t bytesResumed = 0; // of bytesDone, done before this run started
  int64_t tokens = 0;
  int64_t unitsDone = 0, unitsTotal = 0;
  int64_t unitsResumed = 0; // done before this run started
  double seconds = 0;       // since this run started
};

struct PrepareOptions {
  /// Files or directories (expandInputs); plain, gzip or zstd.
  std::vector<std::string> inputs;
  /// The directory to write: new, empty, or an unfinished preparation of
  /// the same inputs and options (resumed).
  std::string outDir;
  /// The SentencePiece model; empty: one is trained on the first
  /// sampleBytes of the inputs, with vocabSize pieces.
  std::string tokenizer;
  int64_t vocabSize = 32000;
  int64_t sampleBytes = int64_t(100) << 20;
  /// use_eod and keep_accents (maxBytes is ignored: nothing is held).
  CorpusOptions corpus;
  /// Worker threads (0: every core).
  int threads = 0;
  /// Plain files are cut into units of about this many bytes.
  int64_t unitBytes = int64_t(32) << 20;
  /// Called about once a second, and at the end.
  std::function<void(const PrepareProgress &)> progress;
  /// Said once each: the tokenizer trained, units resumed, ...
  std::function<void(const std::string &)> note;
  /// A test hook (XLNETC_FAULT_PREPARE_UNITS): stop with an error once this
  /// many units are done, as an interruption would; -1: never.
  int64_t stopAfterUnits = -1;
  /// Under mpirun: this process's rank among `ranks`, every rank with the
  /// same options and a view of the same files. Rank 0 opens the directory
  /// (its lock, the tokenizer, the plan) and writes the manifest; the others
  /// join it once the plan is there, and every rank tokenizes every
  /// ranks-th unit left to do. Progress counts this rank's share.
  int rank = 0, ranks = 1;
  /// With ranks > 1: collectives every rank calls at the same points:
  /// allOk is true on every rank when every rank passed true; allSame when
  /// every rank passed the same value (the ranks' views of the directory).
  std::function<bool(bool ok)> allOk;
  std::function<bool(uint64_t value)> allSame;
};

/// What a preparation made (the manifest's counts).
struct PreparedCounts {
  int64_t tokens = 0, lines = 0, documents = 0, shards = 0, inputBytes = 0;
  int tokenBytes = 0;
  int64_t vocabSize = 0;
};

/// Prepares `options.inputs` into `options.outDir`. Errors name the file
/// and what is wrong; units finished before an error are kept, and running
/// the same command again resumes.
Status prepareData(const PrepareOptions &options, PreparedCounts &counts);

/// A prepared directory, open: its shards memory-mapped as one store.
struct PreparedData {
  std::string dir;
  StreamSource source; // store, digest, vocabSize, path; startPiece left to the caller
  PreparedCounts counts;
  std::string tokenizerSha256;
  CorpusOptions corpus; // the use_eod and keep_accents it was made with
};

/// Opens the prepared directory `dir`: the manifest checked, every shard
/// mapped and its size and header checked (not its checksum: that reads
/// every byte; verifyPreparedData does). Nothing is read that is not a
/// regular file inside `dir` reached without a link.
Status openPreparedData(const std::string &dir, PreparedData &out);

/// Reads every shard and checks it against the SHA-256 its manifest
/// records.
Status verifyPreparedData(const std::string &dir);

/// The SHA-256 of the file at `path` (hex).
Status fileSha256(const std::string &path, std::string &hex);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_PREPAREDDATA_H
