//===- Options.h - Command-line options xlnetc and xlnetc-run share -*- C++ -*-===//
//
// The options of run-step and train (everything but the positional spec or
// bundle) and the process setup both executables do, so that the compiler's
// commands and the runtime-only runner's read the same flags.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_OPTIONS_H
#define XLNETC_XLNETC_DRIVER_OPTIONS_H

#include "xlnetc/Driver/Commands.h"
#include "xlnetc/Driver/Compare.h"
#include "xlnetc/Driver/Train.h"

#include "runtime/host/GemmKernels.h"

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include <unistd.h>

namespace xlnetc {

/// Two settings that libraries read once, when they are loaded before main,
/// so the process runs itself again (once) with them in its environment:
/// - OMP_WAIT_POLICY=passive: libgomp's default (spin before sleeping) made
///   one tiny-model step take ~100 ms instead of ~5 ms on a 2-core VM about
///   half the time (idle workers spinning against the thread doing the
///   work); "passive" is always fast.
/// - OPENBLAS_CORETYPE: when OpenBLAS picked sgemm kernels weaker than the
///   CPU runs (a CPU model newer than the library gets its Prescott
///   kernels), the ones the CPU's features call for (rt::host::coreToSet);
///   XLNETC_OPENBLAS_PICKED keeps what OpenBLAS picked, for the reports.
/// A value the user set is kept.
inline void prepareHostProcess(char **argv) {
  namespace host = rt::host;
  bool again = false;
  if (!std::getenv("OMP_WAIT_POLICY")) {
    setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
    again = true;
  }
  std::optional<std::string> core =
      host::coreToSet(host::cpuFeatures(), host::blasLibrary(), host::coreEnvironment());
  if (core) {
    setenv("XLNETC_OPENBLAS_PICKED", host::blasLibrary().core.c_str(), /*overwrite=*/1);
    setenv("OPENBLAS_CORETYPE", core->c_str(), /*overwrite=*/1);
    again = true;
  }
  if (!again)
    return;
  execv("/proc/self/exe", argv); // returns only on failure: carry on as is
  if (core) {                    // and say what the kernels are, not what was meant
    unsetenv("XLNETC_OPENBLAS_PICKED");
    unsetenv("OPENBLAS_CORETYPE");
  }
}

/// --device and --no-kernel-cache, shared by run-step, train and gradcheck.
inline void addDeviceOptions(CLI::App *cmd, std::string &device, bool &noCache,
                             const std::string &defaultText) {
  cmd->add_option("--device", device,
                  "Where the step runs: host (CPU reference executor), emu "
                  "(the CUDA executor on the emulated device), cuda (a GPU) or "
                  "auto (cuda when a GPU answers, else host)")
      ->check(CLI::IsMember({"host", "emu", "cuda", "auto"}))
      ->default_str(defaultText);
  cmd->add_flag("--no-kernel-cache", noCache,
                "Compile every kernel afresh instead of using the on-disk "
                "kernel cache ($XLNETC_KERNEL_CACHE)");
  cmd->add_flag_callback(
      "--sync-each-op", [] { setenv("XLNETC_CUDA_SYNC", "1", /*overwrite=*/1); },
      "emu and cuda: no graph; wait after every kernel, GEMM and memset, so the first "
      "fault names its plan step, kernel and MLIR location (as XLNETC_CUDA_SYNC=1)");
}

/// --precision, shared by compile, run-step and train.
inline void addPrecisionOption(CLI::App *cmd, std::string &precision) {
  cmd->add_option("--precision", precision,
                  "fp32, or bf16 mixed precision (bf16 activations and GEMM "
                  "operands, f32 parameters, gradients, Adam moments and "
                  "losses; on cuda or emu)")
      ->check(CLI::IsMember({"fp32", "bf16"}))
      ->default_str("the spec's [train] precision, default fp32");
}

/// --memory-limit and --no-memory-check, shared by run-step, train and
/// gradcheck.
inline void addMemoryCheckOptions(CLI::App *cmd, MemoryCheckArgs &memory) {
  CLI::Option *limit =
      cmd->add_option("--memory-limit", memory.limit,
                      "Refuse a step that needs more than this (e.g. 16G) instead of what "
                      "the machine has (available RAM, or the GPU's free memory)");
  // Both would be a limit that is silently not checked.
  cmd->add_flag("--no-memory-check", memory.skip,
                "Run even when the step looks too large for the machine")
      ->excludes(limit);
}

/// run-step's options after the model (or bundle).
inline void addRunStepOptions(CLI::App *cmd, RunStepArgs &run) {
  cmd->add_option("--weights", run.weights,
                     "Parameters: a safetensors file (HuggingFace names, F32/F16/BF16/F64), a "
                     "HuggingFace model directory or its shards' index; default: random init");
  cmd->add_option("--batch", run.batch,
                     "Batch (safetensors, as ../shared/golden); default: synthetic");
  cmd->add_option("--out", run.output, "Write loss, logits, hidden, new_mems.{i} here");
  cmd->add_option("--dump-plan", run.dumpPlan, "Also write the plan (JSON) here");
  cmd->add_flag("--grads", run.grads,
                   "Also compute the gradient of the loss w.r.t. every parameter "
                   "(written as grad.<param> with --out)");
  cmd->add_flag("--from-raw", run.fromRaw,
                   "Derive the masks and targets from the batch's raw.* tensors "
                   "(automatic when the batch has no perm_mask)");
  cmd->add_flag("--eval", run.eval,
                "Evaluation mode: dropout and dropatt off (the default for a HuggingFace "
                "config.json model, as model.eval() in transformers)");
  cmd->add_flag("--train-mode", run.trainMode,
                "Keep the model's dropout and dropatt (the default for a TOML spec)");
  cmd->add_option("--dump-batch", run.dumpBatch,
                     "Write the batch tensors the step used (safetensors)");
  cmd->add_option("--seed", run.seed, "Seed for dropout and synthetic inputs")
      ->capture_default_str();
  cmd->add_option("--threads", run.threads, "Host threads, at most the CPUs this process may use (0: OpenMP's default: all of them, or OMP_NUM_THREADS)")
      ->capture_default_str();
  addDeviceOptions(cmd, run.device, run.noKernelCache, "host");
  addPrecisionOption(cmd, run.precision);
  addMemoryCheckOptions(cmd, run.memory);
}

/// --steps N: a whole number above 0 (CLI::Validator: an error message, or
/// empty when `text` is one). Leaving the flag out trains to train_steps.
inline std::string checkStepCount(std::string &text) {
  errno = 0;
  char *end = nullptr;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || n <= 0)
    return "the number of steps to train to must be a whole number above 0, got '" + text +
           "' (leave --steps out to train to the spec's train_steps)";
  return "";
}

