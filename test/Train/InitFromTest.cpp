//===- InitFromTest.cpp - Initialising from HuggingFace weights -----------===//

#include "runtime/io/Safetensors.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/WeightsReader.h"
#include "runtime/train/WeightsSource.h"

#include "TrainTestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;
using namespace xlnetc::rt::train::test;

namespace {

ParamShapes tinyShapes() { return xlnetParamShapes(tinyDims()); }

/// HF XLNetLMHeadModel weights of the tiny model, with the tied
/// lm_loss.weight.
TensorMap hfWeights(uint32_t seed = 11) {
  TensorMap w = randomTensors(tinyShapes(), seed);
  w["lm_loss.weight"] = w.at("transformer.word_embedding.weight");
  return w;
}

/// The same without the "transformer." prefix and without lm_loss.* (an
/// XLNetModel export).
TensorMap bareWeights(const TensorMap &hf) {
  TensorMap w;
  for (const auto &[name, t] : hf)
    if (name.rfind("transformer.", 0) == 0)
      w[name.substr(12)] = t;
  return w;
}

struct Loaded {
  Status status = Status::ok();
  TensorMap params;
  std::vector<std::string> warnings;
};

Loaded load(const std::string &path, const ParamShapes &shapes = tinyShapes()) {
  Loaded l;
  l.status = loadInitFrom(path, shapes, l.params, l.warnings);
  return l;
}

std::string joined(const std::vector<std::string> &v) {
  std::string s;
  for (const auto &w : v)
    s += w + "\n";
  return s;
}

} // namespace

TEST(InitFrom, LMHeadModelNaming) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  ASSERT_TRUE(writeSafetensors(path, hf, {{"format", "pt"}}).isOk());
  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  EXPECT_TRUE(l.warnings.empty()) << joined(l.warnings);
  TensorMap expected = hf;
  expected.erase("lm_loss.weight");
  EXPECT_TRUE(bitEqual(l.params, expected));
}

TEST(InitFrom, ModelNamingWithoutPrefixZeroInitsBias) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  ASSERT_TRUE(writeSafetensors(path, bareWeights(hf)).isOk());
  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  ASSERT_EQ(l.warnings.size(), 1u) << joined(l.warnings);
  EXPECT_EQ(l.warnings[0],
            std::string("no 'lm_loss.bias' (an XLNetModel export?); initialised "
                   "it to zeros"));
  TensorMap expected = hf;
  expected.erase("lm_loss.weight");
  expected["lm_loss.bias"] = Tensor::zeros(DType::F32, {50});
  EXPECT_TRUE(bitEqual(l.params, expected));
}

TEST(InitFrom, TiedWeightMustEqualEmbedding) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf["lm_loss.weight"].f32()[3] += 0.5f;
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  ASSERT_FALSE(l.status.isOk());
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": 'lm_loss.weight' differs from "
                "'transformer.word_embedding.weight' in 1 of 400 values (max "
                "|diff| 0.5); xlnetc ties the output projection to the word "
                "embedding, so an untied model cannot be loaded");
  EXPECT_TRUE(l.params.empty());

  hf["lm_loss.weight"] = Tensor::zeros(DType::F32, {50, 4});
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  l = load(path);
  ASSERT_FALSE(l.status.isOk());
  EXPECT_NE(l.status.message().find("'lm_loss.weight' has shape [50, 4] but "
                                    "'transformer.word_embedding.weight' has "
                                    "[50, 8]"),
            std::string::npos)
      << l.status.message();
}

TEST(InitFrom, TiedWeightStandsInForMissingEmbedding) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf.erase("transformer.word_embedding.weight");
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  ASSERT_EQ(l.warnings.size(), 1u) << joined(l.warnings);
  EXPECT_NE(l.warnings[0].find("using the tied 'lm_loss.weight' as the word "
                               "embedding"),
            std::string::npos);
  EXPECT_TRUE(bitEqual({{"e", l.params.at("transformer.word_embedding.weight")}},
                       {{"e", hf.at("lm_loss.weight")}}));
}

TEST(InitFrom, MissingParamsAreNamed) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf.erase("transformer.layer.1.ff.layer_2.bias");
  hf.erase("transformer.mask_emb");
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": 2 parameter(s) of the spec are missing: "
                "'transformer.layer.1.ff.layer_2.bias', 'transformer.mask_emb'");
}

