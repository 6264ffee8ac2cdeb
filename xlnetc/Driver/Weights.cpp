//===- Weights.cpp - The model's parameters from a weights argument -------===//

#include "xlnetc/Driver/Weights.h"

#include "runtime/train/Checkpoint.h"
#include "runtime/train/WeightsSource.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <vector>

namespace xlnetc {

bool checkConfigMatchesSpec(const ModelSpec &spec, const std::string &configPath,
                            std::string &error) {
  ModelSpec config;
  std::string why;
  if (!loadSpec(configPath, config, why)) {
    error = fmt::format("the config.json beside the weights cannot be read: {}", why);
    return false;
  }
  struct Field {
    const char *name;
    std::string theirs, ours;
  };
  const std::vector<Field> fields = {
      {"n_layer", std::to_string(config.nLayer), std::to_string(spec.nLayer)},
      {"d_model", std::to_string(config.dModel), std::to_string(spec.dModel)},
      {"n_head", std::to_string(config.nHead), std::to_string(spec.nHead)},
      {"d_head", std::to_string(config.dHead), std::to_string(spec.dHead)},
      {"d_inner", std::to_string(config.dInner), std::to_string(spec.dInner)},
      {"vocab_size (n_token)", std::to_string(config.nToken), std::to_string(spec.nToken)},
      {"ff_activation", activationName(config.ffActivation),
       activationName(spec.ffActivation)},
      {"untie_r", config.untieR ? "true" : "false", spec.untieR ? "true" : "false"},
  };
  for (const Field &f : fields)
    if (f.theirs != f.ours) {
      error = fmt::format("{} says {} {}, but the model spec {} has {}: these weights "
                          "belong to another model",
                          configPath, f.name, f.theirs, spec.sourcePath, f.ours);
      return false;
    }
  return true;
}

rt::train::ParamShapes planParamShapes(const rt::Plan &plan) {
  rt::train::ParamShapes shapes;
  for (const rt::Buffer &b : plan.buffers)
    if (b.role == rt::Buffer::Param)
      shapes[b.name] = b.shape;
  return shapes;
}

rt::train::ParamShapes specParamShapes(const ModelSpec &spec) {
  rt::train::XLNetDims dims;
  dims.nLayer = spec.nLayer, dims.nToken = spec.nToken, dims.dModel = spec.dModel;
  dims.nHead = spec.nHead, dims.dHead = spec.dHead, dims.dInner = spec.dInner;
  return rt::train::xlnetParamShapes(dims);
}

bool loadModelWeights(const ModelSpec &spec, const rt::train::ParamShapes &expected,
                      const std::string &path, const char *option, rt::TensorMap &params,
                      std::string &error) {
  rt::train::WeightsSource src;
  if (rt::Status st = rt::train::resolveWeightsSource(path, option, src); !st) {
    error = st.message();
    return false;
  }
  if (!src.config.empty() && !checkConfigMatchesSpec(spec, src.config, error)) {
    error = fmt::format("{} {}: {}", option, path, error);
    return false;
  }
  std::vector<std::string> warnings;
  if (rt::Status st = rt::train::loadInitFrom(path, expected, params, warnings, option); !st) {
    error = st.message();
    return false;
  }
  for (const std::string &w : warnings)
    std::cerr << "xlnetc: warning: " << option << " " << path << ": " << w << "\n";
  return true;
}

bool resolveModelSource(const std::string &source, const std::string &spec,
                        const std::string &tokenizer, const char *command, ModelSource &out,
                        std::string &error) {
  namespace fs = std::filesystem;
  out = ModelSource{source, spec, tokenizer};
  const fs::path dir(source);
  if (fs::is_directory(dir) && fs::is_regular_file(dir / "checkpoint.safetensors")) {
    out.weights = (dir / "checkpoint.safetensors").string();
    if (out.spec.empty()) {
      out.spec = (dir / "spec.toml").string();
      if (!fs::is_regular_file(out.spec)) {
        error = fmt::format("{} has no spec.toml (a run from before xlnetc recorded its "
                            "spec): pass the spec it was trained with, --spec SPEC",
                            source);
        return false;
      }
    }
  } else if (out.spec.empty() && fs::is_regular_file(dir) &&
             fs::is_regular_file(dir.parent_path() / "spec.toml")) {
    out.spec = (dir.parent_path() / "spec.toml").string(); // a checkpoint in its run
  } else if (out.spec.empty()) {
    rt::train::WeightsSource src;
    if (rt::Status st = rt::train::resolveWeightsSource(source, command, src); !st) {
      error = st.message();
      return false;
    }
    if (src.config.empty()) {
      error = fmt::format("{} is not a run directory (no checkpoint.safetensors) and has no "
                          "config.json beside it: pass the model's spec, --spec SPEC",
                          source);
      return false;
    }
    out.spec = src.config;
  }
  if (out.tokenizer.empty()) {
    const fs::path beside =
        (fs::is_directory(dir) ? dir : fs::path(out.weights).parent_path()) / "spiece.model";
    if (fs::is_regular_file(beside))
      out.tokenizer = beside.string();
  }
  if (!out.tokenizer.empty() && !fs::is_regular_file(out.tokenizer)) {
    error = fmt::format("tokenizer {} does not exist", out.tokenizer);
    return false;
  }
  return true;
}

} // namespace xlnetc
