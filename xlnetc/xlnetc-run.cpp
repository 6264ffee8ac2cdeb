//===- xlnetc-run.cpp - the runtime-only runner of compiled bundles -------===//
//
//   xlnetc-run info BUNDLE
//   xlnetc-run run-step BUNDLE [--weights W] [--batch B] [--out O] [--device D]
//   xlnetc-run train BUNDLE --data CORPUS [--out DIR] [--resume [--override KEY]] [--device D]
//   xlnetc-run bench BUNDLE... [--device D] [--threads N] [--steps N] [--warmup N] [--json F]
//                    [--profile] [--no-host-fusion]
//   xlnetc-run bench-attention [--batch B --heads N --d-head H --seq-len S
//                               --mem-len M --num-predict P] [--device D] [--json F]
//   xlnetc-run compare GOT REF [--only NAME...] [--rtol R] [--min-cosine C]
//   xlnetc-run devices
//   xlnetc-run prepare-data INPUT... -o DIR [--tokenizer M] [--threads T] [--verify]
//
// Runs what `xlnetc compile SPEC -o BUNDLE` compiled, with the same runtime,
// flags and messages as `xlnetc run-step` and `xlnetc train`, but links no
// MLIR: this executable and a few bundles are all a GPU machine needs
// (docs/Bundles.md).
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Bench.h"
#include "xlnetc/Driver/Bundle.h"
#include "xlnetc/Driver/Commands.h"
#include "xlnetc/Driver/Options.h"
#include "xlnetc/Driver/PrepareData.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Train.h"

#include "runtime/plan/DeviceProgramJson.h"
#include "runtime/plan/MemoryPlan.h"

#include "xlnetc/Driver/Guard.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

namespace {

/// `info`: what the bundle holds, and its memory plan.
int runInfo(const xlnetc::Bundle &b) {
  xlnetc::ModelSpec spec;
  std::string error;
  if (!xlnetc::loadSpec(b.specPath, spec, error))
    return xlnetc::failDiagnostics(error);
  xlnetc::StepCompiler compile = xlnetc::bundleCompiler(b);
  xlnetc::rt::Plan plan;
  if (!compile(spec, b.shape, b.step, plan, error, nullptr, xlnetc::rt::dev::GpuTarget()))
    return xlnetc::failDiagnostics(error);
  std::cout << fmt::format(
      "bundle {}: the {} step of {} (n_layer {}, d_model {}), {}\n"
      "  batch {}, seq_len {}, num_predict {}, mlen {}, perm_mask {}; {} plan steps, "
      "module {} ({} bytes)\n",
      b.dir, xlnetc::stepKindName(b.step), b.specPath, spec.nLayer, spec.dModel, b.precision,
      b.shape.batch, b.shape.seqLen, b.shape.numPredict, b.shape.mlen,
      b.shape.permBits ? "bits" : "ranks", plan.steps.size(), plan.device->moduleName,
      plan.device->source.size());
  if (!b.cubins.empty())
    std::cout << fmt::format("  CUBINs compiled ahead of time for {}: {} kernels (a GPU of that "
                             "architecture loads them instead of compiling {})\n",
                             b.cubinArch, b.cubins.size(), plan.device->moduleName);
  std::cout << xlnetc::rt::formatMemoryPlan(plan.device->memory, b.shape.batch);
  return 0;
}

} // namespace

