//===- Train.cpp - `xlnetc train`: the pretraining loop -------------------===//

#include "xlnetc/Driver/Train.h"

#include "runtime/io/InputFile.h"
#include "runtime/device/Sha256.h"
#include "xlnetc/Driver/Eval.h"
#include "xlnetc/Driver/Guard.h"
#include "xlnetc/Driver/MemoryFit.h"
#include "xlnetc/Driver/ResumeSettings.h"
#include "xlnetc/Driver/Weights.h"
#include "runtime/train/AtomicFile.h"

#include "runtime/exec/HostExecutor.h"
#include "runtime/exec/MemoryCheck.h"
#include "runtime/plan/Plan.h"
#include "runtime/data/BatchStream.h"
#include "runtime/data/Corpus.h"
#include "runtime/data/PreparedData.h"
#include "runtime/data/Tokenizer.h"
#include "runtime/dist/GradReducer.h"
#include "runtime/dist/NcclComm.h"
#include "runtime/dist/RankProtocol.h"
#include "runtime/dist/Transport.h"
#include "runtime/train/TensorBoard.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/Metrics.h"
#include "runtime/train/Plot.h"
#include "runtime/train/RunDirectory.h"
#include "runtime/train/StateNames.h"
#include "runtime/train/Trainer.h"

#include <fmt/core.h>

#include <chrono>
#include <csignal>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

namespace xlnetc {
namespace fs = std::filesystem;
namespace {

//===----------------------------------------------------------------------===//
// SIGINT and SIGTERM: the run stops after its current step, writes a
// checkpoint, says so and exits 130 or 143. The first signal only asks
// (SA_RESETHAND: the next one of the same kind ends the process at once,
// for a user who will not wait).
//===----------------------------------------------------------------------===//

volatile std::sig_atomic_t gStopSignal = 0;
volatile std::sig_atomic_t gAnnounceStop = 0; ///< rank 0: say so at once

extern "C" void onStopSignal(int signal) {
  gStopSignal = signal;
  if (gAnnounceStop) {
    static const char note[] = "\nxlnetc: stopping after this step, then writing a checkpoint "
                               "(the same signal again quits at once)\n";
    ssize_t ignored = ::write(STDERR_FILENO, note, sizeof(note) - 1);
    (void)ignored;
  }
}

/// Catches SIGINT and SIGTERM while it lives; the old actions come back.
class StopSignals {
public:
  explicit StopSignals(bool announce) {
    gStopSignal = 0;
    gAnnounceStop = announce ? 1 : 0;
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    action.sa_flags = SA_RESETHAND | SA_RESTART; // interrupted system calls go on
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &oldInt_);
    ::sigaction(SIGTERM, &action, &oldTerm_);
  }
  ~StopSignals() {
    ::sigaction(SIGINT, &oldInt_, nullptr);
    ::sigaction(SIGTERM, &oldTerm_, nullptr);
  }
  StopSignals(const StopSignals &) = delete;
  StopSignals &operator=(const StopSignals &) = delete;
  /// The signal that asked to stop, or 0.
  int requested() const { return gStopSignal; }

private:
  struct sigaction oldInt_ {}, oldTerm_ {};
};

const char *signalName(int signal) { return signal == SIGINT ? "SIGINT" : "SIGTERM"; }

/// The exit status of a run stopped by SIGINT or SIGTERM.
bool isStopExit(int rc) { return rc == 128 + SIGINT || rc == 128 + SIGTERM; }

using Clock = std::chrono::steady_clock;

/// A text corpus this large gets a note that prepare-data exists.
constexpr uintmax_t kPrepareDataHint = uintmax_t(256) << 20;

/// The SentencePiece model of the run: --tokenizer, else the one this run
/// directory already has, else one trained on the corpus (text corpora).
rt::Status prepareTokenizer(const TrainArgs &args, const std::string &outDir,
                            const ModelSpec &spec,
                            std::unique_ptr<rt::data::Tokenizer> &out) {
  std::string path = args.tokenizer;
  fs::path kept = fs::path(outDir) / "spiece.model";
  std::error_code ec;
  // A fresh run (the directory holds no checkpoint) never keeps the
  // spiece.model of an earlier run that failed before its first checkpoint.
  if (!args.resume && fs::exists(kept) &&
      (args.tokenizer.empty() || !fs::equivalent(args.tokenizer, kept, ec))) {
    std::cout << fmt::format("removing {} left by an earlier run without a checkpoint\n",
                             kept.string());
    if (!fs::remove(kept, ec) || ec)
      return rt::Status::error(fmt::format("cannot remove the stale tokenizer {}: {}",
                                           kept.string(), ec.message()));
  }
  if (path.empty()) {
    if (rt::data::isIdsCorpusFile(args.data))
      return rt::Status::ok(); // pre-tokenized: no tokenizer needed
    path = kept.string();
    if (!fs::exists(path)) {
      std::cout << fmt::format(
          "no --tokenizer: training a SentencePiece unigram model "
          "(vocab {}) on {} -> {}\n",
          spec.nToken, args.data, path);
      // SentencePiece writes by path: it trains into a directory of its
      // own, whose files are renamed in, so nothing is written through a
      // link planted in the run directory.
      std::string scratch = (fs::path(outDir) / ".spiece-XXXXXX").string();
      if (!::mkdtemp(scratch.data()))
        return rt::Status::error(fmt::format("cannot create a directory in {} for the "
                                             "tokenizer: {}",
                                             outDir, std::strerror(errno)));
      rt::Status st =
          rt::data::trainTokenizer(args.data, spec.nToken, scratch + "/spiece");
      for (const char *file : {"spiece.model", "spiece.vocab"})
        if (st && std::rename((scratch + "/" + file).c_str(),
                              (fs::path(outDir) / file).c_str()) != 0)
          st = rt::Status::error(fmt::format("cannot move the trained {} into {}: {}", file,
                                             outDir, std::strerror(errno)));
      fs::remove_all(scratch, ec);
      XLNETC_RETURN_IF_ERROR(st);
    }
  }
  auto tok = std::make_unique<rt::data::Tokenizer>();
  XLNETC_RETURN_IF_ERROR(rt::data::Tokenizer::load(path, *tok));
  // Keep a copy in the run directory, so --resume and export find the
  // same model (written beside and renamed in).
  if (!fs::exists(kept)) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    rt::train::AtomicFile copy;
    rt::Status st = in ? copy.open(kept.string())
                       : rt::Status::error("cannot read it: " + std::string(std::strerror(errno)));
    if (st)
      st = copy.write(bytes.data(), bytes.size());
    if (st)
      st = copy.commit();
    if (!st)
      return rt::Status::error(fmt::format("cannot copy the tokenizer {} to {}: {}", path,
                                           kept.string(), st.message()));
  }
  if (tok->vocabSize() > spec.nToken)
    return rt::Status::error(fmt::format(
        "tokenizer {} has {} pieces but the model's n_token is {}", path,
        tok->vocabSize(), spec.nToken));
  out = std::move(tok);
  return rt::Status::ok();
}

/// Writes the run's spec, resolved, to `path` (DIR/spec.toml), atomically:
/// beside it, then renamed over it, so nothing is written through a link.
rt::Status writeRunSpec(const std::string &path, const ModelSpec &spec,
                        const std::string &comment) {
  const std::string text = writeSpecToml(spec, comment);
  rt::train::AtomicFile file;
  rt::Status st = file.open(path);
  if (st)
    st = file.write(text.data(), text.size());
  if (st)
    st = file.commit();
  return st;
}

} // namespace

/// Removes the directory `dir` when it is destroyed, if it then holds
/// nothing but the run's lock file: only a directory this run created, and
/// never a file other than that lock, which this run still holds (a run
/// that makes a new lock file there meanwhile keeps the directory).
class RemoveIfLeftEmpty {
public:
  explicit RemoveIfLeftEmpty(std::string dir) : dir_(std::move(dir)) {}
  ~RemoveIfLeftEmpty() {
    if (dir_.empty())
      return;
    std::error_code ec;
    for (const fs::directory_entry &e : fs::directory_iterator(dir_, ec))
      if (e.path().filename() != ".xlnetc-run.lock")
        return;
    if (ec)
      return;
    fs::remove(fs::path(dir_) / ".xlnetc-run.lock", ec);
    fs::remove(dir_, ec); // only an empty directory
  }
  RemoveIfLeftEmpty(const RemoveIfLeftEmpty &) = delete;
  RemoveIfLeftEmpty &operator=(const RemoveIfLeftEmpty &) = delete;

private:
  std::string dir_;
};

