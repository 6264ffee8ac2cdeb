//===- InitFrom.cpp - Initialising parameters from HuggingFace weights ----===//

#include "runtime/train/Checkpoint.h"

#include "runtime/train/CheckpointUtil.h"
#include "runtime/train/WeightsReader.h"
#include "runtime/train/WeightsSource.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

namespace xlnetc::rt::train {

using detail::listNames;
using detail::oneLine;
using detail::startsWith;

namespace {
constexpr const char *kEmbedding = "transformer.word_embedding.weight";
constexpr const char *kTied = "lm_loss.weight";
constexpr const char *kBias = "lm_loss.bias";
constexpr const char *kHfPrefix = "transformer.";

/// One load of init-from weights, phase by phase (loadInitFrom).
struct InitFromLoad {
  const std::string &path, &what;
  const ParamShapes &expected;
  std::vector<SafetensorsIndex> shards;
  SafetensorsIndex index;                    // every shard's tensors (path: unused)
  std::map<std::string, size_t> shardOf;     // a tensor's shard
  bool isXlnetcCheckpoint = false;
  std::map<std::string, std::string> source; // spec name -> file name
  std::vector<std::string> extras;           // the file's tensors the spec does not have
  size_t ignoredState = 0;                   // a checkpoint's optimizer state and memory
  bool haveTied = false, tiedAsEmbedding = false, zeroBias = false;
  TensorMap result;
  std::map<std::string, size_t> converted;   // dtype -> count

  Status read(const std::string &name, Tensor &out) {
    return readAsF32(shards[shardOf.at(name)], name, out);
  }
  Status fail(const std::string &msg) const {
    return Status::error(fmt::format("{} file {}: {}", what, path, msg));
  }

