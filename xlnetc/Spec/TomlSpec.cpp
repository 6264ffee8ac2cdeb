//===- TomlSpec.cpp - TOML model-spec loader ------------------------------===//
//
// Reads [model], [data] and [train] with toml++ and reports, in this order:
//   1. a TOML syntax error, at toml++'s position;
//   2. the earliest (by line, column) unknown section/key, wrong type or
//      unknown enum spelling;
//   3. a missing section (at 1:1) or required key (at its section header);
//   4. the first broken range or cross-field rule, at the value it names.
// Every known key is described once in keyTable(); the rules live in Spec.cpp.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Spec/SpecInternal.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

using namespace xlnetc;
using namespace xlnetc::detail;

namespace {

enum class Kind { Int, Float, Bool, String, Act };

/// What a resumed run may do when the key's value differs from the run's
/// (ResumeRule), and for a fixed key what was made with the old value.
struct OnResume {
  ResumeRule rule;
  const char *fixedBy = "";
};
const OnResume kSetting{ResumeRule::Override};
const OnResume kWhere{ResumeRule::Free};
const OnResume kParamShapes{ResumeRule::Fixed, "the checkpoint's parameter shapes"};
const OnResume kArchitecture{ResumeRule::Fixed, "the architecture the checkpoint trained"};
const OnResume kInit{ResumeRule::Fixed, "the initialization the run started from"};
const OnResume kMemory{ResumeRule::Fixed, "the checkpoint's memory"};
const OnResume kBatchShape{ResumeRule::Fixed,
                           "the batch shape of the checkpoint's memory and data position"};
const OnResume kDataPosition{ResumeRule::Fixed, "the checkpoint's data position"};
const OnResume kTokens{ResumeRule::Fixed,
                       "the checkpoint's data position (the same text gives other tokens)"};
const OnResume kSeed{ResumeRule::Fixed,
                     "the checkpoint's data position and dropout seeds"};

/// One TOML key: where it lives, its type, the ModelSpec field it fills and
/// what a resume may do when it changes.
struct KeyDesc {
  const char *section;
  const char *key;
  Kind kind;
  OnResume onResume;
  bool required;
  int64_t ModelSpec::*intField = nullptr;
  double ModelSpec::*floatField = nullptr;
  bool ModelSpec::*boolField = nullptr;
  std::string ModelSpec::*stringField = nullptr;
  Activation ModelSpec::*actField = nullptr;
};

KeyDesc intKey(const char *sec, const char *key, int64_t ModelSpec::*f, OnResume r,
               bool required = false) {
  KeyDesc d{sec, key, Kind::Int, r, required};
  d.intField = f;
  return d;
}
KeyDesc floatKey(const char *sec, const char *key, double ModelSpec::*f, OnResume r) {
  KeyDesc d{sec, key, Kind::Float, r, false};
  d.floatField = f;
  return d;
}
KeyDesc boolKey(const char *sec, const char *key, bool ModelSpec::*f, OnResume r) {
  KeyDesc d{sec, key, Kind::Bool, r, false};
  d.boolField = f;
  return d;
}
KeyDesc stringKey(const char *sec, const char *key, std::string ModelSpec::*f,
                  OnResume r) {
  KeyDesc d{sec, key, Kind::String, r, false};
  d.stringField = f;
  return d;
}

/// Every key, in the order docs/SpecFormat.md lists them (also the order in
/// which missing required keys are reported).
const std::vector<KeyDesc> &keyTable() {
  static const std::vector<KeyDesc> table = [] {
    using S = ModelSpec;
    KeyDesc act{"model", "ff_activation", Kind::Act, kArchitecture, false};
    act.actField = &S::ffActivation;
    return std::vector<KeyDesc>{
        intKey("model", "n_layer", &S::nLayer, kParamShapes, true),
        intKey("model", "d_model", &S::dModel, kParamShapes, true),
        intKey("model", "n_head", &S::nHead, kParamShapes, true),
        intKey("model", "d_head", &S::dHead, kParamShapes, true),
        intKey("model", "d_inner", &S::dInner, kParamShapes, true),
        intKey("model", "n_token", &S::nToken, kParamShapes, true),
        act,
        boolKey("model", "untie_r", &S::untieR, kParamShapes),
        stringKey("model", "attn_type", &S::attnType, kArchitecture),
        intKey("model", "mem_len", &S::memLen, kMemory),
        intKey("model", "clamp_len", &S::clampLen, kArchitecture),
        boolKey("model", "same_length", &S::sameLength, kArchitecture),
        floatKey("model", "dropout", &S::dropout, kSetting),
        floatKey("model", "dropatt", &S::dropatt, kSetting),
        floatKey("model", "init_range", &S::initRange, kInit),
        floatKey("model", "layer_norm_eps", &S::layerNormEps, kArchitecture),
        intKey("data", "seq_len", &S::seqLen, kBatchShape, true),
        intKey("data", "reuse_len", &S::reuseLen, kBatchShape, true),
        intKey("data", "perm_size", &S::permSize, kDataPosition, true),
        intKey("data", "num_predict", &S::numPredict, kBatchShape, true),
        boolKey("data", "bi_data", &S::biData, kBatchShape),
        floatKey("data", "mask_alpha", &S::maskAlpha, kDataPosition),
        floatKey("data", "mask_beta", &S::maskBeta, kDataPosition),
        boolKey("data", "keep_accents", &S::keepAccents, kTokens),
        intKey("train", "train_batch_size", &S::trainBatchSize, kBatchShape, true),
        intKey("train", "micro_batch_size", &S::microBatchSize, kWhere),
        floatKey("train", "learning_rate", &S::learningRate, kSetting),
        intKey("train", "warmup_steps", &S::warmupSteps, kSetting),
        intKey("train", "train_steps", &S::trainSteps, kSetting),
        floatKey("train", "adam_epsilon", &S::adamEpsilon, kSetting),
        floatKey("train", "weight_decay", &S::weightDecay, kSetting),
        floatKey("train", "clip", &S::clip, kSetting),
        stringKey("train", "decay_method", &S::decayMethod, kSetting),
        floatKey("train", "min_lr_ratio", &S::minLrRatio, kSetting),
        intKey("train", "seed", &S::seed, kSeed),
        stringKey("train", "device", &S::device, kWhere),
        stringKey("train", "tensorboard", &S::tensorboard, kWhere),
        stringKey("train", "precision", &S::precision, kSetting),
    };
  }();
  return table;
}

/// `text` as a TOML basic string, which is also a JSON string: quoted, with
/// '"', '\\' and control characters escaped.
std::string basicString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += {'\\', c};
    else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
    else
      out += c;
  }
  return out + '"';
}

