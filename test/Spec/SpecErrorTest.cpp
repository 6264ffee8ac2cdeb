//===- SpecErrorTest.cpp - One test per bad-spec case ---------------------===//
//
// Each case loads test/Spec/inputs/<case>.toml (or .config.json) and checks
// the exact LINE:COL and the message. The .toml inputs also carry lit
// RUN/CHECK lines for the CLI suite; LitCheckLinesMatch keeps those honest.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Spec/Spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

using xlnetc::loadSpec;
using xlnetc::ModelSpec;

namespace {

std::string inputPath(const std::string &file) {
  return std::string(XLNETC_SPEC_INPUTS_DIR) + "/" + file;
}

/// Loads inputs/`file`, expects failure at `lineCol` (empty: no position)
/// with `message` in the text, and checks the error is one line.
void expectError(const std::string &file, const std::string &lineCol,
                 const std::string &message) {
  std::string path = inputPath(file);
  ModelSpec spec;
  std::string error;
  ASSERT_FALSE(loadSpec(path, spec, error)) << file << " loaded";
  std::string prefix =
      path + (lineCol.empty() ? "" : ":" + lineCol) + ": error: ";
  EXPECT_EQ(error.rfind(prefix, 0), 0u) << "got: " << error;
  EXPECT_NE(error.find(message), std::string::npos) << "got: " << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << "not one line: " << error;
}

} // namespace

//===--- TOML cases (inputs/<case>.toml) ----------------------------------===//

TEST(SpecError, AttnTypeUni) {
  expectError("attn-type-uni.toml", "10:13",
              "attn_type 'uni' is not supported for pretraining; only 'bi' "
              "(bidirectional) is");
}

TEST(SpecError, BadDecayMethod) {
  expectError("bad-decay-method.toml", "20:16",
              "unknown decay_method 'linear'; expected 'poly' or 'cos'");
}

TEST(SpecError, BadDevice) {
  expectError("bad-device.toml", "20:10",
              "unknown device 'gpu'; expected 'host', 'emu', 'cuda' or 'auto'");
}

TEST(SpecError, ClampLenRange) {
  expectError("clamp-len-range.toml", "10:13",
              "clamp_len must be >= -1 (-1 = no clamping), got -2");
}

TEST(SpecError, DModelMismatch) {
  expectError("d-model-mismatch.toml", "5:11",
              "d_model (64) must equal n_head (4) × d_head (8) = 32");
}

TEST(SpecError, DropattNegative) {
  expectError("dropatt-negative.toml", "10:11",
              "dropatt must be in [0, 1), got -0.1");
}

TEST(SpecError, DropoutRange) {
  expectError("dropout-range.toml", "10:11",
              "dropout must be in [0, 1), got 1");
}

TEST(SpecError, GeluAmbiguous) {
  expectError(
      "gelu-ambiguous.toml", "10:17",
      "ff_activation 'gelu' is ambiguous; use 'gelu_tanh' (what official XLNet "
      "calls gelu) or 'gelu_erf' (what HuggingFace calls gelu)");
}

TEST(SpecError, IntBeyond64Bits) {
  expectError("int-beyond-64-bits.toml", "8:31",
              "'99999999999999999999' is not representable in 64 bits");
}

TEST(SpecError, BatchOverflows64Bits) {
  expectError("batch-overflows-64-bits.toml", "20:20",
              "the activations, n_layer × train_batch_size × (seq_len + mem_len) × "
              "d_inner (2 × 1000000000 × 2097152 × 256 elements) is too large: its "
              "byte size would not fit in 64 bits");
}

TEST(SpecError, NLayerTooLarge) {
  expectError("n-layer-too-large.toml", "4:11",
              "n_layer must be at most 4096 (a sane bound), got 5000");
}

TEST(SpecError, NTokenBeyondInt32) {
  expectError("n-token-beyond-int32.toml", "9:11",
              "n_token must be at most 2147483647 (token ids are 32-bit integers), "
              "got 3000000000");
}

TEST(SpecError, SeqLenTooLarge) {
  expectError("seq-len-too-large.toml", "13:11",
              "seq_len must be at most 1048576 (a sane bound), got 2000000");
}

TEST(SpecError, KeyInWrongSection) {
  expectError("key-in-wrong-section.toml", "10:1",
              "unknown key 'seq_len' in [model]; it belongs in [data]");
}

