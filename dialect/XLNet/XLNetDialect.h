//===- XLNetDialect.h - xlnet dialect ---------------------------*- C++ -*-===//
//
// Declares the `xlnet` dialect, its enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_DIALECT_XLNET_XLNETDIALECT_H
#define XLNETC_DIALECT_XLNET_XLNETDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "dialect/XLNet/XLNetDialect.h.inc"
#include "dialect/XLNet/XLNetEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/XLNet/XLNetAttrs.h.inc"

#endif // XLNETC_DIALECT_XLNET_XLNETDIALECT_H