/// What every rank of a data-parallel run must agree on (checkSameSettings):
/// each key of the resolved spec as spec.toml records it ("train.clip"),
/// then every flag that changes what a rank does. The corpus, tokenizer and
/// --init-from are compared by content at the start check, not by path.
static std::vector<std::pair<std::string, std::string>>
runSettings(const ModelSpec &spec, const TrainArgs &args, int64_t totalSteps) {
  std::vector<std::pair<std::string, std::string>> out = specValues(spec);
  auto flag = [&](const char *name, const std::string &value) { out.emplace_back(name, value); };
  flag("--steps", std::to_string(totalSteps));
  flag("--checkpoint-every", std::to_string(args.checkpointEvery));
  flag("--check-ranks-every", std::to_string(args.checkRanksEvery));
  flag("--resume", args.resume ? "yes" : "no");
  flag("--out", args.outDir);
  std::string overrides;
  for (const std::string &o : args.overrides)
    overrides += (overrides.empty() ? "" : ",") + o;
  flag("--override", overrides);
  flag("--data-parallel", args.dataParallel ? "yes" : "no");
  flag("--bucket-mib", fmt::format("{}", args.bucketMiB));
  flag("--rank-timeout", fmt::format("{}", args.rankTimeout));
  flag("--no-kernel-cache", args.noKernelCache ? "yes" : "no");
  return out;
}

namespace {

using rt::dist::Exchange;
using rt::dist::RowSplit;

/// One process's run of `xlnetc train` (docs/Training.md; with other ranks,
/// docs/Distributed.md), in the order it goes: each phase returns 0 to go
/// on, else the exit code (its error already printed).
class RankRun {
public:
  RankRun(const TrainArgs &args, rt::dist::Transport &world)
      : args(args), world(world), severalRanks(world.size() > 1), lead(world.rank() == 0),
        parallel(severalRanks || args.dataParallel) {}

  /// 1. The spec with the command line's settings, and the step count.
  int resolveSpec();
  /// 2. The device, the compiled step and whether it fits; the ranks agree.
  int openStep(const StepCompiler &compile);
  /// 3. The run directory: locked, checked, and the resume's settings.
  int openRunDirectory();
  /// 4. Tokenizer, corpus and the batch stream.
  int openData();
  /// 4a. The tokenizer (rank 0 prepares it, the others load it) and the
  /// run's spec.toml; `fallback`: the model to use when neither
  /// --tokenizer nor the run directory names one (a prepared directory's).
  int openTokenizer(const std::string &fallback);
  /// The model openTokenizer takes: --tokenizer, else `fallback` unless a
  /// resume finds the run's own; "" leaves the choice to prepareTokenizer.
  std::string tokenizerPath(const std::string &fallback) const;
  /// 4b. A text or ids corpus, read into memory.
  int readCorpusIntoMemory();
  /// 4c. A prepared directory (xlnetc prepare-data), memory-mapped.
  int mapPreparedData();
  /// The pipeline's settings of the global batch.
  void setPipeline();
  /// 4d. --eval-data: the held-out text read and its forward step compiled
  /// (Eval.h).
  int openEval(const StepCompiler &compile);
  /// A step's TensorBoard scalars.
  std::vector<std::pair<std::string, double>> stepScalars(const rt::train::StepMetrics &m) const;
  /// 5. The state: fresh or from the checkpoint; the ranks agree.
  int loadState();
  /// 6. The metrics log (and the resume's overrides recorded).
  int openMetrics();
  /// 7. The banner, the executor's options and the gradient all-reduce.
  int prepareLoop();
  /// 8. The steps, until the last or a stop (exit 130/143).
  int loop();
  /// 9. The final checkpoint, the summary and the loss plot.
  int finish();

private:
  /// The inputs of step `next` (0-based): its batch, the memory dump, the
  /// step counter and the injected faults.
  rt::Status prepareInputs(int64_t next);
  /// Runs step `step` + 1 and reads its loss (the global batch's), gradient
  /// norm and learning rate; prefetches the next batch where it can.
  int runStep(double &loss, double &gnorm, double &lr);
  /// Gradient accumulation (docs/Training.md): this process's rows in
  /// micro-batches of `rows` (micro_batch_size; 0 or all of them: one
  /// batch), the step compiled for one.
  rt::Status splitIntoMicroBatches(int64_t rows);
  /// Where every micro-batch's memory waits between its runs
  /// (--micro-memory), and what the memory check counts of it.
  int placeMicroBatchMemory();
  /// The state's memory (this process's rows) split into the micro-batches'
  /// starting values, and the first micro-batch's zero gradient sum bound.
  rt::Status splitStartingState();
  /// Micro-batch k's inputs bound: its rows of the step's batch, the step's
  /// token count, its memory (set aside by the executor, or its start).
  rt::Status bindMicroBatch(int k);
  /// Runs the micro-batches that only accumulate (all but the last) of
  /// step `step` + 1: forward and backward, the gradients summed on the
  /// device, no update.
  rt::Status runAccumulating();
  /// After the step's last micro-batch (whose loss is `loss`): `loss`
  /// becomes the process's (the micro-batches' weighted by their tokens),
  /// and the gradient sum is zeroed for the next step.
  rt::Status endMicroBatches(double &loss);
  /// After step `step`, when it is time: the held-out loss, logged.
  int evaluateIfDue();
  /// Micro-batch k's dropout draws of step `step` + 1: the step's seed,
  /// the same for every rank and micro-batch, and the global rows of the
  /// micro-batch's rows, so the masks are the whole batch's however it is
  /// split (docs/Training.md "One run, however it is split").
  void setDraws(int k, rt::ExecOptions &o) const;
  /// Layer l's memory of all this process's rows (the micro-batches' put
  /// together).
  rt::Status processMems(int64_t l, rt::Tensor &out);
  /// After step `step`: metrics, the ranks' parameter check, progress, a
  /// periodic checkpoint.
  int afterStep(double loss, double gnorm, double lr);
  /// SIGINT or SIGTERM: every rank stops after the same step, with a
  /// checkpoint; returns 0 when no stop was asked for.
  int stopIfAsked();
  /// A checkpoint at `step`; `position`: the data stream's position to
  /// record when the stream has already moved on (a batch prefetched).
  rt::Status saveCheckpoint(const std::string *position = nullptr);
  /// Whether a checkpoint follows step `done` (1-based): the next batch is
  /// then drawn only after it.
  bool checkpointAfter(int64_t done) const {
    return done == totalSteps || (args.checkpointEvery > 0 && done % args.checkpointEvery == 0);
  }

  const TrainArgs &args;
  rt::dist::Transport &world;
  // `parallel`: the data-parallel step (buckets, all-reduce), which
  // --data-parallel takes in one process too; `severalRanks`: there are
  // other ranks to agree with (the checks and exchanges between them).
  const bool severalRanks, lead, parallel;

