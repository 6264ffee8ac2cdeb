//===- WeightsReader.h - Safetensors reading with dtype conversion -*- C++ -*-===//
//
// runtime/io/Safetensors reads the plan dtypes (F32, I64, BOOL) only. Published
// HuggingFace weights also come as F16, BF16 or F64; this reader indexes any
// safetensors file (validating the header like the runtime reader does) and
// reads chosen float tensors converted exactly to F32 (F16 and BF16 widen
// without rounding; F64 is rounded to nearest and must fit in F32).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_WEIGHTSREADER_H
#define XLNETC_RUNTIME_TRAIN_WEIGHTSREADER_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xlnetc::rt::train {

/// One tensor of a safetensors header.
struct SafetensorsEntry {
  std::string dtype; ///< as spelled in the file: "F32", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; ///< byte range, relative to the data start
};

/// The parsed header of a safetensors file.
struct SafetensorsIndex {
  std::string path;
  uint64_t dataStart = 0;
  std::map<std::string, SafetensorsEntry> tensors;
  std::map<std::string, std::string> metadata;
};

/// Parses and validates the header of `path` (every dtype of the safetensors
/// format is accepted; sizes are checked for the known ones). Error messages
/// start with "<path>: ".
Status indexSafetensors(const std::string &path, SafetensorsIndex &out);

/// True for the dtypes readAsF32 converts: F32, F16, BF16, F64.
bool isConvertibleToF32(const std::string &dtype);

/// Reads tensor `name` of `index` as an F32 tensor. Errors name the path.
Status readAsF32(const SafetensorsIndex &index, const std::string &name,
                 Tensor &out);

/// IEEE half -> float (exact, keeps signed zeros, subnormals, inf, NaN).
float halfToFloat(uint16_t bits);
/// bfloat16 -> float (exact).
float bfloat16ToFloat(uint16_t bits);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_WEIGHTSREADER_H
