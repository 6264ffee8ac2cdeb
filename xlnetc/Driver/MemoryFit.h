//===- MemoryFit.h - Refuse a step that cannot fit --------------*- C++ -*-===//
//
// run-step, train and gradcheck (in xlnetc and xlnetc-run) compile the step
// first, then compare what it needs (runtime/exec/MemoryCheck.h) with what the
// machine has, before allocating the parameters, the batch or the corpus. A
// step that does not fit stops with one line: the need, the limit, the spec
// keys that drive it and a hint (the largest train_batch_size that fits,
// found by compiling the step at smaller batches, or which keys to reduce
// when the model alone is too large). --memory-limit replaces the machine's
// figure; --no-memory-check skips the check.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_MEMORYFIT_H
#define XLNETC_XLNETC_DRIVER_MEMORYFIT_H

#include "xlnetc/Driver/RunStep.h"

#include <string>

namespace xlnetc {

/// Checks that the `step` plan `plan` (compiled for `shape` of `spec`) fits
/// on `executor`; `keepsCopy` as in rt::stepMemoryNeed. False with `error`
/// (one line, no "xlnetc: error:" prefix) when it does not, or when the
/// limit cannot be read or parsed. `compile` gives the plans at smaller
/// batches for the hint; where it cannot (a bundle holds one shape) the hint
/// says to compile a smaller batch.
bool checkStepFits(const ModelSpec &spec, const StepShape &shape, StepKind step,
                   const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
                   const MemoryCheckArgs &args, const StepCompiler &compile,
                   std::string &error);

/// Whether `plan` plus `extraBytes` fits the memory checkStepFits compares
/// with (true under --no-memory-check, or when the limit cannot be read:
/// checkStepFits says why); no hint is made.
bool stepFits(const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
              const MemoryCheckArgs &args, int64_t extraBytes);

/// The host memory the data pipeline may hold (the corpus, read whole):
/// what the memory check's limit leaves after the step where the step lives
/// in host RAM (host, emu), the host's available RAM on a GPU; `what` says
/// which. 0 under --no-memory-check (no bound). False, with `error`, when
/// the limit cannot be read.
bool pipelineMemoryBudget(const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
                          const MemoryCheckArgs &args, int64_t &bytes, std::string &what,
                          std::string &error);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_MEMORYFIT_H