/// The key's value in `spec` as a TOML value: floats in their shortest form
/// that reads back as the same double (always with a '.' or an exponent, so
/// TOML reads a float), strings as basic strings.
std::string tomlValue(const KeyDesc &d, const ModelSpec &spec) {
  switch (d.kind) {
  case Kind::Int:
    return std::to_string(spec.*d.intField);
  case Kind::Float: {
    std::string value = fmt::format("{}", spec.*d.floatField);
    if (value.find_first_of(".eEni") == std::string::npos)
      value += ".0"; // a TOML float, not an integer
    return value;
  }
  case Kind::Bool:
    return spec.*d.boolField ? "true" : "false";
  case Kind::String:
    return basicString(spec.*d.stringField);
  case Kind::Act:
    return basicString(activationName(spec.*d.actField));
  }
  return "";
}

const char *const kSections[] = {"model", "data", "train"};

/// Names other tools use for a key, mapped to ours.
const std::map<std::string_view, std::string_view> kAliases = {
    {"vocab_size", "n_token"},
    {"initializer_range", "init_range"},
    {"batch_size", "train_batch_size"},
};

const KeyDesc *findKey(std::string_view key, const char *section = nullptr) {
  for (const KeyDesc &d : keyTable())
    if (d.key == key && (!section || std::string_view(d.section) == section))
      return &d;
  return nullptr;
}

