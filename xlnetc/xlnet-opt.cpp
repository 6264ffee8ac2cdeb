//===- xlnet-opt.cpp - mlir-opt style driver for the xlnet dialect --------===//

#include "xlnetc/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  xlnetc::registerAllDialects(registry);
  xlnetc::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "xlnet optimizer driver\n", registry));
}
