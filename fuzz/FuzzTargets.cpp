//===- FuzzTargets.cpp - The input paths the fuzzers drive ----------------===//

#include "fuzz/FuzzTargets.h"

#include "runtime/plan/DeviceProgramJson.h"
#include "runtime/plan/Plan.h"
#include "runtime/device/Sha256.h"
#include "runtime/io/Safetensors.h"
#include "runtime/data/Batch.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/WeightsReader.h"
#include "xlnetc/Spec/Spec.h"
#include "xlnetc/Spec/SpecInternal.h"
#include "xlnetc/Driver/Bundle.h"

#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
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

void deviceProgram(const uint8_t *data, size_t size) {
  const std::string text = asText(data, size);
  const size_t nul = text.find('\0');
  if (nul == std::string::npos)
    return;
  rt::Plan plan;
  if (!rt::parsePlan(text.substr(0, nul), plan))
    return;
  nlohmann::json program = nlohmann::json::parse(text.substr(nul + 1), nullptr, false);
  const std::string source = "fuzz source";
  if (program.is_object())
    program["source_sha256"] = rt::Sha256::hexHash(source);
  rt::DeviceProgram out;
  (void)rt::parseDeviceProgramJson(program.is_discarded() ? text.substr(nul + 1) : program.dump(),
                                   plan, source, out);
}

void bundleManifest(const uint8_t *data, size_t size) {
  namespace fs = std::filesystem;
  // The bundle's other files, made once per process; the seed manifest
  // (fuzz/corpus/bundle_manifest/) records their SHA-256s.
  static const std::string dir = [] {
    const std::string d = "/tmp/xlnetc-fuzz-bundle-" + std::to_string(::getpid());
    std::error_code ec;
    fs::remove_all(d, ec);
    fs::create_directories(d + "/cubin/sm_90", ec);
    auto write = [&](const std::string &name, const std::string &text) {
      if (FILE *f = std::fopen((d + "/" + name).c_str(), "wb")) {
        std::fwrite(text.data(), 1, text.size(), f);
        std::fclose(f);
      }
    };
    write("plan.json", "plan");
    write("program.json", "program");
    write("kernels.cu", "source");
    write("spec.toml", "spec");
    write("cubin/sm_90/k.cubin", "cubin");
    fs::create_symlink("/etc/hostname", d + "/link.json", ec);
    ::mkfifo((d + "/fifo.json").c_str(), 0600);
    return d;
  }();
  if (FILE *f = std::fopen((dir + "/manifest.json").c_str(), "wb")) {
    if (size > 0)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  Bundle bundle;
  (void)readBundle(dir, bundle);
}

const std::vector<NamedTarget> &targets() {
  static const std::vector<NamedTarget> all = {
      {"safetensors", safetensors}, {"toml_spec", tomlSpec},   {"hf_config", hfConfig},
      {"plan", plan},               {"checkpoint", checkpoint}, {"raw_batch", rawBatch},
      {"device_program", deviceProgram}, {"bundle_manifest", bundleManifest},
  };
  return all;
}

} // namespace xlnetc::fuzz