bool isSection(std::string_view name) {
  return std::find(std::begin(kSections), std::end(kSections), name) !=
         std::end(kSections);
}

SourcePos posOf(const toml::source_region &region) {
  return {region.begin.line, region.begin.column};
}

const char *typeName(const toml::node &node) {
  switch (node.type()) {
  case toml::node_type::table:
    return "table";
  case toml::node_type::array:
    return "array";
  case toml::node_type::string:
    return "string";
  case toml::node_type::integer:
    return "integer";
  case toml::node_type::floating_point:
    return "float";
  case toml::node_type::boolean:
    return "boolean";
  case toml::node_type::date:
    return "date";
  case toml::node_type::time:
    return "time";
  case toml::node_type::date_time:
    return "date-time";
  default:
    return "nothing";
  }
}

/// Walks the parsed document, filling a ModelSpec and remembering where each
/// section and value was written.
class TomlLoader {
public:
  TomlLoader(const std::string &path, ModelSpec &spec)
      : path(path), spec(spec) {}

  bool load(const toml::table &doc, std::string &error);

private:
  void note(SourcePos pos, std::string message) {
    problems.push_back({pos, std::move(message)});
  }
  void visitTopLevel(const toml::key &key, const toml::node &node);
  void visitKey(const char *section, const toml::key &key,
                const toml::node &node);
  void readValue(const KeyDesc &desc, const toml::node &node);
  SourcePos locate(std::string_view key) const;

  struct Problem {
    SourcePos pos;
    std::string message;
  };
  /// [model] hf_config: the model keys from a HuggingFace config.json.
  bool readHfConfig(std::string &error);

  const std::string &path;
  ModelSpec &spec;
  std::vector<Problem> problems;
  std::string hfConfig;    ///< [model] hf_config as written ("" when absent)
  SourcePos hfConfigPos{}; ///< where its value is
  std::map<std::string, SourcePos, std::less<>> sectionPos, valuePos;
};

void TomlLoader::visitTopLevel(const toml::key &key, const toml::node &node) {
  std::string_view name = key.str();
  if (isSection(name)) {
    const char *section =
        *std::find(std::begin(kSections), std::end(kSections), name);
    sectionPos[section] = posOf(node.source());
    if (const toml::table *table = node.as_table()) {
      for (auto &&[k, v] : *table)
        visitKey(section, k, v);
    } else {
      note(posOf(node.source()),
           fmt::format("[{}] must be a table, got {}", name, typeName(node)));
    }
    return;
  }
  if (const KeyDesc *d = findKey(name)) {
    note(posOf(key.source()),
         fmt::format("key {} must be inside a section; it belongs in [{}]",
                     quote(name), d->section));
    return;
  }
  if (!node.is_table()) {
    note(posOf(key.source()),
         fmt::format("unknown top-level key {}; keys go in [model], [data] or "
                     "[train]",
                     quote(name)));
    return;
  }
  const char *suggestion = nullptr;
  for (const char *s : kSections)
    if (!suggestion && editDistance(name, s) <= 2)
      suggestion = s;
  note(posOf(node.source()),
       suggestion ? fmt::format("unknown section [{}]; did you mean [{}]?",
                                name, suggestion)
                  : fmt::format("unknown section [{}]; expected [model], "
                                "[data] or [train]",
                                name));
}

void TomlLoader::visitKey(const char *section, const toml::key &key,
                          const toml::node &node) {
  std::string_view name = key.str();
  if (const KeyDesc *d = findKey(name, section)) {
    readValue(*d, node);
    return;
  }
  if (std::string_view(section) == "model" && name == "hf_config") {
    hfConfigPos = posOf(node.source());
    if (auto v = node.value_exact<std::string>(); v && !v->empty())
      hfConfig = *v;
    else
      note(hfConfigPos, fmt::format("hf_config must be a non-empty string (the path of a "
                                    "HuggingFace config.json), got {}",
                                    typeName(node)));
    return;
  }
  std::string message =
      fmt::format("unknown key {} in [{}]", quote(name), section);
  if (const KeyDesc *other = findKey(name)) {
    message += fmt::format("; it belongs in [{}]", other->section);
  } else if (auto alias = kAliases.find(name);
             alias != kAliases.end() && findKey(alias->second, section)) {
    message += fmt::format("; did you mean '{}'?", alias->second);
  } else {
    const KeyDesc *best = nullptr;
    size_t bestDist = 3;
    for (const KeyDesc &d : keyTable()) {
      if (std::string_view(d.section) != section)
        continue;
      size_t dist = editDistance(name, d.key);
      if (dist < bestDist) {
        best = &d;
        bestDist = dist;
      }
    }
    if (best)
      message += fmt::format("; did you mean '{}'?", best->key);
  }
  note(posOf(key.source()), message);
}

