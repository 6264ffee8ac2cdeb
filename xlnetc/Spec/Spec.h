//===- Spec.h - XLNet model spec (TOML / HF config.json) ----------*- C++
//-*-===//
//
// The frontend's view of one XLNet pretraining run: the model shape ([model]),
// the data-pipeline shapes ([data]) and the optimizer schedule ([train]). Key
// names follow the official XLNet config/flag names; docs/SpecFormat.md lists
// every key, its default and the validation rules.
//
// This header has no dependency beyond the standard library, and no function
// here throws: errors come back as one line "PATH:LINE:COL: error: MESSAGE".
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_SPEC_SPEC_H
#define XLNETC_SPEC_SPEC_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace xlnetc {

/// Position-wise feed-forward activation. The names are explicit because
/// "gelu" means the tanh approximation in official XLNet and the exact erf
/// form in HuggingFace.
enum class Activation { Relu, GeluTanh, GeluErf };

/// Returns the spec spelling: "relu", "gelu_tanh" or "gelu_erf".
const char *activationName(Activation act);

/// One XLNet pretraining configuration. Defaults are the official XLNet
/// defaults where the official code has one.
struct ModelSpec {
  /// The file this spec was loaded from (empty when built in code).
  std::string sourcePath;
  /// Loaded from a HuggingFace config.json: no [data]/[train] sections, so
  /// those fields stay 0 except the ones the config carries (reuse_len,
  /// bi_data); callers fill the shapes from a batch file.
  bool fromHFConfig = false;

  //===--- [model] --------------------------------------------------------===//
  int64_t nLayer = 0; ///< n_layer: number of Transformer-XL layers.
  int64_t dModel = 0; ///< d_model: hidden size.
  int64_t nHead = 0;  ///< n_head: attention heads.
  int64_t dHead = 0;  ///< d_head: size of one head; d_model = n_head * d_head.
  int64_t dInner = 0; ///< d_inner: feed-forward inner size.
  int64_t nToken = 0; ///< n_token: vocabulary size (HF vocab_size).
  Activation ffActivation = Activation::GeluTanh; ///< ff_activation.
  bool untieR = true;          ///< untie_r: per-layer r_w/r_r/r_s biases.
  std::string attnType = "bi"; ///< attn_type: only "bi" for pretraining.
  int64_t memLen = 0;          ///< mem_len: cached memory length (0 = none).
  int64_t clampLen = -1;   ///< clamp_len: clamp relative distance (-1 = off).
  bool sameLength = false; ///< same_length: same attention length per token.
  double dropout = 0.1;    ///< dropout: hidden/embedding dropout.
  double dropatt = 0.1;    ///< dropatt: attention-probability dropout.
  double layerNormEps = 1e-12; ///< layer_norm_eps.
  /// init_range: stddev of the normal init (HF initializer_range).
  double initRange = 0.02;

  //===--- [data] ---------------------------------------------------------===//
  int64_t seqLen = 0; ///< seq_len: tokens per example.
  /// reuse_len: leading tokens cached as the next segment's memory; 0 means
  /// unset (HF null): the whole segment is cached.
  int64_t reuseLen = 0;
  int64_t permSize = 0;   ///< perm_size: local permutation window.
  int64_t numPredict = 0; ///< num_predict: prediction slots per example.
  bool biData = false;    ///< bi_data: half the batch forward, half backward.
  double maskAlpha = 6;   ///< mask_alpha: tokens per span-masking group.
  double maskBeta = 1;    ///< mask_beta: masked tokens per group.
  /// keep_accents: skip preprocess_text's NFKD accent stripping (the
  /// official and HuggingFace default strips them).
  bool keepAccents = false;

