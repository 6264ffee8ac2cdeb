//===- HFConfig.cpp - HuggingFace config.json loader ----------------------===//
//
// Maps a HuggingFace XLNet config.json (or the official xlnet_config.json,
// recognised by `n_token` without `vocab_size`) onto the [model] fields.
// Unknown keys are ignored: HF configs carry many unrelated ones. Missing
// optional keys take HuggingFace XLNetConfig's defaults. nlohmann::json keeps
// no positions, so a small scanner records where each top-level value starts.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Spec/SpecInternal.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <optional>

using namespace xlnetc;
using namespace xlnetc::detail;
using nlohmann::json;

namespace {

/// An error found while reading the config, thrown to the entry point.
struct Failure {
  SourcePos pos;
  std::string message;
};

SourcePos posAtOffset(const std::string &text, size_t offset) {
  SourcePos pos{1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

/// Returns the position of each top-level key's value (first occurrence),
/// and of the top-level '{' under the empty key. Assumes `text` is valid JSON.
std::map<std::string, SourcePos, std::less<>>
topLevelValuePositions(const std::string &text) {
  std::map<std::string, SourcePos, std::less<>> positions;
  int depth = 0;
  char prev = 0; // last significant character outside strings
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      size_t start = i + 1;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      bool isKey = depth == 1 && (prev == '{' || prev == ',');
      prev = '"';
      if (!isKey)
        continue;
      std::string key = text.substr(start, i - start);
      size_t v = text.find(':', i);
      if (v == std::string::npos)
        break;
      v = text.find_first_not_of(" \t\r\n", v + 1);
      positions[key] = posAtOffset(text, v); // nlohmann keeps the last
      continue;
    }
    if (c == '{' || c == '[') {
      if (depth == 0 && c == '{')
        positions.emplace("", posAtOffset(text, i));
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n')
      prev = c;
  }
  return positions;
}

const char *typeName(const json &v) {
  if (v.is_null())
    return "null";
  if (v.is_boolean())
    return "boolean";
  if (v.is_number_integer())
    return "integer";
  if (v.is_number_float())
    return "float";
  if (v.is_string())
    return "string";
  if (v.is_array())
    return "array";
  return "object";
}

/// Reads typed top-level fields of one config, throwing Failure on error.
class HFReader {
public:
  HFReader(const json &doc, const std::string &text)
      : doc(doc), positions(topLevelValuePositions(text)) {}

  SourcePos locate(std::string_view key) const {
    if (auto it = positions.find(key); it != positions.end())
      return it->second;
    return {};
  }
  bool has(const char *key) const { return doc.contains(key); }

  /// An integer; `nullValue` is used for JSON null when `nullable`.
  int64_t integer(const char *key, std::optional<int64_t> def,
                  bool nullable = false, int64_t nullValue = 0) const {
    const json *v = find(key, def.has_value());
    if (!v)
      return *def;
    if (nullable && v->is_null())
      return nullValue;
    if (v->is_number_unsigned() &&
        v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(key, fmt::format("{} is out of range", key));
    if (!v->is_number_integer())
      wrongType(key, *v, nullable ? "an integer or null" : "an integer");
    return v->get<int64_t>();
  }
  double number(const char *key, double def) const {
    const json *v = find(key, true);
    if (!v)
      return def;
    if (!v->is_number())
      wrongType(key, *v, "a number");
    return v->get<double>();
  }
  bool boolean(const char *key, bool def) const {
    const json *v = find(key, true);
    if (!v)
      return def;
    if (!v->is_boolean())
      wrongType(key, *v, "a boolean");
    return v->get<bool>();
  }
  std::string string(const char *key, const char *def) const {
    const json *v = find(key, true);
    if (!v)
      return def;
    if (!v->is_string())
      wrongType(key, *v, "a string");
    return v->get<std::string>();
  }
  [[noreturn]] void fail(std::string_view key, std::string message) const {
    throw Failure{locate(key), std::move(message)};
  }

private:
  const json *find(const char *key, bool optional) const {
    auto it = doc.find(key);
    if (it != doc.end())
      return &*it;
    if (!optional)
      throw Failure{locate(""), fmt::format("missing required key '{}'", key)};
    return nullptr;
  }
  [[noreturn]] void wrongType(const char *key, const json &v,
                              const char *expected) const {
    fail(key, fmt::format("{} must be {}, got {}", key, expected, typeName(v)));
  }

  const json &doc;
  std::map<std::string, SourcePos, std::less<>> positions;
};

/// Fills the [model] fields (and reuse_len, bi_data) from the config.
void readConfig(const HFReader &r, ModelSpec &spec) {
  // The official xlnet_config.json names the vocabulary n_token and means the
  // tanh approximation by "gelu"; HuggingFace says vocab_size and erf.
  bool official = !r.has("vocab_size") && r.has("n_token");
  spec.nToken = r.integer(official ? "n_token" : "vocab_size", std::nullopt);
  spec.nLayer = r.integer("n_layer", std::nullopt);
  spec.dModel = r.integer("d_model", std::nullopt);
  spec.nHead = r.integer("n_head", std::nullopt);
  // HF derives d_head = d_model // n_head when the config omits it.
  spec.dHead =
      r.integer("d_head", spec.nHead > 0 ? spec.dModel / spec.nHead : 0);
  spec.dInner = r.integer("d_inner", std::nullopt);

  std::string act = r.string("ff_activation", "gelu");
  if (act == "relu")
    spec.ffActivation = Activation::Relu;
  else if (act == "gelu")
    spec.ffActivation = official ? Activation::GeluTanh : Activation::GeluErf;
  else if (act == "gelu_new" || act == "gelu_pytorch_tanh")
    spec.ffActivation = Activation::GeluTanh;
  else
    r.fail("ff_activation",
           fmt::format("unsupported ff_activation {}; expected 'relu', 'gelu' "
                       "(erf), 'gelu_new' or 'gelu_pytorch_tanh' (tanh "
                       "approximation)",
                       quote(act)));

  spec.untieR = r.boolean("untie_r", true);
  spec.attnType = r.string("attn_type", "bi");
  spec.memLen = r.integer("mem_len", official ? 0 : 512, /*nullable=*/true);
  spec.reuseLen = r.integer("reuse_len", 0, /*nullable=*/true);
  spec.clampLen = r.integer("clamp_len", -1);
  spec.sameLength = r.boolean("same_length", false);
  spec.biData = r.boolean("bi_data", false);
  spec.dropout = r.number("dropout", 0.1);
  // HF has one dropout rate; a dropatt key (as in ../shared/golden) wins.
  spec.dropatt = r.number("dropatt", spec.dropout);
  spec.layerNormEps = r.number("layer_norm_eps", 1e-12);
  spec.initRange = r.number("initializer_range", 0.02);
}

} // namespace

bool xlnetc::detail::loadHFConfig(const std::string &path,
                                  const std::string &text, ModelSpec &out,
                                  std::string &error) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error &e) {
    // what(): "[json.exception.parse_error.101] parse error at line L,
    // column C: MESSAGE"; keep the position and MESSAGE. Read by hand: a
    // std::regex recurses once per character of MESSAGE, which quotes the
    // input, and overflowed the stack on a long line (found by the
    // hf_config fuzzer; fuzz/reproducers/hf_config/).
    const std::string what = e.what();
    auto number = [&](size_t &at, uint32_t &out) {
      const size_t begin = at;
      uint64_t v = 0;
      while (at < what.size() && at - begin < 9 && what[at] >= '0' && what[at] <= '9')
        v = v * 10 + uint64_t(what[at++] - '0');
      out = uint32_t(v);
      return at > begin;
    };
    uint32_t line = 0, column = 0;
    size_t at = what.find("at line ");
    bool ok = at != std::string::npos;
    if (ok) {
      at += 8;
      ok = number(at, line) && what.compare(at, 9, ", column ") == 0;
    }
    if (ok) {
      at += 9;
      ok = number(at, column) && what.compare(at, 2, ": ") == 0;
    }
    error = ok ? formatError(path, {line, column}, what.substr(at + 2))
               : formatError(path, {}, what);
    return false;
  } catch (const json::exception &e) {
    // The other parse failures (a number too large for a double throws
    // out_of_range 406, found by fuzz/reproducers/hf_config/): the message
    // without the "[json.exception.NAME.N] " prefix.
    std::string what = e.what();
    if (size_t end = what.find("] "); what.rfind("[json.exception", 0) == 0 &&
                                      end != std::string::npos)
      what = what.substr(end + 2);
    error = formatError(path, {}, what);
    return false;
  }
  if (!doc.is_object()) {
    error = formatError(path, {1, 1},
                        "a config.json must hold a JSON object at the top "
                        "level");
    return false;
  }
  HFReader reader(doc, text);
  out.fromHFConfig = true;
  try {
    readConfig(reader, out);
  } catch (const Failure &f) {
    error = formatError(path, f.pos, f.message);
    return false;
  }
  // Rules name the official keys; point them at the HF spelling.
  bool official = !reader.has("vocab_size") && reader.has("n_token");
  auto locate = [&](std::string_view key) {
    if (key == "n_token" && !official)
      key = "vocab_size";
    else if (key == "init_range")
      key = "initializer_range";
    return reader.locate(key);
  };
  return validateWith(out, locate, error);
}
