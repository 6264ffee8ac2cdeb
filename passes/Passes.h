//===- Passes.h - xlnetc passes ---------------------------------*- C++ -*-===//
//
// Pass declarations and registration (generated from Passes.td) and the
// pipeline builders (Pipelines.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_PASSES_PASSES_H
#define XLNETC_PASSES_PASSES_H

#include "dialect/XLNet/XLNetDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::xlnet {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

/// Stages of the lowering pipeline, in order. `--emit=` names them.
enum class Stage { Model, Decomposed, Kernels };

/// Adds the passes that take a freshly built module (Stage::Model) to
/// `until`. This is the one place where pass order is written.
void buildLoweringPipeline(OpPassManager &pm, Stage until = Stage::Kernels);

/// Registers the pipeline as `xlnet-lower` for xlnet-opt.
void registerPipelines();

} // namespace mlir::xlnet

#endif // XLNETC_PASSES_PASSES_H
