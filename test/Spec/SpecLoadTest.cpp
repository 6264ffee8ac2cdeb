//===- SpecLoadTest.cpp - Specs that load, and validateSpec on overrides --===//
//
// The three models/*.toml specs with their expected values, the golden
// HuggingFace config.json files, the HF activation mapping, and the
// validateSpec entry point callers use after overriding fields.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Spec/Spec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

using namespace xlnetc;

namespace {

/// Loads `path`, failing the test with the error text if it does not load.
ModelSpec mustLoad(const std::string &path) {
  ModelSpec spec;
  std::string error;
  EXPECT_TRUE(loadSpec(path, spec, error)) << error;
  EXPECT_EQ(spec.sourcePath, path);
  return spec;
}

std::string model(const char *name) {
  return std::string(XLNETC_MODELS_DIR) + "/" + name;
}
std::string input(const char *name) {
  return std::string(XLNETC_SPEC_INPUTS_DIR) + "/" + name;
}

} // namespace

TEST(SpecLoad, ActivationNames) {
  EXPECT_STREQ(activationName(Activation::Relu), "relu");
  EXPECT_STREQ(activationName(Activation::GeluTanh), "gelu_tanh");
  EXPECT_STREQ(activationName(Activation::GeluErf), "gelu_erf");
}

TEST(SpecLoad, TinyModel) {
  ModelSpec s = mustLoad(model("xlnet-tiny.toml"));
  EXPECT_FALSE(s.fromHFConfig);
  EXPECT_EQ(s.nLayer, 2);
  EXPECT_EQ(s.dModel, 64);
  EXPECT_EQ(s.nHead, 4);
  EXPECT_EQ(s.dHead, 16);
  EXPECT_EQ(s.dInner, 256);
  EXPECT_EQ(s.nToken, 1000);
  EXPECT_EQ(s.ffActivation, Activation::GeluTanh);
  EXPECT_TRUE(s.untieR);
  EXPECT_EQ(s.attnType, "bi");
  EXPECT_EQ(s.memLen, 32);
  EXPECT_EQ(s.clampLen, -1);
  EXPECT_DOUBLE_EQ(s.dropout, 0.1);
  EXPECT_DOUBLE_EQ(s.dropatt, 0.1);
  EXPECT_DOUBLE_EQ(s.layerNormEps, 1e-12);
  EXPECT_EQ(s.seqLen, 64);
  EXPECT_EQ(s.reuseLen, 32);
  EXPECT_EQ(s.permSize, 32);
  EXPECT_EQ(s.numPredict, 10);
  EXPECT_TRUE(s.biData);
  EXPECT_EQ(s.trainBatchSize, 4);
  EXPECT_DOUBLE_EQ(s.learningRate, 1e-3);
  EXPECT_EQ(s.warmupSteps, 20);
  EXPECT_EQ(s.trainSteps, 200);
  EXPECT_EQ(s.decayMethod, "poly");
}

TEST(SpecLoad, LargeModelHasPaperSettings) {
  ModelSpec s = mustLoad(model("xlnet-large.toml"));
  EXPECT_EQ(s.nLayer, 24);
  EXPECT_EQ(s.dModel, 1024);
  EXPECT_EQ(s.nHead, 16);
  EXPECT_EQ(s.dHead, 64);
  EXPECT_EQ(s.dInner, 4096);
  EXPECT_EQ(s.nToken, 32000);
  EXPECT_EQ(s.ffActivation, Activation::GeluTanh);
  EXPECT_TRUE(s.untieR);
  EXPECT_EQ(s.memLen, 384);
  EXPECT_EQ(s.clampLen, -1);
  EXPECT_EQ(s.seqLen, 512);
  EXPECT_EQ(s.reuseLen, 256);
  EXPECT_EQ(s.permSize, 256);
  EXPECT_EQ(s.numPredict, 85);
  EXPECT_TRUE(s.biData);
  EXPECT_DOUBLE_EQ(s.maskAlpha, 6);
  EXPECT_DOUBLE_EQ(s.maskBeta, 1);
  EXPECT_EQ(s.trainBatchSize, 16);
  EXPECT_DOUBLE_EQ(s.learningRate, 4e-4);
  EXPECT_EQ(s.warmupSteps, 40000);
  EXPECT_EQ(s.trainSteps, 500000);
  EXPECT_DOUBLE_EQ(s.adamEpsilon, 1e-6);
  EXPECT_DOUBLE_EQ(s.weightDecay, 0.01);
  EXPECT_DOUBLE_EQ(s.dropout, 0.1);
  EXPECT_DOUBLE_EQ(s.dropatt, 0.1);
}

