//===- SafetensorsHeader.h - The header half of a safetensors file -*- C++ -*-===//
//
// Shared by every safetensors reader of the runtime (runtime/io/Safetensors.cpp
// for the plan dtypes, runtime/train/WeightsReader.cpp for any dtype): the
// 8-byte length, the size limits and the JSON header, with one set of
// messages. Internal: exposes nlohmann::json.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_IO_SAFETENSORSHEADER_H
#define XLNETC_RUNTIME_IO_SAFETENSORSHEADER_H

#include "runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <string>

namespace xlnetc::rt::detail {

/// The parsed header of an open safetensors stream.
struct SafetensorsHeader {
  nlohmann::json json; ///< an object: tensor entries and "__metadata__"
  uint64_t dataStart = 0; ///< file offset of the data section
  uint64_t dataSize = 0;  ///< bytes in the data section
};

/// Opens `path` into `in` and reads its header. Errors (without the path):
/// cannot open, shorter than 8 bytes, header length beyond the file or
/// 100 MiB, short read, not JSON, not an object, a name given twice.
Status readSafetensorsHeader(const std::string &path, std::ifstream &in,
                             SafetensorsHeader &out);

/// The format's layout rules over the header's well-formed data_offsets:
/// no two tensors overlap, and together they cover the data section with no
/// gap (as upstream's reader checks it). Malformed entries are skipped: the
/// readers check every entry first, then call this, then read data.
Status checkSafetensorsLayout(const nlohmann::json &header, uint64_t dataSize);

/// Copies the "__metadata__" entries (non-strings as JSON text) into
/// `metadata`; an error when it is not an object.
Status readSafetensorsMetadata(const nlohmann::json &value,
                               std::map<std::string, std::string> &metadata);

} // namespace xlnetc::rt::detail

#endif // XLNETC_RUNTIME_IO_SAFETENSORSHEADER_H
