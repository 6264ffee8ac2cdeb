//===- Commands.cpp - xlnetc subcommands ----------------------------------===//

#include "xlnetc/Driver/Commands.h"

#include "xlnetc/Driver/Bundle.h"
#include "xlnetc/Driver/RunStep.h"

#include "xlnetc/Driver/CompiledPlan.h"
#include "xlnetc/Driver/Compiler.h"
#include "xlnetc/Driver/Synthetic.h"

#include "runtime/BFloat16.h"
#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/Plan.h"
#include "runtime/io/Safetensors.h"
#include "runtime/data/Batch.h"
#include "runtime/data/SyntheticCorpus.h"
#include "runtime/data/Tokenizer.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace xlnetc {

//===----------------------------------------------------------------------===//
// compile
//===----------------------------------------------------------------------===//

int runCompile(const CompileArgs &args) {
  // A bundle: --emit=bundle, or -o PATH without an extension and no --emit.
  const bool bundle =
      args.emit == "bundle" ||
      (!args.emitGiven && !args.output.empty() &&
       std::filesystem::path(args.output).extension().empty());
  std::optional<Emit> emit = bundle ? std::optional<Emit>(Emit::Plan) : parseEmit(args.emit);
  if (!emit)
    return fail("unknown --emit value '" + args.emit +
                "' (expected mlir, decomposed, kernels, grads, train, fused, plan, cuda, memory or "
                "bundle)");
  if (bundle && args.output.empty())
    return fail("--emit=bundle needs -o DIR, the bundle's directory");
  if (!bundle && !args.arch.empty() && *emit != Emit::Cuda)
    return fail("--arch makes the step's device program for that GPU (and compiles a "
                "bundle's kernels ahead of time): it needs a bundle (-o DIR or "
                "--emit=bundle) or --emit=cuda");
  // The GPU the device program is made for: sm_90 unless --arch names one.
  rt::dev::GpuTarget target;
  if (!args.arch.empty())
    if (rt::Status st = rt::dev::gpuTargetForArch(args.arch, target); !st)
      return fail("--arch: " + st.message());
  std::optional<StepKind> step = parseStepKind(args.step);
  if (!step)
    return fail("unknown --step value '" + args.step +
                "' (expected forward, grads or train)");
  ModelSpec spec;
  std::string error;
  if (!loadSpec(args.spec, spec, error))
    return failDiagnostics(error);

  StepShape shape = stepShapeFromSpec(spec);
  if (args.batchSize > 0)
    shape.batch = args.batchSize;
  if (args.seqLen > 0)
    shape.seqLen = args.seqLen;
  if (args.numPredict > 0)
    shape.numPredict = args.numPredict;
  if (args.mlen >= 0)
    shape.mlen = args.mlen;
  shape.permBits = args.permMask == "bits";
  if (!args.precision.empty())
    shape.precision = *parsePrecision(args.precision); // checked by CLI11
  if (spec.fromHFConfig && (shape.batch <= 0 || shape.seqLen <= 0 || shape.numPredict <= 0))
    return fail(args.spec + ": a HuggingFace config.json has no batch shape; pass "
                            "--batch-size, --seq-len and --num-predict");
  if (!checkShape(spec, shape, args.spec, error))
    return fail(error);
  // Gradient accumulation: the step of one micro-batch.
  const int64_t micro = args.microBatch > 0 ? args.microBatch : spec.microBatchSize;
  const int64_t processRows = shape.batch;
  if (micro > 0 && micro < shape.batch && *step != StepKind::Forward) {
    if (shape.batch % micro != 0 || (spec.biData && micro % 2 != 0))
      return fail(fmt::format("micro-batch {} does not divide the batch of {} rows into equal "
                              "micro-batches{}",
                              micro, shape.batch,
                              spec.biData ? " of an even number of rows (bi_data)" : ""));
    shape.batch = micro;
    shape.accumulate = true;
  } else if (micro > shape.batch && *step != StepKind::Forward) {
    return fail(fmt::format("micro-batch {} is more than the batch of {} rows", micro,
                            shape.batch));
  }

  CompileOptions options;
  options.processRows = processRows;
  options.emit = *emit;
  options.step = *step;
  options.printIrAfterAll = args.printIrAfterAll;
  options.target = target;
  std::string out;
  if (!compileStep(spec, shape, options, out, error))
    return failDiagnostics(error);
  if (bundle) {
    rt::Plan plan;
    auto program = std::make_shared<rt::DeviceProgram>();
    if (rt::Status st = rt::parsePlan(out, plan); !st)
      return fail("internal error: the compiled plan does not parse: " + st.message());
    if (rt::Status st =
            cuda::emitDeviceProgram(plan, deviceEmitOptions(spec, *step, target), *program);
        !st)
      return fail(st.message());
    std::map<std::string, std::string> cubins;
    if (!args.arch.empty())
      if (rt::Status st = compileKernelCubins(*program, args.arch, args.noKernelCache, cubins);
          !st)
        return fail(st.message());
    if (rt::Status st = writeBundle(args.output, args.spec, spec, shape, *step, out, *program,
                                    args.arch, cubins);
        !st)
      return fail(st.message());
    std::cout << fmt::format("wrote the bundle of the {} step of {} to {} ({} plan steps, "
                             "{} bytes of CUDA C++)\n",
                             stepKindName(*step), args.spec, args.output, plan.steps.size(),
                             program->source.size());
    return 0;
  }
  if (args.output.empty()) {
    std::cout << out;
    return 0;
  }
  if (!writeText(args.output, out, error))
    return fail(error);
  return 0;
}