  ModelSpec spec;
  int64_t totalSteps = 0;
  rt::Executor executor;
  RowSplit split;                   // this rank's rows of the global batch
  StepShape globalShape, shape;     // the global batch's step, this rank's
  rt::Plan plan;
  MemoryCheckArgs memoryCheck;
  std::string outDir, ckptPath, metricsPath, specPath;
  // The writer of the run directory (rank 0) holds it for the whole run
  // (runtime/train/RunDirectory.h). A run that made its directory and ends
  // before writing anything into it leaves no empty directory behind:
  // declared after the lock, so it is removed while the lock is held.
  rt::train::RunLock runLock;
  std::optional<RemoveIfLeftEmpty> removeIfEmpty;
  std::vector<SpecChange> overridden; // this resume's --override changes
  std::unique_ptr<rt::data::Tokenizer> tokenizer;
  size_t corpusTokens = 0;
  int64_t corpusDocs = 0;
  rt::data::PipelineConfig pipe;
  rt::data::BatchStream stream;
  std::optional<rt::train::StepState> state;
  std::string fingerprint; // of the global shape: a checkpoint is the same whatever N wrote it
  int64_t step = 0;        // optimizer steps done
  uint64_t dropoutSeed = 0;
  rt::train::MetricsWriter metrics;
  // Held-out evaluation (--eval-data), every evalEvery steps.
  std::optional<Evaluator> evaluator;
  int64_t evalEvery = 0;
  // --tensorboard (rank 0): the scalars as TensorBoard events.
  std::unique_ptr<rt::train::TensorBoardWriter> tensorboard;
  rt::ExecOptions exec;
  rt::dist::GradReducer reducer;
  std::unique_ptr<rt::dist::NcclComm> nccl; // outlives the steps, not the executor
  const rt::train::FaultHooks faults = rt::train::FaultHooks::fromEnvironment();
  // Per prepared step: every rank's predicted tokens (Σ target_mask), the
  // weights of its loss and gradient in the global batch's.
  std::vector<double> counts, nextCounts;
  // Gradient accumulation: the process's rows as micro.size micro-batches
  // (micro.size 1: one batch); what one that only accumulates carries (its
  // memory and the gradients) and keeps (the parameters and moments it
  // reads), what the last carries (all the state, the sum too); the step's batch (this process's rows) and token count; each
  // micro-batch's memory before its first run, its tokens and loss; the
  // executor's kept memory is micro-batch liveSet's (-1: none yet).
  rt::dist::RowSplit micro;
  std::vector<std::pair<std::string, std::string>> microCarry, lastCarry;
  std::vector<std::string> memNames, gradAccNames, keepNames;
  rt::TensorMap processBatch;
  double processCount = 0;
  std::vector<rt::TensorMap> microStart;
  std::vector<double> microCounts, microLosses;
  int liveSet = -1;
  int64_t asideBytes = 0;   // every micro-batch's memory
  bool asideOnHost = false; // set aside in host RAM (a GPU's step needs its memory)
  // The loop's clock and progress.
  int64_t firstStep = 0, lastCheckpointStep = -1, logEvery = 1, tokensPerStep = 0;
  Clock::time_point runStart, intervalStart;
  int64_t intervalSteps = 0;
  // The next step's inputs, built while this one ran, and where a
  // checkpoint after this step resumes.
  bool inputsReady = false;
  rt::Status prepared = rt::Status::ok();
  std::string positionBeforePrefetch;
  std::optional<StopSignals> stopSignals;
};

int RankRun::resolveSpec() {
  std::string error;
  if (!loadSpec(args.spec, spec, error))
    return failDiagnostics(error);
  if (spec.fromHFConfig)
    return fail(args.spec + ": training needs a TOML spec with [data] and [train] "
                            "sections (a config.json has no batch shape; a TOML spec "
                            "can take its [model] from it: hf_config = \"config.json\")");
  // The command line's settings are the spec's: spec.toml records them and
  // a resume compares them.
  if (args.keepAccents)
    spec.keepAccents = true;
  if (!args.precision.empty())
    spec.precision = args.precision; // checked by applyPrecision in openStep
  if (!args.device.empty())
    spec.device = args.device; // checked by openExecutor in openStep
  if (args.microBatch > 0)
    spec.microBatchSize = args.microBatch; // checked by splitIntoMicroBatches
  if (!args.overrides.empty() && !args.resume)
    return fail("--override takes a changed setting of the run a --resume continues: a "
                "fresh run takes its spec as it is");
  if (args.steps < 0)
    return fail(fmt::format("--steps {}: the number of steps to train to must be above 0",
                            args.steps));
  totalSteps = args.steps > 0 ? args.steps : spec.trainSteps;
  if (totalSteps <= 0)
    return fail(args.spec + ": no step count: set train_steps in [train] or pass --steps");
  if (spec.trainSteps <= 0)
    spec.trainSteps = totalSteps; // the lr schedule decays over the run
  // Past train_steps the schedule has ended: the steps would all train at
  // its floor (0 by default).
  if (totalSteps > spec.trainSteps)
    return fail(fmt::format(
        "--steps {} goes past train_steps = {} of {}, where the learning-rate schedule "
        "ends (from there on the learning rate stays at learning_rate * min_lr_ratio = {}): "
        "to train longer, raise train_steps in the spec{}",
        totalSteps, spec.trainSteps, args.spec, spec.learningRate * spec.minLrRatio,
        args.resume ? " and pass --override train_steps with --resume" : ""));
  return 0;
}

int RankRun::openStep(const StepCompiler &compile) {
  std::string error;
  // The device first: a missing GPU fails before anything is written.
  // One GPU per rank on a node: the rank's local index picks it (or the
  // launcher bound one to each). Rank 0 alone says which device (the first
  // exchange refuses ranks whose differ).
  if (!openExecutor(spec.device, args.noKernelCache, args.threads, executor, error,
                    parallel ? rt::dist::launcherLocalRank() : -1, lead))
    return fail(error);
  StepShape precisionShape = stepShapeFromSpec(spec); // and bf16 needs a device
  if (!applyPrecision(args.precision, executor, precisionShape, error))
    return fail(error);
  if (rt::Status st = RowSplit::make(world.rank(), world.size(), spec.trainBatchSize,
                                     spec.biData, split);
      !st)
    return fail(st.message());
  if (parallel && !args.dumpBatches.empty())
    return fail("--dump-batches writes the batches of a plain run: run it in one process, "
                "without mpirun or --data-parallel");
  // The compiled training step, and whether it fits: before the run
  // directory, the tokenizer, the corpus or the parameters take any space,
  // memory or time.
  globalShape = stepShapeFromSpec(spec);
  if (globalShape.reuseLen <= 0)
    globalShape.reuseLen = globalShape.seqLen;
  globalShape.precision = precisionShape.precision;
  shape = globalShape;
  shape.batch = split.localBatch;
  if (rt::Status st = splitIntoMicroBatches(spec.microBatchSize); !st)
    return fail(st.message());
  if (micro.size > 1 && !args.dumpBatches.empty())
    return fail("--dump-batches writes the batches of a plain run: run it without gradient "
                "accumulation (micro_batch_size, --micro-batch)");
  if (!compile(spec, shape, StepKind::Train, plan, error, nullptr, deviceTarget(executor))) {
    std::cerr << error;
    return 1;
  }
  // The checkpoint's snapshot holds a second copy of the parameters and
  // moments while it is written.
  memoryCheck = args.memory;
  memoryCheck.ranks = world.size();
  memoryCheck.processRows = split.localBatch;
  if (parallel && executor.kind() != rt::dev::DeviceKind::Cuda)
    memoryCheck.sharers = rt::dist::launcherLocalSize();
  if (int rc = placeMicroBatchMemory())
    return rc;
  if (!checkStepFits(spec, shape, StepKind::Train, plan, executor, /*keepsCopy=*/true,
                     memoryCheck, compile, error))
    return fail(error);
  if (!severalRanks)
    return 0;
  // The first exchange: the same settings everywhere (a rank given other
  // flags would train another run, or wait in a collective the others
  // never enter), then the same step on the same kind of device, ...
  if (rt::Status st = rt::dist::checkSameSettings(world, runSettings(spec, args, totalSteps));
      !st)
    return fail(st.message());
  if (rt::Status st = rt::dist::checkSameSetup(
          world, fmt::format("{}, batch {} of {}, {}, {} plan steps, {} buffers",
                             rt::dev::deviceKindName(executor.kind()), shape.batch,
                             globalShape.batch, precisionName(shape.precision),
                             plan.steps.size(), plan.buffers.size()));
      !st)
    return fail(st.message());
  // ... and each on a device of its own (NCCL ranks cannot share a GPU).
  if (rt::Status st = rt::dist::checkOwnDevices(
          world, executor.device() ? executor.device()->physicalId() : std::string());
      !st)
    return fail(st.message());
  return 0;
}

int RankRun::openRunDirectory() {
  outDir = args.outDir.empty() ? "runs/" + fs::path(args.spec).stem().string() : args.outDir;
  ckptPath = (fs::path(outDir) / "checkpoint.safetensors").string();
  metricsPath = (fs::path(outDir) / "metrics.jsonl").string();
  specPath = (fs::path(outDir) / "spec.toml").string();
  std::error_code ec;
  const bool created = fs::create_directories(outDir, ec);
  if (ec)
    return fail(fmt::format("cannot create the run directory '{}': {}", outDir, ec.message()));
  removeIfEmpty.emplace(lead && created ? outDir : std::string());
  // The writer finds nothing it writes there that is not a regular file.
  if (lead) {
    if (rt::Status st = rt::train::RunLock::acquire(outDir, runLock); !st)
      return fail(st.message());
    if (rt::Status st = rt::train::checkRunFiles(
            outDir, {"checkpoint.safetensors", "metrics.jsonl", "spec.toml", "spiece.model",
                     "spiece.vocab", "loss.png"});
        !st)
      return fail(st.message());
  }
  if (args.resume && !fs::exists(ckptPath))
    return fail(fmt::format("--resume: there is no checkpoint to resume in {} "
                            "(expected {})", outDir, ckptPath));
  if (!args.resume && fs::exists(ckptPath))
    return fail(fmt::format("{} already holds a checkpoint ({}); pass --resume to "
                            "continue it or choose another --out",
                            outDir, ckptPath));
  if (!args.dumpBatches.empty()) {
    fs::create_directories(args.dumpBatches, ec);
    if (ec)
      return fail(fmt::format("cannot create '{}': {}", args.dumpBatches, ec.message()));
  }
  if (args.resume && !args.initFrom.empty())
    return fail("--resume and --init-from exclude each other (the checkpoint "
                "already holds the parameters)");
  // The run's spec, resolved (hf_config read, the command line's settings
  // applied), is kept as spec.toml: export reads it, and a resume trains the
  // run it resumes (ResumeSettings.h): a setting that differs from the
  // run's is refused unless --override names it. The changes taken are
  // recorded once the checkpoint has loaded (openMetrics).
  if (args.resume && fs::exists(specPath)) {
    ModelSpec kept;
    std::string error;
    if (!loadSpec(specPath, kept, error))
      return failDiagnostics(error);
    if (rt::Status st =
            checkResumeSettings(kept, spec, args.overrides, specPath, args.spec, overridden);
        !st)
      return fail(st.message());
  } else if (args.resume) {
    if (!args.overrides.empty())
      return fail(fmt::format("--override: {} has no spec.toml (a run from before xlnetc "
                              "recorded its spec), so no setting of the run is known to "
                              "override",
                              outDir));
    if (lead)
      std::cerr << fmt::format(
          "xlnetc: warning: {} has no spec.toml (a run from before xlnetc recorded its "
          "spec): the settings of this resume cannot be checked against the run's; {} "
          "records them from now on\n",
          outDir, specPath);
  }
  return 0;
}

int RankRun::openData() {
  if (args.data.empty())
    return fail("no corpus: pass --data FILE (a text or ids corpus) or DIR (xlnetc "
                "prepare-data's)");
  setPipeline();
  if (rt::data::isPreparedDataDir(args.data))
    return mapPreparedData();
  return readCorpusIntoMemory();
}

void RankRun::setPipeline() {
  // Every rank draws the global batch.
  pipe = pipelineFor(spec, shape, globalShape.batch, uint64_t(spec.seed));
}

std::string RankRun::tokenizerPath(const std::string &fallback) const {
  const fs::path kept = fs::path(outDir) / "spiece.model";
  if (!args.tokenizer.empty())
    return args.tokenizer;
  if (!fallback.empty() && !(args.resume && fs::exists(kept)))
    return fallback;
  return ""; // prepareTokenizer's choice: the run's own, else one trained
}

int RankRun::openTokenizer(const std::string &fallback) {
  // Rank 0 alone prepares (maybe trains) the tokenizer; the others load
  // what it kept once it has.
  if (lead) {
    TrainArgs chosen = args;
    chosen.tokenizer = tokenizerPath(fallback);
    if (rt::Status st = prepareTokenizer(chosen, outDir, spec, tokenizer); !st)
      return fail(st.message());
  }
  if (severalRanks) {
    int ready = 1;
    if (rt::Status st = world.broadcast(&ready, sizeof ready, 0); !st)
      return fail(st.message());
    if (!lead && !rt::data::isIdsCorpusFile(args.data)) {
      tokenizer = std::make_unique<rt::data::Tokenizer>();
      const std::string path = args.tokenizer.empty()
                                   ? (fs::path(outDir) / "spiece.model").string()
                                   : args.tokenizer;
      if (rt::Status st = rt::data::Tokenizer::load(path, *tokenizer); !st)
        return fail(st.message());
    }
  }
  if (lead && (!args.resume || !fs::exists(specPath)))
    if (rt::Status st = writeRunSpec(
            specPath, spec,
            fmt::format("the spec of this run (from {}), written by xlnetc train; xlnetc "
                        "export reads it",
                        args.spec));
        !st)
      return fail(st.message());
  return 0;
}

int RankRun::readCorpusIntoMemory() {
  if (rt::Status st = rt::checkInputFile(args.data); !st)
    return fail(fmt::format("corpus {}", st.message()));
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(args.data, ec);
  if (bytes == 0)
    return fail(fmt::format("corpus {} is empty", args.data));
  if (lead && bytes >= kPrepareDataHint)
    std::cout << fmt::format(
        "note: {} ({:.0f} MiB) is tokenized into memory at every start, on every rank; "
        "xlnetc prepare-data tokenizes it once, and train --data DIR memory-maps the result "
        "(docs/DataPipeline.md \"Prepared data\")\n",
        args.data, double(bytes) / (1 << 20));
  rt::data::CorpusOptions corpusOptions;
  corpusOptions.keepAccents = spec.keepAccents;
  // The corpus is read whole: it is counted against what the memory check
  // leaves after the step. Every rank on a node holds a corpus in the
  // node's RAM, on a GPU too.
  MemoryCheckArgs corpusCheck = memoryCheck;
  if (parallel)
    corpusCheck.sharers = rt::dist::launcherLocalSize();
  std::string error;
  if (!pipelineMemoryBudget(plan, executor, /*keepsCopy=*/true, corpusCheck,
                            corpusOptions.maxBytes, corpusOptions.maxBytesWhat, error))
    return fail(error);
  if (int rc = openTokenizer(""); rc != 0)
    return rc;
  rt::data::Corpus corpus;
  if (rt::Status st = rt::data::readCorpus(args.data, tokenizer.get(), spec.nToken,
                                           corpusOptions, corpus);
      !st)
    return fail(st.message());
  corpusTokens = corpus.tokens.size();
  corpusDocs = corpus.numDocuments;
  if (rt::Status st = rt::data::BatchStream::create(std::move(corpus), pipe, stream); !st)
    return fail(st.message().rfind(args.data + ":", 0) == 0 // it names the corpus
                    ? st.message()
                    : args.data + ": " + st.message());
  return 0;
}

int RankRun::mapPreparedData() {
  rt::data::PreparedData prepared;
  if (rt::Status st = rt::data::openPreparedData(args.data, prepared); !st)
    return fail(st.message());
  // The text rules it was made with must be this run's.
  if (prepared.corpus.keepAccents != spec.keepAccents || !prepared.corpus.useEod ||
      prepared.corpus.uncased)
    return fail(fmt::format(
        "{} was prepared with keep_accents = {} and use_eod = {}; this run reads text with "
        "keep_accents = {} and use_eod = true: prepare it again with {}",
        args.data, prepared.corpus.keepAccents, prepared.corpus.useEod, spec.keepAccents,
        spec.keepAccents ? "--keep-accents" : "neither --keep-accents nor --no-eod"));
  // The tokenizer openTokenizer will take, checked before anything is
  // written: --tokenizer, the run's own on a resume, else the directory's.
  const std::string own = (fs::path(args.data) / rt::data::kPreparedTokenizer).string();
  std::string chosen = tokenizerPath(own);
  if (chosen.empty()) // a resume: the run's own
    chosen = (fs::path(outDir) / "spiece.model").string();
  // The directory's own model is data inside it: read without following a
  // link out of it.
  std::string sha;
  if (chosen == own) {
    std::string bytes;
    if (rt::Status st =
            rt::readFileInside(args.data, rt::data::kPreparedTokenizer, bytes);
        !st)
      return fail(st.message());
    sha = rt::Sha256::hexHash(bytes);
  } else if (rt::Status st = rt::data::fileSha256(chosen, sha); !st) {
    return fail(st.message());
  }
  if (sha != prepared.tokenizerSha256)
    return fail(fmt::format(
        "{} is not the tokenizer {} was prepared with (their SHA-256 differ): its ids would "
        "mean other pieces; use {} (the default without --tokenizer), or prepare the data "
        "again with this tokenizer",
        chosen, args.data, own));
  if (int rc = openTokenizer(own); rc != 0)
    return rc;
  rt::data::StreamSource source = std::move(prepared.source);
  source.startPiece = tokenizer->startPieceTable();
  // Ids are checked against the model's vocabulary, not the manifest's
  // word for it.
  source.vocabSize = tokenizer->vocabSize();
  corpusTokens = size_t(prepared.counts.tokens);
  corpusDocs = prepared.counts.documents;
  if (rt::Status st = rt::data::BatchStream::create(std::move(source), pipe, stream); !st)
    return fail(st.message().rfind(args.data + ":", 0) == 0 ? st.message()
                                                            : args.data + ": " + st.message());
  return 0;
}

int RankRun::loadState() {
  state.emplace(planParamShapes(plan), spec.nLayer, spec.memLen > 0);
  fingerprint = specFingerprint(spec, globalShape);
  dropoutSeed = uint64_t(spec.seed);
  if (args.resume) {
    rt::train::TrainState ckpt;
    if (rt::Status st = rt::train::loadCheckpoint(ckptPath, state->shapes(), fingerprint, ckpt,
                                                  args.spec);
        !st)
      return fail(st.message());
    if (rt::Status st = stream.restorePosition(ckpt.dataPosition); !st)
      return fail(ckptPath + ": cannot restore the data position: " + st.message());
    step = ckpt.step;
    if (step > totalSteps)
      return fail(fmt::format("{} is below the step the checkpoint {} is at ({}): a resume "
                              "trains on from there, up to {}",
                              args.steps > 0 ? fmt::format("--steps {}", args.steps)
                                             : fmt::format("train_steps = {}", spec.trainSteps),
                              ckptPath, step, args.steps > 0 ? "--steps" : "train_steps"));
    dropoutSeed = std::strtoull(ckpt.rngState.c_str(), nullptr, 10);
    if (rt::Status st = state->restore(std::move(ckpt),
                                       [&](const rt::Tensor &global, rt::Tensor &local) {
                                         return split.slice(global, 1, local);
                                       });
        !st)
      return fail(ckptPath + ": " + st.message());
    std::cout << fmt::format("resumed {} at step {}\n", ckptPath, step);
  } else {
    rt::TensorMap params;
    if (!args.initFrom.empty()) {
      std::string error;
      if (!loadModelWeights(spec, state->shapes(), args.initFrom, "--init-from", params,
                            error))
        return fail(error);
      std::cout << "initialised from " << args.initFrom << "\n";
    } else {
      params = rt::train::initialParameters(plan, spec.initRange, uint64_t(spec.seed));
    }
    state->startFresh(std::move(params), {spec.memLen, split.localBatch, spec.dModel});
  }
  if (rt::Status st = splitStartingState(); !st)
    return fail(st.message());
  if (!severalRanks)
    return 0;
  // The second exchange: the same batches and the same starting state
  // everywhere (a corpus, tokenizer or checkpoint that differs between
  // nodes would otherwise go unnoticed until the parameters drift apart).
  rt::TensorMap start; // the parameters, shared rather than copied
  for (const auto &[name, paramShape] : state->shapes()) {
    rt::Tensor &t = state->bindings().at(name);
    start.emplace(name, rt::Tensor::view(t.dtype, t.shape, t.bytes()));
  }
  if (rt::Status st = rt::dist::checkSameStart(
          world, fmt::format("corpus {:016x} at step {}, parameters {:016x}",
                             stream.fingerprint(), step, rt::dist::hashTensors(start)));
      !st)
    return fail(st.message());
  return 0;
}

int RankRun::openMetrics() {
  if (!lead)
    return 0;
  if (rt::Status st = metrics.open(metricsPath, args.resume ? std::optional<int64_t>(step)
                                                            : std::nullopt);
      !st)
    return fail(st.message());
  if (overridden.empty())
    return 0;
  // The settings this resume changed (--override): first in the metrics log,
  // at the step they take effect after, then in spec.toml, so that export
  // and the next resume read the values the run trains with from here on.
  std::string keys;
  for (const SpecChange &c : overridden) {
    std::cout << fmt::format("override from step {}: {} {} -> {}\n", step + 1, c.key,
                             c.oldValue, c.newValue);
    if (rt::Status st = metrics.logOverride({step, c.key, c.oldValue, c.newValue}); !st)
      return fail(st.message());
    keys += (keys.empty() ? "" : ", ") + c.key;
  }
  if (rt::Status st = writeRunSpec(
          specPath, spec,
          fmt::format("the spec of this run (from {}; {} changed by --override after step "
                      "{}), written by xlnetc train; xlnetc export reads it",
                      args.spec, keys, step));
      !st)
    return fail(st.message());
  return 0;
}

int RankRun::prepareLoop() {
  tokensPerStep = globalShape.batch * globalShape.seqLen;
  logEvery = args.logEvery > 0 ? args.logEvery : std::max<int64_t>(1, totalSteps / 50);
  std::cout << fmt::format(
      "xlnetc train {}: {} layers, d_model {}, {} params; batch {} x seq {} "
      "(mem {}, reuse {}), {} steps\n"
      "  corpus {}: {} tokens, {} documents, {} batches per epoch; tokenizer {}\n"
      "  run directory {} (checkpoint every {}, metrics {})\n",
      args.spec, spec.nLayer, spec.dModel, state->numParams(), globalShape.batch,
      shape.seqLen, spec.memLen, shape.reuseLen, totalSteps, args.data, corpusTokens,
      corpusDocs, stream.stepsPerEpoch(),
      tokenizer ? tokenizer->path() : std::string("(ids corpus)"), outDir,
      args.checkpointEvery > 0 ? std::to_string(args.checkpointEvery) : "run (end only)",
      metricsPath);
  if (parallel)
    std::cout << (severalRanks
                      ? fmt::format("  data parallel: {}, {} rows each; parameters compared "
                                    "every {} steps\n",
                                    world.description(), split.localBatch, args.checkRanksEvery)
                      : fmt::format("  data parallel: {} (--data-parallel), {} rows\n",
                                    world.description(), split.localBatch));
  if (micro.size > 1)
    std::cout << fmt::format("  gradient accumulation: {} micro-batches of {} rows, each with "
                             "its own memory, one update per step{}\n",
                             micro.size, micro.localBatch,
                             asideOnHost ? fmt::format(" (the memory waits in host RAM, {})",
                                                       rt::formatBytes(asideBytes))
                                         : "");
  if (evaluator)
    std::cout << fmt::format("  {}, every {} steps and after the last\n",
                             evaluator->describe(), evalEvery);
  const std::string tbDir = args.tensorboard.empty() ? spec.tensorboard : args.tensorboard;
  if (lead && !tbDir.empty()) {
    if (rt::Status st = rt::train::TensorBoardWriter::open(tbDir, tensorboard); !st)
      return fail(st.message());
    std::cout << fmt::format("  TensorBoard events: {}\n", tensorboard->path());
  }
  // The parameters, moments and memory go to the executor with the first
  // step and stay there (on the device for emu and cuda).
  executor.setCarry(state->carry());
  exec.threads = args.threads;
  // The step's outputs the loop reads; the executors skip the rest (a bf16
  // step's f32 logits and hidden) and the device ones copy back nothing
  // else.
  exec.wanted = {"loss", "grad_norm", "lr"};
  // From here on every wait for the other ranks is part of training: a rank
  // that waits too long ends the job (the setup above, rank 0's tokenizer
  // training above all, may take as long as it takes).
  world.setTimeout(args.rankTimeout);
  counts.assign(size_t(world.size()), 1.0);
  nextCounts = counts;
  if (!parallel)
    return 0;
  // Data parallel: the gradients are all-reduced before clipping and Adam.
  if (rt::Status st = rt::dist::GradReducer::create(
          plan, world, int64_t(args.bucketMiB * 1048576.0), reducer);
      !st)
    return fail(st.message());
  if (plan.device && executor.kind() != rt::dev::DeviceKind::Host)
    if (rt::Status st = reducer.useDeviceProgram(*plan.device); !st)
      return fail(st.message());
  // On GPUs the buckets are reduced in device memory by NCCL; joining waits
  // for every rank.
  if (executor.kind() == rt::dev::DeviceKind::Cuda) {
    rt::dist::WaitingForRanks waiting(world, "joining NCCL");
    if (rt::Status st = rt::dist::NcclComm::create(world, nccl); !st)
      return fail(st.message());
    reducer.useNccl(nccl.get());
  }
  exec.observer = &reducer;
  std::cout << fmt::format("  gradient all-reduce: {} bucket{} of up to {} MiB, each as the "
                           "backward finishes it\n",
                           reducer.buckets().size(), reducer.buckets().size() == 1 ? "" : "s",
                           args.bucketMiB);
  return 0;
}

rt::Status RankRun::prepareInputs(int64_t next) {
  rt::data::Batch batch;
  XLNETC_RETURN_IF_ERROR(stream.next(batch));
  if (parallel) { // this rank's rows, and every rank's token count
    for (auto &[name, t] : batch.tensors)
      if (!rt::train::names::hasPrefix(name, "raw.")) {
        rt::Tensor mine;
        XLNETC_RETURN_IF_ERROR(split.slice(t, 0, mine).withPrefix(name + ": "));
        t = std::move(mine);
      }
    const double count = rt::train::predictedTokens(batch.tensors.at("target_mask"));
    XLNETC_RETURN_IF_ERROR(
        rt::dist::gatherDoubles(world, Exchange::TokenCounts, count, nextCounts));
  }
  if (!args.dumpBatches.empty()) {
    rt::data::Batch dumped = batch;
    for (int64_t l = 0; state->hasMems() && l < spec.nLayer; ++l) {
      const std::string key = rt::train::names::mems(l);
      XLNETC_RETURN_IF_ERROR(state->get(executor, key, dumped.tensors[key]));
    }
    std::string path =
        (fs::path(args.dumpBatches) / fmt::format("step-{:06d}.safetensors", next + 1)).string();
    XLNETC_RETURN_IF_ERROR(rt::data::writeBatch(path, dumped, pipe));
  }
  std::vector<std::string> names;
  for (const auto &[name, t] : batch.tensors)
    if (!rt::train::names::hasPrefix(name, "raw."))
      names.push_back(name);
  state->bindInputs(std::move(batch.tensors), next);
  XLNETC_RETURN_IF_ERROR(
      faults.perturbInputs(*state, executor, world.rank(), next + 1, spec.nToken));
  if (micro.size <= 1)
    return rt::Status::ok();
  // Gradient accumulation: the batch (as the fault hooks left it) is sliced
  // into micro-batches as they run (bindMicroBatch).
  processBatch.clear();
  for (const std::string &name : names) {
    processBatch[name] = std::move(state->bindings().at(name));
    state->bindings().erase(name);
  }
  processCount = rt::train::predictedTokens(processBatch.at("target_mask"));
  return rt::Status::ok();
}

rt::Status RankRun::splitIntoMicroBatches(int64_t rows) {
  const int64_t all = split.localBatch;
  if (rows <= 0 || rows == all)
    return rt::dist::RowSplit::make(0, 1, all, spec.biData, micro);
  const std::string per = severalRanks ? " per process" : "";
  if (rows > all)
    return rt::Status::error(fmt::format(
        "micro_batch_size {} is more than the {} rows{} of train_batch_size {}: a micro-batch "
        "is a part of a process's rows",
        rows, all, per, spec.trainBatchSize));
  if (all % rows != 0 || (spec.biData && rows % 2 != 0))
    return rt::Status::error(fmt::format(
        "micro_batch_size {} does not divide the {} rows{} of train_batch_size {} into equal "
        "micro-batches{}",
        rows, all, per, spec.trainBatchSize,
        spec.biData ? " of an even number of rows (bi_data: half forward, half backward)" : ""));
  XLNETC_RETURN_IF_ERROR(
      rt::dist::RowSplit::make(0, int(all / rows), all, spec.biData, micro));
  shape.batch = rows;
  shape.accumulate = true;
  return rt::Status::ok();
}

int RankRun::placeMicroBatchMemory() {
  if (micro.size <= 1)
    return 0;
  // Every micro-batch's memory, set aside beside the step: in device memory,
  // or on a GPU in host RAM when asked or when it does not fit there.
  asideBytes = memoryBytesOfRows(spec, split.localBatch);
  // (On emu, whose device memory is host RAM too, "host" takes the same
  // path as on a GPU: copies to and from page-locked memory.)
  const bool device = executor.kind() != rt::dev::DeviceKind::Host;
  asideOnHost = device && (args.microMemory == "host" ||
                        (args.microMemory == "auto" &&
                         !stepFits(plan, executor, /*keepsCopy=*/true, memoryCheck, asideBytes)));
  memoryCheck.asideBytes = asideOnHost ? 0 : asideBytes;
  if (!asideOnHost)
    return 0;
  int64_t ram = 0;
  if (rt::Status st = rt::hostMemoryAvailable(ram); st && !memoryCheck.skip && ram < asideBytes)
    return fail(fmt::format("the memory of every micro-batch ({}) does not fit the available "
                            "RAM ({}) to wait in between its runs: use more processes or a "
                            "smaller mem_len; --no-memory-check skips this check",
                            rt::formatBytes(asideBytes), rt::formatBytes(ram)));
  executor.setAsideOnHost(true);
  return 0;
}

rt::Status RankRun::splitStartingState() {
  namespace names = rt::train::names;
  if (micro.size <= 1)
    return rt::Status::ok();
  microStart.assign(size_t(micro.size), {});
  microCounts.assign(size_t(micro.size), 0.0);
  microLosses.assign(size_t(micro.size), 0.0);
  // From the state's carry: the memory moves on from micro-batch to
  // micro-batch, the parameters and moments stay (kept); the gradient sum
  // moves on too, in the last one as well (zeroed after it, the next
  // step's start: it may have been summed in place).
  memNames.clear();
  microCarry.clear();
  keepNames.clear();
  for (const auto &[out, in] : state->carry()) {
    if (!names::hasPrefix(in, names::kMems)) {
      keepNames.push_back(in);
      continue;
    }
    memNames.push_back(in);
    microCarry.emplace_back(out, in);
    rt::Tensor whole = std::move(state->bindings().at(in));
    state->bindings().erase(in);
    for (int k = 0; k < micro.size; ++k) {
      rt::dist::RowSplit part = micro;
      part.rank = k;
      XLNETC_RETURN_IF_ERROR(part.slice(whole, 1, microStart[size_t(k)][in]).withPrefix(in + ": "));
    }
  }
  lastCarry = state->carry();
  gradAccNames.clear();
  for (const auto &[param, paramShape] : state->shapes()) {
    gradAccNames.push_back(names::gradAcc(param));
    for (auto *pairs : {&microCarry, &lastCarry})
      pairs->emplace_back(names::grad(param), gradAccNames.back());
    state->bind(gradAccNames.back(), rt::Tensor::zeros(rt::DType::F32, paramShape));
  }
  return rt::Status::ok();
}

rt::Status RankRun::bindMicroBatch(int k) {
  rt::dist::RowSplit part = micro;
  part.rank = k;
  for (const auto &[name, t] : processBatch) {
    rt::Tensor mine;
    XLNETC_RETURN_IF_ERROR(part.slice(t, 0, mine).withPrefix(name + ": "));
    if (name == "target_mask")
      microCounts[size_t(k)] = rt::train::predictedTokens(mine);
    state->bind(name, std::move(mine));
  }
  state->bind(std::string(rt::train::names::kLossCount),
              rt::Tensor::fromF32({}, {float(processCount)}));
  // Its memory: the executor sets the last micro-batch's aside and puts
  // this one's in place; before its first run, its starting value.
  if (liveSet >= 0 && liveSet != k)
    XLNETC_RETURN_IF_ERROR(executor.switchKeptSet(memNames, liveSet, k));
  liveSet = k;
  for (auto &[name, t] : microStart[size_t(k)])
    state->bind(name, std::move(t));
  microStart[size_t(k)].clear();
  return rt::Status::ok();
}

rt::Status RankRun::runAccumulating() {
  // Forward and backward only: the loss and what is carried (the memory,
  // the summed gradients); the parameters and moments stay where they are.
  rt::ExecOptions o = exec;
  o.observer = nullptr;
  o.wanted = {"loss"};
  o.keep = keepNames;
  for (int k = 0; k + 1 < micro.size; ++k) {
    XLNETC_RETURN_IF_ERROR(bindMicroBatch(k));
    setDraws(k, o);
    XLNETC_RETURN_IF_ERROR(executor.start(plan, state->bindings(), o, &microCarry));
    state->handedToExecutor();
    for (const std::string &name : gradAccNames) // the sum lives in the executor now
      state->bindings().erase(name);
    rt::TensorMap outputs;
    XLNETC_RETURN_IF_ERROR(executor.finish(outputs));
    microLosses[size_t(k)] = outputs.at("loss").f32()[0];
  }
  return rt::Status::ok();
}

rt::Status RankRun::endMicroBatches(double &loss) {
  microLosses.back() = loss;
  double weighted = 0, tokens = 0;
  for (size_t k = 0; k < microLosses.size(); ++k)
    if (microCounts[k] > 0) {
      weighted += microLosses[k] * microCounts[k];
      tokens += microCounts[k];
    }
  loss = tokens > 0 ? weighted / tokens : std::nan("");
  for (const std::string &name : gradAccNames)
    XLNETC_RETURN_IF_ERROR(executor.zeroKept(name));
  return rt::Status::ok();
}

/// A step's TensorBoard scalars: the metrics line's, and the memory.
std::vector<std::pair<std::string, double>> RankRun::stepScalars(
    const rt::train::StepMetrics &m) const {
  std::vector<std::pair<std::string, double>> s = {
      {"train/loss", m.loss},
      {"train/ppl", rt::train::perplexity(m.loss)},
      {"train/bits_per_token", rt::train::bitsPerToken(m.loss)},
      {"train/lr", m.lr},
      {"train/grad_norm", m.gradNorm},
      {"train/tokens_per_s", m.tokensPerSec}};
  struct rusage usage {};
  if (::getrusage(RUSAGE_SELF, &usage) == 0) // ru_maxrss: KiB
    s.emplace_back("memory/host_peak_rss_mib", double(usage.ru_maxrss) / 1024.0);
  if (rt::dev::Device *device = executor.device()) {
    size_t used = 0;
    if (device->memoryInUse(used))
      s.emplace_back("memory/device_in_use_mib", double(used) / 1048576.0);
  }
  return s;
}

int RankRun::openEval(const StepCompiler &compile) {
  if (args.evalData.empty())
    return 0;
  EvalSetup setup;
  setup.spec = spec;
  setup.shape = shape;
  setup.shape.batch = micro.localBatch;
  setup.shape.accumulate = false;
  setup.rank = split;
  setup.part = micro;
  setup.data = args.evalData;
  setup.tokenizer = tokenizer.get();
  setup.batches = args.evalBatches;
  setup.device = spec.device;
  setup.threads = args.threads;
  setup.noKernelCache = args.noKernelCache;
  setup.localRank = parallel ? rt::dist::launcherLocalRank() : -1;
  std::string error;
  evaluator.emplace();
  if (!evaluator->open(setup, compile, error))
    return error.find('\n') != std::string::npos // the compiler's diagnostics
               ? failDiagnostics(fmt::format("xlnetc: error: --eval-data {}: its forward "
                                             "step (dropout off):\n{}",
                                             args.evalData, error))
               : fail(fmt::format("--eval-data {}: {}", args.evalData, error));
  evalEvery = args.evalEvery > 0 ? args.evalEvery : std::max<int64_t>(1, totalSteps / 10);
  return 0;
}

int RankRun::evaluateIfDue() {
  if (!evaluator || (step % evalEvery != 0 && step != totalSteps))
    return 0;
  rt::TensorMap params;
  if (rt::Status st = state->parameters(executor, params); !st)
    return fail(st.message());
  EvalResult r;
  if (rt::Status st = evaluator->run(params, world, r); !st)
    return fail(fmt::format("evaluation after step {}: {}", step, st.message()));
  if (!lead)
    return 0;
  rt::train::EvalMetrics m;
  m.step = step;
  m.loss = r.loss;
  m.tokens = r.tokens;
  m.batches = r.batches;
  m.seconds = r.seconds;
  if (rt::Status st = metrics.logEval(m); !st)
    return fail(st.message());
  if (tensorboard)
    if (rt::Status st = tensorboard->write(
            step, {{"eval/loss", m.loss},
                   {"eval/ppl", rt::train::perplexity(m.loss)},
                   {"eval/bits_per_token", rt::train::bitsPerToken(m.loss)}});
        !st)
      return fail(st.message());
  std::cout << rt::train::formatEval(m) << std::endl;
  return 0;
}

void RankRun::setDraws(int k, rt::ExecOptions &o) const {
  o.seed = rt::train::stepSeed(dropoutSeed, step);
  rt::dist::RowSplit part = micro;
  part.rank = k;
  o.rows = rt::dist::dropoutRows(split, part);
}

rt::Status RankRun::processMems(int64_t l, rt::Tensor &out) {
  const std::string name = rt::train::names::mems(l);
  if (micro.size <= 1)
    return state->get(executor, name, out);
  out = rt::Tensor::zeros(rt::DType::F32, {spec.memLen, split.localBatch, spec.dModel});
  for (int k = 0; k < micro.size; ++k) {
    rt::Tensor part;
    if (auto it = microStart[size_t(k)].find(name); it != microStart[size_t(k)].end())
      part = it->second; // not run yet
    else if (k == liveSet)
      XLNETC_RETURN_IF_ERROR(state->get(executor, name, part));
    else
      XLNETC_RETURN_IF_ERROR(executor.fetchFromSet(name, k, part));
    rt::dist::RowSplit at = micro;
    at.rank = k;
    XLNETC_RETURN_IF_ERROR(at.place(part, 1, out));
  }
  return rt::Status::ok();
}

rt::Status RankRun::saveCheckpoint(const std::string *position) {
  rt::train::TrainState snap;
  const bool hasMems = state->hasMems();
  if (!lead) { // its rows of the memory to rank 0, one layer at a time
    for (int64_t l = 0; hasMems && l < spec.nLayer; ++l) {
      rt::Tensor mine, global;
      XLNETC_RETURN_IF_ERROR(processMems(l, mine));
      XLNETC_RETURN_IF_ERROR(split.gather(world, mine, 1, global));
    }
    return rt::Status::ok();
  }
  XLNETC_RETURN_IF_ERROR(state->snapshot(executor, snap));
  for (int64_t l = 0; micro.size > 1 && hasMems && l < spec.nLayer; ++l)
    XLNETC_RETURN_IF_ERROR(processMems(l, snap.mems.at(rt::train::names::mems(l))));
  // Every rank's rows of the memory, in the global order (in layer order,
  // as the other ranks send them).
  for (int64_t l = 0; parallel && hasMems && l < spec.nLayer; ++l) {
    rt::Tensor &t = snap.mems.at(rt::train::names::mems(l));
    rt::Tensor global;
    XLNETC_RETURN_IF_ERROR(split.gather(world, t, 1, global));
    t = std::move(global);
  }
  snap.step = step;
  snap.rngState = std::to_string(dropoutSeed);
  snap.dataPosition = position ? *position : stream.savePosition();
  snap.specFingerprint = fingerprint;
  snap.specSummary = args.spec; // the spec file, for the "other spec" error
  return rt::train::saveCheckpoint(ckptPath, snap);
}

int RankRun::runStep(double &loss, double &gnorm, double &lr) {
  if (!inputsReady)
    if (rt::Status st = prepareInputs(step); !st)
      return fail(fmt::format("step {}: {}", step + 1, st.message()));
  // Gradient accumulation: all micro-batches but the last first, then the
  // last one as the step (its update from the summed gradients).
  if (micro.size > 1) {
    if (rt::Status st = runAccumulating(); !st)
      return fail(fmt::format("step {}: {}", step + 1, st.message()));
    if (rt::Status st = bindMicroBatch(micro.size - 1); !st)
      return fail(fmt::format("step {}: {}", step + 1, st.message()));
  }
  // The device runs step + 1 while the host builds the next step's batch;
  // its loss and gradient norm come back when it ends (finish).
  setDraws(micro.size - 1, exec);
  if (parallel) {
    counts = nextCounts;
    reducer.setWeights(rt::train::rankWeights(counts, faults.reduceScale));
  }
  faults.beforeStep(world.rank(), step + 1);
  // On a GPU the step's NCCL all-reduces wait for every rank, when they are
  // enqueued and inside the stream: the step is timed as an exchange.
  std::optional<rt::dist::WaitingForRanks> waiting;
  if (nccl)
    waiting.emplace(world, "a GPU step (its NCCL all-reduces)");
  if (rt::Status st = executor.start(plan, state->bindings(), exec,
                                     micro.size > 1 ? &lastCarry : nullptr);
      !st)
    return fail(fmt::format("step {}: {}", step + 1, st.message()));
  // The step's results are the state of the next step: the executor keeps
  // them (on the device), so they are bound no more.
  state->handedToExecutor();
  // Data parallel: no prefetch. The next batch's exchange must not start
  // before this step's error (if any) is known, or a failed rank would
  // enter it while the others still reduce this step's gradients.
  inputsReady = !parallel && !checkpointAfter(step + 1) && !stopSignals->requested();
  if (inputsReady) {
    positionBeforePrefetch = stream.savePosition();
    prepared = prepareInputs(step + 1);
  }
  if (faults.sigintAtStep && *faults.sigintAtStep == step + 1)
    std::raise(SIGINT);
  rt::TensorMap outputs;
  if (rt::Status st = executor.finish(outputs); !st)
    return fail(fmt::format("step {}: {}", step + 1, st.message()));
  waiting.reset();
  loss = outputs.at("loss").f32()[0];
  if (micro.size > 1)
    if (rt::Status st = endMicroBatches(loss); !st)
      return fail(fmt::format("step {}: {}", step + 1, st.message()));
  if (parallel) { // the global batch's loss
    std::vector<double> losses;
    if (rt::Status st = rt::dist::gatherDoubles(world, Exchange::Loss, loss, losses); !st)
      return fail(st.message());
    loss = rt::train::globalLoss(losses, counts);
  }
  gnorm = outputs.at("grad_norm").f32()[0];
  lr = outputs.at("lr").f32()[0];
  // The executor has already taken this step's (poisoned) state as the next
  // step's; no step follows and no checkpoint is written from it.
  if (!std::isfinite(loss) || !std::isfinite(gnorm)) {
    std::string kept = lastCheckpointStep >= 0
                           ? fmt::format("the last checkpoint ({}, step {}) is untouched",
                                         ckptPath, lastCheckpointStep)
                           : "no checkpoint was written";
    return fail(fmt::format("step {}: the loss is {} and the gradient norm {}: stopping "
                            "before the update; {}",
                            step + 1, loss, gnorm, kept));
  }
  return 0;
}

int RankRun::afterStep(double loss, double gnorm, double lr) {
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - runStart).count();
  const double interval = std::chrono::duration<double>(now - intervalStart).count();
  const double tokPerSec = interval > 0 ? double(intervalSteps * tokensPerStep) / interval : 0;
  rt::train::StepMetrics m;
  m.step = step;
  m.loss = loss;
  m.lr = lr;
  m.gradNorm = gnorm;
  m.tokensPerSec = tokPerSec;
  m.elapsedSec = elapsed;
  if (lead)
    if (rt::Status st = metrics.log(m); !st)
      return fail(st.message());
  if (tensorboard)
    if (rt::Status st = tensorboard->write(step, stepScalars(m)); !st)
      return fail(st.message());
  // The ranks must still train one model: their parameters, hashed.
  if (severalRanks && (step % args.checkRanksEvery == 0 || step == totalSteps)) {
    rt::TensorMap params;
    if (rt::Status st = state->parameters(executor, params); !st)
      return fail(st.message());
    if (rt::Status st =
            rt::dist::checkSameOnEveryRank(world, rt::dist::hashTensors(params), step);
        !st)
      return fail(st.message());
  }
  if (step % logEvery == 0 || step == totalSteps || step == firstStep + 1) {
    rt::train::ProgressInfo p;
    p.step = step;
    p.totalSteps = totalSteps;
    p.loss = loss;
    p.lr = lr;
    p.gradNorm = gnorm;
    p.tokensPerSec = tokPerSec;
    p.etaSec = rt::train::estimateEtaSec(step - firstStep, elapsed, totalSteps - step);
    std::cout << rt::train::formatProgress(p) << std::endl;
    intervalStart = now;
    intervalSteps = 0;
  }
  if (int rc = evaluateIfDue())
    return rc;
  if (args.checkpointEvery > 0 && step % args.checkpointEvery == 0 && step < totalSteps) {
    if (rt::Status st = saveCheckpoint(); !st)
      return fail(st.message());
    lastCheckpointStep = step;
  }
  if (!prepared) // the next step's inputs, built while this one ran
    return fail(fmt::format("step {}: {}", step + 1, prepared.message()));
  return 0;
}

