//===- Checkpoint.cpp - Training checkpoints ------------------------------===//

#include "runtime/train/Checkpoint.h"

#include "runtime/io/Safetensors.h"
#include "runtime/train/AtomicFile.h"
#include "runtime/train/CheckpointUtil.h"
#include "runtime/train/WeightsReader.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <thread>

namespace xlnetc::rt::train {

using nlohmann::json;
using detail::listNames;
using detail::oneLine;
using detail::startsWith;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace detail {

std::string oneLine(const std::string &text) {
  std::string out = text;
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x20)
      c = ' ';
  return out;
}

std::string listNames(const std::vector<std::string> &names, size_t max) {
  std::string out;
  for (size_t i = 0; i < names.size() && i < max; ++i)
    out += fmt::format("{}'{}'", i ? ", " : "", oneLine(names[i]));
  if (names.size() > max)
    out += fmt::format(" (and {} more)", names.size() - max);
  return out;
}

Status checkReadableFile(const std::string &path, const std::string &what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return Status::error(fmt::format("{} {} does not exist", what, path));
    return Status::error(
        fmt::format("cannot access {} {}: {}", what, path, std::strerror(errno)));
  }
  if (S_ISDIR(st.st_mode))
    return Status::error(
        fmt::format("{} {} is a directory, not a file", what, path));
  return Status::ok();
}

} // namespace detail

namespace {

// Metadata keys.
constexpr const char *kKeyHfFormat = "format"; // transformers wants "pt"
constexpr const char *kKeyFormat = "xlnetc.format";
constexpr const char *kKeyVersion = "xlnetc.version";
constexpr const char *kKeyStep = "xlnetc.step";
constexpr const char *kKeyRng = "xlnetc.rng_state";
constexpr const char *kKeyData = "xlnetc.data_position";
constexpr const char *kKeyFingerprint = "xlnetc.spec_fingerprint";
constexpr const char *kKeySummary = "xlnetc.spec_summary";

constexpr const char *kEmbedding = "transformer.word_embedding.weight";

bool reservedName(const std::string &name) {
  return name == "__metadata__" || startsWith(name, "optimizer.") ||
         startsWith(name, kStatePrefix);
}

bool hasEnoughStorage(const Tensor &t) {
  return t.capacityBytes() >= t.nbytes();
}

void writeLE64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = (v >> (8 * i)) & 0xff;
}

std::optional<int64_t> parseInt64(const std::string &s) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty())
    return std::nullopt;
  return v;
}

/// Maps the layer-0 / embedding shapes of `shapes` to dimensions.
std::string summarize(const ParamShapes &shapes) {
  std::vector<std::string> parts;
  int64_t nLayer = -1;
  for (const auto &[name, shape] : shapes) {
    const std::string prefix = "transformer.layer.";
    if (!startsWith(name, prefix))
      continue;
    size_t dot = name.find('.', prefix.size());
    if (auto i = parseInt64(name.substr(prefix.size(), dot - prefix.size())))
      nLayer = std::max(nLayer, *i + 1);
  }
  if (nLayer >= 0)
    parts.push_back(fmt::format("n_layer {}", nLayer));
  auto find = [&](const std::string &name, size_t rank)
      -> const std::vector<int64_t> * {
    auto it = shapes.find(name);
    return it != shapes.end() && it->second.size() == rank ? &it->second
                                                           : nullptr;
  };
  const auto *emb = find(kEmbedding, 2);
  const auto *q = find("transformer.layer.0.rel_attn.q", 3);
  const auto *ff = find("transformer.layer.0.ff.layer_1.weight", 2);
  if (emb)
    parts.push_back(fmt::format("d_model {}", (*emb)[1]));
  else if (q)
    parts.push_back(fmt::format("d_model {}", (*q)[0]));
  if (q) {
    parts.push_back(fmt::format("n_head {}", (*q)[1]));
    parts.push_back(fmt::format("d_head {}", (*q)[2]));
  }
  if (ff)
    parts.push_back(fmt::format("d_inner {}", (*ff)[0]));
  if (emb)
    parts.push_back(fmt::format("n_token {}", (*emb)[0]));
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? ", " : "") + parts[i];
  return out.empty() ? fmt::format("{} parameters", shapes.size()) : out;
}

} // namespace

