//===- WeightsSource.cpp - What a weights argument names ------------------===//

#include "runtime/train/WeightsSource.h"

#include "runtime/io/InputFile.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace xlnetc::rt::train {

namespace fs = std::filesystem;

namespace {

constexpr const char *kIndexName = "model.safetensors.index.json";

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The one-line conversion of a PyTorch checkpoint to safetensors (run
/// where torch and safetensors are installed).
std::string torchConversion(const std::string &path) {
  const std::string out = (fs::path(path).parent_path() / "model.safetensors").string();
  return fmt::format(
      "python3 -c \"import torch; from safetensors.torch import save_file; "
      "sd = torch.load('{}', map_location='cpu', weights_only=True); "
      "save_file({{k: v.contiguous() for k, v in sd.items()}}, '{}', "
      "metadata={{'format': 'pt'}})\"",
      path, out);
}

/// What a file that is not safetensors is, from its first bytes and name
/// (empty: nothing xlnetc recognises as another weights format).
std::string foreignFormat(const std::string &path, std::string &hint) {
  if (std::string kind = oddFileKind(path); !kind.empty())
    return kind; // never opened: a FIFO would block
  std::ifstream in(path, std::ios::binary);
  char head[8] = {0};
  in.read(head, sizeof head);
  const std::streamsize got = in.gcount();
  const std::string name = fs::path(path).filename().string();
  if (got >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) {
    hint = torchConversion(path);
    return "a PyTorch zip checkpoint (torch.save; e.g. pytorch_model.bin)";
  }
  if (got >= 2 && static_cast<unsigned char>(head[0]) == 0x80 &&
      static_cast<unsigned char>(head[1]) <= 5) {
    hint = torchConversion(path);
    return "a Python pickle (a legacy PyTorch checkpoint, e.g. pytorch_model.bin)";
  }
  if (got >= 8 && std::string(head, 8) == std::string("\x89HDF\r\n\x1a\n", 8)) {
    hint = "load it with transformers (TFXLNetLMHeadModel.from_pretrained) and "
           "save_pretrained(DIR, safe_serialization=True)";
    return "a TensorFlow HDF5 file (tf_model.h5)";
  }
  if (endsWith(name, ".msgpack")) {
    hint = "load it with transformers and save_pretrained(DIR, safe_serialization=True)";
    return "a Flax msgpack file (flax_model.msgpack)";
  }
  return "";
}

/// The shards a model.safetensors.index.json lists (weight_map's values,
/// first appearance order), resolved against its directory.
Status readIndex(const std::string &path, const std::string &what, WeightsSource &out) {
  if (std::string kind = oddFileKind(path); !kind.empty())
    return Status::error(fmt::format("{} {}: {}, not a shard index", what, path, kind));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("weight_map") ||
      !doc["weight_map"].is_object())
    return Status::error(fmt::format("{} {}: not a safetensors index (a JSON object with a "
                                     "'weight_map' object)",
                                     what, path));
  std::set<std::string> seen;
  const fs::path dir = fs::path(path).parent_path();
  for (const auto &[tensor, shard] : doc["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().empty() ||
        fs::path(shard.get<std::string>()).has_parent_path())
      return Status::error(fmt::format("{} {}: tensor '{}' maps to {}, not a shard file name "
                                       "beside the index",
                                       what, path, tensor, shard.dump()));
    if (seen.insert(shard.get<std::string>()).second)
      out.files.push_back((dir / shard.get<std::string>()).string());
  }
  if (out.files.empty())
    return Status::error(fmt::format("{} {}: the index lists no shards", what, path));
  for (const std::string &f : out.files)
    if (!fs::is_regular_file(f))
      return Status::error(
          fmt::format("{} {}: shard {} does not exist", what, path, f));
  return Status::ok();
}

} // namespace

Status resolveWeightsSource(const std::string &path, const std::string &what,
                            WeightsSource &out) {
  WeightsSource s;
  s.given = path;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    return Status::error(fmt::format("{} {} does not exist", what, path));
  fs::path configDir;
  if (fs::is_directory(st)) {
    const fs::path dir(path);
    configDir = dir;
    if (fs::is_regular_file(dir / kIndexName)) {
      XLNETC_RETURN_IF_ERROR(readIndex((dir / kIndexName).string(), what, s));
    } else if (fs::is_regular_file(dir / "model.safetensors")) {
      s.files.push_back((dir / "model.safetensors").string());
    } else {
      for (const char *other : {"pytorch_model.bin", "pytorch_model.bin.index.json",
                                "tf_model.h5", "flax_model.msgpack"})
        if (fs::exists(dir / other)) {
          std::string hint;
          std::string kind = foreignFormat((dir / other).string(), hint);
          if (std::string(other) == "pytorch_model.bin.index.json") {
            kind = "sharded PyTorch checkpoints";
            hint = "load the model with transformers and "
                   "save_pretrained(DIR, safe_serialization=True)";
          }
          return Status::error(fmt::format(
              "{} {} holds {} ({}), which xlnetc does not read (loading a pickle can run "
              "code); convert it to model.safetensors: {}",
              what, path, other, kind.empty() ? "not safetensors" : kind,
              hint.empty() ? torchConversion((dir / other).string()) : hint));
        }
      return Status::error(fmt::format(
          "{} {} is a directory without model.safetensors or {} (the files a "
          "HuggingFace model directory holds)",
          what, path, kIndexName));
    }
  } else {
    if (std::string kind = oddFileKind(path); !kind.empty())
      return Status::error(fmt::format("{} {}: {}, not a weights file", what, path, kind));
    configDir = fs::path(path).parent_path();
    const std::string name = fs::path(path).filename().string();
    if (endsWith(name, ".index.json")) {
      XLNETC_RETURN_IF_ERROR(readIndex(path, what, s));
    } else {
      std::string hint;
      const std::string kind = foreignFormat(path, hint);
      if (!kind.empty())
        return Status::error(fmt::format(
            "{} {} is {}, which xlnetc does not read (loading a pickle can run code); "
            "convert it to safetensors: {}",
            what, path, kind, hint));
      s.files.push_back(path);
    }
  }
  // A config.json beside a HuggingFace layout (a model directory, its
  // model.safetensors or its index), not beside any file.
  const std::string base = fs::path(path).filename().string();
  const bool hfLayout = fs::is_directory(st) || base == "model.safetensors" ||
                        base == kIndexName;
  if (configDir.empty())
    configDir = ".";
  if (hfLayout && fs::is_regular_file(configDir / "config.json"))
    s.config = (configDir / "config.json").string();
  out = std::move(s);
  return Status::ok();
}

} // namespace xlnetc::rt::train