int RankRun::stopIfAsked() {
  // Every rank stops after the same step: the first that any rank saw the
  // signal after.
  int stopSignal = stopSignals->requested();
  if (parallel) {
    std::vector<double> signals;
    if (rt::Status st =
            rt::dist::gatherDoubles(world, Exchange::Stop, double(stopSignal), signals);
        !st)
      return fail(st.message());
    for (double s : signals)
      stopSignal = std::max(stopSignal, int(s));
  }
  if (stopSignal == 0 || step >= totalSteps)
    return 0;
  rt::Status saved = rt::Status::ok();
  if (lastCheckpointStep != step)
    saved = saveCheckpoint(inputsReady ? &positionBeforePrefetch : nullptr);
  // Every rank waits for rank 0's checkpoint: none ends before it.
  if (severalRanks) {
    std::vector<uint64_t> written;
    if (rt::Status st =
            rt::dist::exchange64(world, Exchange::StopCheckpoint, saved ? 1 : 0, written);
        !st)
      return fail(st.message());
    if (!lead && written[0] == 0)
      saved = rt::Status::error("rank 0 could not write it");
  }
  if (!saved)
    return fail(fmt::format("{}: stopping after step {}, the checkpoint could not be "
                            "written: {}",
                            signalName(stopSignal), step, saved.message()));
  if (lead)
    metrics.close();
  if (nccl)
    nccl->finished();
  if (lead)
    std::cerr << fmt::format("xlnetc: {}: stopped after step {} of {}; checkpoint {} (go "
                             "on with --resume)\n",
                             signalName(stopSignal), step, totalSteps, ckptPath);
  return 128 + stopSignal;
}