TEST(InitFrom, NothingMatching) {
  TempDir dir;
  std::string path = dir.file("bert.safetensors");
  ASSERT_TRUE(writeSafetensors(path, {{"bert.embeddings.word_embeddings.weight",
                                       Tensor::zeros(DType::F32, {4, 2})}})
                  .isOk());
  Loaded l = load(path);
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": none of the spec's 37 parameters were found (neither "
                "XLNetLMHeadModel names like 'transformer.word_embedding."
                "weight' nor XLNetModel names like 'word_embedding.weight'); "
                "the file has 'bert.embeddings.word_embeddings.weight'");
}

TEST(InitFrom, ExtraTensorsAreWarnings) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf["sequence_summary.summary.weight"] = Tensor::zeros(DType::F32, {8, 8});
  hf["transformer.layer.2.ff.layer_1.bias"] = Tensor::zeros(DType::F32, {16});
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  ASSERT_EQ(l.warnings.size(), 1u) << joined(l.warnings);
  EXPECT_EQ(l.warnings[0],
            std::string("ignored 2 tensor(s) that the spec does not have: "
                   "'sequence_summary.summary.weight', "
                   "'transformer.layer.2.ff.layer_1.bias'"));
  EXPECT_EQ(l.params.size(), tinyShapes().size());
}

TEST(InitFrom, WrongShapeIsAnError) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = bareWeights(hfWeights());
  hf["layer.0.rel_attn.q"] = Tensor::zeros(DType::F32, {8, 4, 2});
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": tensor 'layer.0.rel_attn.q' (for "
                "'transformer.layer.0.rel_attn.q') has shape [8, 4, 2], the "
                "spec expects [8, 2, 4]");
}

TEST(InitFrom, BothNamingsOfOneParamIsAnError) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf["mask_emb"] = hf.at("transformer.mask_emb");
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": both 'mask_emb' and 'transformer.mask_emb' are present and "
                "name the same parameter 'transformer.mask_emb'");
}

TEST(InitFrom, HalfAndBFloat16AreConverted) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  std::vector<RawTensor> raw;
  for (const auto &[name, t] : hf)
    if (name != "lm_loss.bias" && name != "transformer.mask_emb")
      raw.push_back({name, "F32", t.shape, f32Bytes(t)});
  // F16: 1, -2, 0.5, 65504, smallest subnormal, -0, +inf, 1/3 (rounded).
  const uint16_t half[8] = {0x3C00, 0xC000, 0x3800, 0x7BFF,
                            0x0001, 0x8000, 0x7C00, 0x3555};
  std::string hb;
  for (uint16_t h : half)
    hb += std::string{char(h & 0xff), char(h >> 8)};
  raw.push_back({"transformer.mask_emb", "F16", {1, 1, 8}, hb});
  // BF16 bias: the upper halves of known floats.
  Tensor bias = Tensor::zeros(DType::F32, {50});
  std::string bb;
  for (int i = 0; i < 50; ++i) {
    float f = float(i) - 24.5f; // exactly representable in bf16
    uint16_t h = uint16_t(bitsOf(f) >> 16);
    bb += std::string{char(h & 0xff), char(h >> 8)};
    bias.f32()[i] = f;
  }
  raw.push_back({"lm_loss.bias", "BF16", {50}, bb});
  writeRawSafetensors(path, raw);

  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  const float *m = l.params.at("transformer.mask_emb").f32();
  EXPECT_EQ(m[0], 1.0f);
  EXPECT_EQ(m[1], -2.0f);
  EXPECT_EQ(m[2], 0.5f);
  EXPECT_EQ(m[3], 65504.0f);
  EXPECT_EQ(m[4], std::ldexp(1.0f, -24));
  EXPECT_EQ(bitsOf(m[5]), 0x80000000u);
  EXPECT_TRUE(std::isinf(m[6]) && m[6] > 0);
  EXPECT_EQ(m[7], 0.333251953125f);
  EXPECT_TRUE(bitEqual({{"b", l.params.at("lm_loss.bias")}}, {{"b", bias}}));
  std::string w = joined(l.warnings);
  EXPECT_NE(w.find("converted 1 BF16 tensor(s) to F32"), std::string::npos) << w;
  EXPECT_NE(w.find("converted 1 F16 tensor(s) to F32"), std::string::npos) << w;
}

