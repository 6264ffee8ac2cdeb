//===- Commands.h - xlnetc subcommands --------------------------*- C++ -*-===//
//
// Each subcommand returns the process exit code and reports errors as one
// "xlnetc: error: ..." line (or the spec's "file:line:col: error: ...").
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_COMMANDS_H
#define XLNETC_XLNETC_DRIVER_COMMANDS_H

#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc {

struct StepShape;

struct CompileArgs {
  std::string spec;
  std::string emit = "plan";
  std::string step = "train"; ///< forward, grads or train (the plan's step)
  std::string output; ///< empty: stdout; a directory for bundle
  /// Whether --emit was given: without it, an -o path without an extension
  /// is a bundle directory.
  bool emitGiven = false;
  bool printIrAfterAll = false;
  // Step shape overrides (0: take the spec's value).
  int64_t batchSize = 0, seqLen = 0, numPredict = 0, mlen = -1;
  /// --micro-batch (0: the spec's micro_batch_size).
  int64_t microBatch = 0;
  /// "bits": the step reads perm_bits (a perm_mask without ranks) instead
  /// of perm_rank.
  std::string permMask = "ranks";
  /// "fp32" or "bf16"; empty: the spec's [train] precision.
  std::string precision;
  /// Bundles: also compile every kernel ahead of time for this NVRTC
  /// architecture (empty: none); noKernelCache bypasses the kernel cache.
  std::string arch;
  bool noKernelCache = false;
};
int runCompile(const CompileArgs &args);

/// --memory-limit and --no-memory-check (MemoryFit.h).
struct MemoryCheckArgs {
  std::string limit; ///< a size ("16G"); empty: what the machine has
  bool skip = false;
  /// Processes that share the limit (data-parallel ranks on one node, on
  /// the host or emu): each may use its share.
  int sharers = 1;
  /// Data-parallel ranks: the step's batch is train_batch_size / ranks.
  int ranks = 1;
  /// The rows of one process (0: the step's batch); with gradient
  /// accumulation the step runs a micro-batch of them.
  int64_t processRows = 0;
  /// Memory kept beside the step's plan: every micro-batch's memory (the
  /// Transformer-XL mems) set aside between their runs.
  int64_t asideBytes = 0;
};

struct RunStepArgs {
  std::string model;   ///< TOML spec or HuggingFace config.json
  std::string weights; ///< empty: random init from the spec's init_range
  std::string batch;   ///< empty: a synthetic batch from the spec's shapes
  std::string output;  ///< empty: do not write outputs
  std::string dumpPlan;
  /// Also compute and write grad.<param> for every parameter.
  bool grads = false;
  /// Derive perm_mask, target_mapping, target, target_mask (and input_k)
  /// from the batch's raw.* tensors even when the batch has them.
  bool fromRaw = false;
  /// Write the derived batch tensors here.
  std::string dumpBatch;
  /// Evaluation mode (dropout and dropatt off): --eval, or by default for a
  /// HuggingFace config.json model unless --train-mode keeps the config's
  /// rates.
  bool eval = false, trainMode = false;
  uint64_t seed = 0;
  int threads = 0;
  std::string device = "host"; ///< host, emu, cuda or auto
  /// "fp32" or "bf16"; empty: the spec's [train] precision.
  std::string precision;
  bool noKernelCache = false;
  /// The step shape without --batch (a bundle's); null: the spec's.
  const StepShape *defaultShape = nullptr;
  MemoryCheckArgs memory;
};
/// runRunStep (RunStep.h) runs it.

struct TokenizeArgs {
  std::string tokenizer; ///< SentencePiece model
  std::string spec;      ///< optional: keep_accents from this spec
  bool keepAccents = false;
};
/// Reads lines from stdin and prints each line's ids, space-separated, as
/// the training pipeline encodes text (preprocess_text + encode_ids).
int runTokenize(const TokenizeArgs &args);

struct MakeCorpusArgs {
  std::string kind;   ///< "demo" or "memory"
  std::string output;
  std::string spec;   ///< memory: the spec whose batch layout the corpus matches
  uint64_t seed = 0;
  int64_t lines = 5000; ///< demo: about this many sentence lines
};
/// `xlnetc make-corpus`: writes a generated corpus (runtime/data/SyntheticCorpus.h).
int runMakeCorpus(const MakeCorpusArgs &args);

struct GradCheckArgs {
  std::string spec;
  uint64_t seed = 0;
  double eps = 1e-2;       ///< step along the unit direction
  double initRange = 0.2;  ///< std of the random init
  double tolerance = 1e-2; ///< max relative error per parameter tensor
  std::string device = "host"; ///< host, emu, cuda or auto
  bool noKernelCache = false;
  MemoryCheckArgs memory;
};
/// `xlnetc gradcheck`: the compiled backward against central finite
/// differences of the compiled forward (GradCheck.cpp).
int runGradCheck(const GradCheckArgs &args);

struct KernelsArgs {
  std::string spec;
  std::string step = "train"; ///< forward, grads or train
  std::string arch = "sm_90";
  /// The GPU the device program is made for (empty: `arch`'s): a program
  /// made for one GPU checked on another, as a bundle compiled with
  /// --arch tilesFor would run there.
  std::string tilesFor;
  /// Caps ptxas's registers per thread (NVRTC --maxrregcount; 0: none).
  int maxRegisters = 0;
  bool noKernelCache = false;
  bool list = false; ///< one line per kernel
  std::string precision; ///< "fp32" or "bf16"; empty: the spec's
};
/// `xlnetc kernels`: compiles the device program of a step with NVRTC for
/// `arch` (no GPU needed) and checks every kernel's registers, spills and
/// shared memory (Kernels.cpp).
int runKernels(const KernelsArgs &args);

/// `xlnetc devices`: which devices this machine can run (host, emu, cuda),
/// the CUDA driver, NVRTC and cuBLASLt found, and why one is missing.
int runDevices();

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_COMMANDS_H
