//===- FuzzMain.cpp - One libFuzzer entry point per target ----------------===//
//
// Compiled once per target with -DXLNETC_FUZZ_TARGET=<function> and
// -fsanitize=fuzzer (fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzTargets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  xlnetc::fuzz::XLNETC_FUZZ_TARGET(data, size);
  return 0;
}
