//===- Weights.h - The model's parameters from a weights argument -*- C++ -*-===//
//
// One reader for every command that takes weights (`train --init-from`,
// `run-step --weights`, `export`): the argument is resolved as
// runtime/train/WeightsSource.h says (a safetensors file, a HuggingFace
// model directory or its shards' index; PyTorch pickles and other formats
// get a message with the conversion), a config.json beside it is checked
// against the spec (shapes, ff_activation, untie_r: a wrong activation is
// an error, never a silently different model), and the tensors are read by
// loadInitFrom (F16/BF16/F64 widened, XLNetModel names, lm_loss.weight
// checked against the embedding it is tied to).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_WEIGHTS_H
#define XLNETC_XLNETC_DRIVER_WEIGHTS_H

#include "runtime/plan/Plan.h"
#include "runtime/Tensor.h"
#include "runtime/train/Checkpoint.h"
#include "xlnetc/Spec/Spec.h"

#include <string>

namespace xlnetc {

/// The parameters a plan binds, by HuggingFace name, with their shapes: what
/// weights must provide for a step of that plan.
rt::train::ParamShapes planParamShapes(const rt::Plan &plan);
/// The parameters of `spec` (semantics.md §9), for callers without a plan.
rt::train::ParamShapes specParamShapes(const ModelSpec &spec);

/// The parameters `expected` (planParamShapes, or specParamShapes) of the
/// model `spec` from `path`; `option` names the argument in messages
/// ("--init-from", "--weights"). Warnings go to stderr, one line each with
/// the path once. False with one line in `error` on failure.
bool loadModelWeights(const ModelSpec &spec, const rt::train::ParamShapes &expected,
                      const std::string &path, const char *option, rt::TensorMap &params,
                      std::string &error);

/// Where a model is read from (`export`, `eval`).
struct ModelSource {
  std::string weights;   ///< the weights (a checkpoint, safetensors, ...)
  std::string spec;      ///< its spec: TOML or a HuggingFace config.json
  std::string tokenizer; ///< its spiece.model; empty: none found
};

/// Resolves `source`: a run directory (its checkpoint.safetensors,
/// spec.toml and spiece.model), a weights file with a spec.toml beside it
/// (a run's checkpoint), or any weights source
/// (runtime/train/WeightsSource.h: a HuggingFace directory, a safetensors
/// file) with `spec` or a config.json beside it, and the spiece.model
/// beside the weights. `spec` and `tokenizer`, when given, are taken as
/// they are. `command` names the command in messages. False with one line.
bool resolveModelSource(const std::string &source, const std::string &spec,
                        const std::string &tokenizer, const char *command, ModelSource &out,
                        std::string &error);

/// Checks the HuggingFace config.json at `configPath` against `spec`: every
/// dimension, ff_activation and untie_r agree. False with one line naming
/// the file and the first difference.
bool checkConfigMatchesSpec(const ModelSpec &spec, const std::string &configPath,
                            std::string &error);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_WEIGHTS_H
