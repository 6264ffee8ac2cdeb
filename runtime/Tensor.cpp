//===- Tensor.cpp - Host tensors for the runtime --------------------------===//

#include "runtime/Tensor.h"

#include <fmt/format.h>

#include <cstring>

namespace xlnetc::rt {

size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return 4;
  case DType::I64:
    return 8;
  case DType::Bool:
    return 1;
  case DType::BF16:
    return 2;
  }
  return 0;
}

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::I64:
    return "i64";
  case DType::Bool:
    return "bool";
  case DType::BF16:
    return "bf16";
  }
  return "?";
}

std::optional<DType> parseDTypeName(const std::string &name) {
  if (name == "f32")
    return DType::F32;
  if (name == "i64")
    return DType::I64;
  if (name == "bool")
    return DType::Bool;
  if (name == "bf16")
    return DType::BF16;
  return std::nullopt;
}

const char *dtypeSafetensorsName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  case DType::BF16:
    return "BF16";
  }
  return "?";
}

std::optional<DType> parseSafetensorsDType(const std::string &name) {
  if (name == "F32")
    return DType::F32;
  if (name == "I64")
    return DType::I64;
  if (name == "BOOL")
    return DType::Bool;
  if (name == "BF16")
    return DType::BF16;
  return std::nullopt;
}

int64_t numelOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string Tensor::typeStr() const {
  return std::string(dtypeName(dtype)) + shapeStr(shape);
}

Tensor Tensor::view(DType dtype, std::vector<int64_t> shape, void *data) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.viewData = data;
  return t;
}

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.storage.assign((t.nbytes() + 7) / 8, 0);
  return t;
}

Tensor Tensor::fromF32(std::vector<int64_t> shape,
                       const std::vector<float> &values) {
  Tensor t = zeros(DType::F32, std::move(shape));
  // memcpy's pointers must not be null even for 0 bytes (an empty
  // tensor's or vector's are; UBSan, scripts/sanitize.sh).
  if (const size_t n = std::min(t.nbytes(), values.size() * sizeof(float)); n > 0)
    std::memcpy(t.bytes(), values.data(), n);
  return t;
}

Tensor Tensor::fromI64(std::vector<int64_t> shape,
                       const std::vector<int64_t> &values) {
  Tensor t = zeros(DType::I64, std::move(shape));
  if (const size_t n = std::min(t.nbytes(), values.size() * sizeof(int64_t)); n > 0)
    std::memcpy(t.bytes(), values.data(), n);
  return t;
}

Tensor Tensor::fromBool(std::vector<int64_t> shape,
                        const std::vector<uint8_t> &values) {
  Tensor t = zeros(DType::Bool, std::move(shape));
  if (const size_t n = std::min(t.nbytes(), values.size()); n > 0)
    std::memcpy(t.bytes(), values.data(), n);
  return t;
}

} // namespace xlnetc::rt
