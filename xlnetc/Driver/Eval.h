//===- Eval.h - Held-out evaluation: the loss on text not trained on -*- C++ -*-===//
//
// The two-stream loss of a model on held-out text (docs/Training.md
// "Held-out evaluation"), as `train --eval-data` runs it every
// --eval-every steps and `xlnetc eval` once: the forward step compiled with
// dropout and dropatt off, on an executor of its own, over the first
// --eval-batches batches of the held-out text, built by the training
// pipeline (the same masking rules and _local_perm) from a fixed seed
// (kEvalSeed), so every evaluation of every run reads the same batches. Its
// own Transformer-XL memory starts at zero and is carried from batch to
// batch, each part of the rows (a micro-batch's) with its own. Under mpirun
// every rank evaluates its rows of each batch, and the loss is the global
// batch's: Σ loss·tokens / Σ tokens over every rank, part and batch.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_EVAL_H
#define XLNETC_XLNETC_DRIVER_EVAL_H

#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Support.h"

#include "runtime/data/BatchStream.h"
#include "runtime/data/Tokenizer.h"
#include "runtime/dist/RankProtocol.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc {

/// The seed of the held-out batches' permutations and span masks: fixed,
/// so evaluations are comparable across steps and runs.
inline constexpr uint64_t kEvalSeed = 0x6576616c; // "eval"

/// The data pipeline of `spec`'s [data] for steps of `shape` (its seq_len,
/// reuse_len, num_predict) over a global batch of `globalBatch` rows, every
/// random choice from `seed`: what train and the evaluations draw.
rt::data::PipelineConfig pipelineFor(const ModelSpec &spec, const StepShape &shape,
                                     int64_t globalBatch, uint64_t seed);

/// One evaluation.
struct EvalResult {
  double loss = 0;    ///< nats per predicted token, over every batch
  double tokens = 0;  ///< predicted tokens counted
  int64_t batches = 0;
  double seconds = 0;
};

/// What an evaluation runs on.
struct EvalSetup {
  /// The model (its dropout and dropatt are turned off) and its pipeline
  /// settings ([data]).
  ModelSpec spec;
  /// The step's rows: one part of this rank's rows (the micro-batch's with
  /// gradient accumulation), seq_len, memory, precision as trained.
  StepShape shape;
  /// This rank's rows of the global batch, and the parts they run in.
  rt::dist::RowSplit rank, part;
  /// The held-out text (a text file, an ids corpus or a prepare-data
  /// directory) and its tokenizer (null: an ids corpus).
  std::string data;
  const rt::data::Tokenizer *tokenizer = nullptr;
  /// Batches per evaluation; 0: the held-out text once (every window of
  /// every row), at most kDefaultMaxBatches.
  int64_t batches = 0;
  /// The executor's device, threads and kernel cache (as the run's).
  std::string device;
  int threads = 0;
  bool noKernelCache = false;
  int localRank = -1;
  /// Print the "xlnetc: device:" line (the eval command does; train's
  /// evaluations run quietly beside its own executor).
  bool announce = false;
};

class Evaluator {
public:
  /// The default's cap on batches when --eval-batches is not given.
  static constexpr int64_t kDefaultMaxBatches = 100;

  /// Reads the held-out text, compiles the forward step and opens its
  /// executor (quietly). False with one line in `error`.
  bool open(const EvalSetup &setup, const StepCompiler &compile, std::string &error);

  /// One evaluation of `params` (by HuggingFace name; read, not copied).
  /// Every rank of `world` calls it at the same step.
  rt::Status run(const rt::TensorMap &params, rt::dist::Transport &world, EvalResult &out);

  int64_t batches() const { return batches_; }
  /// "held-out DATA: T tokens, N batches per evaluation (of E per pass)".
  std::string describe() const;

private:
  /// Reads setup_.data into stream_.
  rt::Status openStream(const rt::data::PipelineConfig &pipe);
  /// Runs one part of one batch, carrying `mems`.
  rt::Status runPart(const rt::TensorMap &params, const rt::TensorMap &batch,
                     rt::TensorMap &mems, double &lossSum, double &tokens);

  EvalSetup setup_;
  rt::Executor executor_;
  rt::Plan plan_;
  rt::data::BatchStream stream_;
  int64_t batches_ = 0;
  size_t corpusTokens_ = 0;
};

/// `xlnetc eval SOURCE --data FILE`: one evaluation of any weights.
struct EvalArgs {
  std::string source;    ///< a run directory, a HuggingFace directory, weights
  std::string data;      ///< held-out text, ids corpus or prepare-data directory
  std::string spec;      ///< default: the run's spec.toml or the config.json
  std::string tokenizer; ///< default: the spiece.model beside the weights
  int64_t batches = 0;   ///< 0: the text once, at most kDefaultMaxBatches
  int64_t batchSize = 0; ///< rows per batch; 0: the spec's train_batch_size
  std::string device;    ///< empty: the spec's
  std::string precision; ///< empty: the spec's
  int threads = 0;
  bool noKernelCache = false;
};

/// Runs `xlnetc eval` (under mpirun the ranks split each batch's rows);
/// returns the exit code.
int runEval(const EvalArgs &args, const StepCompiler &compile);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_EVAL_H
