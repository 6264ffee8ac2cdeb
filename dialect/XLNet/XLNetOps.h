//===- XLNetOps.h - xlnet dialect ops ---------------------------*- C++ -*-===//
//
// Declares the ops of the `xlnet` dialect (generated from XLNetOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_DIALECT_XLNET_XLNETOPS_H
#define XLNETC_DIALECT_XLNET_XLNETOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialect/XLNet/XLNetDialect.h"

#define GET_OP_CLASSES
#include "dialect/XLNet/XLNetOps.h.inc"

#endif // XLNETC_DIALECT_XLNET_XLNETOPS_H
