//===- Safetensors.h - Reading and writing .safetensors files --*- C++ -*-===//
//
// The checkpoint and batch interchange format: an 8-byte little-endian header
// length N, N bytes of JSON header
//   { name: { "dtype", "shape", "data_offsets": [begin, end] }, ...,
//     "__metadata__": { str: str } (optional) }
// then the raw little-endian data (offsets relative to the data start).
// Supported dtypes: F32, I64, BOOL.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_IO_SAFETENSORS_H
#define XLNETC_RUNTIME_IO_SAFETENSORS_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <map>
#include <string>

namespace xlnetc::rt {

/// Reads every tensor of `path` into `out` (added to what is there) and, when
/// `metadata` is given, the `__metadata__` entries. Validates the whole file;
/// every error message names the path.
Status readSafetensors(const std::string &path, TensorMap &out,
                       std::map<std::string, std::string> *metadata = nullptr);

/// Writes `tensors` (in sorted-name order) and `metadata` to `path`
/// atomically: the data goes to `path.tmp.<pid>` first and is renamed over
/// `path` only once complete, so a failure never clobbers an existing file.
Status writeSafetensors(const std::string &path, const TensorMap &tensors,
                        const std::map<std::string, std::string> &metadata = {});

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_IO_SAFETENSORS_H
