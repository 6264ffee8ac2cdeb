//===- FuzzTargets.cpp - The input paths the fuzzers drive ----------------===//

#include "fuzz/FuzzTargets.h"

#include "runtime/Plan.h"
#include "runtime/Safetensors.h"
#include "runtime/data/Batch.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/WeightsReader.h"
#include "xlnetc/Spec/Spec.h"
#include "xlnetc/Spec/SpecInternal.h"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace xlnetc::fuzz {

namespace {

/// The bytes as a file the readers open (one per process and name).
std::string asFile(const char *name, const uint8_t *data, size_t size) {
  const std::string path = "/tmp/xlnetc-fuzz-" + std::to_string(::getpid()) + "-" + name;
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    if (size > 0)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  return path;
}

std::string asText(const uint8_t *data, size_t size) {
  return std::string(reinterpret_cast<const char *>(data), size);
}

/// A small model's parameter shapes: what a checkpoint is checked against.
const rt::train::ParamShapes &smallShapes() {
  static const rt::train::ParamShapes shapes = [] {
    rt::train::XLNetDims d;
    d.nLayer = 1, d.nToken = 16, d.dModel = 4, d.nHead = 2, d.dHead = 2, d.dInner = 8;
    return rt::train::xlnetParamShapes(d);
  }();
  return shapes;
}

} // namespace

void safetensors(const uint8_t *data, size_t size) {
  const std::string path = asFile("safetensors", data, size);
  rt::TensorMap tensors;
  std::map<std::string, std::string> meta;
  (void)rt::readSafetensors(path, tensors, &meta);
  rt::train::SafetensorsIndex index;
  if (rt::train::indexSafetensors(path, index)) {
    for (const auto &[name, entry] : index.tensors)
      if (rt::train::isConvertibleToF32(entry.dtype)) {
        rt::Tensor t;
        (void)rt::train::readAsF32(index, name, t);
      }
  }
  std::remove(path.c_str());
}

void tomlSpec(const uint8_t *data, size_t size) {
  ModelSpec spec;
  std::string error;
  if (detail::loadTomlSpec("fuzz.toml", asText(data, size), spec, error))
    (void)writeSpecToml(spec); // a loaded spec writes back
}

void hfConfig(const uint8_t *data, size_t size) {
  ModelSpec spec;
  std::string error;
  (void)detail::loadHFConfig("fuzz.json", asText(data, size), spec, error);
}

void plan(const uint8_t *data, size_t size) {
  rt::Plan p;
  (void)rt::parsePlan(asText(data, size), p);
}

void checkpoint(const uint8_t *data, size_t size) {
  const std::string path = asFile("checkpoint", data, size);
  rt::train::TrainState state;
  (void)rt::train::loadCheckpoint(path, smallShapes(), "", state);
  rt::TensorMap params;
  std::vector<std::string> warnings;
  (void)rt::train::loadInitFrom(path, smallShapes(), params, warnings);
  std::remove(path.c_str());
}

void rawBatch(const uint8_t *data, size_t size) {
  const std::string path = asFile("batch", data, size);
  rt::TensorMap batch;
  std::map<std::string, std::string> meta;
  if (rt::readSafetensors(path, batch, &meta)) {
    // The shapes as run-step takes them: reuse_len and num_predict from the
    // metadata (bounded by the sequence), else half and a quarter of it.
    int64_t seq = 0;
    if (auto it = batch.find("raw.input"); it != batch.end() && it->second.shape.size() == 2)
      seq = it->second.shape[1];
    auto number = [&](const char *key, int64_t fallback) {
      auto it = meta.find(key);
      if (it == meta.end() || it->second.empty() || it->second.size() > 6)
        return fallback;
      int64_t v = 0;
      for (char c : it->second) {
        if (c < '0' || c > '9')
          return fallback;
        v = v * 10 + (c - '0');
      }
      return v;
    };
    rt::TensorMap out;
    (void)rt::data::deriveBatchFromRaw(batch, number("reuse_len", seq / 2),
                                       number("num_predict", seq / 4), out,
                                       /*densePermMask=*/false);
  }
  std::remove(path.c_str());
}

const std::vector<NamedTarget> &targets() {
  static const std::vector<NamedTarget> all = {
      {"safetensors", safetensors}, {"toml_spec", tomlSpec},   {"hf_config", hfConfig},
      {"plan", plan},               {"checkpoint", checkpoint}, {"raw_batch", rawBatch},
  };
  return all;
}

} // namespace xlnetc::fuzz