void TomlLoader::readValue(const KeyDesc &d, const toml::node &node) {
  SourcePos pos = posOf(node.source());
  auto wrongType = [&](const char *expected) {
    note(pos,
         fmt::format("{} must be {}, got {}", d.key, expected, typeName(node)));
  };
  switch (d.kind) {
  case Kind::Int:
    if (auto v = node.value_exact<int64_t>())
      spec.*d.intField = *v;
    else
      return wrongType("an integer");
    break;
  case Kind::Float:
    // Integers are accepted for float keys (mask_alpha = 6).
    if (node.is_number())
      spec.*d.floatField = *node.value<double>();
    else
      return wrongType("a number");
    break;
  case Kind::Bool:
    if (auto v = node.value_exact<bool>())
      spec.*d.boolField = *v;
    else
      return wrongType("a boolean");
    break;
  case Kind::String:
    if (auto v = node.value_exact<std::string>())
      spec.*d.stringField = *v;
    else
      return wrongType("a string");
    break;
  case Kind::Act: {
    auto v = node.value_exact<std::string>();
    if (!v)
      return wrongType("a string");
    if (*v == "relu")
      spec.ffActivation = Activation::Relu;
    else if (*v == "gelu_tanh")
      spec.ffActivation = Activation::GeluTanh;
    else if (*v == "gelu_erf")
      spec.ffActivation = Activation::GeluErf;
    else if (*v == "gelu")
      return note(pos, "ff_activation 'gelu' is ambiguous; use 'gelu_tanh' "
                       "(what official XLNet calls gelu) or 'gelu_erf' (what "
                       "HuggingFace calls gelu)");
    else
      return note(pos, fmt::format("unknown ff_activation {}; expected "
                                   "'relu', 'gelu_tanh' or 'gelu_erf'",
                                   quote(*v)));
    break;
  }
  }
  valuePos[d.key] = pos;
}

SourcePos TomlLoader::locate(std::string_view key) const {
  if (auto it = valuePos.find(key); it != valuePos.end())
    return it->second;
  // A defaulted key: point at its section header.
  if (const KeyDesc *d = findKey(key))
    if (auto it = sectionPos.find(d->section); it != sectionPos.end())
      return it->second;
  return {};
}

bool TomlLoader::load(const toml::table &doc, std::string &error) {
  // 1. Unknown names, types and enum spellings: report the earliest.
  for (auto &&[key, node] : doc)
    visitTopLevel(key, node);
  if (!problems.empty()) {
    auto first = std::min_element(problems.begin(), problems.end(),
                                  [](const Problem &a, const Problem &b) {
                                    return std::tie(a.pos.line, a.pos.column) <
                                           std::tie(b.pos.line, b.pos.column);
                                  });
    error = formatError(path, first->pos, first->message);
    return false;
  }
  // 2. Missing sections, then missing required keys ([model]'s come from
  //    hf_config when it is given).
  for (const char *s : kSections)
    if (!sectionPos.count(s)) {
      error = formatError(path, {1, 1}, fmt::format("missing section [{}]", s));
      return false;
    }
  if (!hfConfig.empty() && !readHfConfig(error))
    return false;
  for (const KeyDesc &d : keyTable())
    if (d.required && !valuePos.count(d.key) &&
        !(!hfConfig.empty() && std::string_view(d.section) == "model")) {
      error = formatError(
          path, sectionPos[d.section],
          fmt::format("missing required key '{}' in [{}]", d.key, d.section));
      return false;
    }
  // 3. Ranges and cross-field rules.
  return validateWith(
      spec, [this](std::string_view key) { return locate(key); }, error);
}

