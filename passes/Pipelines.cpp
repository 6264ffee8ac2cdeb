//===- Pipelines.cpp - the xlnetc pass pipeline ---------------------------===//
//
// The one place where pass order is written.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void xlnet::buildLoweringPipeline(OpPassManager &pm, Stage until) {
  if (until == Stage::Model)
    return;
  // 1. Layers -> memory, attention and FFN ops.
  pm.addNestedPass<func::FuncOp>(createDecomposeLayersPass());
  pm.addPass(createCSEPass());
  if (until == Stage::Decomposed)
    return;
  // 2. Model-level ops -> kernel-level ops (one op = one plan step).
  pm.addNestedPass<func::FuncOp>(createLowerToKernelsPass());
  pm.addPass(createCSEPass());
}

void xlnet::registerPipelines() {
  PassPipelineRegistration<>(
      "xlnet-lower", "Lower a model-level xlnet module to kernel-level ops",
      [](OpPassManager &pm) { buildLoweringPipeline(pm); });
}