/// train's options after the spec (or bundle).
/// `defaultOut` names --out's default as the command computes it.
inline void addTrainOptions(CLI::App *cmd, TrainArgs &train, const std::string &defaultOut) {
  cmd->add_option("--data", train.data,
                       "Corpus: text, one sentence per line, blank line between "
                       "documents (or a #xlnetc-ids file), read into memory; or a "
                       "directory xlnetc prepare-data wrote, memory-mapped")
      ->required();
  cmd->add_option("--tokenizer", train.tokenizer,
                       "SentencePiece model (e.g. the released spiece.model); "
                       "default: a prepared directory's, else train one on the corpus");
  cmd->add_flag("--keep-accents", train.keepAccents,
                "Keep accents when tokenizing (the spec's [data] keep_accents; the default "
                "strips them, as the official code and HuggingFace do)");
  cmd->add_option("--steps", train.steps,
                  "Train until step N, at most the spec's train_steps, where the "
                  "learning-rate schedule ends (default: train_steps); a run stopped "
                  "early goes on with --resume")
      ->check(CLI::Validator(checkStepCount, "N > 0"));
  cmd->add_option("--out", train.outDir,
                       "Run directory: checkpoint, metrics.jsonl, loss.png (default: " +
                           defaultOut + ")");
  cmd->add_option("--checkpoint-every", train.checkpointEvery,
                       "Also checkpoint every K steps (always at the end)");
  cmd->add_option("--log-every", train.logEvery,
                       "Progress line every K steps (default: about 50 lines)");
  cmd->add_flag("--resume", train.resume,
                "Continue the run in --out from its checkpoint, with the run's own "
                "settings (--out's spec.toml): a spec that changes one is refused, "
                "naming it");
  cmd->add_option("--override", train.overrides,
                  "With --resume: train on with this changed setting of the spec "
                  "(learning_rate, train_steps, dropout, clip, ...; repeat the flag or "
                  "list keys with commas); spec.toml and metrics.jsonl record the change")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->type_name("KEY");
  cmd->add_option("--init-from", train.initFrom,
                       "Start from a HuggingFace XLNet safetensors checkpoint");
  cmd->add_option("--eval-data", train.evalData,
                  "Held-out text (a text file, ids corpus or prepare-data directory): its "
                  "loss, dropout off, every --eval-every steps and after the last "
                  "(metrics.jsonl eval events, the progress, loss.png)");
  cmd->add_option("--eval-every", train.evalEvery,
                  "Evaluate on --eval-data every K steps")
      ->check(CLI::PositiveNumber)
      ->default_str("about 10 evaluations a run");
  cmd->add_option("--eval-batches", train.evalBatches,
                  "Batches of --eval-data per evaluation, from its start each time")
      ->check(CLI::PositiveNumber)
      ->default_str("the held-out text once, at most 100");
  cmd->add_option("--tensorboard", train.tensorboard,
                  "Also write the scalars (loss, held-out loss, lr, gradient norm, tokens/s, "
                  "memory) as a TensorBoard event file in DIR (the spec's [train] "
                  "tensorboard)");
  cmd->add_flag("--no-plot", train.noPlot, "Do not draw loss.png");
  cmd->add_option("--dump-batches", train.dumpBatches,
                       "Write each step's batch and incoming memory to "
                       "DIR/step-NNNNNN.safetensors (run-step --batch format)");
  cmd->add_option("--threads", train.threads, "Host threads, at most the CPUs this process may use (0: OpenMP's default: all of them, or OMP_NUM_THREADS)")
      ->capture_default_str();
  addDeviceOptions(cmd, train.device, train.noKernelCache,
                   "the spec's [train] device, default host");
  addPrecisionOption(cmd, train.precision);
  cmd->add_option("--micro-batch", train.microBatch,
                  "Gradient accumulation: run each process's rows as micro-batches of this "
                  "many rows, one after another, each with its own memory, and update once "
                  "per step (the spec's micro_batch_size)")
      ->check(CLI::PositiveNumber)
      ->default_str("the spec's [train] micro_batch_size, default one batch");
  cmd->add_option("--micro-memory", train.microMemory,
                  "Gradient accumulation on a GPU: where each micro-batch's memory waits "
                  "between its runs: device, host (page-locked RAM, copied over the bus) or "
                  "auto (the device when it fits beside the step, else the host)")
      ->check(CLI::IsMember({"auto", "device", "host"}))
      ->capture_default_str();
  addMemoryCheckOptions(cmd, train.memory);
  cmd->add_flag("--data-parallel", train.dataParallel,
                "Take the data-parallel path in one process too: gradient buckets, their "
                "all-reduce (NCCL on --device cuda), the side stream; a check of that path "
                "on one GPU (under mpirun or srun it is always taken)");
  cmd->add_option("--check-ranks-every", train.checkRanksEvery,
                  "Under mpirun: compare the processes' parameters every K steps (and "
                  "after the last); a difference stops the run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--rank-timeout", train.rankTimeout,
                  "Under mpirun: seconds a process waits for the others in one exchange "
                  "while training (checkpoint writes and first-step kernel compiles "
                  "included) before it ends the job; 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--bucket-mib", train.bucketMiB,
                  "Data parallel (mpirun, srun, --data-parallel): gradients are all-reduced "
                  "in buckets of about this many MiB, each as soon as the backward has "
                  "written it")
      ->check(CLI::Range(1e-6, 1e6))
      ->capture_default_str();
}

/// The compare subcommand (xlnetc and xlnetc-run).
inline CLI::App *addCompareCommand(CLI::App &app, CompareArgs &cmp) {
  CLI::App *cmd = app.add_subcommand(
      "compare", "Compare tensors of two safetensors files: max|got-ref| <= rtol*max|ref|");
  cmd->add_option("got", cmp.got, "Computed tensors")->required();
  cmd->add_option("ref", cmp.ref, "Reference tensors")->required();
  cmd->add_option("--only", cmp.only,
                  "Names to compare ('*' matches any suffix, e.g. new_mems.*)");
  cmd->add_option("--rtol", cmp.rtol, "Tolerance relative to max|ref|")->capture_default_str();
  cmd->add_option("--min-cosine", cmp.minCosine,
                  "Pass a tensor when cos(got, ref) >= this instead of by --rtol "
                  "(bf16 against fp32)")
      ->check(CLI::Range(0.0, 1.0));
  return cmd;
}

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_OPTIONS_H
