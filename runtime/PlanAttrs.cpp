//===- PlanAttrs.cpp - Typed attributes of plan steps ---------------------===//
//
// Reads the `attrs` object of a step into StepAttrs: the attributes the op's
// row of docs/Plan.md lists are required (dropatt and dropout_site default
// to 0), each with its type and range checked; unknown keys are ignored.
//
//===----------------------------------------------------------------------===//

#include "runtime/PlanAttrs.h"

#include <fmt/format.h>

#include <cmath>

namespace xlnetc::rt::detail {

using nlohmann::json;

namespace {

/// Reads attributes of one step, recording a readable error on failure.
class AttrReader {
public:
  explicit AttrReader(const json &attrs) : attrs_(attrs) {}

  Status integer(const char *key, int64_t &out, bool required = true) {
    return typed(key, out, &json::is_number_integer, "an integer", required);
  }
  Status nonNegative(const char *key, int64_t &out, bool required = true) {
    XLNETC_RETURN_IF_ERROR(integer(key, out, required));
    if (out < 0)
      return Status::error(
          fmt::format("attribute '{}' must be >= 0, got {}", key, out));
    return Status::ok();
  }
  Status number(const char *key, double &out, bool required = true) {
    return typed(key, out, &json::is_number, "a number", required);
  }
  Status boolean(const char *key, bool &out) {
    return typed(key, out, &json::is_boolean, "true or false", true);
  }
  Status string(const char *key, std::string &out, bool required = true) {
    return typed(key, out, &json::is_string, "a string", required);
  }
  /// Whether `key` is there (any value).
  Status has(const char *key, bool &out) const {
    out = find(key) != nullptr;
    return Status::ok();
  }

private:
  const json *find(const char *key) const {
    if (!attrs_.is_object())
      return nullptr;
    auto it = attrs_.find(key);
    return it == attrs_.end() ? nullptr : &*it;
  }
  /// Reads `key` into `out` when the JSON value passes `is`; `what` names
  /// the expected type in the error.
  template <typename T>
  Status typed(const char *key, T &out, bool (json::*is)() const noexcept,
               const char *what, bool required) {
    const json *v = find(key);
    if (!v)
      return missing(key, required);
    if (!(v->*is)())
      return Status::error(fmt::format("attribute '{}' must be {}, got {}",
                                       key, what, v->dump()));
    out = v->get<T>();
    return Status::ok();
  }
  static Status missing(const char *key, bool required) {
    return required ? Status::error(fmt::format("missing attribute '{}'", key))
                    : Status::ok();
  }
  const json &attrs_;
};

Status parseRate(AttrReader &r, const char *key, double &out, bool required) {
  XLNETC_RETURN_IF_ERROR(r.number(key, out, required));
  if (!(out >= 0.0 && out < 1.0))
    return Status::error(
        fmt::format("attribute '{}' must be in [0, 1), got {}", key, out));
  return Status::ok();
}

/// A dropout fused into LayerNorm (docs/Plan.md "Fused forms"):
/// `<name>_rate` and `<name>_site`, both or neither.
Status parseFusedDropout(AttrReader &r, const std::string &name, bool &present, double &rate,
                         int64_t &site) {
  const std::string rateKey = name + "_rate", siteKey = name + "_site";
  bool hasRate = false, hasSite = false;
  XLNETC_RETURN_IF_ERROR(r.has(rateKey.c_str(), hasRate));
  XLNETC_RETURN_IF_ERROR(r.has(siteKey.c_str(), hasSite));
  if (hasRate != hasSite)
    return Status::error(fmt::format("attributes '{}' and '{}' come together", rateKey,
                                     siteKey));
  present = hasRate;
  if (!present)
    return Status::ok();
  XLNETC_RETURN_IF_ERROR(parseRate(r, rateKey.c_str(), rate, true));
  return r.nonNegative(siteKey.c_str(), site);
}

/// k_rank and transpose_w of gemm and gemm_wgrad.
Status parseGemmShape(AttrReader &r, StepAttrs &a) {
  int64_t kRank = 0;
  XLNETC_RETURN_IF_ERROR(r.integer("k_rank", kRank));
  if (kRank < 1 || kRank > 8)
    return Status::error(
        fmt::format("attribute 'k_rank' must be in [1, 8], got {}", kRank));
  a.kRank = int(kRank);
  return r.boolean("transpose_w", a.transposeW);
}

/// The activation of gemm, activation and activation_grad.
Status parseActivation(AttrReader &r, StepAttrs &a) {
  std::string act;
  XLNETC_RETURN_IF_ERROR(r.string("activation", act));
  // Names are activationName()'s, so the plan reader and writer agree.
  for (Activation candidate : {Activation::None, Activation::Relu,
                               Activation::GeluTanh, Activation::GeluErf})
    if (act == activationName(candidate)) {
      a.activation = candidate;
      return Status::ok();
    }
  return Status::error(fmt::format(
      "unknown activation \"{}\" (none, relu, gelu_tanh, gelu_erf)", act));
}

/// A finite number in [lo, hi] (hiOpen: [lo, hi)).
Status parseRange(AttrReader &r, const char *key, double &out, double lo,
                  double hi, bool hiOpen) {
  XLNETC_RETURN_IF_ERROR(r.number(key, out));
  if (!(out >= lo && (hiOpen ? out < hi : out <= hi)))
    return Status::error(fmt::format("attribute '{}' must be in [{}, {}{}, "
                                     "got {}",
                                     key, lo, hi, hiOpen ? ")" : "]", out));
  return Status::ok();
}

/// A finite number >= 0.
Status parseNonNegativeNumber(AttrReader &r, const char *key, double &out) {
  XLNETC_RETURN_IF_ERROR(r.number(key, out));
  if (!(out >= 0.0 && std::isfinite(out)))
    return Status::error(fmt::format(
        "attribute '{}' must be a finite number >= 0, got {}", key, out));
  return Status::ok();
}

Status parseLrSchedule(AttrReader &r, StepAttrs &a) {
  XLNETC_RETURN_IF_ERROR(
      parseNonNegativeNumber(r, "learning_rate", a.learningRate));
  XLNETC_RETURN_IF_ERROR(r.nonNegative("warmup_steps", a.warmupSteps));
  XLNETC_RETURN_IF_ERROR(r.nonNegative("train_steps", a.trainSteps));
  XLNETC_RETURN_IF_ERROR(
      parseRange(r, "min_lr_ratio", a.minLrRatio, 0.0, 1.0, false));
  std::string decay;
  XLNETC_RETURN_IF_ERROR(r.string("decay", decay));
  for (LrDecay candidate : {LrDecay::Poly, LrDecay::Cos})
    if (decay == lrDecayName(candidate)) {
      a.decay = candidate;
      return Status::ok();
    }
  return Status::error(fmt::format(
      "attribute 'decay' must be \"poly\" or \"cos\", got \"{}\"", decay));
}

Status parseAdam(AttrReader &r, StepAttrs &a) {
  XLNETC_RETURN_IF_ERROR(parseRange(r, "beta1", a.beta1, 0.0, 1.0, true));
  XLNETC_RETURN_IF_ERROR(parseRange(r, "beta2", a.beta2, 0.0, 1.0, true));
  XLNETC_RETURN_IF_ERROR(parseNonNegativeNumber(r, "epsilon", a.epsilon));
  // clip <= 0 means no clipping.
  XLNETC_RETURN_IF_ERROR(r.number("clip", a.clip));
  if (!std::isfinite(a.clip))
    return Status::error(
        fmt::format("attribute 'clip' must be finite, got {}", a.clip));
  XLNETC_RETURN_IF_ERROR(
      parseNonNegativeNumber(r, "weight_decay", a.weightDecay));
  XLNETC_RETURN_IF_ERROR(r.boolean("bias_correction", a.biasCorrection));
  // docs/Plan.md defines the bias-corrected update for weight_decay = 0 only
  // (tf.train.AdamOptimizer has no decay); the decoupled decay belongs to the
  // uncorrected AdamWeightDecayOptimizer. The mixed combination has no
  // semantics in the contract, so it is rejected rather than guessed.
  if (a.biasCorrection && a.weightDecay != 0.0)
    return Status::error(fmt::format(
        "attribute 'weight_decay' must be 0 when 'bias_correction' is true "
        "(got {}); decoupled weight decay is the uncorrected variant",
        a.weightDecay));
  return Status::ok();
}

} // namespace

Status parseStepAttrs(const json &attrs, Step &step) {
  if (!attrs.is_null() && !attrs.is_object())
    return Status::error("'attrs' must be an object");
  AttrReader r(attrs);
  StepAttrs &a = step.attrs;
  switch (step.kind) {
  case OpKind::RelPosEncoding:
    XLNETC_RETURN_IF_ERROR(r.nonNegative("klen", a.klen));
    XLNETC_RETURN_IF_ERROR(r.nonNegative("qlen", a.qlen));
    // clamp_len <= 0 (the configs use -1) means no clamping.
    XLNETC_RETURN_IF_ERROR(r.integer("clamp_len", a.clampLen));
    return r.boolean("bi_data", a.biData);
  case OpKind::RelSegment:
    return r.nonNegative("mlen", a.mlen);
  case OpKind::AttnMask: {
    XLNETC_RETURN_IF_ERROR(r.nonNegative("mlen", a.mlen));
    std::string stream;
    XLNETC_RETURN_IF_ERROR(r.string("stream", stream));
    if (stream == "query")
      a.stream = MaskStream::Query;
    else if (stream == "content")
      a.stream = MaskStream::Content;
    else
      return Status::error(fmt::format(
          "attribute 'stream' must be \"query\" or \"content\", got \"{}\"",
          stream));
    return Status::ok();
  }
  case OpKind::MemCache:
    XLNETC_RETURN_IF_ERROR(r.nonNegative("reuse_len", a.reuseLen));
    return r.nonNegative("mem_len", a.memLen);
  case OpKind::Gemm: {
    XLNETC_RETURN_IF_ERROR(parseGemmShape(r, a));
    XLNETC_RETURN_IF_ERROR(parseActivation(r, a));
    std::string grad = "none";
    XLNETC_RETURN_IF_ERROR(r.string("activation_grad", grad, /*required=*/false));
    if (grad == "gelu_tanh")
      a.activationGrad = Activation::GeluTanh;
    else if (grad != "none")
      return Status::error(fmt::format(
          "attribute 'activation_grad' must be \"none\" or \"gelu_tanh\" (the fused "
          "backward epilogue), got \"{}\"",
          grad));
    return Status::ok();
  }
  case OpKind::GemmWgrad:
    return parseGemmShape(r, a);
  case OpKind::ActivationOp:
  case OpKind::ActivationGrad:
    return parseActivation(r, a);
  case OpKind::RelAttention:
  case OpKind::RelAttentionGrad:
    XLNETC_RETURN_IF_ERROR(r.number("scale", a.scale));
    if (!std::isfinite(a.scale))
      return Status::error("attribute 'scale' must be finite");
    XLNETC_RETURN_IF_ERROR(parseRate(r, "dropatt", a.dropatt, false));
    return r.integer("dropout_site", a.dropoutSite, /*required=*/false);
  case OpKind::AddLayerNorm:
  case OpKind::AddLayerNormGrad:
    XLNETC_RETURN_IF_ERROR(r.number("eps", a.eps));
    if (!(a.eps >= 0.0))
      return Status::error(fmt::format("attribute 'eps' must be >= 0, got {}",
                                       a.eps));
    XLNETC_RETURN_IF_ERROR(parseFusedDropout(r, "x_dropout", a.xDropout, a.xDropoutRate,
                                             a.xDropoutSite));
    if (step.kind == OpKind::AddLayerNorm)
      return Status::ok();
    return parseFusedDropout(r, "dsum_dropout", a.dsumDropout, a.dsumDropoutRate,
                             a.dsumDropoutSite);
  case OpKind::Dropout:
    XLNETC_RETURN_IF_ERROR(parseRate(r, "rate", a.rate, true));
    return r.integer("dropout_site", a.dropoutSite, /*required=*/false);
  case OpKind::LrSchedule:
    return parseLrSchedule(r, a);
  case OpKind::AdamUpdate:
    return parseAdam(r, a);
  default:
    return Status::ok();
  }
}

} // namespace xlnetc::rt::detail
