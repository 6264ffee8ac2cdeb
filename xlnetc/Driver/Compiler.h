//===- Compiler.h - spec to IR or plan --------------------------*- C++ -*-===//
//
// The compiler half of xlnetc: builds the model-level module of a step,
// verifies it, runs the lowering pipeline up to a stage and prints that
// stage (IR text or the JSON plan). Errors come back as text, never exit().
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_COMPILER_H
#define XLNETC_XLNETC_DRIVER_COMPILER_H

#include "xlnetc/Frontend/ModuleBuilder.h"

#include <optional>
#include <string>

namespace xlnetc {

/// What `--emit=` prints: the IR after a pipeline stage, or the plan.
enum class Emit { Mlir, Decomposed, Kernels, Grads, Train, Plan };

/// Parses an `--emit=` value ("mlir", "decomposed", "kernels", "grads",
/// "train", "plan").
std::optional<Emit> parseEmit(const std::string &name);

/// Which step the plan computes.
enum class StepKind {
  Forward, ///< loss, logits, hidden, new_mems
  Grads,   ///< + grad.<param> for every parameter
  Train,   ///< + the Adam update: new.<param>, new.adam_{m,v}.<param>, lr, grad_norm
};

/// Parses a `--step=` value ("forward", "grads", "train").
std::optional<StepKind> parseStepKind(const std::string &name);

struct CompileOptions {
  Emit emit = Emit::Plan;
  /// The step of `--emit=plan`; the IR stages print what they name.
  StepKind step = StepKind::Forward;
  bool printIrAfterAll = false; ///< print the IR after every pass to stderr
};

/// Compiles one step of `spec` with `shape` (the optimizer settings come
/// from the spec's [train] section). On success `out` holds the requested
/// text; on failure `error` holds the diagnostics.
bool compileStep(const ModelSpec &spec, const StepShape &shape,
                 const CompileOptions &options, std::string &out,
                 std::string &error);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_COMPILER_H
