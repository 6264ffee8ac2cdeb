//===- PlanAttrs.cpp - Typed attributes of plan steps ---------------------===//
//
// Reads the `attrs` object of a step into StepAttrs from the table
// runtime/plan/PlanAttrs.def: each attribute's type and range checked, a required
// one missing or a key the op does not take is an error.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/PlanAttrs.h"

#include <fmt/format.h>

#include <cmath>

namespace xlnetc::rt::detail {

using nlohmann::json;

namespace {

/// The value types of runtime/plan/PlanAttrs.def: each reads one JSON value into
/// its StepAttrs member (`Value`), checking the type and the range, so a
/// table row whose field has another C++ type does not compile.
struct Integer {
  using Value = int64_t;
  static Status read(const char *key, const json &v, int64_t &out) {
    if (!v.is_number_integer())
      return Status::error(
          fmt::format("attribute '{}' must be an integer, got {}", key, v.dump()));
    out = v.get<int64_t>();
    return Status::ok();
  }
};
struct Count {
  using Value = int64_t;
  static Status read(const char *key, const json &v, int64_t &out) {
    XLNETC_RETURN_IF_ERROR(Integer::read(key, v, out));
    if (out < 0)
      return Status::error(fmt::format("attribute '{}' must be >= 0, got {}", key, out));
    return Status::ok();
  }
};
struct KRank {
  using Value = int;
  static Status read(const char *key, const json &v, int &out) {
    int64_t k = 0;
    XLNETC_RETURN_IF_ERROR(Integer::read(key, v, k));
    if (k < 1 || k > 8)
      return Status::error(fmt::format("attribute '{}' must be in [1, 8], got {}", key, k));
    out = int(k);
    return Status::ok();
  }
};
struct Bool {
  using Value = bool;
  static Status read(const char *key, const json &v, bool &out) {
    if (!v.is_boolean())
      return Status::error(
          fmt::format("attribute '{}' must be true or false, got {}", key, v.dump()));
    out = v.get<bool>();
    return Status::ok();
  }
};
struct Finite {
  using Value = double;
  static Status read(const char *key, const json &v, double &out) {
    // JSON numbers are finite; the check keeps the rule next to the type.
    if (!v.is_number())
      return Status::error(
          fmt::format("attribute '{}' must be a number, got {}", key, v.dump()));
    out = v.get<double>();
    if (!std::isfinite(out))
      return Status::error(fmt::format("attribute '{}' must be finite, got {}", key, out));
    return Status::ok();
  }
};
struct NonNegative {
  using Value = double;
  static Status read(const char *key, const json &v, double &out) {
    XLNETC_RETURN_IF_ERROR(Finite::read(key, v, out));
    if (!(out >= 0.0))
      return Status::error(
          fmt::format("attribute '{}' must be a finite number >= 0, got {}", key, out));
    return Status::ok();
  }
};
/// [0, hi) when `open`, else [0, hi].
template <bool open> struct UnitRange {
  using Value = double;
  static Status read(const char *key, const json &v, double &out) {
    XLNETC_RETURN_IF_ERROR(Finite::read(key, v, out));
    if (!(out >= 0.0 && (open ? out < 1.0 : out <= 1.0)))
      return Status::error(fmt::format("attribute '{}' must be in [0, 1{}, got {}", key,
                                       open ? ")" : "]", out));
    return Status::ok();
  }
};
using Rate = UnitRange<true>;
using Ratio = UnitRange<false>;

/// One of `names` (the plan spellings of `values`, in order).
template <typename E, size_t N>
Status readEnum(const char *key, const json &v, E &out, const E (&values)[N],
                const char *(*name)(E)) {
  std::string allowed;
  for (size_t i = 0; i < N; ++i)
    allowed += fmt::format("{}\"{}\"", i == 0 ? "" : i + 1 == N ? " or " : ", ", name(values[i]));
  if (!v.is_string())
    return Status::error(
        fmt::format("attribute '{}' must be {}, got {}", key, allowed, v.dump()));
  for (E candidate : values)
    if (v.get<std::string>() == name(candidate)) {
      out = candidate;
      return Status::ok();
    }
  return Status::error(fmt::format("attribute '{}' must be {}, got {}", key, allowed, v.dump()));
}
const char *streamName(MaskStream s) { return s == MaskStream::Query ? "query" : "content"; }

struct Activation {
  using Value = rt::Activation;
  static Status read(const char *key, const json &v, Value &out) {
    static constexpr Value all[] = {Value::None, Value::Relu, Value::GeluTanh, Value::GeluErf};
    return readEnum(key, v, out, all, activationName);
  }
};
/// gemm's fused backward epilogue (docs/Plan.md "Fused forms").
struct EpilogueGrad {
  using Value = rt::Activation;
  static Status read(const char *key, const json &v, Value &out) {
    static constexpr Value all[] = {Value::None, Value::GeluTanh};
    return readEnum(key, v, out, all, activationName);
  }
};
struct Stream {
  using Value = MaskStream;
  static Status read(const char *key, const json &v, Value &out) {
    static constexpr Value all[] = {Value::Query, Value::Content};
    return readEnum(key, v, out, all, streamName);
  }
};
struct Decay {
  using Value = LrDecay;
  static Status read(const char *key, const json &v, Value &out) {
    static constexpr Value all[] = {Value::Poly, Value::Cos};
    return readEnum(key, v, out, all, lrDecayName);
  }
};

constexpr bool Required = true, Optional = false;

/// Reads `key` with `Type` into `out`; absent: an error when `required`,
/// else `out` keeps its default.
template <typename Type>
Status readAttr(const json &attrs, const char *key, bool required,
                typename Type::Value &out) {
  auto it = attrs.is_object() ? attrs.find(key) : attrs.end();
  if (it == attrs.end())
    return required ? Status::error(fmt::format("missing attribute '{}'", key))
                    : Status::ok();
  return Type::read(key, *it, out);
}

/// Whether an op of `kind` takes the attribute `key` (PlanAttrs.def).
bool takesAttr(OpKind kind, const std::string &key) {
#define XLNETC_PLAN_ATTR(Kind, name, field, Type, Presence)                         \
  if (kind == OpKind::Kind && key == name)                                           \
    return true;
#include "runtime/plan/PlanAttrs.def"
  return false;
}

/// "k_rank, transpose_w" (PlanAttrs.def's keys of `kind`), or "".
std::string attrKeys(OpKind kind) {
  std::string keys;
#define XLNETC_PLAN_ATTR(Kind, name, field, Type, Presence)                         \
  if (kind == OpKind::Kind)                                                          \
    keys += (keys.empty() ? "" : ", ") + std::string(name);
#include "runtime/plan/PlanAttrs.def"
  return keys;
}

/// A dropout fused into LayerNorm (docs/Plan.md "Fused forms"):
/// `<name>_rate` and `<name>_site`, both or neither.
Status fusedDropout(const json &attrs, const std::string &name, bool &present) {
  const std::string rateKey = name + "_rate", siteKey = name + "_site";
  bool hasRate = attrs.contains(rateKey), hasSite = attrs.contains(siteKey);
  if (hasRate != hasSite)
    return Status::error(
        fmt::format("attributes '{}' and '{}' come together", rateKey, siteKey));
  present = hasRate;
  return Status::ok();
}

/// The rules across attributes of one step.
Status checkAcross(const json &attrs, Step &step) {
  StepAttrs &a = step.attrs;
  switch (step.kind) {
  case OpKind::AddLayerNormGrad:
    XLNETC_RETURN_IF_ERROR(fusedDropout(attrs, "dsum_dropout", a.dsumDropout));
    [[fallthrough]];
  case OpKind::AddLayerNorm:
    return fusedDropout(attrs, "x_dropout", a.xDropout);
  case OpKind::AdamUpdate:
    // docs/Plan.md defines the bias-corrected update for weight_decay = 0
    // only (tf.train.AdamOptimizer has no decay); the decoupled decay
    // belongs to the uncorrected AdamWeightDecayOptimizer. The mixed
    // combination has no semantics in the contract, so it is rejected
    // rather than guessed.
    if (a.biasCorrection && a.weightDecay != 0.0)
      return Status::error(fmt::format(
          "attribute 'weight_decay' must be 0 when 'bias_correction' is true "
          "(got {}); decoupled weight decay is the uncorrected variant",
          a.weightDecay));
    return Status::ok();
  default:
    return Status::ok();
  }
}

} // namespace

Status parseStepAttrs(const json &attrs, Step &step) {
  if (!attrs.is_null() && !attrs.is_object())
    return Status::error("'attrs' must be an object");
  if (attrs.is_object())
    for (const auto &[key, value] : attrs.items())
      if (!takesAttr(step.kind, key)) {
        std::string keys = attrKeys(step.kind);
        return Status::error(fmt::format(
            "unknown attribute '{}' ({} {})", key, opName(step.kind),
            keys.empty() ? "takes no attributes" : "takes " + keys));
      }
  StepAttrs &a = step.attrs;
#define XLNETC_PLAN_ATTR(Kind, name, field, Type, Presence)                         \
  if (step.kind == OpKind::Kind)                                                     \
    XLNETC_RETURN_IF_ERROR(readAttr<Type>(attrs, name, Presence, a.field));
#include "runtime/plan/PlanAttrs.def"
  return checkAcross(attrs, step);
}

} // namespace xlnetc::rt::detail
