//===- Tensor.h - Host tensors for the runtime -----------------*- C++ -*-===//
//
// A dense, row-major host tensor of one of the three plan dtypes. The bytes
// live in a uint64_t vector so f32/i64 views are always correctly aligned.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TENSOR_H
#define XLNETC_RUNTIME_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace xlnetc::rt {

/// Element types of the plan. Bool is one byte holding 0 or 1. BF16 is
/// bfloat16 (the top half of an f32, rounded to nearest even): the storage
/// of activations in a plan compiled with --precision bf16 (docs/Plan.md
/// "Mixed precision"); only device executors run such plans.
enum class DType { F32, I64, Bool, BF16 };

/// Size of one element in bytes (4, 8, 1, 2).
size_t dtypeSize(DType dtype);
/// Plan spelling: "f32", "i64", "bool", "bf16".
const char *dtypeName(DType dtype);
/// Parses the plan spelling; nullopt when unknown.
std::optional<DType> parseDTypeName(const std::string &name);
/// Safetensors spelling: "F32", "I64", "BOOL", "BF16".
const char *dtypeSafetensorsName(DType dtype);
/// Parses the safetensors spelling; nullopt when unsupported.
std::optional<DType> parseSafetensorsDType(const std::string &name);

/// Product of the dims (1 for a scalar).
int64_t numelOf(const std::vector<int64_t> &shape);
/// "[2, 16, 32]"; "[]" for a scalar.
std::string shapeStr(const std::vector<int64_t> &shape);

/// A dense row-major tensor owning its data, or a view of memory it does
/// not own (the host executor's arena: a view never leaves the executor).
struct Tensor {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// Backing store, 8-byte aligned; holds at least nbytes() bytes. Empty
  /// for a view.
  std::vector<uint64_t> storage;
  /// Non-null: the tensor is a view of nbytes() bytes there (8-byte
  /// aligned); a copy of a view is a view of the same memory.
  void *viewData = nullptr;

  /// A view of `data` (not owned, not zeroed).
  static Tensor view(DType dtype, std::vector<int64_t> shape, void *data);

  /// A zero-filled tensor.
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// Convenience constructors copying `values` (size must equal numel).
  static Tensor fromF32(std::vector<int64_t> shape,
                        const std::vector<float> &values);
  static Tensor fromI64(std::vector<int64_t> shape,
                        const std::vector<int64_t> &values);
  static Tensor fromBool(std::vector<int64_t> shape,
                         const std::vector<uint8_t> &values);

  int64_t numel() const { return numelOf(shape); }
  size_t nbytes() const { return size_t(numel()) * dtypeSize(dtype); }
  /// "f32[2, 16, 32]", used in messages.
  std::string typeStr() const;

  /// The bytes the data may take: the storage's, or nbytes() for a view.
  size_t capacityBytes() const {
    return viewData ? nbytes() : storage.size() * sizeof(uint64_t);
  }

  uint8_t *bytes() { return static_cast<uint8_t *>(data()); }
  const uint8_t *bytes() const { return static_cast<const uint8_t *>(data()); }
  float *f32() { return static_cast<float *>(data()); }
  const float *f32() const { return static_cast<const float *>(data()); }
  int64_t *i64() { return static_cast<int64_t *>(data()); }
  const int64_t *i64() const { return static_cast<const int64_t *>(data()); }
  uint8_t *b8() { return bytes(); }
  const uint8_t *b8() const { return bytes(); }

private:
  void *data() { return viewData ? viewData : storage.data(); }
  const void *data() const { return viewData ? viewData : storage.data(); }
};

/// Tensors by name (batch inputs, parameters, outputs).
using TensorMap = std::map<std::string, Tensor>;

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_TENSOR_H