ParamShapes xlnetParamShapes(const XLNetDims &d) {
  ParamShapes s;
  s[kEmbedding] = {d.nToken, d.dModel};
  s["transformer.mask_emb"] = {1, 1, d.dModel};
  for (int64_t i = 0; i < d.nLayer; ++i) {
    std::string l = fmt::format("transformer.layer.{}.", i);
    for (const char *w : {"q", "k", "v", "o", "r"})
      s[l + "rel_attn." + w] = {d.dModel, d.nHead, d.dHead};
    for (const char *b : {"r_w_bias", "r_r_bias", "r_s_bias"})
      s[l + "rel_attn." + b] = {d.nHead, d.dHead};
    s[l + "rel_attn.seg_embed"] = {2, d.nHead, d.dHead};
    s[l + "rel_attn.layer_norm.weight"] = {d.dModel};
    s[l + "rel_attn.layer_norm.bias"] = {d.dModel};
    s[l + "ff.layer_norm.weight"] = {d.dModel};
    s[l + "ff.layer_norm.bias"] = {d.dModel};
    s[l + "ff.layer_1.weight"] = {d.dInner, d.dModel};
    s[l + "ff.layer_1.bias"] = {d.dInner};
    s[l + "ff.layer_2.weight"] = {d.dModel, d.dInner};
    s[l + "ff.layer_2.bias"] = {d.dModel};
  }
  s["lm_loss.bias"] = {d.nToken};
  return s;
}

std::string summarizeParamShapes(const ParamShapes &shapes) {
  return summarize(shapes);
}

//===----------------------------------------------------------------------===//
// Save
//===----------------------------------------------------------------------===//

/// Test hook for the kill -9 test: with XLNETC_FAULT_PAUSE_CHECKPOINT_WRITE=S
/// set, a save announces itself on stderr halfway through the temporary file
/// and sleeps S seconds, so a test can kill the process mid-write.
static void pauseForFaultInjection(const std::string &tempPath) {
  const char *v = std::getenv("XLNETC_FAULT_PAUSE_CHECKPOINT_WRITE");
  if (!v || !*v)
    return;
  std::fprintf(stderr, "xlnetc: fault injection: pausing while writing %s\n",
               tempPath.c_str());
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(v)));
}