TEST(SpecLoad, BaseModelHasBaseShape) {
  ModelSpec s = mustLoad(model("xlnet-base.toml"));
  EXPECT_EQ(s.nLayer, 12);
  EXPECT_EQ(s.dModel, 768);
  EXPECT_EQ(s.nHead, 12);
  EXPECT_EQ(s.dHead, 64);
  EXPECT_EQ(s.dInner, 3072);
  EXPECT_EQ(s.seqLen, 512);
  EXPECT_EQ(s.reuseLen, 256);
  EXPECT_EQ(s.memLen, 384);
  EXPECT_EQ(s.permSize, 256);
  EXPECT_EQ(s.numPredict, 85);
  EXPECT_DOUBLE_EQ(s.learningRate, 4e-4);
}

TEST(SpecLoad, GoldenConfigs) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(XLNETC_GOLDEN_DIR))
    GTEST_SKIP() << "golden directory " << XLNETC_GOLDEN_DIR << " is absent";
  size_t count = 0;
  for (const auto &entry : fs::directory_iterator(XLNETC_GOLDEN_DIR)) {
    std::string name = entry.path().filename().string();
    if (name.size() < 12 || name.substr(name.size() - 12) != ".config.json")
      continue;
    SCOPED_TRACE(name);
    ++count;
    ModelSpec s = mustLoad(entry.path().string());
    EXPECT_TRUE(s.fromHFConfig);
    EXPECT_EQ(s.dModel, s.nHead * s.dHead);
    EXPECT_EQ(s.seqLen, 0); // shapes come from the batch file
    EXPECT_EQ(s.trainBatchSize, 0);
    EXPECT_DOUBLE_EQ(s.dropout, 0.0);
    EXPECT_DOUBLE_EQ(s.dropatt, 0.0);
    if (name == "tiny.config.json") {
      EXPECT_EQ(s.nToken, 64);
      EXPECT_EQ(s.nLayer, 2);
      EXPECT_EQ(s.dInner, 48);
      EXPECT_EQ(s.ffActivation, Activation::Relu);
      EXPECT_EQ(s.memLen, 8);
      EXPECT_EQ(s.reuseLen, 8);
    } else if (name == "small.config.json") {
      EXPECT_EQ(s.nToken, 320);
      EXPECT_EQ(s.nLayer, 3);
      EXPECT_EQ(s.nHead, 4);
      EXPECT_EQ(s.ffActivation, Activation::GeluTanh); // "gelu_new"
      EXPECT_EQ(s.memLen, 24);
      EXPECT_EQ(s.reuseLen, 16);
      EXPECT_EQ(s.clampLen, 20);
      EXPECT_TRUE(s.biData);
    }
  }
  EXPECT_GE(count, 1u);
}

TEST(SpecLoad, HFGeluIsErfAndDefaults) {
  ModelSpec s = mustLoad(input("hf-gelu.config.json"));
  EXPECT_TRUE(s.fromHFConfig);
  EXPECT_EQ(s.ffActivation, Activation::GeluErf);
  EXPECT_EQ(s.nToken, 32000);
  EXPECT_EQ(s.nLayer, 12);
  EXPECT_EQ(s.memLen, 0);           // null
  EXPECT_EQ(s.reuseLen, 0);         // null
  EXPECT_DOUBLE_EQ(s.dropatt, 0.1); // missing: same as dropout
  EXPECT_DOUBLE_EQ(s.initRange, 0.02);
}

TEST(SpecLoad, HFGeluNewIsTanh) {
  ModelSpec s = mustLoad(input("hf-gelu-new.config.json"));
  EXPECT_EQ(s.ffActivation, Activation::GeluTanh);
  EXPECT_DOUBLE_EQ(s.dropout, 0.05);
  EXPECT_DOUBLE_EQ(s.dropatt, 0.05);
  EXPECT_EQ(s.memLen, 512); // HF XLNetConfig default when the key is absent
}

