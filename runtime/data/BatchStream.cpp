//===- BatchStream.cpp - One pretraining batch per step -------------------===//

#include "runtime/data/BatchStream.h"

#include "runtime/io/Safetensors.h"
#include "runtime/data/Batch.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xlnetc::rt::data {

namespace {

constexpr const char *kPositionFormat = "xlnetc-batch-stream";
constexpr int kPositionVersion = 2;

/// FNV-1a over 64-bit words.
struct Hasher {
  uint64_t h = 0xcbf29ce484222325ull;
  void add(uint64_t v) {
    for (int k = 0; k < 8; ++k) {
      h ^= (v >> (8 * k)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  void addConfig(const PipelineConfig &c) {
    for (int64_t v : {c.batchSize, c.seqLen, c.reuseLen, c.numPredict, c.permSize,
                      int64_t(c.biData), c.maskAlpha, c.maskBeta, c.maxGram})
      add(uint64_t(v));
    add(c.seed);
  }
  void addStartPieces(const std::vector<uint8_t> &startPiece) {
    add(startPiece.size());
    for (uint8_t s : startPiece)
      add(s);
  }
};

/// The fingerprint of a version-2 position: the settings, the corpus's
/// digest, the start pieces.
uint64_t fingerprintOf(const StreamSource &source, const PipelineConfig &c) {
  Hasher h;
  h.addConfig(c);
  h.add(uint64_t(source.digest.count));
  h.add(source.digest.hash);
  h.addStartPieces(source.startPiece);
  return h.h;
}

} // namespace

std::map<std::string, std::string> batchMetadata(const Batch &batch,
                                                 const PipelineConfig &c) {
  return {{"seq_len", std::to_string(c.seqLen)},
          {"reuse_len", std::to_string(c.reuseLen)},
          {"perm_size", std::to_string(c.permSize)},
          {"num_predict", std::to_string(c.numPredict)},
          {"bi_data", c.biData ? "true" : "false"},
          {"mask_alpha", std::to_string(c.maskAlpha)},
          {"mask_beta", std::to_string(c.maskBeta)},
          {"seed", std::to_string(c.seed)},
          {"epoch", std::to_string(batch.epoch)},
          {"step", std::to_string(batch.step)},
          {"global_step", std::to_string(batch.globalStep)}};
}

Status writeBatch(const std::string &path, const Batch &batch,
                  const PipelineConfig &config) {
  return writeSafetensors(path, batch.tensors, batchMetadata(batch, config));
}

Status BatchStream::create(Corpus corpus, const PipelineConfig &config, BatchStream &out) {
  XLNETC_RETURN_IF_ERROR(validateConfig(config));
  const std::string name = corpus.path.empty() ? "corpus" : corpus.path;
  if (corpus.tokens.empty())
    return Status::error(fmt::format("{}: the corpus has no tokens", name));
  if (corpus.sentIds.size() != corpus.tokens.size())
    return Status::error(fmt::format("{}: tokens and sentence ids differ in length", name));
  // One pass: the ids checked, the digest, and the fingerprint a
  // version-1 position has (FNV-1a over the settings, every token and
  // flag, the start pieces).
  StreamSource source;
  Hasher legacy;
  legacy.addConfig(config);
  legacy.add(corpus.tokens.size());
  for (size_t k = 0; k < corpus.tokens.size(); ++k) {
    const int64_t id = corpus.tokens[k];
    if (id < 0 || (corpus.vocabSize > 0 && id >= corpus.vocabSize))
      return Status::error(fmt::format("{}: token id {} is outside the vocabulary [0, {})",
                                       corpus.path, id, corpus.vocabSize));
    source.digest.add(id, corpus.sentIds[k]);
    legacy.add(uint64_t(id) * 2 + corpus.sentIds[k]);
  }
  legacy.addStartPieces(corpus.startPiece);
  source.legacyFingerprint = legacy.h;
  source.store = TokenStore::fromCorpus(corpus);
  source.vocabSize = corpus.vocabSize;
  source.path = corpus.path;
  source.startPiece = std::move(corpus.startPiece);
  corpus = Corpus(); // the store holds the tokens now
  return create(std::move(source), config, out);
}

Status BatchStream::create(StreamSource source, const PipelineConfig &config,
                           BatchStream &out) {
  XLNETC_RETURN_IF_ERROR(validateConfig(config));
  const std::string name = source.path.empty() ? "corpus" : source.path;
  if (!source.store || source.store->size() == 0)
    return Status::error(fmt::format("{}: the corpus has no tokens", name));
  int64_t need = minCorpusTokens(config);
  int64_t have = source.store->size();
  if (have < need) {
    int64_t fwdRows = config.biData ? config.batchSize / 2 : config.batchSize;
    return Status::error(fmt::format(
        "{}: the corpus has {} tokens; one batch needs at least {} ({} "
        "row{} of seq_len {}{})",
        name, have, need, fwdRows, fwdRows == 1 ? "" : "s", config.seqLen,
        config.biData ? "; bi_data's backward rows reuse them" : ""));
  }
  BatchStream s;
  XLNETC_RETURN_IF_ERROR(batchify(source.store, config.batchSize, config.biData, s.data_));
  s.stepsPerEpoch_ = numWindows(s.data_.rowLen, config.seqLen, config.reuseLen);
  if (s.stepsPerEpoch_ < 1)
    return Status::error("BatchStream: no window fits a row (internal)");
  s.fingerprint_ = fingerprintOf(source, config);
  s.legacyFingerprint_ = source.legacyFingerprint;
  s.corpusPath_ = source.path;
  s.vocabSize_ = source.vocabSize;
  s.startPiece_ = std::move(source.startPiece);
  s.config_ = config;
  out = std::move(s);
  return Status::ok();
}

Status BatchStream::next(Batch &out) {
  if (stepsPerEpoch_ < 1)
    return Status::error("BatchStream::next: the stream was not created");
  const PipelineConfig &c = config_;
  int64_t B = c.batchSize, S = c.seqLen;
  // Counter-based: the step's numbers depend only on (seed, epoch, step).
  Rng rng(deriveSeed(c.seed, uint64_t(epoch_), uint64_t(step_)));
  Tensor input = Tensor::zeros(DType::I64, {B, S});
  Tensor target = Tensor::zeros(DType::I64, {B, S});
  Tensor isMasked = Tensor::zeros(DType::I64, {B, S});
  Tensor permIndex = Tensor::zeros(DType::I64, {B, S});
  Tensor segId = Tensor::zeros(DType::I64, {B, S});
  std::vector<int64_t> labels(static_cast<size_t>(B));
  int64_t windowStart = step_ * c.reuseLen;
  for (int64_t b = 0; b < B; ++b) {
    Record rec;
    XLNETC_RETURN_IF_ERROR(
        buildRecord(data_, b, windowStart, c, startPiece_, rng, rec));
    // Prepared data is read as it is used: every id is checked as it
    // enters a batch (a corpus read into memory was checked whole).
    if (vocabSize_ > 0)
      for (const std::vector<int64_t> *ids : {&rec.input, &rec.target})
        for (int64_t id : *ids)
          if (id < 0 || id >= vocabSize_)
            return Status::error(fmt::format(
                "{}: token id {} in row {} of step {} is outside the vocabulary [0, {}) "
                "(the prepared data is damaged, or not of this model's tokenizer)",
                corpusPath_, id, b, globalStep(), vocabSize_));
    std::vector<int64_t> index;
    XLNETC_RETURN_IF_ERROR(
        samplePermIndex(S, c.reuseLen, c.permSize, rng, index));
    std::copy(rec.input.begin(), rec.input.end(), input.i64() + b * S);
    std::copy(rec.target.begin(), rec.target.end(), target.i64() + b * S);
    std::copy(rec.isMasked.begin(), rec.isMasked.end(), isMasked.i64() + b * S);
    std::copy(index.begin(), index.end(), permIndex.i64() + b * S);
    std::copy(rec.segId.begin(), rec.segId.end(), segId.i64() + b * S);
    labels[size_t(b)] = rec.label;
  }
  Batch batch;
  batch.epoch = epoch_;
  batch.step = step_;
  batch.globalStep = globalStep();
  batch.labels = std::move(labels);
  TensorMap &t = batch.tensors;
  t[kRawInput] = std::move(input);
  t[kRawTarget] = std::move(target);
  t[kRawIsMasked] = std::move(isMasked);
  t[kRawPermIndex] = std::move(permIndex);
  t["seg_id"] = std::move(segId);
  // The step reads perm_rank: no S×S perm_mask is built for training.
  XLNETC_RETURN_IF_ERROR(
      deriveBatchFromRaw(t, c.reuseLen, c.numPredict, t, /*densePermMask=*/false));
  out = std::move(batch);
  // Advance; past the last window the next epoch starts at window 0.
  if (++step_ == stepsPerEpoch_) {
    step_ = 0;
    ++epoch_;
  }
  return Status::ok();
}

Status BatchStream::seek(int64_t step) {
  if (stepsPerEpoch_ < 1)
    return Status::error("BatchStream::seek: the stream was not created");
  if (step < 0)
    return Status::error(
        fmt::format("BatchStream::seek: negative step {}", step));
  epoch_ = step / stepsPerEpoch_;
  step_ = step % stepsPerEpoch_;
  return Status::ok();
}

std::string BatchStream::savePosition() const {
  nlohmann::json j = {
      {"format", kPositionFormat},
      {"version", kPositionVersion},
      {"epoch", epoch_},
      {"step", step_},
      {"global_step", globalStep()},
      {"steps_per_epoch", stepsPerEpoch_},
      // Strings: 64-bit values survive JSON readers that use doubles.
      {"seed", std::to_string(config_.seed)},
      {"fingerprint", fmt::format("{:016x}", fingerprint_)},
  };
  return j.dump();
}

Status BatchStream::restorePosition(const std::string &text) {
  auto bad = [](const std::string &why) {
    return Status::error("batch stream position: " + why);
  };
  if (stepsPerEpoch_ < 1)
    return bad("the stream was not created");
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return bad("not a JSON object");
  auto str = [&](const char *key, std::string &v) {
    if (!j.contains(key) || !j[key].is_string())
      return false;
    v = j[key].get<std::string>();
    return true;
  };
  auto num = [&](const char *key, int64_t &v) {
    if (!j.contains(key) || !j[key].is_number_integer())
      return false;
    v = j[key].get<int64_t>();
    return true;
  };
  std::string format, seed, fp;
  int64_t version = 0, epoch = 0, step = 0, steps = 0;
  if (!str("format", format) || format != kPositionFormat)
    return bad(fmt::format("\"format\" is not \"{}\"", kPositionFormat));
  if (!num("version", version) || version < 1 || version > kPositionVersion)
    return bad(fmt::format("unsupported version (expected 1 to {})", kPositionVersion));
  if (!num("epoch", epoch) || !num("step", step) ||
      !num("steps_per_epoch", steps) || !str("seed", seed) ||
      !str("fingerprint", fp))
    return bad("missing or mistyped epoch, step, steps_per_epoch, seed or "
               "fingerprint");
  if (seed != std::to_string(config_.seed))
    return bad(fmt::format("saved with seed {}, this stream has seed {}", seed,
                           config_.seed));
  if (version == 1 && legacyFingerprint_ == 0)
    return bad("saved by an earlier xlnetc (position version 1), whose fingerprint hashes "
               "the corpus's tokens: resume it with --data naming the text corpus it read, "
               "not a prepared directory");
  std::string mine =
      fmt::format("{:016x}", version == 1 ? legacyFingerprint_ : fingerprint_);
  if (fp != mine || steps != stepsPerEpoch_)
    return bad(fmt::format(
        "saved for a different corpus or configuration (fingerprint {}, "
        "{} steps per epoch; this stream: {}, {})",
        fp, steps, mine, stepsPerEpoch_));
  if (epoch < 0 || step < 0 || step >= stepsPerEpoch_)
    return bad(fmt::format("epoch {} step {} is out of range", epoch, step));
  epoch_ = epoch;
  step_ = step;
  return Status::ok();
}

} // namespace xlnetc::rt::data
