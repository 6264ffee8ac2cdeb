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
  Status string(const char *key, std::string &out) {
    return typed(key, out, &json::is_string, "a string", true);
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
    int64_t kRank = 0;
    XLNETC_RETURN_IF_ERROR(r.integer("k_rank", kRank));
    if (kRank < 1 || kRank > 8)
      return Status::error(
          fmt::format("attribute 'k_rank' must be in [1, 8], got {}", kRank));
    a.kRank = int(kRank);
    XLNETC_RETURN_IF_ERROR(r.boolean("transpose_w", a.transposeW));
    std::string act;
    XLNETC_RETURN_IF_ERROR(r.string("activation", act));
    // Names are activationName()'s, so the plan reader and writer agree.
    bool known = false;
    for (Activation candidate : {Activation::None, Activation::Relu,
                                 Activation::GeluTanh, Activation::GeluErf})
      if (act == activationName(candidate)) {
        a.activation = candidate;
        known = true;
      }
    if (!known)
      return Status::error(fmt::format(
          "unknown activation \"{}\" (none, relu, gelu_tanh, gelu_erf)", act));
    return Status::ok();
  }
  case OpKind::RelAttention:
    XLNETC_RETURN_IF_ERROR(r.number("scale", a.scale));
    if (!std::isfinite(a.scale))
      return Status::error("attribute 'scale' must be finite");
    XLNETC_RETURN_IF_ERROR(parseRate(r, "dropatt", a.dropatt, false));
    return r.integer("dropout_site", a.dropoutSite, /*required=*/false);
  case OpKind::AddLayerNorm:
    XLNETC_RETURN_IF_ERROR(r.number("eps", a.eps));
    if (!(a.eps >= 0.0))
      return Status::error(fmt::format("attribute 'eps' must be >= 0, got {}",
                                       a.eps));
    return Status::ok();
  case OpKind::Dropout:
    XLNETC_RETURN_IF_ERROR(parseRate(r, "rate", a.rate, true));
    return r.integer("dropout_site", a.dropoutSite, /*required=*/false);
  default:
    return Status::ok();
  }
}

} // namespace xlnetc::rt::detail
