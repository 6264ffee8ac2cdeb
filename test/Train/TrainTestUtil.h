//===- TrainTestUtil.h - Helpers for the training support tests -*- C++ -*-===//

#ifndef XLNETC_TEST_TRAIN_TRAINTESTUTIL_H
#define XLNETC_TEST_TRAIN_TRAINTESTUTIL_H

#include "runtime/Tensor.h"
#include "runtime/train/Checkpoint.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace xlnetc::rt::train::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/xlnet-train-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    char *dir = ::mkdtemp(buf.data());
    EXPECT_NE(dir, nullptr) << "mkdtemp failed";
    path_ = dir ? dir : "/tmp";
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

/// A small XLNet: 2 layers, d_model 8, 2 heads of 4, d_inner 16, 50 tokens.
inline XLNetDims tinyDims() {
  XLNetDims d;
  d.nLayer = 2;
  d.nToken = 50;
  d.dModel = 8;
  d.nHead = 2;
  d.dHead = 4;
  d.dInner = 16;
  return d;
}

/// Deterministic pseudo-random F32 tensors with the given shapes.
inline TensorMap randomTensors(const ParamShapes &shapes, uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.f, 0.5f);
  TensorMap out;
  for (const auto &[name, shape] : shapes) {
    Tensor t = Tensor::zeros(DType::F32, shape);
    for (int64_t i = 0; i < t.numel(); ++i)
      t.f32()[i] = dist(gen);
    out[name] = std::move(t);
  }
  return out;
}

inline float floatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// A complete TrainState of tinyDims() whose values include the awkward
/// floats (NaN payloads, -0, subnormals, inf) and awkward strings.
inline TrainState makeState(uint32_t seed = 1) {
  XLNetDims d = tinyDims();
  ParamShapes shapes = xlnetParamShapes(d);
  TrainState s;
  s.step = (int64_t(1) << 40) + seed;
  s.params = randomTensors(shapes, seed);
  s.adamM = randomTensors(shapes, seed + 100);
  s.adamV = randomTensors(shapes, seed + 200);
  float *b = s.params.at("lm_loss.bias").f32();
  b[0] = floatFromBits(0x7fc12345); // quiet NaN with a payload
  b[1] = floatFromBits(0xffa00001); // signalling NaN, negative
  b[2] = -0.0f;
  b[3] = floatFromBits(0x00000001); // smallest subnormal
  b[4] = floatFromBits(0x7f800000); // +inf
  b[5] = floatFromBits(0xff800000); // -inf
  for (int i = 0; i < d.nLayer; ++i) {
    Tensor m = Tensor::zeros(DType::F32, {3, 2, d.dModel});
    for (int64_t k = 0; k < m.numel(); ++k)
      m.f32()[k] = float(i * 1000 + k) * 0.25f;
    s.mems["mems." + std::to_string(i)] = std::move(m);
  }
  s.rngState = "mt19937_64 12345 678\nline two \"quoted\" \\ tab\t end";
  s.dataPosition =
      R"({"file":"data/corpus ü.txt","offset":123456789012,"epoch":3})";
  s.specFingerprint = "fp-" + std::to_string(seed) + "-0123456789abcdef";
  s.specSummary = "n_layer 2, d_model 8, n_head 2, d_head 4, d_inner 16, "
                  "n_token 50, batch 4, seq_len 16, mem_len 3";
  return s;
}

/// True when both maps hold the same names, dtypes, shapes and bytes.
inline ::testing::AssertionResult bitEqual(const TensorMap &a,
                                           const TensorMap &b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure()
           << "sizes differ: " << a.size() << " vs " << b.size();
  for (const auto &[name, t] : a) {
    auto it = b.find(name);
    if (it == b.end())
      return ::testing::AssertionFailure() << "missing '" << name << "'";
    const Tensor &u = it->second;
    if (t.dtype != u.dtype || t.shape != u.shape)
      return ::testing::AssertionFailure()
             << "'" << name << "': " << t.typeStr() << " vs " << u.typeStr();
    if (std::memcmp(t.bytes(), u.bytes(), t.nbytes()) != 0)
      return ::testing::AssertionFailure() << "'" << name << "': bytes differ";
  }
  return ::testing::AssertionSuccess();
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

/// One tensor of a hand-built safetensors file.
struct RawTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

/// Writes a safetensors file with any dtypes (the runtime writer only knows
/// the plan dtypes).
inline void writeRawSafetensors(const std::string &path,
                                const std::vector<RawTensor> &tensors,
                                const std::map<std::string, std::string> &meta =
                                    {}) {
  nlohmann::json header = nlohmann::json::object();
  std::string data;
  for (const RawTensor &t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.bytes.size()}}};
    data += t.bytes;
  }
  if (!meta.empty())
    header["__metadata__"] = meta;
  std::string text = header.dump();
  std::string out(8, '\0');
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    out[i] = char((n >> (8 * i)) & 0xff);
  writeFile(path, out + text + data);
}

/// The raw little-endian bytes of an F32 tensor.
inline std::string f32Bytes(const Tensor &t) {
  return std::string(reinterpret_cast<const char *>(t.bytes()), t.nbytes());
}

/// Names in `dir` starting with `prefix`.
inline std::vector<std::string> filesWithPrefix(const std::string &dir,
                                                const std::string &prefix) {
  std::vector<std::string> out;
  for (const auto &e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0)
      out.push_back(name);
  }
  return out;
}

} // namespace xlnetc::rt::train::test

#endif // XLNETC_TEST_TRAIN_TRAINTESTUTIL_H