Status saveCheckpoint(const std::string &path, const TrainState &state) {
  auto fail = [&](const std::string &msg) {
    return Status::error(
        fmt::format("cannot save checkpoint {}: {}", path, oneLine(msg)));
  };
  if (state.step < 0)
    return fail(fmt::format("negative step {}", state.step));

  // 1. The tensors under their file names (sorted: std::map).
  std::map<std::string, const Tensor *> entries;
  for (const auto &[name, t] : state.params) {
    if (name.empty() || reservedName(name))
      return fail(fmt::format("'{}' is not a valid parameter name (reserved "
                              "for the optimizer state or memory)",
                              name));
    if (t.dtype != DType::F32)
      return fail(fmt::format("parameter '{}' is {}, expected f32", name,
                              t.typeStr()));
    entries[name] = &t;
  }
  auto addMoments = [&](const TensorMap &moments, const char *prefix,
                        const char *what) -> Status {
    for (const auto &[name, t] : moments) {
      auto p = state.params.find(name);
      if (p == state.params.end())
        return fail(fmt::format("{} for '{}', which is not a parameter", what,
                                name));
      if (t.dtype != DType::F32 || t.shape != p->second.shape)
        return fail(fmt::format("{} for '{}' is {}, but the parameter is {}",
                                what, name, t.typeStr(), p->second.typeStr()));
      entries[prefix + name] = &t;
    }
    for (const auto &[name, t] : state.params)
      if (!moments.count(name))
        return fail(fmt::format("no {} for parameter '{}'", what, name));
    return Status::ok();
  };
  XLNETC_RETURN_IF_ERROR(addMoments(state.adamM, kAdamMPrefix, "Adam first moment"));
  XLNETC_RETURN_IF_ERROR(addMoments(state.adamV, kAdamVPrefix, "Adam second moment"));
  for (const auto &[name, t] : state.mems) {
    if (name.empty())
      return fail("a memory tensor has an empty name");
    entries[kStatePrefix + name] = &t;
  }
  for (const auto &[name, t] : entries)
    if (!hasEnoughStorage(*t))
      return fail(fmt::format("tensor '{}' ({}) has too little storage", name,
                              t->typeStr()));

  // 2. Header.
  json header = json::object();
  uint64_t offset = 0;
  for (const auto &[name, t] : entries) {
    json entry = json::object();
    entry["dtype"] = dtypeSafetensorsName(t->dtype);
    entry["shape"] = t->shape;
    entry["data_offsets"] = {offset, offset + t->nbytes()};
    header[name] = std::move(entry);
    offset += t->nbytes();
  }
  json meta = json::object();
  meta[kKeyHfFormat] = "pt";
  meta[kKeyFormat] = kCheckpointFormatTag;
  meta[kKeyVersion] = std::to_string(kCheckpointVersion);
  meta[kKeyStep] = std::to_string(state.step);
  meta[kKeyRng] = state.rngState;
  meta[kKeyData] = state.dataPosition;
  meta[kKeyFingerprint] = state.specFingerprint;
  meta[kKeySummary] = state.specSummary;
  header["__metadata__"] = std::move(meta);
  std::string headerText;
  try {
    headerText = header.dump();
  } catch (const json::exception &) {
    return fail("a metadata string (rng state, data position, fingerprint or "
                "summary) or a tensor name is not valid UTF-8");
  }
  headerText.append((8 - headerText.size() % 8) % 8, ' ');

  // 3. Atomic write: temp file in the same directory, fsync, rename.
  AtomicFile file;
  auto wrap = [&](Status s) {
    return s ? s : Status::error("cannot save checkpoint: " + s.message());
  };
  XLNETC_RETURN_IF_ERROR(wrap(file.open(path)));
  unsigned char lenBytes[8];
  writeLE64(lenBytes, headerText.size());
  XLNETC_RETURN_IF_ERROR(wrap(file.write(lenBytes, 8)));
  XLNETC_RETURN_IF_ERROR(wrap(file.write(headerText.data(), headerText.size())));
  size_t written = 0;
  for (const auto &[name, t] : entries) {
    XLNETC_RETURN_IF_ERROR(wrap(file.write(t->bytes(), t->nbytes())));
    if (++written == entries.size() / 2)
      pauseForFaultInjection(file.tempPath());
  }
  return wrap(file.commit());
}

//===----------------------------------------------------------------------===//
// Load
//===----------------------------------------------------------------------===//