  //===--- [train] --------------------------------------------------------===//
  int64_t trainBatchSize = 0; ///< train_batch_size: the global batch.
  /// micro_batch_size: gradient accumulation, each process's rows run as
  /// micro-batches of this many rows (0: one batch); --micro-batch
  /// overrides it.
  int64_t microBatchSize = 0;
  double learningRate = 1e-4; ///< learning_rate: peak learning rate.
  int64_t warmupSteps = 0;    ///< warmup_steps: linear warmup length.
  int64_t trainSteps = 0;     ///< train_steps: total steps (end of decay).
  double adamEpsilon = 1e-8;  ///< adam_epsilon.
  double weightDecay = 0;     ///< weight_decay: decoupled (AdamW-style) rate.
  double clip = 1.0;          ///< clip: global gradient-norm clip.
  double minLrRatio = 0;      ///< min_lr_ratio: final lr = lr * ratio.
  std::string decayMethod = "poly"; ///< decay_method: "poly" or "cos".
  int64_t seed = 0; ///< seed: RNG seed for init, masking, dropout.
  /// device: where `xlnetc train` runs the step ("host", "emu", "cuda" or
  /// "auto"); --device overrides it.
  std::string device = "host";
  /// [train] tensorboard: a directory for TensorBoard event files (empty:
  /// none); --tensorboard overrides it.
  std::string tensorboard;
  /// precision: "fp32" or "bf16" (mixed precision, on cuda or emu);
  /// --precision overrides it.
  std::string precision = "fp32";
};

/// Loads a TOML spec or (by .json extension) a HuggingFace config.json into
/// `out`, then validates it. On error returns false, leaves `out` untouched
/// and sets `error` to ONE line "PATH:LINE:COL: error: MESSAGE" (the position
/// is omitted only where none exists, e.g. "PATH: error: cannot open file").
bool loadSpec(const std::string &path, ModelSpec &out, std::string &error);

/// Checks the range and cross-field rules (docs/SpecFormat.md). Used by
/// loadSpec and by callers that override fields (e.g. batch shapes from a
/// batch file); errors read "PATH: error: MESSAGE" (no position). For a spec
/// with fromHFConfig set only the [model] rules run: a caller that has filled
/// the data/train fields and wants them checked clears fromHFConfig first.
bool validateSpec(const ModelSpec &spec, std::string &error);

/// The spec as a TOML document with every key of docs/SpecFormat.md (the
/// [model], [data] and [train] sections), which loadSpec reads back to the
/// same values; `comment` (optional) becomes a first `#` line. A run
/// directory keeps its spec this way (spec.toml), resolved.
std::string writeSpecToml(const ModelSpec &spec, const std::string &comment = "");

/// Every key of writeSpecToml as ("section.key", TOML value), in its order.
std::vector<std::pair<std::string, std::string>> specValues(const ModelSpec &spec);

//===--- A resumed run against its own spec ----------------------------------===//

/// What `xlnetc train --resume` may do with a key whose value differs from
/// the one in the run's kept spec (docs/Training.md "Resume").
enum class ResumeRule {
  /// Nothing: the checkpoint (its parameters, memory or data position) was
  /// made with the old value; another value needs a new run.
  Fixed,
  /// Take the new value when asked (--override KEY): a training setting.
  Override,
  /// Take it: where the step runs, not what it computes (`device`).
  Free,
};

/// One key whose value differs between two specs.
struct SpecChange {
  std::string key;                ///< e.g. "learning_rate"
  std::string oldValue, newValue; ///< TOML values, as writeSpecToml writes them
  ResumeRule rule = ResumeRule::Override;
  /// A Fixed key: what was made with the old value ("the checkpoint's
  /// parameter shapes"); empty otherwise.
  std::string fixedBy;
};

/// Every key of writeSpecToml whose value differs between `before` and
/// `after`, in its order. Values compare as writeSpecToml writes them (a
/// float by its shortest exact form, so any other double is a change).
std::vector<SpecChange> specChanges(const ModelSpec &before, const ModelSpec &after);

/// Whether `key` is a key of [model], [data] or [train] (hf_config aside).
/// If not, `suggestion` is the key it may be a misspelling or another
/// tool's name of (edit distance at most 2, or an alias), else empty.
bool isSpecKey(std::string_view key, std::string &suggestion);

} // namespace xlnetc

#endif // XLNETC_SPEC_SPEC_H