TEST(SpecLoad, OfficialXLNetConfigGeluIsTanh) {
  // The official xlnet_config.json says n_token and means tanh by "gelu".
  ModelSpec s = mustLoad(input("hf-official.config.json"));
  EXPECT_EQ(s.ffActivation, Activation::GeluTanh);
  EXPECT_EQ(s.nToken, 32000);
  EXPECT_EQ(s.nLayer, 24);
  EXPECT_EQ(s.memLen, 0);
}

TEST(SpecLoad, FailureLeavesOutputUntouched) {
  ModelSpec s;
  s.nLayer = 7;
  std::string error;
  EXPECT_FALSE(loadSpec(input("d-model-mismatch.toml"), s, error));
  EXPECT_EQ(s.nLayer, 7);
  EXPECT_TRUE(s.sourcePath.empty());
}

TEST(SpecValidate, OverriddenFieldsAreChecked) {
  ModelSpec s = mustLoad(model("xlnet-tiny.toml"));
  std::string error;
  EXPECT_TRUE(validateSpec(s, error)) << error;
  s.trainBatchSize = 3; // e.g. from a batch file, with bi_data
  EXPECT_FALSE(validateSpec(s, error));
  EXPECT_EQ(error, s.sourcePath +
                       ": error: train_batch_size (3) must be even when "
                       "bi_data is true: half the batch reads forward, half "
                       "backward");
}

TEST(SpecValidate, HFConfigChecksModelRulesOnly) {
  ModelSpec s = mustLoad(input("hf-gelu.config.json"));
  std::string error;
  EXPECT_TRUE(validateSpec(s, error)) << error; // data/train fields are 0
  s.dropout = 1.5;
  EXPECT_FALSE(validateSpec(s, error));
  EXPECT_NE(error.find("dropout must be in [0, 1), got 1.5"), std::string::npos)
      << error;
  // A caller that has filled the shapes can ask for the full check.
  s.dropout = 0.1;
  s.fromHFConfig = false;
  s.seqLen = 16;
  s.reuseLen = 8;
  s.permSize = 8;
  s.numPredict = 20;
  s.trainBatchSize = 2;
  EXPECT_FALSE(validateSpec(s, error));
  EXPECT_NE(error.find("num_predict (20) must not exceed seq_len (16)"),
            std::string::npos)
      << error;
}

TEST(SpecValidate, InCodeSpecHasNoPath) {
  ModelSpec s; // everything required is 0
  std::string error;
  EXPECT_FALSE(validateSpec(s, error));
  EXPECT_EQ(error, "error: n_layer must be positive, got 0");
}

