//===- Metrics.h - Training metrics log and progress line ------*- C++ -*-===//
//
// The metrics log is JSON lines, one object per logged step, fields in this
// order:
//   {"step":120,"loss":4.1234,"ppl":61.77,"bits_per_token":5.949,
//    "lr":0.00024,"grad_norm":1.23,"tokens_per_s":15300.0,"elapsed_s":72.5}
// loss is the mean cross-entropy in nats per predicted token; ppl = e^loss,
// bits_per_token = loss / ln 2. Non-finite numbers are written as null.
// A resumed run that takes a changed setting (xlnetc train --resume
// --override KEY) records it as an event line, once per key, at the step it
// resumed from, before that step's successors:
//   {"step":120,"event":"override","key":"learning_rate","old":0.0001,"new":5e-05}
// Readers tell the two apart by "event" (a step line has none, and every
// event line lacks "loss"). Each line is flushed as it is written.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_METRICS_H
#define XLNETC_RUNTIME_TRAIN_METRICS_H

#include "runtime/Status.h"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace xlnetc::rt::train {

/// What one logged step reports.
struct StepMetrics {
  int64_t step = 0;        ///< optimizer updates applied after this step
  double loss = 0;         ///< mean cross-entropy, nats per predicted token
  double lr = 0;           ///< learning rate used by this update
  double gradNorm = 0;     ///< global gradient norm (before clipping)
  double tokensPerSec = 0; ///< throughput
  double elapsedSec = 0;   ///< wall time since the start of the run
};

/// e^loss.
double perplexity(double loss);
/// loss / ln 2.
double bitsPerToken(double loss);

/// The JSON object of one step, without the newline.
std::string metricsJsonLine(const StepMetrics &m);

/// A setting a resumed run changed, from step `step` on (after `step`
/// updates): its spec key and its old and new values as spec.toml writes
/// them (TOML), which the line carries as JSON numbers, booleans or
/// strings (a value JSON cannot spell, such as inf, as its TOML text).
struct SettingOverride {
  int64_t step = 0;
  std::string key, oldValue, newValue;
};

/// The JSON object of an override event, without the newline.
std::string overrideJsonLine(const SettingOverride &o);

/// A held-out evaluation after `step` updates (docs/Training.md "Held-out
/// evaluation").
struct EvalMetrics {
  int64_t step = 0;
  double loss = 0;   ///< nats per predicted token of the held-out batches
  double tokens = 0; ///< predicted tokens counted
  int64_t batches = 0;
  double seconds = 0;
};

/// The JSON object of an evaluation event, without the newline:
/// {"step", "event": "eval", "eval_loss", "eval_ppl", "eval_bits_per_token",
/// "eval_tokens", "eval_batches", "eval_s"}.
std::string evalJsonLine(const EvalMetrics &m);
/// The progress line of an evaluation.
std::string formatEval(const EvalMetrics &m);

/// Appends metricsJsonLine()s to a file.
class MetricsWriter {
public:
  MetricsWriter() = default;
  MetricsWriter(const MetricsWriter &) = delete;
  MetricsWriter &operator=(const MetricsWriter &) = delete;
  ~MetricsWriter();

  /// Opens `path`. A fresh run (`resumeStep` empty) starts an empty file.
  /// A resumed run keeps the existing lines with "step" <= *resumeStep and
  /// appends after them: lines logged after that checkpoint (the steps are
  /// about to be redone) and a partial last line left by a crash are
  /// dropped (the file is rewritten atomically when that happens).
  Status open(const std::string &path,
              std::optional<int64_t> resumeStep = std::nullopt);
  /// Writes one line and flushes it.
  Status log(const StepMetrics &m);
  /// Writes one override event line and flushes it.
  Status logOverride(const SettingOverride &o);
  /// Writes one evaluation event line and flushes it.
  Status logEval(const EvalMetrics &m);
  /// Closes the file (also done by the destructor).
  void close();

  bool isOpen() const { return file_ != nullptr; }
  /// Lines dropped by open() on resume.
  size_t droppedLines() const { return dropped_; }

private:
  /// Writes the JSON object `json` and a newline and flushes them; on
  /// failure cuts the file back to its last whole line.
  Status writeLine(const std::string &json);

  std::string path_;
  std::FILE *file_ = nullptr;
  size_t dropped_ = 0;
};

/// The numbers of the progress line.
struct ProgressInfo {
  int64_t step = 0, totalSteps = 0;
  double loss = 0, lr = 0, gradNorm = 0, tokensPerSec = 0;
  double etaSec = -1; ///< negative or NaN: unknown
};

/// "step 120/1000 | loss 4.1234 | ppl 61.8 | bpt 5.95 | lr 2.40e-04 |
///  gnorm 1.23 | 15.3k tok/s | ETA 1m12s" (one line).
std::string formatProgress(const ProgressInfo &p);

/// "45s", "3m05s", "1h02m"; "?" for a negative or non-finite duration.
std::string formatDuration(double seconds);

/// "850 tok/s", "15.3k tok/s", "1.25M tok/s".
std::string formatTokensPerSec(double tokensPerSec);

/// Remaining time from the pace of this run: `elapsedSec` for
/// `stepsDoneThisRun` steps, `stepsRemaining` to go; -1 when unknown.
double estimateEtaSec(int64_t stepsDoneThisRun, double elapsedSec,
                      int64_t stepsRemaining);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_METRICS_H
