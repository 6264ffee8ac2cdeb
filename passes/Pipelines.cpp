//===- Pipelines.cpp - the xlnetc pass pipeline ---------------------------===//
//
// The one place where pass order is written.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void xlnet::buildLoweringPipeline(OpPassManager &pm, Stage until,
                                  const ApplyOptimizerPassOptions &optimizer,
                                  bool bf16, const FuseKernelsPassOptions *fuse,
                                  bool accumulate) {
  if (until == Stage::Model)
    return;
  // Last: bf16 storage for what the earlier stages made (f32 throughout),
  // then the fusions both executors run (on the types they will run).
  auto finish = [&] {
    if (bf16)
      pm.addNestedPass<func::FuncOp>(createMixedPrecisionPass());
    if (fuse)
      pm.addNestedPass<func::FuncOp>(createFuseKernelsPass(*fuse));
  };
  // 1. Layers -> memory, attention and FFN ops.
  pm.addNestedPass<func::FuncOp>(createDecomposeLayersPass());
  pm.addPass(createCSEPass());
  if (until == Stage::Decomposed)
    return; // mixed precision needs kernel-level ops
  // 2. Model-level ops -> kernel-level ops (one op = one plan step); the
  //    attention reads segment ids and ranks instead of [B,S,K] masks.
  pm.addNestedPass<func::FuncOp>(createCompactMasksPass());
  pm.addNestedPass<func::FuncOp>(createLowerToKernelsPass());
  pm.addPass(createCSEPass());
  if (until == Stage::Kernels)
    return finish();
  // 3. Backward of the loss: grad.<param> results.
  pm.addNestedPass<func::FuncOp>(createDifferentiatePass());
  pm.addPass(createCSEPass());
  //    A micro-batch of gradient accumulation: the gradients are summed
  //    into the earlier micro-batches'.
  if (accumulate)
    pm.addNestedPass<func::FuncOp>(createAccumulateGradientsPass());
  if (until == Stage::Differentiated)
    return finish();
  // 4. Adam update of every parameter inside the step (from the summed
  //    gradients, which a micro-batch step keeps as results).
  ApplyOptimizerPassOptions update = optimizer;
  update.keepGradients = update.keepGradients || accumulate;
  pm.addNestedPass<func::FuncOp>(createApplyOptimizerPass(update));
  finish();
}

void xlnet::registerPipelines() {
  PassPipelineRegistration<>(
      "xlnet-lower", "Lower a model-level xlnet module to kernel-level ops",
      [](OpPassManager &pm) { buildLoweringPipeline(pm); });
  PassPipelineRegistration<>(
      "xlnet-train-step",
      "Lower a model-level xlnet module to a training step (forward, backward "
      "and the Adam update with default options)",
      [](OpPassManager &pm) { buildLoweringPipeline(pm, Stage::Optimized); });
}
