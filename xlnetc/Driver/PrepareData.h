//===- PrepareData.h - `prepare-data`: tokenize corpora once -----*- C++ -*-===//
//
// The command of xlnetc and xlnetc-run that prepares text corpora for
// `train --data DIR` (runtime/data/PreparedData.h; docs/DataPipeline.md
// "Prepared data").
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_DRIVER_PREPAREDATA_H
#define XLNETC_DRIVER_PREPAREDATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace xlnetc {

struct PrepareDataArgs {
  std::vector<std::string> inputs; ///< files or directories
  std::string out;                 ///< the directory to write
  std::string tokenizer;           ///< SentencePiece model; empty: train one
  std::string spec;                ///< optional: n_token and keep_accents from it
  int64_t vocabSize = 32000;       ///< a trained tokenizer's vocabulary
  double sampleMib = 100;          ///< a trained tokenizer's sample of the inputs
  bool keepAccents = false;
  bool noEod = false;
  int threads = 0;      ///< 0: every core
  double unitMib = 32;  ///< plain files are cut into units of this size
  bool verify = false;  ///< only check DIR's shards against their SHA-256
};

/// Adds `prepare-data` to `app`, reading into `args`.
CLI::App *addPrepareDataCommand(CLI::App &app, PrepareDataArgs &args);

/// `prepare-data`: prepares (or resumes preparing, or verifies) a directory.
int runPrepareData(const PrepareDataArgs &args);

} // namespace xlnetc

#endif // XLNETC_DRIVER_PREPAREDATA_H
