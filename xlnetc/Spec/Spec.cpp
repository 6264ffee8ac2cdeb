//===- Spec.cpp - Spec loading entry point and validation rules ----------===//
//
// loadSpec reads the file, dispatches on the extension (.json = HuggingFace
// config.json, anything else = TOML) and converts any exception into an error
// line. validateWith holds every range and cross-field rule, in the order
// docs/SpecFormat.md lists them; the first broken rule is reported.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Spec/Spec.h"
#include "xlnetc/Spec/SpecInternal.h"
#include "xlnetc/Spec/StepShape.h"

#include "runtime/io/InputFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <vector>

namespace xlnetc {

const char *activationName(Activation act) {
  switch (act) {
  case Activation::Relu:
    return "relu";
  case Activation::GeluTanh:
    return "gelu_tanh";
  case Activation::GeluErf:
    return "gelu_erf";
  }
  return "unknown";
}

namespace detail {

std::string formatError(const std::string &path, SourcePos pos,
                        std::string_view message) {
  std::string line = path.empty() ? fmt::format("error: {}", message)
                     : pos.line == 0
                         ? fmt::format("{}: error: {}", path, message)
                         : fmt::format("{}:{}:{}: error: {}", path, pos.line,
                                       pos.column, message);
  // The CLI prints the string as-is; a stray newline would split it.
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\r', ' ');
  return line;
}

std::string quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + "'";
}

size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min(
          {row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

namespace {

// Sane upper bounds of the spec's sizes (docs/SpecFormat.md "Bounds"): far
// above any XLNet, low enough that the model's own products (n_token ×
// d_model, n_layer × d_model × d_inner) stay far inside 64 bits; sizeFits()
// checks the batch's products, which the bounds alone do not keep small.
constexpr int64_t kMaxLayers = 4096;
constexpr int64_t kMaxWidth = int64_t(1) << 17;   // d_model, n_head, d_head (d_inner: ×8)
constexpr int64_t kMaxTokens = (int64_t(1) << 31) - 1;
constexpr int64_t kMaxLength = int64_t(1) << 20;  // seq_len, mem_len, clamp_len
constexpr int64_t kMaxBatch = int64_t(1) << 30;
constexpr int64_t kMaxSteps = int64_t(1) << 53;   // exact in the lr schedule's double

/// Accumulates the first broken rule; every check returns false on failure
/// so the rule list reads as a sequence of `if (!...) return false`.
class RuleChecker {
public:
  RuleChecker(const ModelSpec &spec, const Locator &locate, std::string &error)
      : spec(spec), locate(locate), error(error) {}

  /// Fails at `key` with `message` unless `ok`.
  bool check(bool ok, std::string_view key, const std::string &message) {
    if (!ok)
      error = formatError(spec.sourcePath, locate(key), message);
    return ok;
  }
  bool positive(int64_t v, std::string_view key) {
    return check(v > 0, key,
                 fmt::format("{} must be positive, got {}", key, v));
  }
  bool nonNegative(int64_t v, std::string_view key) {
    return check(v >= 0, key, fmt::format("{} must be >= 0, got {}", key, v));
  }
  /// Finite and > 0 (inf and NaN fail: nothing in a spec means them).
  bool positive(double v, std::string_view key) {
    return check(v > 0 && std::isfinite(v), key,
                 fmt::format("{} must be a finite number > 0, got {}", key, v));
  }
  bool nonNegative(double v, std::string_view key) {
    return check(v >= 0 && std::isfinite(v), key,
                 fmt::format("{} must be a finite number >= 0, got {}", key, v));
  }
  bool atMost(double v, double hi, std::string_view key, std::string_view why) {
    return check(v <= hi, key,
                 fmt::format("{} must be at most {} ({}), got {}", key, hi, why, v));
  }
  /// lo <= v < hi; written so that NaN fails.
  bool halfOpen(double v, double lo, double hi, std::string_view key) {
    return check(v >= lo && v < hi, key,
                 fmt::format("{} must be in [{}, {}), got {}", key, lo, hi, v));
  }
  bool closed(double v, double lo, double hi, std::string_view key) {
    return check(v >= lo && v <= hi, key,
                 fmt::format("{} must be in [{}, {}], got {}", key, lo, hi, v));
  }

  /// v <= hi: the sane bounds that keep every size the step derives from
  /// the spec well inside 64 bits.
  bool atMost(int64_t v, int64_t hi, std::string_view key, std::string_view why) {
    return check(v <= hi, key,
                 fmt::format("{} must be at most {} ({}), got {}", key, hi, why, v));
  }
  /// The product of `factors` (the spec's values) as a count of 4-byte
  /// elements stays far from 64-bit overflow (below 2^58 elements).
  bool sizeFits(std::initializer_list<int64_t> factors, std::string_view key,
                std::string_view what) {
    __int128 n = 1;
    std::string text;
    for (int64_t f : factors) {
      n *= __int128(std::max<int64_t>(f, 1));
      text += (text.empty() ? "" : " × ") + std::to_string(f);
      if (n > (__int128(1) << 100))
        n = __int128(1) << 100; // stays ordered, never wraps
    }
    return check(n < (__int128(1) << 58), key,
                 fmt::format("{} ({} elements) is too large: its byte size would not "
                             "fit in 64 bits",
                             what, text));
  }

  bool modelRules();
  bool dataRules();
  bool trainRules();

private:
  const ModelSpec &spec;
  const Locator &locate;
  std::string &error;
};

bool RuleChecker::modelRules() {
  const ModelSpec &s = spec;
  if (!positive(s.nLayer, "n_layer") || !positive(s.dModel, "d_model") ||
      !positive(s.nHead, "n_head") || !positive(s.dHead, "d_head") ||
      !positive(s.dInner, "d_inner") || !positive(s.nToken, "n_token"))
    return false;
  if (!atMost(s.nLayer, kMaxLayers, "n_layer", "a sane bound") ||
      !atMost(s.dModel, kMaxWidth, "d_model", "a sane bound") ||
      !atMost(s.nHead, kMaxWidth, "n_head", "a sane bound") ||
      !atMost(s.dHead, kMaxWidth, "d_head", "a sane bound") ||
      !atMost(s.dInner, kMaxWidth * 8, "d_inner", "a sane bound") ||
      !atMost(s.nToken, kMaxTokens, "n_token", "token ids are 32-bit integers") ||
      !atMost(s.memLen, kMaxLength, "mem_len", "a sane bound") ||
      !atMost(s.clampLen, kMaxLength, "clamp_len", "a sane bound"))
    return false;
  int64_t product = 0;
  bool overflow = __builtin_mul_overflow(s.nHead, s.dHead, &product);
  if (!check(!overflow && s.dModel == product, "d_model",
             fmt::format("d_model ({}) must equal n_head ({}) × d_head ({}) "
                         "= {}",
                         s.dModel, s.nHead, s.dHead,
                         overflow ? std::string("overflow")
                                  : std::to_string(product))))
    return false;
  if (!check(s.attnType == "bi", "attn_type",
             fmt::format("attn_type {} is not supported for pretraining; "
                         "only 'bi' (bidirectional) is",
                         quote(s.attnType))))
    return false;
  if (!check(s.untieR, "untie_r",
             "untie_r = false (one set of r_w_bias, r_r_bias, r_s_bias and "
             "seg_embed shared by all layers, as the official code has it) is "
             "not supported: xlnetc gives every layer its own, as HuggingFace "
             "XLNet always does; set untie_r = true"))
    return false;
  return nonNegative(s.memLen, "mem_len") &&
         check(s.clampLen >= -1, "clamp_len",
               fmt::format("clamp_len must be >= -1 (-1 = no clamping), got {}",
                           s.clampLen)) &&
         halfOpen(s.dropout, 0, 1, "dropout") &&
         halfOpen(s.dropatt, 0, 1, "dropatt") &&
         positive(s.layerNormEps, "layer_norm_eps") &&
         positive(s.initRange, "init_range");
}

bool RuleChecker::dataRules() {
  const ModelSpec &s = spec;
  if (!positive(s.seqLen, "seq_len") || !nonNegative(s.reuseLen, "reuse_len") ||
      !positive(s.permSize, "perm_size") ||
      !positive(s.numPredict, "num_predict") ||
      !positive(s.maskAlpha, "mask_alpha") ||
      !positive(s.maskBeta, "mask_beta"))
    return false;
  if (!atMost(s.maskAlpha, double(kMaxLength), "mask_alpha", "a sane bound"))
    return false;
  if (!atMost(s.seqLen, kMaxLength, "seq_len", "a sane bound"))
    return false;
  if (!check(s.maskBeta <= s.maskAlpha, "mask_beta",
             fmt::format("mask_beta ({}) must not exceed mask_alpha ({}): it "
                         "masks mask_beta tokens out of each group of "
                         "mask_alpha",
                         s.maskBeta, s.maskAlpha)))
    return false;
  if (!check(s.reuseLen <= s.seqLen, "reuse_len",
             fmt::format("reuse_len ({}) must not exceed seq_len ({})",
                         s.reuseLen, s.seqLen)))
    return false;
  // The reused part [0, reuse_len) and the new part [reuse_len, seq_len) are
  // permuted separately in windows of perm_size (official _local_perm); a
  // window larger than either part would mix them and leak data.
  int64_t rest = s.seqLen - s.reuseLen;
  if (!check(s.permSize <= s.reuseLen, "perm_size",
             fmt::format("perm_size ({}) must not exceed reuse_len ({}): a "
                         "permutation window spanning the reuse boundary "
                         "is a data leak",
                         s.permSize, s.reuseLen)) ||
      !check(s.permSize <= rest, "perm_size",
             fmt::format("perm_size ({}) must not exceed seq_len - reuse_len "
                         "({}): a permutation window spanning the reuse "
                         "boundary is a data leak",
                         s.permSize, rest)))
    return false;
  if (!check(s.reuseLen % s.permSize == 0, "reuse_len",
             fmt::format("reuse_len ({}) must be a multiple of perm_size ({})",
                         s.reuseLen, s.permSize)) ||
      !check(rest % s.permSize == 0, "seq_len",
             fmt::format("seq_len - reuse_len ({}) must be a multiple of "
                         "perm_size ({})",
                         rest, s.permSize)))
    return false;
  return check(s.numPredict <= s.seqLen, "num_predict",
               fmt::format("num_predict ({}) must not exceed seq_len ({})",
                           s.numPredict, s.seqLen));
}

bool RuleChecker::trainRules() {
  const ModelSpec &s = spec;
  if (!positive(s.trainBatchSize, "train_batch_size"))
    return false;
  if (!atMost(s.trainBatchSize, kMaxBatch, "train_batch_size", "a sane bound") ||
      !atMost(s.trainSteps, kMaxSteps, "train_steps", "a sane bound") ||
      !atMost(s.warmupSteps, kMaxSteps, "warmup_steps", "a sane bound"))
    return false;
  // The step's largest tensors: activations [n_layer, batch, seq_len +
  // mem_len, d_inner] and attention rows [batch, n_head, seq_len, seq_len +
  // mem_len] (even where no kernel materializes them, their index space).
  const int64_t klen = s.seqLen + s.memLen;
  if (!sizeFits({s.nLayer, s.trainBatchSize, klen, std::max(s.dInner, s.dModel)},
                "train_batch_size",
                "the activations, n_layer × train_batch_size × (seq_len + mem_len) × "
                "d_inner") ||
      !sizeFits({s.trainBatchSize, s.nHead, s.seqLen, klen}, "train_batch_size",
                "the attention scores, train_batch_size × n_head × seq_len × (seq_len + "
                "mem_len)"))
    return false;
  if (!check(!s.biData || s.trainBatchSize % 2 == 0, "train_batch_size",
             fmt::format("train_batch_size ({}) must be even when bi_data is "
                         "true: half the batch reads forward, half backward",
                         s.trainBatchSize)))
    return false;
  if (!nonNegative(s.microBatchSize, "micro_batch_size") ||
      !check(s.microBatchSize <= s.trainBatchSize, "micro_batch_size",
             fmt::format("micro_batch_size ({}) must not exceed train_batch_size ({})",
                         s.microBatchSize, s.trainBatchSize)) ||
      !check(!s.biData || s.microBatchSize % 2 == 0, "micro_batch_size",
             fmt::format("micro_batch_size ({}) must be even when bi_data is true: each "
                         "micro-batch reads half its rows forward, half backward",
                         s.microBatchSize)))
    return false;
  if (!positive(s.learningRate, "learning_rate") ||
      !nonNegative(s.warmupSteps, "warmup_steps") ||
      !nonNegative(s.trainSteps, "train_steps"))
    return false;
  if (!check(s.trainSteps == 0 || s.warmupSteps <= s.trainSteps, "warmup_steps",
             fmt::format("warmup_steps ({}) must not exceed train_steps ({})",
                         s.warmupSteps, s.trainSteps)))
    return false;
  return positive(s.adamEpsilon, "adam_epsilon") &&
         nonNegative(s.weightDecay, "weight_decay") &&
         positive(s.clip, "clip") &&
         closed(s.minLrRatio, 0, 1, "min_lr_ratio") &&
         check(s.decayMethod == "poly" || s.decayMethod == "cos",
               "decay_method",
               fmt::format("unknown decay_method {}; expected 'poly' or 'cos'",
                           quote(s.decayMethod))) &&
         check(s.device == "host" || s.device == "emu" || s.device == "cuda" ||
                   s.device == "auto",
               "device",
               fmt::format("unknown device {}; expected 'host', 'emu', 'cuda' "
                           "or 'auto'",
                           quote(s.device))) &&
         check(s.precision == "fp32" || s.precision == "bf16", "precision",
               fmt::format("unknown precision {}; expected 'fp32' or 'bf16'",
                           quote(s.precision)));
}

} // namespace

bool validateWith(const ModelSpec &spec, const Locator &locate,
                  std::string &error) {
  RuleChecker rules(spec, locate, error);
  if (!rules.modelRules())
    return false;
  if (spec.fromHFConfig)
    return true;
  return rules.dataRules() && rules.trainRules();
}

} // namespace detail

bool validateSpec(const ModelSpec &spec, std::string &error) {
  try {
    return detail::validateWith(
        spec, [](std::string_view) { return detail::SourcePos{}; }, error);
  } catch (const std::exception &e) {
    error = detail::formatError(spec.sourcePath, {},
                                fmt::format("internal error: {}", e.what()));
    return false;
  }
}

bool loadSpec(const std::string &path, ModelSpec &out, std::string &error) {
  try {
    namespace fs = std::filesystem;
    std::string content;
    if (rt::Status st = rt::readInputFile(path, content); !st) {
      // readInputFile's message is "PATH: what".
      const std::string why = st.message().substr(std::min(st.message().size(), path.size() + 2));
      error = detail::formatError(path, {},
                                  why.rfind("cannot open: ", 0) == 0
                                      ? "cannot open file: " + why.substr(13)
                                      : why);
      return false;
    }
    ModelSpec spec;
    spec.sourcePath = path;
    bool isJson = fs::path(path).extension() == ".json";
    bool ok = isJson ? detail::loadHFConfig(path, content, spec, error)
                     : detail::loadTomlSpec(path, content, spec, error);
    if (ok)
      out = std::move(spec);
    return ok;
  } catch (const std::exception &e) {
    error = detail::formatError(path, {},
                                fmt::format("internal error: {}", e.what()));
    return false;
  }
}

std::string specFingerprint(const ModelSpec &s, const StepShape &shape) {
  return fmt::format(
      "n_layer={} d_model={} n_head={} d_head={} d_inner={} n_token={} "
      "ff_activation={} mem_len={} seq_len={} reuse_len={} batch={} "
      "num_predict={} bi_data={}",
      s.nLayer, s.dModel, s.nHead, s.dHead, s.dInner, s.nToken,
      activationName(s.ffActivation), s.memLen, shape.seqLen, shape.reuseLen,
      shape.batch, shape.numPredict, s.biData ? 1 : 0);
}

} // namespace xlnetc