bool TomlLoader::readHfConfig(std::string &error) {
  for (const KeyDesc &d : keyTable())
    if (std::string_view(d.section) == "model" && valuePos.count(d.key)) {
      error = formatError(path, valuePos.at(d.key),
                          fmt::format("[model] takes hf_config or its own keys, not both: "
                                      "'{}' is given beside hf_config",
                                      d.key));
      return false;
    }
  namespace fs = std::filesystem;
  fs::path config(hfConfig);
  if (config.is_relative())
    config = fs::path(path).parent_path() / config;
  ModelSpec hf;
  std::string why;
  if (!loadSpec(config.string(), hf, why)) {
    error = formatError(path, hfConfigPos,
                        fmt::format("hf_config {}: {}", quote(hfConfig), why));
    return false;
  }
  if (!hf.fromHFConfig) {
    error = formatError(path, hfConfigPos,
                        fmt::format("hf_config {} is not a HuggingFace config.json",
                                    quote(hfConfig)));
    return false;
  }
  // The [model] fields; [data] and [train] stay this file's.
  spec.nLayer = hf.nLayer, spec.dModel = hf.dModel, spec.nHead = hf.nHead;
  spec.dHead = hf.dHead, spec.dInner = hf.dInner, spec.nToken = hf.nToken;
  spec.ffActivation = hf.ffActivation, spec.untieR = hf.untieR, spec.attnType = hf.attnType;
  spec.memLen = hf.memLen, spec.clampLen = hf.clampLen, spec.sameLength = hf.sameLength;
  spec.dropout = hf.dropout, spec.dropatt = hf.dropatt, spec.layerNormEps = hf.layerNormEps;
  spec.initRange = hf.initRange;
  return true;
}

} // namespace

bool xlnetc::detail::loadTomlSpec(const std::string &path,
                                  const std::string &text, ModelSpec &out,
                                  std::string &error) {
  toml::table doc;
  try {
    doc = toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error &e) {
    error = formatError(path, posOf(e.source()), e.description());
    return false;
  }
  return TomlLoader(path, out).load(doc, error);
}

std::string xlnetc::writeSpecToml(const ModelSpec &spec, const std::string &comment) {
  // Every key of the table, in its order.
  std::string out;
  if (!comment.empty())
    out += "# " + comment + "\n";
  const char *section = "";
  for (const KeyDesc &d : keyTable()) {
    if (std::string_view(d.section) != section) {
      section = d.section;
      out += fmt::format("{}[{}]\n", out.empty() ? "" : "\n", section);
    }
    out += fmt::format("{} = {}\n", d.key, tomlValue(d, spec));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> xlnetc::specValues(const ModelSpec &spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const KeyDesc &d : keyTable())
    out.emplace_back(std::string(d.section) + "." + d.key, tomlValue(d, spec));
  return out;
}

std::vector<SpecChange> xlnetc::specChanges(const ModelSpec &before, const ModelSpec &after) {
  std::vector<SpecChange> changes;
  for (const KeyDesc &d : keyTable()) {
    std::string was = tomlValue(d, before), now = tomlValue(d, after);
    if (was != now)
      changes.push_back({d.key, std::move(was), std::move(now), d.onResume.rule,
                         d.onResume.fixedBy});
  }
  return changes;
}

bool xlnetc::isSpecKey(std::string_view key, std::string &suggestion) {
  suggestion.clear();
  if (findKey(key))
    return true;
  size_t bestDist = 3;
  for (const KeyDesc &d : keyTable())
    if (size_t dist = editDistance(key, d.key); dist < bestDist) {
      suggestion = d.key;
      bestDist = dist;
    }
  if (auto alias = kAliases.find(key); alias != kAliases.end())
    suggestion = alias->second;
  return false;
}