//===----------------------------------------------------------------------===//
// make-corpus
//===----------------------------------------------------------------------===//

int runMakeCorpus(const MakeCorpusArgs &args) {
  if (args.kind == "demo") {
    if (args.lines <= 0)
      return fail(fmt::format("--lines must be > 0, got {}", args.lines));
    if (rt::Status st = rt::data::writeDemoCorpus(args.output, args.seed, args.lines); !st)
      return fail(st.message());
    std::cout << fmt::format("wrote the demo corpus ({} lines, seed {}) to {}\n", args.lines,
                             args.seed, args.output);
    return 0;
  }
  if (args.kind == "memory") {
    if (args.spec.empty())
      return fail("make-corpus memory needs --spec (the batch layout it must match)");
    ModelSpec spec;
    std::string error;
    if (!loadSpec(args.spec, spec, error))
      return failDiagnostics(error);
    rt::data::MemoryCorpusOptions o;
    o.batchSize = spec.trainBatchSize;
    o.biData = spec.biData;
    o.seqLen = spec.seqLen;
    o.reuseLen = spec.reuseLen > 0 ? spec.reuseLen : spec.seqLen;
    o.vocabSize = spec.nToken;
    // Enough text that a run of train_steps never sees a chunk twice (the
    // model could otherwise memorise the corpus instead of using memory).
    o.minStepsPerEpoch = std::max<int64_t>(spec.trainSteps, 8);
    int64_t rowLen = 0;
    if (rt::Status st = rt::data::writeMemoryCorpus(args.output, args.seed, o, &rowLen); !st)
      return fail(st.message());
    std::cout << fmt::format("wrote the memory corpus for {} (rows of {} tokens, chunks of "
                             "{} repeated once, seed {}) to {}\n",
                             args.spec, rowLen, o.reuseLen, args.seed, args.output);
    return 0;
  }
  return fail("unknown corpus kind '" + args.kind + "' (expected demo or memory)");
}

} // namespace xlnetc

namespace xlnetc {

int runTokenize(const TokenizeArgs &args) {
  bool keepAccents = args.keepAccents;
  if (!args.spec.empty()) {
    ModelSpec spec;
    std::string error;
    if (!loadSpec(args.spec, spec, error))
      return failDiagnostics(error);
    keepAccents = keepAccents || spec.keepAccents;
  }
  rt::data::Tokenizer tok;
  if (rt::Status st = rt::data::Tokenizer::load(args.tokenizer, tok); !st)
    return fail(st.message());
  std::string line;
  std::vector<int64_t> ids;
  while (std::getline(std::cin, line)) {
    ids.clear();
    if (rt::Status st = tok.encode(line, ids, /*uncased=*/false, keepAccents); !st)
      return fail(st.message());
    std::string text;
    for (int64_t id : ids)
      text += (text.empty() ? "" : " ") + std::to_string(id);
    std::cout << text << "\n";
  }
  return 0;
}

} // namespace xlnetc
