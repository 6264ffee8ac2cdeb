//===- xlnetc.cpp - the xlnetc command-line tool --------------------------===//
//
//   xlnetc compile SPEC [--emit=mlir|decomposed|kernels|grads|train|fused|plan|cuda|memory|bundle] [--step=...]
//   xlnetc run-step MODEL [--weights W] [--batch B] [--out O] [--grads]
//   xlnetc train SPEC --data CORPUS [--tokenizer M] [--steps N] [--out DIR] [--resume [--override KEY]]
//   xlnetc make-corpus demo|memory OUT [--spec SPEC] [--seed S]
//   xlnetc prepare-data INPUT... -o DIR [--tokenizer M] [--threads T] [--verify]
//   xlnetc gradcheck SPEC [--seed S] [--eps E] [--tolerance T]
//   xlnetc compare GOT REF [--only NAME...] [--rtol R]
//   xlnetc devices
//   xlnetc kernels SPEC [--step S] [--arch sm_90] [--tiles-for ARCH] [--maxrregcount N] [--list] [--no-kernel-cache]
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Commands.h"
#include "xlnetc/Driver/Eval.h"
#include "xlnetc/Driver/Export.h"
#include "xlnetc/Driver/CompiledPlan.h"
#include "xlnetc/Driver/Options.h"
#include "xlnetc/Driver/PrepareData.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Train.h"

#include "xlnetc/Driver/Guard.h"

#include <CLI/CLI.hpp>

