//===- PlanEmitter.h - kernel-level xlnet IR to a plan ----------*- C++ -*-===//
//
// Prints a function of kernel-level xlnet ops as the versioned JSON plan of
// docs/Plan.md: one buffer per function argument and op result, one step per
// op. A pure printer: all lowering happens in passes before it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_PASSES_TARGET_PLAN_PLANEMITTER_H
#define XLNETC_PASSES_TARGET_PLAN_PLANEMITTER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::xlnet {

/// The plan format version this emitter writes.
constexpr int kPlanVersion = 4;

/// Writes the plan of `func` to `os`. Fails (with a diagnostic on the
/// offending op) on an op that is not kernel-level, a dynamic shape, or an
/// argument without an `xlnet.input` / `xlnet.param` name.
LogicalResult emitPlan(func::FuncOp func, llvm::raw_ostream &os);

} // namespace mlir::xlnet

#endif // XLNETC_PASSES_TARGET_PLAN_PLANEMITTER_H
