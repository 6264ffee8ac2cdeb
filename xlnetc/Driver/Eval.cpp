//===- Eval.cpp - Held-out evaluation -------------------------------------===//

#include "xlnetc/Driver/Eval.h"

#include "xlnetc/Driver/Guard.h"
#include "xlnetc/Driver/Weights.h"

#include "runtime/data/Corpus.h"
#include "runtime/dist/Transport.h"
#include "runtime/data/PreparedData.h"
#include "runtime/io/InputFile.h"
#include "runtime/train/StateNames.h"
#include "runtime/train/Trainer.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

namespace xlnetc {

namespace names = rt::train::names;

rt::data::PipelineConfig pipelineFor(const ModelSpec &spec, const StepShape &shape,
                                     int64_t globalBatch, uint64_t seed) {
  rt::data::PipelineConfig pipe;
  pipe.batchSize = globalBatch;
  pipe.seqLen = shape.seqLen;
  pipe.reuseLen = shape.reuseLen;
  pipe.numPredict = shape.numPredict;
  pipe.permSize = spec.permSize > 0 ? spec.permSize : shape.reuseLen;
  pipe.biData = spec.biData;
  pipe.maskAlpha = int64_t(spec.maskAlpha);
  pipe.maskBeta = int64_t(spec.maskBeta);
  pipe.seed = seed;
  return pipe;
}

bool Evaluator::open(const EvalSetup &setup, const StepCompiler &compile, std::string &error) {
  setup_ = setup;
  // Evaluation mode: no dropout, as transformers' model.eval().
  setup_.spec.dropout = setup_.spec.dropatt = 0;
  if (!openExecutor(setup_.device, setup_.noKernelCache, setup_.threads, executor_, error,
                    setup_.localRank, setup_.announce) ||
      !applyPrecision("", executor_, setup_.shape, error))
    return false;
  // The compiler's diagnostics are lines of their own ("...: error: ...").
  if (!compile(setup_.spec, setup_.shape, StepKind::Forward, plan_, error, nullptr,
               deviceTarget(executor_)))
    return false;
  // Every rank draws the global batch.
  if (rt::Status st = openStream(
          pipelineFor(setup_.spec, setup_.shape, setup_.rank.globalBatch, kEvalSeed));
      !st) {
    error = st.message();
    return false;
  }
  batches_ = setup_.batches > 0
                 ? setup_.batches
                 : std::min<int64_t>(stream_.stepsPerEpoch(), kDefaultMaxBatches);
  return true;
}

rt::Status Evaluator::openStream(const rt::data::PipelineConfig &pipe) {
  const std::string &path = setup_.data;
  auto named = [&](const rt::Status &st) {
    return st.message().rfind(path + ":", 0) == 0 ? st : st.withPrefix(path + ": ");
  };
  if (rt::data::isPreparedDataDir(path)) {
    rt::data::PreparedData prepared;
    XLNETC_RETURN_IF_ERROR(rt::data::openPreparedData(path, prepared));
    if (!setup_.tokenizer)
      return rt::Status::error(fmt::format("{}: prepared data needs the run's tokenizer", path));
    std::string sha;
    XLNETC_RETURN_IF_ERROR(rt::data::fileSha256(setup_.tokenizer->path(), sha));
    if (sha != prepared.tokenizerSha256)
      return rt::Status::error(fmt::format(
          "{} was prepared with another tokenizer than the model's {} (their SHA-256 "
          "differ): its ids would mean other pieces",
          path, setup_.tokenizer->path()));
    rt::data::StreamSource source = std::move(prepared.source);
    source.startPiece = setup_.tokenizer->startPieceTable();
    source.vocabSize = setup_.tokenizer->vocabSize();
    corpusTokens_ = size_t(prepared.counts.tokens);
    return named(rt::data::BatchStream::create(std::move(source), pipe, stream_));
  }
  XLNETC_RETURN_IF_ERROR(rt::checkInputFile(path).withPrefix("held-out text "));
  rt::data::CorpusOptions options;
  options.keepAccents = setup_.spec.keepAccents;
  rt::data::Corpus corpus;
  XLNETC_RETURN_IF_ERROR(
      rt::data::readCorpus(path, setup_.tokenizer, setup_.spec.nToken, options, corpus));
  corpusTokens_ = corpus.tokens.size();
  return named(rt::data::BatchStream::create(std::move(corpus), pipe, stream_));
}

std::string Evaluator::describe() const {
  return fmt::format("held-out {}: {} tokens, {} batch{} per evaluation (of {} per pass), "
                     "dropout off",
                     setup_.data, corpusTokens_, batches_, batches_ == 1 ? "" : "es",
                     stream_.stepsPerEpoch());
}

rt::Status Evaluator::runPart(const rt::TensorMap &params, const rt::TensorMap &batch,
                              rt::TensorMap &mems, double &lossSum, double &tokens) {
  rt::TensorMap bindings;
  for (const auto &[name, t] : params) // views: the weights are read, never copied
    bindings[name] = rt::Tensor::view(t.dtype, t.shape, const_cast<uint8_t *>(t.bytes()));
  for (const auto &[name, t] : batch)
    bindings[name] = t;
  for (const auto &[name, t] : mems)
    bindings[name] = t;
  rt::ExecOptions o;
  o.threads = setup_.threads;
  rt::TensorMap outputs;
  XLNETC_RETURN_IF_ERROR(executor_.execute(plan_, bindings, outputs, o));
  for (int64_t l = 0; l < int64_t(mems.size()); ++l)
    mems[names::mems(l)] = std::move(outputs.at(names::newMems(l)));
  const double count = rt::train::predictedTokens(batch.at("target_mask"));
  if (count > 0) { // a part without targets has a NaN loss and no weight
    lossSum += double(outputs.at("loss").f32()[0]) * count;
    tokens += count;
  }
  return rt::Status::ok();
}

rt::Status Evaluator::run(const rt::TensorMap &params, rt::dist::Transport &world,
                          EvalResult &out) {
  const auto start = std::chrono::steady_clock::now();
  XLNETC_RETURN_IF_ERROR(stream_.seek(0));
  // Each part's memory, zero at the start of every evaluation.
  std::vector<rt::TensorMap> mems(size_t(setup_.part.size));
  for (rt::TensorMap &m : mems)
    for (int64_t l = 0; setup_.spec.memLen > 0 && l < setup_.spec.nLayer; ++l)
      m[names::mems(l)] = rt::Tensor::zeros(
          rt::DType::F32, {setup_.spec.memLen, setup_.part.localBatch, setup_.spec.dModel});
  double lossSum = 0, tokens = 0;
  for (int64_t i = 0; i < batches_; ++i) {
    rt::data::Batch batch;
    XLNETC_RETURN_IF_ERROR(stream_.next(batch));
    for (int k = 0; k < setup_.part.size; ++k) {
      rt::dist::RowSplit part = setup_.part;
      part.rank = k;
      rt::TensorMap rows;
      for (const auto &[name, t] : batch.tensors) {
        if (names::hasPrefix(name, "raw."))
          continue;
        rt::Tensor mine, piece;
        XLNETC_RETURN_IF_ERROR(setup_.rank.slice(t, 0, mine).withPrefix(name + ": "));
        XLNETC_RETURN_IF_ERROR(part.slice(mine, 0, piece).withPrefix(name + ": "));
        rows[name] = std::move(piece);
      }
      XLNETC_RETURN_IF_ERROR(
          runPart(params, rows, mems[size_t(k)], lossSum, tokens)
              .withPrefix(fmt::format("evaluation batch {}: ", i + 1)));
    }
  }
  // The global batch's: every rank's sums.
  if (world.size() > 1) {
    std::vector<double> sums, counts;
    XLNETC_RETURN_IF_ERROR(
        rt::dist::gatherDoubles(world, rt::dist::Exchange::EvalLoss, lossSum, sums));
    XLNETC_RETURN_IF_ERROR(
        rt::dist::gatherDoubles(world, rt::dist::Exchange::EvalTokens, tokens, counts));
    lossSum = tokens = 0;
    for (size_t r = 0; r < sums.size(); ++r) { // in rank order: the same on every rank
      lossSum += sums[r];
      tokens += counts[r];
    }
  }
  out.loss = tokens > 0 ? lossSum / tokens : std::nan("");
  out.tokens = tokens;
  out.batches = batches_;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return rt::Status::ok();
}

namespace {

int evalOnRank(const EvalArgs &args, const StepCompiler &compile, rt::dist::Transport &world) {
  ModelSource source;
  std::string error;
  if (!resolveModelSource(args.source, args.spec, args.tokenizer, "eval", source, error))
    return fail(error);
  EvalSetup setup;
  if (!loadSpec(source.spec, setup.spec, error))
    return failDiagnostics(error);
  ModelSpec &spec = setup.spec;
  if (args.batchSize > 0)
    spec.trainBatchSize = args.batchSize;
  if (rt::Status st = rt::dist::RowSplit::make(world.rank(), world.size(), spec.trainBatchSize,
                                               spec.biData, setup.rank);
      !st)
    return fail(st.message());
  if (rt::Status st = rt::dist::RowSplit::make(0, 1, setup.rank.localBatch, spec.biData,
                                               setup.part);
      !st)
    return fail(st.message());
  rt::data::Tokenizer tokenizer;
  if (!source.tokenizer.empty()) {
    if (rt::Status st = rt::data::Tokenizer::load(source.tokenizer, tokenizer); !st)
      return fail(st.message());
    setup.tokenizer = &tokenizer;
  } else if (!rt::data::isIdsCorpusFile(args.data)) {
    return fail(fmt::format("{} has no spiece.model beside it: pass the model's tokenizer, "
                            "--tokenizer spiece.model",
                            args.source));
  }
  if (spec.seqLen <= 0)
    return fail(fmt::format("{} sets no seq_len (a HuggingFace config.json has no [data]): "
                            "pass a spec with the [data] to evaluate with, --spec SPEC (a "
                            "run's spec.toml, or a TOML with the model's sizes)",
                            source.spec));
  setup.shape = stepShapeFromSpec(spec);
  if (setup.shape.reuseLen <= 0)
    setup.shape.reuseLen = setup.shape.seqLen;
  setup.shape.batch = setup.rank.localBatch;
  if (!args.precision.empty())
    setup.shape.precision = args.precision == "bf16" ? Precision::BF16 : Precision::FP32;
  setup.data = args.data;
  setup.batches = args.batches;
  setup.device = args.device.empty() ? spec.device : args.device;
  setup.threads = args.threads;
  setup.noKernelCache = args.noKernelCache;
  setup.localRank = world.size() > 1 ? rt::dist::launcherLocalRank() : -1;
  setup.announce = world.rank() == 0;
  Evaluator evaluator;
  if (!evaluator.open(setup, compile, error))
    return error.find('\n') != std::string::npos ? failDiagnostics(error) : fail(error);
  rt::TensorMap params;
  if (!loadModelWeights(spec, specParamShapes(spec), source.weights, "eval", params, error))
    return fail(error);
  if (world.rank() == 0)
    std::cout << fmt::format("xlnetc eval {}: {} layers, d_model {}; batch {} x seq {} (mem "
                             "{}, reuse {}){}\n  {}\n",
                             args.source, spec.nLayer, spec.dModel, spec.trainBatchSize,
                             setup.shape.seqLen, spec.memLen, setup.shape.reuseLen,
                             world.size() > 1 ? fmt::format("; {}", world.description()) : "",
                             evaluator.describe());
  EvalResult r;
  if (rt::Status st = evaluator.run(params, world, r); !st)
    return fail(st.message());
  if (world.rank() == 0)
    std::cout << fmt::format("eval: loss {:.4f}, ppl {:.2f}, {:.3f} bits/token ({} batch{}, "
                             "{:.0f} predicted tokens, {:.1f} s)\n",
                             r.loss, std::exp(r.loss), r.loss / std::log(2.0), r.batches,
                             r.batches == 1 ? "" : "es", r.tokens, r.seconds);
  return 0;
}

} // namespace

int runEval(const EvalArgs &args, const StepCompiler &compile) {
  std::unique_ptr<rt::dist::Transport> world;
  if (rt::Status st = rt::dist::openTransport(world); !st)
    return fail(st.message());
  if (world->size() == 1)
    return evalOnRank(args, compile, *world);
  // A rank that fails ends the job (the others may wait in the loss exchange).
  return runOnEveryRank(
      *world, [&] { return evalOnRank(args, compile, *world); }, [](int) { return false; });
}

} // namespace xlnetc