TEST(SpecError, MaskBetaGtAlpha) {
  expectError("mask-beta-gt-alpha.toml", "18:13",
              "mask_beta (3) must not exceed mask_alpha (2): it masks "
              "mask_beta tokens out of each group of mask_alpha");
}

TEST(SpecError, MissingRequiredKey) {
  expectError("missing-required-key.toml", "3:1",
              "missing required key 'd_inner' in [model]");
}

TEST(SpecError, MissingSection) {
  expectError("missing-section.toml", "1:1", "missing section [train]");
}

TEST(SpecError, NegativeMemLen) {
  expectError("negative-mem-len.toml", "10:11", "mem_len must be >= 0, got -1");
}

TEST(SpecError, NonpositiveInt) {
  expectError("nonpositive-int.toml", "6:10", "n_head must be positive, got 0");
}

TEST(SpecError, NotToml) {
  expectError("not-toml.toml", "3:7",
              "Error while parsing table header: expected ']', saw '\\n'");
}

TEST(SpecError, NumPredictGtSeq) {
  expectError("num-predict-gt-seq.toml", "15:15",
              "num_predict (65) must not exceed seq_len (64)");
}

TEST(SpecError, OddBatchBiData) {
  expectError("odd-batch-bi-data.toml", "19:20",
              "train_batch_size (3) must be even when bi_data is true: half "
              "the batch reads forward, half backward");
}

TEST(SpecError, PermSizeLeakRest) {
  expectError("perm-size-leak-rest.toml", "14:13",
              "perm_size (32) must not exceed seq_len - reuse_len (16): a "
              "permutation window spanning the reuse boundary is a data leak");
}

TEST(SpecError, PermSizeLeakReuse) {
  expectError("perm-size-leak-reuse.toml", "14:13",
              "perm_size (32) must not exceed reuse_len (16): a permutation "
              "window spanning the reuse boundary is a data leak");
}

TEST(SpecError, RestNotMultiple) {
  expectError("rest-not-multiple.toml", "12:11",
              "seq_len - reuse_len (40) must be a multiple of perm_size (16)");
}

TEST(SpecError, ReuseGtSeq) {
  expectError("reuse-gt-seq.toml", "13:13",
              "reuse_len (80) must not exceed seq_len (64)");
}

TEST(SpecError, ReuseNotMultiple) {
  expectError("reuse-not-multiple.toml", "13:13",
              "reuse_len (24) must be a multiple of perm_size (16)");
}

TEST(SpecError, SectionNotTable) {
  expectError("section-not-table.toml", "3:9",
              "[model] must be a table, got integer");
}

TEST(SpecError, TopLevelKey) {
  expectError("top-level-key.toml", "3:1",
              "key 'seed' must be inside a section; it belongs in [train]");
}

TEST(SpecError, UnknownActivation) {
  expectError("unknown-activation.toml", "10:17",
              "unknown ff_activation 'swish'; expected 'relu', 'gelu_tanh' or "
              "'gelu_erf'");
}

TEST(SpecError, UnknownKey) {
  expectError("unknown-key.toml", "4:1",
              "unknown key 'n_layers' in [model]; did you mean 'n_layer'?");
}

TEST(SpecError, UnknownKeyNoSuggestion) {
  expectError("unknown-key-no-suggestion.toml", "10:1",
              "unknown key 'foo_bar' in [model]");
}

TEST(SpecError, UnknownSection) {
  expectError("unknown-section.toml", "18:1",
              "unknown section [trian]; did you mean [train]?");
}

TEST(SpecError, VocabSizeAlias) {
  expectError("vocab-size-alias.toml", "9:1",
              "unknown key 'vocab_size' in [model]; did you mean 'n_token'?");
}

TEST(SpecError, WarmupGtTrainSteps) {
  expectError("warmup-gt-train-steps.toml", "20:16",
              "warmup_steps (300) must not exceed train_steps (200)");
}

TEST(SpecError, WrongTypeBool) {
  expectError("wrong-type-bool.toml", "16:11",
              "bi_data must be a boolean, got integer");
}

TEST(SpecError, WrongTypeFloatForInt) {
  expectError("wrong-type-float-for-int.toml", "8:11",
              "d_inner must be an integer, got float");
}

TEST(SpecError, WrongTypeInt) {
  expectError("wrong-type-int.toml", "4:11",
              "n_layer must be an integer, got string");
}