/// loadCheckpoint's phase 2: the spec it was written for (its fingerprint
/// against `expectedFingerprint`, when one is given).
static Status checkWrittenFor(const std::string &path, const SafetensorsIndex &index,
                              const ParamShapes &expected,
                              const std::string &expectedFingerprint,
                              const std::string &expectedSummary) {
  auto metaOr = [&](const char *key) {
    auto it = index.metadata.find(key);
    return it == index.metadata.end() ? std::string() : it->second;
  };
  const std::string fingerprint = metaOr(kKeyFingerprint);
  if (!expectedFingerprint.empty() && fingerprint != expectedFingerprint) {
    std::string theirs = metaOr(kKeySummary);
    std::string ours =
        expectedSummary.empty() ? summarize(expected) : expectedSummary;
    bool sameParams = true;
    for (const auto &[name, shape] : expected) {
      auto it = index.tensors.find(name);
      if (it == index.tensors.end() || it->second.shape != shape)
        sameParams = false;
    }
    return Status::error(fmt::format(
        "checkpoint {} was written for another spec: it has [{}], the current "
        "spec is [{}] (fingerprint {} vs {}){}",
        path, theirs.empty() ? "no summary recorded" : oneLine(theirs),
        oneLine(ours), oneLine(fingerprint), oneLine(expectedFingerprint),
        sameParams ? "; the parameter shapes agree, so only the step shape "
                     "differs (init-from can reuse the weights)"
                   : ""));
  }
  return Status::ok();
}

/// loadCheckpoint's phase 3: shapes and names, from the header (before
/// reading any data): every parameter and both its moments, nothing else
/// but the memory.
static Status checkNames(const std::string &path, const SafetensorsIndex &index,
                         const ParamShapes &expected) {
  std::vector<std::string> problems;
  const std::string mPrefix = kAdamMPrefix, vPrefix = kAdamVPrefix;
  size_t missingMoments = 0;
  for (const auto &[name, shape] : expected) {
    auto it = index.tensors.find(name);
    if (it == index.tensors.end()) {
      problems.push_back(fmt::format("parameter '{}' is missing (expected "
                                     "f32{})",
                                     name, shapeStr(shape)));
    } else if (it->second.dtype != "F32" || it->second.shape != shape) {
      problems.push_back(fmt::format(
          "parameter '{}' is {}{}, expected F32{}", name, it->second.dtype,
          shapeStr(it->second.shape), shapeStr(shape)));
    }
    for (const std::string *prefix : {&mPrefix, &vPrefix}) {
      const char *what = prefix == &mPrefix ? "first" : "second";
      auto m = index.tensors.find(*prefix + name);
      if (m == index.tensors.end()) {
        ++missingMoments;
        problems.push_back(fmt::format("Adam {} moment '{}{}' is missing",
                                       what, *prefix, name));
      } else if (m->second.dtype != "F32" || m->second.shape != shape) {
        problems.push_back(fmt::format("Adam {} moment '{}{}' is {}{}, "
                                       "expected F32{}",
                                       what, *prefix, name, m->second.dtype,
                                       shapeStr(m->second.shape),
                                       shapeStr(shape)));
      }
    }
  }
  for (const auto &[name, e] : index.tensors) {
    if (startsWith(name, kStatePrefix))
      continue;
    if (startsWith(name, mPrefix) || startsWith(name, vPrefix)) {
      std::string param = name.substr(mPrefix.size()); // same length
      // The moments of an unexpected parameter are covered by its message.
      if (!expected.count(param) && !index.tensors.count(param))
        problems.push_back(fmt::format(
            "unexpected optimizer tensor '{}' (the spec has no parameter "
            "'{}')",
            name, param));
      continue;
    }
    if (startsWith(name, "optimizer.")) {
      problems.push_back(fmt::format("unexpected optimizer tensor '{}'", name));
      continue;
    }
    if (!expected.count(name))
      problems.push_back(fmt::format("unexpected parameter '{}' ({}{})", name,
                                     e.dtype, shapeStr(e.shape)));
  }
  for (const auto &[name, e] : index.tensors)
    if (startsWith(name, kStatePrefix) &&
        !parseSafetensorsDType(e.dtype).has_value())
      problems.push_back(fmt::format("memory tensor '{}' has unsupported "
                                     "dtype {}",
                                     name, e.dtype));
  if (!expected.empty() && missingMoments == 2 * expected.size() &&
      missingMoments == problems.size())
    return Status::error(fmt::format(
        "checkpoint {} has no Adam moments ({}* / {}*): it holds weights "
        "only and cannot resume training (use init-from to start from its "
        "weights)",
        path, kAdamMPrefix, kAdamVPrefix));
  if (!problems.empty())
    return Status::error(fmt::format(
        "checkpoint {} does not match the spec: {}{}", path, problems.front(),
        problems.size() > 1
            ? fmt::format(" (and {} more problems)", problems.size() - 1)
            : std::string()));
  return Status::ok();
}