namespace {

/// A fresh directory under the system temp dir, removed at the end.
struct ScratchDir {
  std::filesystem::path path;
  ScratchDir() {
    path = std::filesystem::temp_directory_path() /
           ("xlnetc-spec-test-" + std::to_string(::getpid()) + "-" +
            std::to_string(reinterpret_cast<uintptr_t>(this)));
    std::filesystem::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string write(const std::string &name, const std::string &text) const {
    std::string p = (path / name).string();
    std::ofstream(p) << text;
    return p;
  }
};

} // namespace

/// writeSpecToml writes every key; loadSpec reads back the same values.
TEST(SpecWrite, TomlRoundTripsEveryField) {
  for (const char *name : {"xlnet-tiny.toml", "xlnet-large.toml"}) {
    ModelSpec s = mustLoad(model(name));
    s.dropout = 0.1 + 1e-17; // a double TOML must carry exactly
    s.learningRate = 3.0;    // a float that prints like an integer
    s.decayMethod = "cos";
    ScratchDir dir;
    const std::string path = dir.write("spec.toml", writeSpecToml(s, "written by a test"));
    ModelSpec back = mustLoad(path);
    back.sourcePath = s.sourcePath;
    EXPECT_EQ(writeSpecToml(back), writeSpecToml(s)) << name;
    EXPECT_EQ(back.dropout, s.dropout);
    EXPECT_EQ(back.learningRate, 3.0);
    EXPECT_EQ(back.decayMethod, "cos");
  }
}

/// writeSpecToml writes a float in its shortest exact form: a readable
/// spec.toml, and values in messages as the user wrote them.
TEST(SpecWrite, FloatsInShortestExactForm) {
  ModelSpec s = mustLoad(model("xlnet-tiny.toml"));
  s.dropout = 0.1;
  s.adamEpsilon = 1e-8;
  s.clip = 2;
  const std::string text = writeSpecToml(s);
  EXPECT_NE(text.find("dropout = 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("adam_epsilon = 1e-08\n"), std::string::npos) << text;
  EXPECT_NE(text.find("clip = 2.0\n"), std::string::npos) << text;
}

/// specChanges names each key whose value differs, in writeSpecToml's
/// order, with both values as spec.toml writes them and what a resume may
/// do with it.
TEST(SpecChanges, NamesEachChangedKeyWithBothValues) {
  const ModelSpec a = mustLoad(model("xlnet-tiny.toml"));
  EXPECT_TRUE(specChanges(a, a).empty());
  ModelSpec b = a;
  b.learningRate = a.learningRate * 2;
  b.decayMethod = "cos";
  b.dModel = a.dModel * 2;
  b.device = "emu";
  b.dropout = std::nextafter(a.dropout, 1.0); // any other double is a change
  const std::vector<SpecChange> changes = specChanges(a, b);
  ASSERT_EQ(changes.size(), 5u);
  EXPECT_EQ(changes[0].key, "d_model");
  EXPECT_EQ(changes[0].oldValue, std::to_string(a.dModel));
  EXPECT_EQ(changes[0].newValue, std::to_string(b.dModel));
  EXPECT_EQ(changes[0].rule, ResumeRule::Fixed);
  EXPECT_EQ(changes[0].fixedBy, "the checkpoint's parameter shapes");
  EXPECT_EQ(changes[1].key, "dropout");
  EXPECT_EQ(changes[1].rule, ResumeRule::Override);
  EXPECT_NE(changes[1].oldValue, changes[1].newValue);
  EXPECT_EQ(changes[2].key, "learning_rate");
  EXPECT_EQ(changes[2].oldValue, "0.001");
  EXPECT_EQ(changes[2].newValue, "0.002");
  EXPECT_EQ(changes[3].key, "decay_method");
  EXPECT_EQ(changes[3].oldValue, "\"poly\"");
  EXPECT_EQ(changes[3].newValue, "\"cos\"");
  EXPECT_EQ(changes[4].key, "device");
  EXPECT_EQ(changes[4].rule, ResumeRule::Free);
  EXPECT_TRUE(changes[4].fixedBy.empty());
}

/// Which keys a resumed run may change: the training settings with
/// --override, device freely, and none of the keys the checkpoint was made
/// with. A spec in which every key differs lists every key once.
TEST(SpecChanges, EveryKeyHasItsResumeRule) {
  const ModelSpec a = mustLoad(model("xlnet-tiny.toml"));
  ModelSpec b = a;
  b.nLayer++, b.dModel++, b.nHead++, b.dHead++, b.dInner++, b.nToken++;
  b.ffActivation = Activation::Relu, b.untieR = !a.untieR, b.attnType = "uni";
  b.memLen++, b.clampLen++, b.sameLength = !a.sameLength, b.dropout += 0.01;
  b.dropatt += 0.01, b.initRange *= 2, b.layerNormEps *= 2;
  b.seqLen++, b.reuseLen++, b.permSize++, b.numPredict++, b.biData = !a.biData;
  b.maskAlpha++, b.maskBeta++, b.keepAccents = !a.keepAccents;
  b.trainBatchSize++, b.microBatchSize++, b.learningRate *= 2, b.warmupSteps++, b.trainSteps++;
  b.adamEpsilon *= 2, b.weightDecay += 0.01, b.clip *= 2, b.decayMethod = "cos";
  b.minLrRatio += 0.1, b.seed++, b.device = "emu", b.tensorboard = "tb", b.precision = "bf16";
  std::vector<std::string> fixed, settings, free;
  for (const SpecChange &c : specChanges(a, b))
    (c.rule == ResumeRule::Fixed ? fixed : c.rule == ResumeRule::Override ? settings : free)
        .push_back(c.key);
  EXPECT_EQ(settings, (std::vector<std::string>{
                          "dropout", "dropatt", "learning_rate", "warmup_steps",
                          "train_steps", "adam_epsilon", "weight_decay", "clip",
                          "decay_method", "min_lr_ratio", "precision"}));
  EXPECT_EQ(free, (std::vector<std::string>{"micro_batch_size", "device", "tensorboard"}));
  EXPECT_EQ(fixed, (std::vector<std::string>{
                       "n_layer", "d_model", "n_head", "d_head", "d_inner", "n_token",
                       "ff_activation", "untie_r", "attn_type", "mem_len", "clamp_len",
                       "same_length", "init_range", "layer_norm_eps", "seq_len",
                       "reuse_len", "perm_size", "num_predict", "bi_data", "mask_alpha",
                       "mask_beta", "keep_accents", "train_batch_size", "seed"}));
  // Every key writeSpecToml writes is compared.
  const std::string text = writeSpecToml(a);
  size_t keys = 0;
  for (size_t at = text.find(" = "); at != std::string::npos; at = text.find(" = ", at + 1))
    ++keys;
  EXPECT_EQ(fixed.size() + settings.size() + free.size(), keys);
}

/// isSpecKey: a key of any section; a misspelling or another tool's name
/// gets the nearest key.
TEST(SpecChanges, IsSpecKeySuggests) {
  std::string suggestion = "stale";
  EXPECT_TRUE(isSpecKey("learning_rate", suggestion));
  EXPECT_EQ(suggestion, "");
  EXPECT_TRUE(isSpecKey("d_model", suggestion));
  EXPECT_FALSE(isSpecKey("learnig_rate", suggestion));
  EXPECT_EQ(suggestion, "learning_rate");
  EXPECT_FALSE(isSpecKey("batch_size", suggestion));
  EXPECT_EQ(suggestion, "train_batch_size");
  EXPECT_FALSE(isSpecKey("lr", suggestion));
  EXPECT_EQ(suggestion, "");
}

/// [model] hf_config takes the model keys from a HuggingFace config.json
/// (relative to the TOML file); [data] and [train] stay the TOML's. Giving
/// model keys beside it, or a config that does not load, is one error.
TEST(SpecLoad, ModelFromHfConfig) {
  ScratchDir dir;
  std::filesystem::copy_file(std::string(XLNETC_GOLDEN_DIR) + "/small.config.json",
                             dir.path / "config.json");
  const std::string rest = R"(
[data]
seq_len = 32
reuse_len = 16
perm_size = 16
num_predict = 8

[train]
train_batch_size = 4
)";
  ModelSpec s = mustLoad(dir.write("ok.toml", "[model]\nhf_config = \"config.json\"\n" + rest));
  EXPECT_FALSE(s.fromHFConfig);
  EXPECT_EQ(s.nToken, 320);
  EXPECT_EQ(s.dModel, 64);
  EXPECT_EQ(s.nLayer, 3);
  EXPECT_EQ(s.ffActivation, Activation::GeluTanh); // "gelu_new"
  EXPECT_EQ(s.clampLen, 20);
  EXPECT_EQ(s.seqLen, 32);
  EXPECT_EQ(s.trainBatchSize, 4);

  ModelSpec out;
  std::string error;
  EXPECT_FALSE(loadSpec(
      dir.write("both.toml", "[model]\nhf_config = \"config.json\"\nn_layer = 2\n" + rest), out,
      error));
  EXPECT_NE(error.find("[model] takes hf_config or its own keys, not both: 'n_layer' is given "
                       "beside hf_config"),
            std::string::npos)
      << error;
  EXPECT_FALSE(loadSpec(dir.write("missing.toml", "[model]\nhf_config = \"nope.json\"\n" + rest),
                        out, error));
  EXPECT_NE(error.find("missing.toml:2:13: error: hf_config 'nope.json': "), std::string::npos)
      << error;
  EXPECT_FALSE(loadSpec(dir.write("type.toml", "[model]\nhf_config = 3\n" + rest), out, error));
  EXPECT_NE(error.find("hf_config must be a non-empty string"), std::string::npos) << error;
}