  /// One index over every shard; a tensor names its shard.
  Status openShards() {
    WeightsSource src;
    XLNETC_RETURN_IF_ERROR(resolveWeightsSource(path, what, src));
    shards.resize(src.files.size());
    for (size_t f = 0; f < src.files.size(); ++f) {
      const std::string &file = src.files[f];
      XLNETC_RETURN_IF_ERROR(detail::checkReadableFile(file, what + " file"));
      if (Status s = indexSafetensors(file, shards[f]); !s) {
        std::string msg = s.message();
        if (startsWith(msg, file + ": "))
          msg = msg.substr(file.size() + 2);
        return Status::error(fmt::format(
            "{} file {} is truncated, corrupt or not a safetensors file: {}", what, file,
            oneLine(msg)));
      }
      for (const auto &[name, entry] : shards[f].tensors) {
        if (!shardOf.emplace(name, f).second)
          return Status::error(fmt::format("{} {}: tensor '{}' is in two shards, {} and {}",
                                           what, path, name, src.files[shardOf.at(name)],
                                           file));
        index.tensors[name] = entry;
      }
    }
    index.metadata = shards.front().metadata;
    auto formatTag = index.metadata.find("xlnetc.format");
    isXlnetcCheckpoint = shards.size() == 1 && formatTag != index.metadata.end() &&
                         formatTag->second == kCheckpointFormatTag;
    return Status::ok();
  }
  /// 1. Map the file's names onto the spec's.
  Status mapNames() {
    for (const auto &[name, entry] : index.tensors) {
      if (isXlnetcCheckpoint &&
          (startsWith(name, "optimizer.") || startsWith(name, kStatePrefix))) {
        ++ignoredState;
        continue;
      }
      if (name == kTied && !expected.count(kTied)) {
        haveTied = true;
        continue;
      }
      std::string target;
      if (expected.count(name))
        target = name;
      else if (expected.count(kHfPrefix + name))
        target = kHfPrefix + name;
      else {
        extras.push_back(name);
        continue;
      }
      auto [it, inserted] = source.emplace(target, name);
      if (!inserted)
        return fail(fmt::format(
            "both '{}' and '{}' are present and name the same parameter '{}'",
            it->second, name, target));
    }
    return Status::ok();
  }
  /// 2. Missing parameters.
  Status findMissing() {
    std::vector<std::string> missing;
    for (const auto &[name, shape] : expected) {
      if (source.count(name))
        continue;
      if (name == kEmbedding && haveTied) {
        source[name] = kTied;
        tiedAsEmbedding = true;
      } else if (name == kBias) {
        zeroBias = true;
      } else {
        missing.push_back(name);
      }
    }
    if (!missing.empty()) {
      if (source.empty()) {
        std::vector<std::string> names;
        for (const auto &[name, e] : index.tensors)
          names.push_back(name);
        return fail(fmt::format(
            "none of the spec's {} parameters were found (neither "
            "XLNetLMHeadModel names like '{}' nor XLNetModel names like "
            "'word_embedding.weight'); the file has {}",
            expected.size(), kEmbedding,
            names.empty() ? std::string("no tensors") : listNames(names, 5)));
      }
      return fail(fmt::format("{} parameter(s) of the spec are missing: {}",
                              missing.size(), listNames(missing)));
    }
    return Status::ok();
  }
  /// 3. Shapes and dtypes.
  Status checkShapes() const {
    std::vector<std::string> problems;
    for (const auto &[name, file] : source) {
      const SafetensorsEntry &e = index.tensors.at(file);
      const std::vector<int64_t> &shape = expected.at(name);
      std::string label = file == name ? fmt::format("'{}'", name)
                                       : fmt::format("'{}' (for '{}')", file, name);
      if (e.shape != shape)
        problems.push_back(fmt::format("tensor {} has shape {}, the spec "
                                       "expects {}",
                                       label, shapeStr(e.shape),
                                       shapeStr(shape)));
      else if (!isConvertibleToF32(e.dtype))
        problems.push_back(fmt::format("tensor {} has dtype {}, which is not a "
                                       "float type (supported: F32, F16, BF16, "
                                       "F64)",
                                       label, e.dtype));
    }
    if (!problems.empty())
      return fail(problems.front() +
                  (problems.size() > 1
                       ? fmt::format(" (and {} more problems)",
                                     problems.size() - 1)
                       : std::string()));
    return Status::ok();
  }
  /// 4. Data.
  Status readData() {
    for (const auto &[name, file] : source) {
      XLNETC_RETURN_IF_ERROR(read(file, result[name]));
      const std::string &dtype = index.tensors.at(file).dtype;
      if (dtype != "F32")
        ++converted[dtype];
    }
    return Status::ok();
  }
  /// 5. The tied output projection must equal the embedding.
  Status checkTied() {
    if (haveTied && !tiedAsEmbedding && expected.count(kEmbedding)) {
      const SafetensorsEntry &e = index.tensors.at(kTied);
      const Tensor &emb = result.at(kEmbedding);
      if (e.shape != emb.shape)
        return fail(fmt::format(
            "'{}' has shape {} but '{}' has {}; xlnetc ties the output "
            "projection to the word embedding",
            kTied, shapeStr(e.shape), kEmbedding, shapeStr(emb.shape)));
      if (!isConvertibleToF32(e.dtype))
        return fail(fmt::format("'{}' has dtype {}, not a float type", kTied,
                                e.dtype));
      Tensor tied;
      XLNETC_RETURN_IF_ERROR(read(kTied, tied));
      int64_t differing = 0;
      double maxDiff = 0;
      for (int64_t i = 0; i < emb.numel(); ++i) {
        if (std::memcmp(&emb.f32()[i], &tied.f32()[i], 4) == 0)
          continue;
        ++differing;
        maxDiff = std::max(maxDiff,
                           std::fabs(double(emb.f32()[i]) - double(tied.f32()[i])));
      }
      if (differing)
        return fail(fmt::format(
            "'{}' differs from '{}' in {} of {} values (max |diff| {:g}); "
            "xlnetc ties the output projection to the word embedding, so an "
            "untied model cannot be loaded",
            kTied, kEmbedding, differing, emb.numel(), maxDiff));
    }
    return Status::ok();
  }
  /// 6. Warnings.
  void warn(std::vector<std::string> &warnings) {
    if (tiedAsEmbedding)
      warnings.push_back(fmt::format("no '{}'; using the tied '{}' as the word embedding",
                                     kEmbedding, kTied));
    if (zeroBias) {
      result[kBias] = Tensor::zeros(DType::F32, expected.at(kBias));
      warnings.push_back(fmt::format(
          "no '{}' (an XLNetModel export?); initialised it to zeros", kBias));
    }
    if (!extras.empty())
      warnings.push_back(fmt::format("ignored {} tensor(s) that the spec does not have: {}",
                                     extras.size(), listNames(extras)));
    if (ignoredState)
      warnings.push_back(fmt::format(
          "an xlnetc training checkpoint: ignored its optimizer state and memory ({} "
          "tensors), only the weights are used",
          ignoredState));
    for (const auto &[dtype, count] : converted)
      warnings.push_back(fmt::format("converted {} {} tensor(s) to F32", count, dtype));
  }
};

} // namespace

Status loadInitFrom(const std::string &path, const ParamShapes &expected,
                    TensorMap &params, std::vector<std::string> &warnings,
                    const std::string &what) {
  InitFromLoad load{path, what, expected};
  XLNETC_RETURN_IF_ERROR(load.openShards());
  XLNETC_RETURN_IF_ERROR(load.mapNames());
  XLNETC_RETURN_IF_ERROR(load.findMissing());
  XLNETC_RETURN_IF_ERROR(load.checkShapes());
  XLNETC_RETURN_IF_ERROR(load.readData());
  XLNETC_RETURN_IF_ERROR(load.checkTied());
  load.warn(warnings);
  params = std::move(load.result);
  return Status::ok();
}

} // namespace xlnetc::rt::train