TEST(SpecError, WrongTypeNumber) {
  expectError("wrong-type-number.toml", "10:11",
              "dropout must be a number, got string");
}

TEST(SpecError, WrongTypeString) {
  expectError("wrong-type-string.toml", "10:17",
              "ff_activation must be a string, got integer");
}

//===--- Cases without a file or in config.json form
//-----------------------===//

TEST(SpecError, FileNotFound) {
  expectError("does-not-exist.toml", "", "cannot open file");
}

TEST(SpecError, DirectoryIsNotAFile) {
  ModelSpec spec;
  std::string error;
  ASSERT_FALSE(loadSpec(XLNETC_SPEC_INPUTS_DIR, spec, error));
  EXPECT_EQ(error,
            std::string(XLNETC_SPEC_INPUTS_DIR) + ": error: a directory, not a regular file");
}

TEST(SpecError, HFNotJson) {
  expectError("hf-not-json.config.json", "5:10", "syntax error");
}

TEST(SpecError, HFWrongType) {
  expectError("hf-wrong-type.config.json", "6:14",
              "n_layer must be an integer, got string");
}

TEST(SpecError, HFBadActivation) {
  expectError("hf-bad-activation.config.json", "5:20",
              "unsupported ff_activation 'swish'");
}

TEST(SpecError, HFMissingVocab) {
  expectError("hf-missing-vocab.config.json", "1:1",
              "missing required key 'vocab_size'");
}

TEST(SpecError, HFDModelMismatch) {
  expectError("hf-d-model-mismatch.config.json", "4:14",
              "d_model (64) must equal n_head (4) × d_head (32) = 128");
}

/// Every inputs/*.toml is a lit test: its "# CHECK: " text must occur in the
/// error the CLI will print (FileCheck substring semantics).
TEST(SpecError, LitCheckLinesMatch) {
  size_t count = 0;
  for (const auto &entry :
       std::filesystem::directory_iterator(XLNETC_SPEC_INPUTS_DIR)) {
    if (entry.path().extension() != ".toml")
      continue;
    ++count;
    std::ifstream in(entry.path());
    std::string run, check;
    std::getline(in, run);
    std::getline(in, check);
    SCOPED_TRACE(entry.path().filename().string());
    EXPECT_EQ(run, "# RUN: not %xlnetc compile %s --emit=mlir 2>&1 | "
                   "FileCheck %s");
    ASSERT_EQ(check.rfind("# CHECK: ", 0), 0u) << check;
    check = check.substr(9);
    EXPECT_EQ(check.rfind(entry.path().filename().string() + ":", 0), 0u);
    ModelSpec spec;
    std::string error;
    ASSERT_FALSE(loadSpec(entry.path().string(), spec, error));
    EXPECT_NE(error.find(check), std::string::npos)
        << "CHECK: " << check << "\n  got: " << error;
  }
  EXPECT_GE(count, 30u);
}

/// A number too large for a double (found by the hf_config fuzzer, which
/// made nlohmann::json throw out_of_range where the loader caught only
/// parse errors): one error line, no abort.
TEST(SpecError, HFNumberOverflow) {
  expectError("hf-number-overflow.config.json", "",
              "number overflow parsing '5855E850404'");
}

/// A parse error on a long line (found by the hf_config fuzzer: the
/// position was read with a std::regex, which recursed once per character
/// of the message and overflowed the stack): one error line with the
/// position.
TEST(SpecError, HFLongParseError) {
  expectError("hf-long-parse-error.config.json", "2:3903", "syntax error while parsing");
}

/// TOML's inf and nan: caught by the rule of their key, at their position,
/// never later (the MLIR verifier, a NaN loss, an int cast of inf).
TEST(SpecError, NonFiniteFloats) {
  expectError("clip-inf.toml", "21:8", "clip must be a finite number > 0, got inf");
  expectError("learning-rate-nan.toml", "21:17",
              "learning_rate must be a finite number > 0, got nan");
  expectError("weight-decay-inf.toml", "21:16",
              "weight_decay must be a finite number >= 0, got inf");
  expectError("init-range-inf.toml", "11:14", "init_range must be a finite number > 0, got inf");
  expectError("mask-alpha-inf.toml", "18:14", "mask_alpha must be a finite number > 0, got inf");
  expectError("mask-alpha-huge.toml", "18:14", "mask_alpha must be at most 1048576");
}
