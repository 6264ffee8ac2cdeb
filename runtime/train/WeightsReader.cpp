//===- WeightsReader.cpp - Safetensors reading with dtype conversion ------===//

#include "runtime/train/WeightsReader.h"

#include "runtime/io/SafetensorsHeader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace xlnetc::rt::train {

using nlohmann::json;

namespace {

/// Element size of a safetensors dtype; 0 when unknown.
uint64_t elementSize(const std::string &dtype) {
  static const std::map<std::string, uint64_t> sizes = {
      {"F64", 8},     {"F32", 4},     {"F16", 2},      {"BF16", 2},
      {"I64", 8},     {"I32", 4},     {"I16", 2},      {"I8", 1},
      {"U64", 8},     {"U32", 4},     {"U16", 2},      {"U8", 1},
      {"BOOL", 1},    {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  auto it = sizes.find(dtype);
  return it == sizes.end() ? 0 : it->second;
}

Status indexImpl(const std::string &path, SafetensorsIndex &out) {
  std::ifstream in;
  detail::SafetensorsHeader header;
  XLNETC_RETURN_IF_ERROR(detail::readSafetensorsHeader(path, in, header));
  out.path = path;
  out.dataStart = header.dataStart;
  const uint64_t dataSize = header.dataSize;
  for (auto it = header.json.begin(); it != header.json.end(); ++it) {
    const std::string &name = it.key();
    if (name == "__metadata__") {
      XLNETC_RETURN_IF_ERROR(detail::readSafetensorsMetadata(*it, out.metadata));
      continue;
    }
    const json &e = *it;
    if (!e.is_object())
      return Status::error(
          fmt::format("tensor '{}': entry is not an object", name));
    SafetensorsEntry entry;
    auto dt = e.find("dtype");
    if (dt == e.end() || !dt->is_string())
      return Status::error(
          fmt::format("tensor '{}': missing or non-string 'dtype'", name));
    entry.dtype = dt->get<std::string>();
    auto sh = e.find("shape");
    if (sh == e.end() || !sh->is_array())
      return Status::error(
          fmt::format("tensor '{}': missing or non-array 'shape'", name));
    uint64_t numel = 1;
    for (const json &d : *sh) {
      if (!d.is_number_unsigned())
        return Status::error(fmt::format(
            "tensor '{}': shape entry {} is not a non-negative integer", name,
            d.dump()));
      uint64_t dim = d.get<uint64_t>();
      if (dim != 0 && numel > (uint64_t(1) << 60) / dim)
        return Status::error(fmt::format("tensor '{}': shape {} is too large",
                                         name, sh->dump()));
      numel *= dim;
      entry.shape.push_back(int64_t(dim));
    }
    auto off = e.find("data_offsets");
    if (off == e.end() || !off->is_array() || off->size() != 2 ||
        !(*off)[0].is_number_unsigned() || !(*off)[1].is_number_unsigned())
      return Status::error(fmt::format(
          "tensor '{}': missing or malformed 'data_offsets' (want [begin, end])",
          name));
    entry.begin = (*off)[0].get<uint64_t>();
    entry.end = (*off)[1].get<uint64_t>();
    if (entry.begin > entry.end || entry.end > dataSize)
      return Status::error(fmt::format(
          "tensor '{}': data_offsets [{}, {}] out of range (data section has "
          "{} bytes)",
          name, entry.begin, entry.end, dataSize));
    if (uint64_t size = elementSize(entry.dtype);
        size != 0 && entry.end - entry.begin != numel * size)
      return Status::error(fmt::format(
          "tensor '{}': data_offsets [{}, {}] span {} bytes but {}{} needs {}",
          name, entry.begin, entry.end, entry.end - entry.begin, entry.dtype,
          shapeStr(entry.shape), numel * size));
    out.tensors[name] = std::move(entry);
  }
  return detail::checkSafetensorsLayout(header.json, dataSize);
}

} // namespace

float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalise
      int e = 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --e;
      }
      mant &= 0x3ff;
      bits = sign | uint32_t(e + 127 - 15) << 23 | mant << 13;
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | mant << 13; // inf / NaN (payload kept)
  } else {
    bits = sign | (exp + 127 - 15) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bfloat16ToFloat(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Status indexSafetensors(const std::string &path, SafetensorsIndex &out) {
  SafetensorsIndex index;
  XLNETC_RETURN_IF_ERROR(indexImpl(path, index).withPrefix(path + ": "));
  out = std::move(index);
  return Status::ok();
}

bool isConvertibleToF32(const std::string &dtype) {
  return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64";
}

Status readAsF32(const SafetensorsIndex &index, const std::string &name,
                 Tensor &out) {
  auto it = index.tensors.find(name);
  if (it == index.tensors.end())
    return Status::error(
        fmt::format("{}: no tensor named '{}'", index.path, name));
  const SafetensorsEntry &e = it->second;
  if (!isConvertibleToF32(e.dtype))
    return Status::error(fmt::format(
        "{}: tensor '{}' has dtype {}, which is not a float type (supported: "
        "F32, F16, BF16, F64)",
        index.path, name, e.dtype));
  std::ifstream in(index.path, std::ios::binary);
  if (!in)
    return Status::error(
        fmt::format("{}: cannot open: {}", index.path, std::strerror(errno)));
  std::vector<unsigned char> raw(e.end - e.begin);
  in.seekg(std::streamoff(index.dataStart + e.begin));
  in.read(reinterpret_cast<char *>(raw.data()), std::streamsize(raw.size()));
  if (!in)
    return Status::error(fmt::format(
        "{}: tensor '{}': short read of its data (file truncated?)", index.path,
        name));
  Tensor t = Tensor::zeros(DType::F32, e.shape);
  float *dst = t.f32();
  int64_t n = t.numel();
  const unsigned char *src = raw.data();
  if (e.dtype == "F32") {
    std::memcpy(dst, src, size_t(n) * 4);
  } else if (e.dtype == "F16" || e.dtype == "BF16") {
    bool half = e.dtype == "F16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t bits = uint16_t(src[2 * i] | (src[2 * i + 1] << 8));
      dst[i] = half ? halfToFloat(bits) : bfloat16ToFloat(bits);
    }
  } else { // F64
    for (int64_t i = 0; i < n; ++i) {
      double d;
      std::memcpy(&d, src + 8 * i, 8);
      if (std::isfinite(d) &&
          std::fabs(d) > double(std::numeric_limits<float>::max()))
        return Status::error(fmt::format(
            "{}: tensor '{}' (F64) holds {} at element {}, outside the F32 "
            "range",
            index.path, name, d, i));
      dst[i] = float(d);
    }
  }
  out = std::move(t);
  return Status::ok();
}

} // namespace xlnetc::rt::train
