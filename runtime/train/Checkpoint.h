//===- Checkpoint.h - Training checkpoints and init-from -------*- C++ -*-===//
//
// A training checkpoint is ONE safetensors file (docs/Checkpoints.md):
//   <HF name>                  the parameters, HuggingFace XLNetLMHeadModel
//                              names (semantics.md §9), so HF-style loaders
//                              find the weights; lm_loss.weight is not stored
//                              (tied to transformer.word_embedding.weight)
//   optimizer.adam_m.<HF name> Adam first moment
//   optimizer.adam_v.<HF name> Adam second moment
//   state.<key>                TrainState::mems (state.mems.0, ...)
//   __metadata__               format "pt" (what transformers requires),
//                              xlnetc.format "xlnetc-checkpoint",
//                              xlnetc.version "1", xlnetc.step,
//                              xlnetc.rng_state, xlnetc.data_position,
//                              xlnetc.spec_fingerprint, xlnetc.spec_summary
// It is written atomically (AtomicFile): an existing checkpoint at the path
// is never damaged by a failed or interrupted save.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_CHECKPOINT_H
#define XLNETC_RUNTIME_TRAIN_CHECKPOINT_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace xlnetc::rt::train {

/// Everything needed to resume training bit-exactly.
struct TrainState {
  int64_t step = 0;            ///< optimizer updates applied so far
  TensorMap params;            ///< HuggingFace names (transformer.word_embedding.weight, ...)
  TensorMap adamM, adamV;      ///< Adam moments, keyed by the param's HF name
  TensorMap mems;              ///< "mems.0" ... per layer [mem_len, B, d_model]; may be empty
  std::string rngState;        ///< opaque text owned by the trainer
  std::string dataPosition;    ///< opaque text (JSON) owned by the data stream
  std::string specFingerprint; ///< identifies model shape + step shape; opaque here
  std::string specSummary;     ///< human readable, e.g. "n_layer 2, d_model 64, ..."
};

/// Expected parameter shapes by HF name (all parameters are F32).
using ParamShapes = std::map<std::string, std::vector<int64_t>>;

/// Metadata keys and values of the format.
inline constexpr const char *kCheckpointFormatTag = "xlnetc-checkpoint";
inline constexpr int kCheckpointVersion = 1;
inline constexpr const char *kAdamMPrefix = "optimizer.adam_m.";
inline constexpr const char *kAdamVPrefix = "optimizer.adam_v.";
inline constexpr const char *kStatePrefix = "state.";

/// Writes `state` to `path` (one safetensors file, see above) atomically.
/// Rejects inconsistent states: a moment without a parameter or with another
/// shape, non-F32 params/moments, names that collide with the reserved
/// prefixes, metadata strings that are not valid UTF-8.
Status saveCheckpoint(const std::string &path, const TrainState &state);

/// Loads a checkpoint written by saveCheckpoint and checks it against the
/// current spec: `expected` (every parameter, with its shape) and
/// `expectedFingerprint` (empty: not checked). `expectedSummary` (optional)
/// describes the current spec in the fingerprint-mismatch message; when
/// empty a summary is derived from `expected`. Errors are one line, name the
/// file, and cover: missing file, truncated/corrupt file, not an xlnetc
/// checkpoint, another spec, a parameter missing/unexpected/of another
/// shape or dtype, missing or mis-shaped Adam moments. `out` is only
/// replaced on success.
Status loadCheckpoint(const std::string &path, const ParamShapes &expected,
                      const std::string &expectedFingerprint, TrainState &out,
                      const std::string &expectedSummary = "");

/// Initialises `params` from a HuggingFace XLNet safetensors file: the
/// XLNetLMHeadModel names, or the XLNetModel names without "transformer.".
/// F16/BF16/F64 tensors are converted to F32. lm_loss.weight is tied to the
/// word embedding and is only checked (it must equal it; it stands in for a
/// missing embedding). Missing parameters are an error, except lm_loss.bias,
/// which is zero-initialised with a warning. Tensors the spec does not have
/// are skipped with a warning (as is the optimizer state of an xlnetc
/// checkpoint). Wrong shapes are an error. `params` is replaced only on
/// success; `warnings` gets one line per warning (without the path). `path`
/// is anything runtime/train/WeightsSource.h resolves (a file, a
/// HuggingFace model directory, a shards' index); `what` names it in
/// messages ("init-from", "--weights").
Status loadInitFrom(const std::string &path, const ParamShapes &expected,
                    TensorMap &params, std::vector<std::string> &warnings,
                    const std::string &what = "init-from");

/// Dimensions of an XLNet model, to build its ParamShapes.
struct XLNetDims {
  int64_t nLayer = 0, nToken = 0, dModel = 0, nHead = 0, dHead = 0,
          dInner = 0;
};

/// The parameter shapes of semantics.md §9 (without the tied lm_loss.weight).
ParamShapes xlnetParamShapes(const XLNetDims &dims);

/// "n_layer 2, d_model 64, n_head 4, d_head 16, d_inner 256, n_token 32000"
/// read off the shapes of `shapes` (the parts it cannot find are left out).
std::string summarizeParamShapes(const ParamShapes &shapes);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_CHECKPOINT_H
