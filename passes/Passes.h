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

/// Stages of the pipeline, in order. `--emit=` names them.
enum class Stage {
  Model,          ///< as built from the spec (layer-level ops)
  Decomposed,     ///< layers expanded
  Kernels,        ///< one op = one plan step: the forward step
  Differentiated, ///< + backward, returns grad.<param>
  Optimized,      ///< + Adam update: the training step
};

/// Adds the passes that take a freshly built module (Stage::Model) to
/// `until`. This is the one place where pass order is written. `optimizer`
/// configures the Stage::Optimized pass; `bf16` ends a pipeline that reaches
/// the kernel-level ops with --xlnet-mixed-precision; `fuse` (kernel-level
/// stages only) ends it with --xlnet-fuse-kernels, as every plan is made;
/// `accumulate` (Differentiated and Optimized) makes the step a micro-batch
/// of gradient accumulation (--xlnet-accumulate-gradients).
void buildLoweringPipeline(OpPassManager &pm, Stage until = Stage::Kernels,
                           const ApplyOptimizerPassOptions &optimizer = {},
                           bool bf16 = false,
                           const FuseKernelsPassOptions *fuse = nullptr,
                           bool accumulate = false);

/// One past the largest `site` attribute of the random ops (dropout,
/// rel_attention) under `root`; 0 when none has one. New sites are numbered
/// from here, so explicit sites (a forward op and its backward) never clash
/// with generated ones.
int64_t firstFreeSite(Operation *root);

/// Gives every random op (dropout, rel_attention, rel_attention_grad) without
/// a `site` one, in op order after the largest existing one: the numbers
/// the plan emitter would give them, now fixed, so a backward op can name
/// its forward's site and a fused op can keep the site of an op it absorbs.
void assignSites(func::FuncOp func);

/// Whether the official update excludes parameter `name` (HuggingFace name)
/// from weight decay: LayerNorm weights and biases and `.bias` parameters;
/// the relative attention biases r_w_bias, r_r_bias, r_s_bias decay.
bool isExcludedFromWeightDecay(llvm::StringRef name);

/// Registers the pipeline as `xlnet-lower` for xlnet-opt.
void registerPipelines();

} // namespace mlir::xlnet

#endif // XLNETC_PASSES_PASSES_H