TEST(InitFrom, HalfToFloatMatchesReferenceForAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float sign = (h & 0x8000) ? -1.f : 1.f;
    float f = halfToFloat(uint16_t(h));
    if (exp == 31) {
      EXPECT_TRUE(mant ? std::isnan(f) : std::isinf(f)) << h;
      continue;
    }
    float ref = exp == 0 ? sign * std::ldexp(float(mant), -24)
                         : sign * std::ldexp(float(1024 + mant), exp - 25);
    ASSERT_EQ(bitsOf(f), bitsOf(ref)) << "half 0x" << std::hex << h;
  }
}

TEST(InitFrom, NonFloatDtypeIsNamed) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  TensorMap hf = hfWeights();
  hf["transformer.mask_emb"] = Tensor::zeros(DType::I64, {1, 1, 8});
  ASSERT_TRUE(writeSafetensors(path, hf).isOk());
  Loaded l = load(path);
  EXPECT_EQ(l.status.message(),
            "init-from file " + path +
                ": tensor 'transformer.mask_emb' has dtype I64, which is not "
                "a float type (supported: F32, F16, BF16, F64)");
}

TEST(InitFrom, FromXlnetcCheckpoint) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState s = makeState();
  ASSERT_TRUE(saveCheckpoint(path, s).isOk());
  Loaded l = load(path);
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  EXPECT_TRUE(bitEqual(l.params, s.params));
  ASSERT_EQ(l.warnings.size(), 1u) << joined(l.warnings);
  EXPECT_EQ(l.warnings[0],
            std::string("an xlnetc training checkpoint: ignored its optimizer "
                        "state and memory (76 tensors), only the weights are used"));
}

TEST(InitFrom, MissingAndCorruptFiles) {
  TempDir dir;
  std::string path = dir.file("model.safetensors");
  EXPECT_EQ(load(path).status.message(),
            "init-from " + path + " does not exist");
  ASSERT_TRUE(writeSafetensors(path, hfWeights()).isOk());
  std::string bytes = readFile(path);
  writeFile(path, bytes.substr(0, bytes.size() - 10));
  Loaded l = load(path);
  EXPECT_EQ(l.status.message().rfind(
                "init-from file " + path +
                    " is truncated, corrupt or not a safetensors file: ",
                0),
            0u)
      << l.status.message();
  writeFile(path, "not a safetensors file at all");
  l = load(path);
  EXPECT_EQ(l.status.message().rfind(
                "init-from file " + path +
                    " is truncated, corrupt or not a safetensors file: ",
                0),
            0u)
      << l.status.message();
}

TEST(InitFrom, FailureLeavesParamsUntouched) {
  TempDir dir;
  TensorMap params = {{"x", Tensor::zeros(DType::F32, {1})}};
  std::vector<std::string> warnings;
  Status s = loadInitFrom(dir.file("missing"), tinyShapes(), params, warnings);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(params.size(), 1u);
  EXPECT_TRUE(params.count("x"));
}

