//===- XLNetDialect.cpp - xlnet dialect registration ----------------------===//

#include "dialect/XLNet/XLNetDialect.h"
#include "dialect/XLNet/XLNetOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::xlnet;

#include "dialect/XLNet/XLNetDialect.cpp.inc"
#include "dialect/XLNet/XLNetEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialect/XLNet/XLNetAttrs.cpp.inc"

void XLNetDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/XLNet/XLNetAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialect/XLNet/XLNetOps.cpp.inc"
      >();
}