int RankRun::loop() {
  runStart = intervalStart = Clock::now();
  firstStep = step;
  lastCheckpointStep = args.resume ? step : -1;
  stopSignals.emplace(lead);
  while (step < totalSteps) {
    double loss = 0, gnorm = 0, lr = 0;
    if (int rc = runStep(loss, gnorm, lr))
      return rc;
    ++step;
    ++intervalSteps;
    if (int rc = afterStep(loss, gnorm, lr))
      return rc;
    if (int rc = stopIfAsked())
      return rc;
  }
  return 0;
}

int RankRun::finish() {
  if (lastCheckpointStep != step)
    if (rt::Status st = saveCheckpoint(); !st)
      return fail(st.message());
  if (lead)
    metrics.close();
  if (nccl)
    nccl->finished(); // destroyed in order now, not aborted
  const double elapsed = std::chrono::duration<double>(Clock::now() - runStart).count();
  const int64_t ran = step - firstStep;
  std::cout << fmt::format("done: {} steps in {}, {}; checkpoint {}\n", ran,
                           rt::train::formatDuration(elapsed),
                           rt::train::formatTokensPerSec(
                               elapsed > 0 ? double(ran * tokensPerStep) / elapsed : 0),
                           ckptPath);
  if (lead && !args.noPlot) {
    std::string png = (fs::path(outDir) / "loss.png").string(), warning;
    if (rt::Status st = rt::train::plotLossCurve(metricsPath, png, warning); !st)
      std::cerr << "xlnetc: warning: no loss plot: " << st.message() << "\n";
    else if (!warning.empty())
      std::cerr << "xlnetc: warning: " << warning << "\n";
    else
      std::cout << "loss curve: " << png << "\n";
  }
  return 0;
}

} // namespace

