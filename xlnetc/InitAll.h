//===- InitAll.h - register xlnetc dialects and passes ----------*- C++ -*-===//

#ifndef XLNETC_XLNETC_INITALL_H
#define XLNETC_XLNETC_INITALL_H

#include "dialect/XLNet/XLNetDialect.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

namespace xlnetc {

/// The dialects every xlnetc tool loads.
inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<mlir::xlnet::XLNetDialect, mlir::func::FuncDialect>();
}

/// xlnetc's passes and pipeline, plus the upstream ones the tests use.
inline void registerAllPasses() {
  mlir::xlnet::registerXLNetPasses();
  mlir::xlnet::registerPipelines();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
}

} // namespace xlnetc

#endif // XLNETC_XLNETC_INITALL_H
