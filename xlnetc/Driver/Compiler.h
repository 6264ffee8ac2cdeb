//===- Compiler.h - spec to IR or plan --------------------------*- C++ -*-===//
//
// The compiler half of xlnetc: builds the model-level module of a step,
// verifies it, runs the lowering pipeline up to a stage and prints that
// stage (IR text or the JSON plan). Errors come back as text, never exit().
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_COMPILER_H
#define XLNETC_XLNETC_DRIVER_COMPILER_H

#include "target/cuda/CudaEmitter.h"
#include "xlnetc/Frontend/ModuleBuilder.h"

#include <optional>
#include <string>

namespace xlnetc {

/// What `--emit=` prints: the IR after a pipeline stage, the plan, or the
/// CUDA C++ of the plan's device program.
enum class Emit { Mlir, Decomposed, Kernels, Grads, Train, Fused, Plan, Cuda, Memory };

/// Parses an `--emit=` value ("mlir", "decomposed", "kernels", "grads",
/// "train", "fused", "plan", "cuda", "memory"; "bundle" is the driver's).
std::optional<Emit> parseEmit(const std::string &name);

struct CompileOptions {
  Emit emit = Emit::Plan;
  /// The step of `--emit=plan`, `cuda` and `memory`; the IR stages print
  /// what they name.
  StepKind step = StepKind::Forward;
  bool printIrAfterAll = false; ///< print the IR after every pass to stderr
  /// The GPU the device program of `--emit=cuda` and `memory` is made for.
  rt::dev::GpuTarget target;
  /// A micro-batch step (StepShape::accumulate): the rows of the whole
  /// process batch, which `--emit=memory` reports beside the micro-batch's.
  int64_t processRows = 0;
};

/// Compiles one step of `spec` with `shape` (the optimizer settings come
/// from the spec's [train] section). On success `out` holds the requested
/// text; on failure `error` holds the diagnostics.
bool compileStep(const ModelSpec &spec, const StepShape &shape,
                 const CompileOptions &options, std::string &out,
                 std::string &error);

/// The emitter options of a device program compiled from `spec` for
/// `target`: the module name ("xlnet-tiny.toml.train.cu") and the origin
/// named in its header.
cuda::CudaEmitOptions deviceEmitOptions(const ModelSpec &spec, StepKind step,
                                        const rt::dev::GpuTarget &target);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_COMPILER_H