/// The run on this process of `world` (docs/Distributed.md), phase by phase.
static int trainOnRank(const TrainArgs &args, const StepCompiler &compile,
                       rt::dist::Transport &world) {
  RankRun run(args, world);
  int rc = run.resolveSpec();
  if (rc == 0)
    rc = run.openStep(compile);
  if (rc == 0)
    rc = run.openRunDirectory();
  if (rc == 0)
    rc = run.openData();
  if (rc == 0)
    rc = run.openEval(compile);
  if (rc == 0)
    rc = run.loadState();
  if (rc == 0)
    rc = run.openMetrics();
  if (rc == 0)
    rc = run.prepareLoop();
  if (rc == 0)
    rc = run.loop();
  if (rc == 0)
    rc = run.finish();
  return rc;
}
int runTrain(const TrainArgs &args, const StepCompiler &compile) {
  std::unique_ptr<rt::dist::Transport> world;
  if (rt::Status st = rt::dist::openTransport(world); !st)
    return fail(st.message());
  if (world->size() == 1)
    return trainOnRank(args, compile, *world);
  // A stop by SIGINT or SIGTERM is an end every rank reached together, after
  // rank 0's checkpoint: no abort (it would kill the others mid-exit).
  return runOnEveryRank(
      *world, [&] { return trainOnRank(args, compile, *world); }, isStopExit);
}

} // namespace xlnetc
