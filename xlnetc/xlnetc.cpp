//===- xlnetc.cpp - the xlnetc command-line tool --------------------------===//
//
//   xlnetc compile SPEC [--emit=mlir|decomposed|kernels|plan]
//   xlnetc run-step MODEL [--weights W] [--batch B] [--out O]
//   xlnetc compare GOT REF [--only NAME...] [--rtol R]
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Commands.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <unistd.h>

/// libgomp reads OMP_WAIT_POLICY when it is loaded, before main. Its default
/// (spin before sleeping) made one tiny-model step take ~100 ms instead of
/// ~5 ms on a 2-core VM about half the time (idle workers spinning against
/// the thread doing the work); "passive" is always fast. So, unless the user
/// chose a policy, run again once with it set.
static void ensurePassiveOpenMPWait(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY"))
    return;
  setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  execv("/proc/self/exe", argv); // returns only on failure: carry on as is
}

int main(int argc, char **argv) {
  ensurePassiveOpenMPWait(argv);
  CLI::App app{"xlnetc: a compiler and runtime for XLNet pretraining"};
  app.require_subcommand(1);

  xlnetc::CompileArgs compile;
  auto *compileCmd = app.add_subcommand(
      "compile", "Compile a model spec into IR or an executable plan");
  compileCmd->add_option("spec", compile.spec, "Model spec (.toml) or HuggingFace config.json")
      ->required();
  compileCmd->add_option("--emit", compile.emit,
                         "What to print: mlir (model-level IR), decomposed, "
                         "kernels (kernel-level IR) or plan (JSON)")
      ->capture_default_str();
  compileCmd->add_option("-o,--output", compile.output, "Output file (default: stdout)");
  compileCmd->add_flag("--print-ir-after-all", compile.printIrAfterAll,
                       "Print the IR after every pass to stderr");
  compileCmd->add_option("--batch-size", compile.batchSize, "Override train_batch_size");
  compileCmd->add_option("--seq-len", compile.seqLen, "Override seq_len");
  compileCmd->add_option("--num-predict", compile.numPredict, "Override num_predict");
  compileCmd->add_option("--mlen", compile.mlen,
                         "Incoming memory length (default: mem_len)");

  xlnetc::RunStepArgs run;
  auto *runCmd = app.add_subcommand(
      "run-step", "Compile and run one forward step on the host, print the loss");
  runCmd->add_option("model", run.model, "Model spec (.toml) or HuggingFace config.json")
      ->required();
  runCmd->add_option("--weights", run.weights,
                     "Parameters (safetensors, HuggingFace names); default: random init");
  runCmd->add_option("--batch", run.batch,
                     "Batch (safetensors, as ../shared/golden); default: synthetic");
  runCmd->add_option("--out", run.output, "Write loss, logits, hidden, new_mems.{i} here");
  runCmd->add_option("--dump-plan", run.dumpPlan, "Also write the plan (JSON) here");
  runCmd->add_option("--seed", run.seed, "Seed for dropout and synthetic inputs")
      ->capture_default_str();
  runCmd->add_option("--threads", run.threads, "Host threads (0: all cores)")
      ->capture_default_str();

  xlnetc::CompareArgs cmp;
  auto *cmpCmd = app.add_subcommand(
      "compare", "Compare tensors of two safetensors files: max|got-ref| <= rtol*max|ref|");
  cmpCmd->add_option("got", cmp.got, "Computed tensors")->required();
  cmpCmd->add_option("ref", cmp.ref, "Reference tensors")->required();
  cmpCmd->add_option("--only", cmp.only,
                     "Names to compare ('*' matches any suffix, e.g. new_mems.*)");
  cmpCmd->add_option("--rtol", cmp.rtol, "Tolerance relative to max|ref|")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);
  if (*compileCmd)
    return xlnetc::runCompile(compile);
  if (*runCmd)
    return xlnetc::runRunStep(run);
  return xlnetc::runCompare(cmp);
}
