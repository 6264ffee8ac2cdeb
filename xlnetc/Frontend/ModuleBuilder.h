//===- ModuleBuilder.h - model spec to an xlnet module ----------*- C++ -*-===//
//
// Builds the model-level xlnet module of one pretraining step's forward from
// a ModelSpec and the step's shapes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H
#define XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H

#include "xlnetc/Spec/Spec.h"
#include "xlnetc/Spec/StepShape.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace xlnetc {

/// Builds `func.func @forward` with named inputs (xlnet.input), parameters
/// under their HuggingFace names (xlnet.param) and results (xlnet.output):
/// loss, per_token_loss, logits, hidden, new_mems.{i}.
mlir::OwningOpRef<mlir::ModuleOp> buildForwardModule(mlir::MLIRContext &ctx,
                                                     const ModelSpec &spec,
                                                     const StepShape &shape);

} // namespace xlnetc

#endif // XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H
