//===- Train.h - `xlnetc train`: the pretraining loop -----------*- C++ -*-===//
//
// Compiles the training step of a spec (forward, backward, Adam update) and
// runs it on the host over a corpus: the official data pipeline feeds one
// batch per step, the per-layer memory is carried from step to step, metrics
// go to a JSON-lines file and a progress line, checkpoints are written
// atomically and a run can be resumed exactly. docs/Training.md describes
// the command and the files it writes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_TRAIN_H
#define XLNETC_XLNETC_DRIVER_TRAIN_H

#include "xlnetc/Driver/RunStep.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xlnetc {

struct TrainArgs {
  std::string spec;      ///< TOML spec
  std::string data;      ///< corpus: text (one sentence per line) or #xlnetc-ids
  std::string tokenizer; ///< SentencePiece model; empty: train one (text corpus)
  bool keepAccents = false; ///< --keep-accents: sets the spec's keep_accents
  std::string outDir;    ///< run directory (checkpoint, metrics, plot)
  std::string initFrom;  ///< HuggingFace XLNet safetensors to start from
  /// Train until this many optimizer steps are done (at most the spec's
  /// train_steps, where the learning-rate schedule ends); 0: train_steps.
  /// The CLI refuses --steps 0 and below (Options.h).
  int64_t steps = 0;
  int64_t checkpointEvery = 0; ///< 0: only at the end
  int64_t logEvery = 0;        ///< progress line period; 0: about 50 lines
  bool resume = false;         ///< continue from outDir/checkpoint.safetensors
  /// --override KEY: training settings (spec keys) this resume takes
  /// although they differ from the run's outDir/spec.toml; spec.toml and
  /// metrics.jsonl then record the change (ResumeSettings.h).
  std::vector<std::string> overrides;
  bool noPlot = false;
  /// Write each step's batch (with raw.* and the incoming mems.{i}) to
  /// DIR/step-NNNNNN.safetensors, as run-step --batch reads it.
  std::string dumpBatches;
  int threads = 0;
  /// host, emu, cuda or auto; empty: the spec's `device` key.
  std::string device;
  /// "fp32" or "bf16"; empty: the spec's `precision` key.
  std::string precision;
  /// --micro-batch: the spec's micro_batch_size (gradient accumulation);
  /// 0: the spec's.
  int64_t microBatch = 0;
  /// --micro-memory: where the micro-batches' memory waits between their
  /// runs on a GPU: device, host (page-locked RAM) or auto (the device
  /// when it fits beside the step, else the host).
  std::string microMemory = "auto";
  bool noKernelCache = false;
  MemoryCheckArgs memory;
  /// Data parallel in one process too (--data-parallel): the gradient
  /// buckets and their all-reduce (NCCL on cuda) with a world of one, the
  /// path an mpirun job takes, checked on one device.
  bool dataParallel = false;
  /// Data parallel: compare the ranks' parameters (a hash) every K steps
  /// and after the last.
  int64_t checkRanksEvery = 50;
  /// Data parallel: the gradient all-reduce's bucket size, MiB.
  double bucketMiB = 25;
  /// Data parallel: how long a rank waits for the others in one collective
  /// during training before it ends the job (a rank that hangs).
  double rankTimeout = 1800;
  /// Held-out evaluation (Eval.h): the text, every K steps (0: about 10
  /// evaluations a run) and after the last, M batches each (0: the text
  /// once, at most Evaluator::kDefaultMaxBatches).
  std::string evalData;
  int64_t evalEvery = 0;
  int64_t evalBatches = 0;
  /// --tensorboard DIR: the scalars as a TensorBoard event file there;
  /// empty: the spec's [train] tensorboard (empty: none).
  std::string tensorboard;
};

/// Runs `xlnetc train` with the training step's plan from `compile` (the
/// compiler, or a bundle in xlnetc-run); returns the process exit code.
/// Errors are one "xlnetc: error: ..." line; never exits the process itself.
int runTrain(const TrainArgs &args, const StepCompiler &compile);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_TRAIN_H