namespace {

/// `xlnetc compile` and its options, read into `compile`.
CLI::App *addCompileCommand(CLI::App &app, xlnetc::CompileArgs &compile) {
  CLI::App *compileCmd = app.add_subcommand(
      "compile", "Compile a model spec into IR or an executable plan");
  compileCmd->add_option("spec", compile.spec, "Model spec (.toml) or HuggingFace config.json")
      ->required();
  compileCmd->add_option("--emit", compile.emit,
                         "What to print: mlir (model-level IR), decomposed, "
                         "kernels (kernel-level forward), grads (+ backward), "
                         "train (+ optimizer), fused (--step's IR after "
                         "--xlnet-fuse-kernels: what every plan is made from), "
                         "plan (JSON of --step), cuda "
                         "(the CUDA C++ of --step's device program), memory "
                         "(--step's device bytes by category, from its memory plan) "
                         "or bundle (a directory -o DIR that xlnetc-run runs; the "
                         "default when -o names a path without an extension)")
      ->capture_default_str();
  compileCmd->add_option("--step", compile.step,
                         "Step of --emit=fused, plan, cuda and memory: forward, grads "
                         "or train")
      ->capture_default_str();
  compileCmd->add_option("-o,--output", compile.output,
                         "Output file (default: stdout); the bundle's directory");
  compileCmd->add_flag("--print-ir-after-all", compile.printIrAfterAll,
                       "Print the IR after every pass to stderr");
  compileCmd->add_option("--batch-size", compile.batchSize,
                         "Override train_batch_size (a bundle for N processes: their rows, "
                         "train_batch_size / N)");
  compileCmd->add_option("--micro-batch", compile.microBatch,
                         "grads and train steps: a micro-batch of this many rows of gradient "
                         "accumulation (the spec's micro_batch_size); --emit=memory adds the "
                         "other micro-batches' memory")
      ->check(CLI::PositiveNumber);
  compileCmd->add_option("--seq-len", compile.seqLen, "Override seq_len");
  compileCmd->add_option("--num-predict", compile.numPredict, "Override num_predict");
  compileCmd->add_option("--mlen", compile.mlen,
                         "Incoming memory length (default: mem_len)");
  compileCmd->add_option("--perm-mask", compile.permMask,
                         "The step's permutation mask: ranks (perm_rank, what the "
                         "data pipeline makes) or bits (perm_bits, for masks without "
                         "ranks)")
      ->check(CLI::IsMember({"ranks", "bits"}))
      ->capture_default_str();
  xlnetc::addPrecisionOption(compileCmd, compile.precision);
  compileCmd->add_option("--arch", compile.arch,
                         "Bundles: also compile every kernel ahead of time for this GPU "
                         "architecture (sm_80, sm_90, ...), one CUBIN per kernel");
  compileCmd->add_flag("--no-kernel-cache", compile.noKernelCache,
                       "With --arch: compile every kernel afresh");
  return compileCmd;
}

/// `xlnetc make-corpus` and its options, read into `mc`.
CLI::App *addMakeCorpusCommand(CLI::App &app, xlnetc::MakeCorpusArgs &mc) {
  CLI::App *mcCmd = app.add_subcommand(
      "make-corpus", "Write a generated corpus: demo (English-like text) or memory "
                     "(pre-tokenized chunks that only memory can predict)");
  mcCmd->add_option("kind", mc.kind, "demo or memory")->required();
  mcCmd->add_option("output", mc.output, "Corpus file to write")->required();
  mcCmd->add_option("--spec", mc.spec, "memory: spec whose batch layout to match");
  mcCmd->add_option("--seed", mc.seed, "Seed")->capture_default_str();
  mcCmd->add_option("--lines", mc.lines, "demo: sentence lines")->capture_default_str();
  return mcCmd;
}

/// `xlnetc gradcheck` and its options, read into `gc`.
CLI::App *addGradCheckCommand(CLI::App &app, xlnetc::GradCheckArgs &gc) {
  CLI::App *gcCmd = app.add_subcommand(
      "gradcheck",
      "Check the compiled backward against finite differences of the forward "
      "(random init, synthetic batch)");
  gcCmd->add_option("spec", gc.spec, "Model spec (.toml)")->required();
  gcCmd->add_option("--seed", gc.seed, "Seed of the init, batch and directions")
      ->capture_default_str();
  gcCmd->add_option("--eps", gc.eps, "Finite-difference step")->capture_default_str();
  gcCmd->add_option("--init-range", gc.initRange, "Std of the random init")
      ->capture_default_str();
  gcCmd->add_option("--tolerance", gc.tolerance, "Max relative error")
      ->capture_default_str();
  xlnetc::addDeviceOptions(gcCmd, gc.device, gc.noKernelCache, "host");
  xlnetc::addMemoryCheckOptions(gcCmd, gc.memory);
  return gcCmd;
}

/// `xlnetc kernels` and its options, read into `kern`.
CLI::App *addKernelsCommand(CLI::App &app, xlnetc::KernelsArgs &kern) {
  CLI::App *kernCmd = app.add_subcommand(
      "kernels", "Compile a step's CUDA kernels with NVRTC (no GPU needed) and "
                 "check registers, spills and shared memory");
  kernCmd->add_option("spec", kern.spec, "Model spec (.toml)")->required();
  kernCmd->add_option("--step", kern.step, "forward, grads or train")
      ->capture_default_str();
  kernCmd->add_option("--arch", kern.arch, "GPU architecture (sm_80, sm_86, sm_90, ...)")
      ->capture_default_str();
  kernCmd->add_option("--tiles-for", kern.tilesFor,
                      "Make the device program for this architecture instead (its tiles "
                      "fit that GPU's shared memory) and check it on --arch: what a bundle "
                      "compiled for one GPU would do on another");
  kernCmd->add_option("--maxrregcount", kern.maxRegisters,
                      "Cap the registers per thread (NVRTC --maxrregcount): what would "
                      "spill under that budget");
  kernCmd->add_flag("--no-kernel-cache", kern.noKernelCache,
                    "Compile even when the kernel cache has the CUBIN");
  kernCmd->add_flag("--list", kern.list, "One line per kernel");
  xlnetc::addPrecisionOption(kernCmd, kern.precision);
  return kernCmd;
}

/// `xlnetc export` and its options, read into `exp`.
CLI::App *addExportCommand(CLI::App &app, xlnetc::ExportArgs &exp) {
  CLI::App *expCmd = app.add_subcommand(
      "export", "Write a HuggingFace model directory (config.json, model.safetensors, "
                "spiece.model, tokenizer_config.json) from a run directory or weights");
  expCmd->add_option("source", exp.source,
                     "A run directory (its checkpoint, spec.toml and spiece.model), a "
                     "checkpoint or other weights (then --spec)")
      ->required();
  expCmd->add_option("out", exp.outDir, "The directory to write (new, or empty)")->required();
  expCmd->add_option("--spec", exp.spec, "The model's spec (default: the run's spec.toml)");
  expCmd->add_option("--tokenizer", exp.tokenizer,
                     "SentencePiece model (default: the run's spiece.model)");
  return expCmd;
}

/// `xlnetc eval` and its options, read into `ev`.
CLI::App *addEvalCommand(CLI::App &app, xlnetc::EvalArgs &ev) {
  CLI::App *cmd = app.add_subcommand(
      "eval", "The held-out loss of a model on text, dropout off (docs/Training.md "
              "\"Held-out evaluation\")");
  cmd->add_option("source", ev.source,
                  "A run directory (its checkpoint, spec.toml and spiece.model), a HuggingFace "
                  "model directory (config.json, weights, spiece.model) or weights (then "
                  "--spec)")
      ->required();
  cmd->add_option("--data", ev.data,
                  "Held-out text (a text file, ids corpus or prepare-data directory)")
      ->required();
  cmd->add_option("--spec", ev.spec,
                  "The model's spec and its [data] settings (default: the run's spec.toml or "
                  "the config.json beside the weights)");
  cmd->add_option("--tokenizer", ev.tokenizer,
                  "SentencePiece model (default: the spiece.model beside the weights)");
  cmd->add_option("--batches", ev.batches, "Batches to evaluate, from the text's start")
      ->check(CLI::PositiveNumber)
      ->default_str("the text once, at most 100");
  cmd->add_option("--batch-size", ev.batchSize, "Rows per batch (under mpirun: all ranks')")
      ->check(CLI::PositiveNumber)
      ->default_str("the spec's train_batch_size");
  cmd->add_option("--threads", ev.threads, "Host threads (0: OpenMP's default)")
      ->capture_default_str();
  xlnetc::addDeviceOptions(cmd, ev.device, ev.noKernelCache, "the spec's [train] device");
  xlnetc::addPrecisionOption(cmd, ev.precision);
  return cmd;
}

/// `xlnetc tokenize` and its options, read into `tok`.
CLI::App *addTokenizeCommand(CLI::App &app, xlnetc::TokenizeArgs &tok) {
  CLI::App *tokCmd = app.add_subcommand(
      "tokenize", "Print the token ids of each input line, as xlnetc train encodes text");
  tokCmd->add_option("tokenizer", tok.tokenizer, "SentencePiece model")->required();
  tokCmd->add_option("--spec", tok.spec,
                     "Take keep_accents from this spec (e.g. a run's spec.toml)");
  tokCmd->add_flag("--keep-accents", tok.keepAccents, "Keep accents (no NFKD stripping)");
  return tokCmd;
}

int runMain(int argc, char **argv) {
  CLI::App app{"xlnetc: a compiler and runtime for XLNet pretraining"};
  app.require_subcommand(1);

  xlnetc::CompileArgs compile;
  CLI::App *compileCmd = addCompileCommand(app, compile);

  xlnetc::RunStepArgs run;
  auto *runCmd = app.add_subcommand(
      "run-step", "Compile and run one forward (or --grads) step on --device, print the loss");
  runCmd->add_option("model", run.model, "Model spec (.toml) or HuggingFace config.json")
      ->required();
  xlnetc::addRunStepOptions(runCmd, run);

  xlnetc::TrainArgs train;
  auto *trainCmd = app.add_subcommand(
      "train", "Compile the training step of a spec and pretrain on a corpus on --device");
  trainCmd->add_option("spec", train.spec, "Model spec (.toml)")->required();
  xlnetc::addTrainOptions(trainCmd, train, "runs/<spec file name without its extension>");

  xlnetc::MakeCorpusArgs mc;
  CLI::App *mcCmd = addMakeCorpusCommand(app, mc);

  xlnetc::PrepareDataArgs prep;
  CLI::App *prepCmd = xlnetc::addPrepareDataCommand(app, prep);

  xlnetc::GradCheckArgs gc;
  CLI::App *gcCmd = addGradCheckCommand(app, gc);

  auto *devCmd = app.add_subcommand(
      "devices", "Show which devices can run here (host, emu, cuda) and why one cannot");

  xlnetc::KernelsArgs kern;
  CLI::App *kernCmd = addKernelsCommand(app, kern);

  xlnetc::CompareArgs cmp;
  auto *cmpCmd = xlnetc::addCompareCommand(app, cmp);

  xlnetc::ExportArgs exp;
  CLI::App *expCmd = addExportCommand(app, exp);

  xlnetc::TokenizeArgs tok;
  CLI::App *tokCmd = addTokenizeCommand(app, tok);

  xlnetc::EvalArgs ev;
  CLI::App *evalCmd = addEvalCommand(app, ev);

  CLI11_PARSE(app, argc, argv);
  if (*evalCmd)
    return xlnetc::runEval(ev, xlnetc::compilePlan);
  if (*expCmd)
    return xlnetc::runExport(exp);
  if (*tokCmd)
    return xlnetc::runTokenize(tok);
  if (*compileCmd) {
    compile.emitGiven = compileCmd->count("--emit") > 0;
    return xlnetc::runCompile(compile);
  }
  if (*runCmd)
    return xlnetc::runRunStep(run, xlnetc::compilePlan);
  if (*trainCmd)
    return xlnetc::runTrain(train, xlnetc::compilePlan);
  if (*gcCmd)
    return xlnetc::runGradCheck(gc);
  if (*mcCmd)
    return xlnetc::runMakeCorpus(mc);
  if (*prepCmd)
    return xlnetc::runPrepareData(prep);
  if (*devCmd)
    return xlnetc::runDevices();
  if (*kernCmd)
    return xlnetc::runKernels(kern);
  return xlnetc::runCompare(cmp);
}

} // namespace

int main(int argc, char **argv) {
  xlnetc::prepareHostProcess(argv);
  return xlnetc::runGuarded("xlnetc", [&] { return runMain(argc, argv); });
}