namespace {

/// `xlnetc-run bench` and its options, read into `bench`.
CLI::App *addBenchCommand(CLI::App &app, xlnetc::BenchArgs &bench) {
  CLI::App *benchCmd = app.add_subcommand(
      "bench", "Time training steps from bundles: tokens/s, TFLOP/s, MFU, device memory");
  benchCmd->add_option("bundles", bench.bundles, "Bundles of train steps (one row each)")
      ->required();
  benchCmd->add_option("--device", bench.device, "host, emu, cuda or auto")
      ->capture_default_str();
  benchCmd->add_option("--threads", bench.threads,
                       "Host executor threads, at most the CPUs this process may use (0: OpenMP's default)")->capture_default_str();
  benchCmd->add_option("--steps", bench.steps, "Timed steps per bundle")->capture_default_str();
  benchCmd->add_option("--warmup", bench.warmup, "Untimed steps first")->capture_default_str();
  benchCmd->add_option("--gemm-size", bench.gemmSize,
                       "Edge of the reference GEMM (0: bf16 8192 on a GPU, 256 on emu; "
                       "fp32 1024 on the host)");
  benchCmd->add_option("--json", bench.json, "Also write the results as JSON");
  benchCmd->add_flag("--no-kernel-cache", bench.noKernelCache, "Compile kernels afresh");
  benchCmd->add_flag("--profile", bench.profile,
                     "Host executor: also print the time of every op kind per step");
  benchCmd->add_flag("--no-host-fusion", bench.noHostFusion,
                     "Host executor: add every init after its kernel (no GEMM with "
                     "beta 1) and keep no attention probabilities");
  xlnetc::addMemoryCheckOptions(benchCmd, bench.memory);
  return benchCmd;
}

/// `xlnetc-run bench-attention` and its options, read into `attn`.
CLI::App *addAttentionBenchCommand(CLI::App &app, xlnetc::AttentionBenchArgs &attn) {
  CLI::App *attnCmd = app.add_subcommand(
      "bench-attention", "Time the fused attention kernels (both streams, forward and backward)");
  attnCmd->add_option("--batch", attn.batch)->capture_default_str();
  attnCmd->add_option("--heads", attn.heads)->capture_default_str();
  attnCmd->add_option("--d-head", attn.dHead)->capture_default_str();
  attnCmd->add_option("--seq-len", attn.seqLen)->capture_default_str();
  attnCmd->add_option("--mem-len", attn.mlen)->capture_default_str();
  attnCmd->add_option("--num-predict", attn.numPredict)->capture_default_str();
  attnCmd->add_option("--device", attn.device, "emu, cuda or auto")->capture_default_str();
  attnCmd->add_option("--iters", attn.iters, "Timed iterations")->capture_default_str();
  attnCmd->add_option("--warmup", attn.warmup, "Untimed iterations first")
      ->capture_default_str();
  attnCmd->add_option("--gemm-size", attn.gemmSize,
                      "Edge of the reference bf16 GEMM (0: 8192 on a GPU, 256 on emu)");
  attnCmd->add_option("--json", attn.json, "Also write the results as JSON");
  attnCmd->add_flag("--no-kernel-cache", attn.noKernelCache, "Compile kernels afresh");
  return attnCmd;
}

enum class BundleCommand { Info, RunStep, Train };

/// `info`, `run-step` or `train` of the bundle in `dir`: the step's plan
/// from the bundle, the spec, precision and default shape its own.
int runBundleCommand(const std::string &dir, BundleCommand command, xlnetc::RunStepArgs &run,
                     xlnetc::TrainArgs &train) {
  xlnetc::Bundle bundle;
  if (xlnetc::rt::Status st = xlnetc::readBundle(dir, bundle); !st)
    return xlnetc::fail(st.message());
  if (command == BundleCommand::Info)
    return runInfo(bundle);
  xlnetc::StepCompiler compile = xlnetc::bundleCompiler(bundle);
  if (command == BundleCommand::RunStep) {
    run.model = bundle.specPath;
    run.grads = run.grads || bundle.step == xlnetc::StepKind::Grads;
    run.defaultShape = &bundle.shape; // a synthetic batch of the bundle's shape
    if (run.precision.empty())
      run.precision = bundle.precision;
    return xlnetc::runRunStep(run, compile);
  }
  train.spec = bundle.specPath;
  if (train.precision.empty())
    train.precision = bundle.precision;
  if (train.outDir.empty())
    train.outDir = "runs/" + std::filesystem::path(bundle.dir).filename().string();
  return xlnetc::runTrain(train, compile);
}

int runMain(int argc, char **argv) {
  CLI::App app{"xlnetc-run: runs compiled xlnetc bundles (no compiler inside)"};
  app.require_subcommand(1);

  std::string infoDir;
  auto *infoCmd = app.add_subcommand("info", "Show what a bundle holds and its device memory");
  infoCmd->add_option("bundle", infoDir, "Bundle directory (xlnetc compile SPEC -o DIR)")
      ->required();

  xlnetc::RunStepArgs run;
  std::string runDir;
  auto *runCmd = app.add_subcommand(
      "run-step", "Run the bundle's forward (or grads) step once, print the loss");
  runCmd->add_option("bundle", runDir, "Bundle of a forward or grads step")->required();
  xlnetc::addRunStepOptions(runCmd, run);

  xlnetc::TrainArgs train;
  std::string trainDir;
  auto *trainCmd =
      app.add_subcommand("train", "Pretrain with the bundle's training step on a corpus");
  trainCmd->add_option("bundle", trainDir, "Bundle of a train step")->required();
  xlnetc::addTrainOptions(trainCmd, train, "runs/<the bundle directory's name>");

  xlnetc::BenchArgs bench;
  CLI::App *benchCmd = addBenchCommand(app, bench);

  xlnetc::AttentionBenchArgs attn;
  CLI::App *attnCmd = addAttentionBenchCommand(app, attn);

  xlnetc::CompareArgs cmp;
  auto *cmpCmd = xlnetc::addCompareCommand(app, cmp);

  auto *devCmd = app.add_subcommand(
      "devices", "Show what can run here (host, emu, a GPU) and where CUDA's libraries are");

  xlnetc::PrepareDataArgs prep;
  CLI::App *prepCmd = xlnetc::addPrepareDataCommand(app, prep);

  CLI11_PARSE(app, argc, argv);
  if (*prepCmd)
    return xlnetc::runPrepareData(prep);
  if (*devCmd)
    return xlnetc::runDevices();
  if (*cmpCmd)
    return xlnetc::runCompare(cmp);
  if (*benchCmd)
    return xlnetc::runBench(bench);
  if (*attnCmd)
    return xlnetc::runAttentionBench(attn);
  const std::string &dir = *infoCmd ? infoDir : *runCmd ? runDir : trainDir;
  return runBundleCommand(dir, *infoCmd ? BundleCommand::Info
                               : *runCmd ? BundleCommand::RunStep
                                         : BundleCommand::Train,
                          run, train);
}

} // namespace

int main(int argc, char **argv) {
  xlnetc::prepareHostProcess(argv);
  return xlnetc::runGuarded("xlnetc-run", [&] { return runMain(argc, argv); });
}