/// A HuggingFace model directory is accepted as it is: its model.safetensors,
/// or the shards its model.safetensors.index.json lists (a tensor in two
/// shards, a missing shard and an empty index are errors).
TEST(InitFrom, ModelDirectoriesAndShards) {
  TempDir dir;
  TensorMap hf = hfWeights();
  TensorMap expected = hf;
  expected.erase("lm_loss.weight");
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), hf, {{"format", "pt"}}).isOk());
  Loaded l = load(dir.path());
  ASSERT_TRUE(l.status.isOk()) << l.status.message();
  EXPECT_TRUE(bitEqual(l.params, expected));

  TempDir sharded;
  TensorMap a, b;
  nlohmann::json map = nlohmann::json::object();
  for (const auto &[name, t] : hf) {
    const bool first = name.find("layer.1") == std::string::npos;
    (first ? a : b)[name] = t;
    map[name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
  }
  ASSERT_TRUE(writeSafetensors(sharded.file("model-00001-of-00002.safetensors"), a).isOk());
  ASSERT_TRUE(writeSafetensors(sharded.file("model-00002-of-00002.safetensors"), b).isOk());
  writeFile(sharded.file("model.safetensors.index.json"),
            nlohmann::json{{"metadata", nlohmann::json::object()}, {"weight_map", map}}.dump());
  for (const std::string &given :
       {sharded.path(), sharded.file("model.safetensors.index.json")}) {
    l = load(given);
    ASSERT_TRUE(l.status.isOk()) << given << ": " << l.status.message();
    EXPECT_TRUE(bitEqual(l.params, expected)) << given;
  }
  // One tensor in both shards.
  TensorMap dup = b;
  dup["lm_loss.bias"] = hf.at("lm_loss.bias");
  ASSERT_TRUE(writeSafetensors(sharded.file("model-00002-of-00002.safetensors"), dup).isOk());
  l = load(sharded.path());
  EXPECT_NE(l.status.message().find("tensor 'lm_loss.bias' is in two shards"),
            std::string::npos)
      << l.status.message();
  std::filesystem::remove(sharded.file("model-00002-of-00002.safetensors"));
  l = load(sharded.path());
  EXPECT_NE(l.status.message().find("model-00002-of-00002.safetensors does not exist"),
            std::string::npos)
      << l.status.message();
  writeFile(sharded.file("model.safetensors.index.json"), R"({"weight_map": {}})");
  EXPECT_NE(load(sharded.path()).status.message().find("the index lists no shards"),
            std::string::npos);
  writeFile(sharded.file("model.safetensors.index.json"), "[1, 2]");
  EXPECT_NE(load(sharded.path()).status.message().find("not a safetensors index"),
            std::string::npos);

  TempDir empty;
  EXPECT_EQ(load(empty.path()).status.message(),
            "init-from " + empty.path() +
                " is a directory without model.safetensors or model.safetensors.index.json "
                "(the files a HuggingFace model directory holds)");
}

/// PyTorch checkpoints (zip or pickle), TensorFlow HDF5 and Flax msgpack
/// files get one message saying what they are and how to convert them.
TEST(InitFrom, OtherFormatsSayWhatTheyAreAndHowToConvert) {
  TempDir dir;
  writeFile(dir.file("pytorch_model.bin"), std::string("PK\x03\x04rest of a zip", 18));
  Loaded l = load(dir.file("pytorch_model.bin"));
  EXPECT_NE(l.status.message().find("is a PyTorch zip checkpoint"), std::string::npos)
      << l.status.message();
  EXPECT_NE(l.status.message().find("from safetensors.torch import save_file"),
            std::string::npos)
      << l.status.message();
  // The directory holding it says the same.
  l = load(dir.path());
  EXPECT_NE(l.status.message().find("holds pytorch_model.bin (a PyTorch zip checkpoint"),
            std::string::npos)
      << l.status.message();
  writeFile(dir.file("old.bin"), std::string("\x80\x02}q\x00", 5));
  EXPECT_NE(load(dir.file("old.bin")).status.message().find("is a Python pickle"),
            std::string::npos);
  writeFile(dir.file("tf_model.h5"), std::string("\x89HDF\r\n\x1a\nxyz", 11));
  EXPECT_NE(load(dir.file("tf_model.h5")).status.message().find("TensorFlow HDF5"),
            std::string::npos);
  writeFile(dir.file("flax_model.msgpack"), "\x81\xa1" "a\x01");
  EXPECT_NE(load(dir.file("flax_model.msgpack")).status.message().find("Flax msgpack"),
            std::string::npos);
}

/// A config.json beside a HuggingFace layout is found (the caller checks it
/// against the spec); beside an arbitrary file it is not.
TEST(InitFrom, ConfigBesideTheWeights) {
  TempDir dir;
  ASSERT_TRUE(writeSafetensors(dir.file("model.safetensors"), hfWeights()).isOk());
  ASSERT_TRUE(writeSafetensors(dir.file("other.safetensors"), hfWeights()).isOk());
  writeFile(dir.file("config.json"), "{}");
  WeightsSource src;
  ASSERT_TRUE(resolveWeightsSource(dir.path(), "weights", src).isOk());
  EXPECT_EQ(src.config, dir.file("config.json"));
  ASSERT_TRUE(resolveWeightsSource(dir.file("model.safetensors"), "weights", src).isOk());
  EXPECT_EQ(src.config, dir.file("config.json"));
  ASSERT_TRUE(resolveWeightsSource(dir.file("other.safetensors"), "weights", src).isOk());
  EXPECT_EQ(src.config, "");
  EXPECT_EQ(src.files, std::vector<std::string>{dir.file("other.safetensors")});
}
