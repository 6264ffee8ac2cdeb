//===- ModuleBuilder.h - model spec to an xlnet module ----------*- C++ -*-===//
//
// Builds the model-level xlnet module of one pretraining step's forward from
// a ModelSpec and the step's shapes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H
#define XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H

#include "xlnetc/Spec/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace xlnetc {

/// The shapes of one step: they come from the spec ([data], [train]) or
/// from a batch file.
struct StepShape {
  int64_t batch = 0;      ///< B
  int64_t seqLen = 0;     ///< S (qlen)
  int64_t numPredict = 0; ///< NP
  int64_t mlen = 0;       ///< incoming memory length M (0: no memory)
  int64_t reuseLen = 0;   ///< cached prefix of the segment (0: all of it)
  /// The step reads perm_bits (a perm_mask without ranks) instead of
  /// perm_rank (runtime/PermMask.h).
  bool permBits = false;
};

/// The step shape a spec implies: batch train_batch_size, mlen = mem_len
/// (the steady state: training starts from zero mems of length mem_len).
StepShape stepShapeFromSpec(const ModelSpec &spec);

/// Builds `func.func @forward` with named inputs (xlnet.input), parameters
/// under their HuggingFace names (xlnet.param) and results (xlnet.output):
/// loss, per_token_loss, logits, hidden, new_mems.{i}.
mlir::OwningOpRef<mlir::ModuleOp> buildForwardModule(mlir::MLIRContext &ctx,
                                                     const ModelSpec &spec,
                                                     const StepShape &shape);

} // namespace xlnetc

#endif // XLNETC_XLNETC_FRONTEND_MODULEBUILDER_H