Status loadCheckpoint(const std::string &path, const ParamShapes &expected,
                      const std::string &expectedFingerprint, TrainState &out,
                      const std::string &expectedSummary) {
  XLNETC_RETURN_IF_ERROR(detail::checkReadableFile(path, "checkpoint"));
  auto corrupt = [&](const Status &s) {
    std::string msg = s.message();
    if (startsWith(msg, path + ": "))
      msg = msg.substr(path.size() + 2);
    if (startsWith(msg, "cannot open"))
      return Status::error(
          fmt::format("cannot read checkpoint {}: {}", path, oneLine(msg)));
    return Status::error(fmt::format(
        "checkpoint {} is truncated or corrupt: {}", path, oneLine(msg)));
  };

  // 1. Header: validated for every dtype, so that a foreign safetensors file
  //    is reported as "not a checkpoint" rather than as corrupt.
  SafetensorsIndex index;
  if (Status s = indexSafetensors(path, index); !s)
    return corrupt(s);
  const auto &meta = index.metadata;
  auto metaOr = [&](const char *key) {
    auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
  };
  auto tag = meta.find(kKeyFormat);
  if (tag == meta.end())
    return Status::error(fmt::format(
        "{} is not an xlnetc training checkpoint (a safetensors file without "
        "'{}' metadata; to start from model weights only, use init-from)",
        path, kKeyFormat));
  if (tag->second != kCheckpointFormatTag)
    return Status::error(fmt::format(
        "{} is not an xlnetc training checkpoint ('{}' is '{}', expected '{}')",
        path, kKeyFormat, oneLine(tag->second), kCheckpointFormatTag));
  std::string version = metaOr(kKeyVersion);
  if (version != std::to_string(kCheckpointVersion))
    return Status::error(fmt::format(
        "checkpoint {} has format version '{}'; this xlnetc reads version {}",
        path, oneLine(version), kCheckpointVersion));
  std::optional<int64_t> step = parseInt64(metaOr(kKeyStep));
  if (!step || *step < 0)
    return Status::error(fmt::format(
        "checkpoint {} is corrupt: '{}' is '{}', not a step number", path,
        kKeyStep, oneLine(metaOr(kKeyStep))));

  // 2. The spec it was written for.
  XLNETC_RETURN_IF_ERROR(
      checkWrittenFor(path, index, expected, expectedFingerprint, expectedSummary));
  // 3. Shapes and names, from the header (before reading any data).
  XLNETC_RETURN_IF_ERROR(checkNames(path, index, expected));
  const std::string mPrefix = kAdamMPrefix, vPrefix = kAdamVPrefix;

  // 4. The data.
  TensorMap all;
  if (Status s = readSafetensors(path, all); !s)
    return corrupt(s);
  TrainState state;
  state.step = *step;
  state.rngState = metaOr(kKeyRng);
  state.dataPosition = metaOr(kKeyData);
  state.specFingerprint = metaOr(kKeyFingerprint);
  state.specSummary = metaOr(kKeySummary);
  for (auto &[name, t] : all) {
    if (startsWith(name, mPrefix))
      state.adamM[name.substr(mPrefix.size())] = std::move(t);
    else if (startsWith(name, vPrefix))
      state.adamV[name.substr(vPrefix.size())] = std::move(t);
    else if (startsWith(name, kStatePrefix))
      state.mems[name.substr(std::strlen(kStatePrefix))] = std::move(t);
    else
      state.params[name] = std::move(t);
  }
  out = std::move(state);
  return Status::ok();
}

} // namespace xlnetc::rt::train
