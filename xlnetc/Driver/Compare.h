//===- Compare.h - `compare`: two safetensors files, tensor by tensor -*- C++ -*-===//
//
// In xlnetc and in xlnetc-run (no MLIR), so checkpoints can be compared on
// the machine that wrote them, a GPU machine included.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_COMPARE_H
#define XLNETC_XLNETC_DRIVER_COMPARE_H

#include <string>
#include <vector>

namespace xlnetc {

struct CompareArgs {
  std::string got, ref;
  std::vector<std::string> only; ///< name patterns ('*' wildcard); empty: all of ref
  double rtol = 1e-5;
  /// > 0: a tensor passes when the cosine similarity of got and ref is at
  /// least this (the bf16 criterion, docs/Testing.md), instead of rtol.
  double minCosine = 0;
};
/// Prints a row per tensor and a summary; 0 when every tensor passes.
int runCompare(const CompareArgs &args);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_COMPARE_H
