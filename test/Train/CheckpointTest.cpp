//===- CheckpointTest.cpp - Training checkpoint save/load -----------------===//

#include "runtime/io/Safetensors.h"
#include "runtime/train/AtomicFile.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/WeightsReader.h"

#include "TrainTestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;
using namespace xlnetc::rt::train::test;

namespace {

ParamShapes tinyShapes() { return xlnetParamShapes(tinyDims()); }

/// Loads `path` against the tiny spec and `fingerprint`; returns the error
/// message ("" when ok).
std::string loadError(const std::string &path, const std::string &fingerprint,
                      const ParamShapes &shapes = tinyShapes()) {
  TrainState out;
  Status s = loadCheckpoint(path, shapes, fingerprint, out);
  return s ? "" : s.message();
}

void expectStateEq(const TrainState &a, const TrainState &b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_TRUE(bitEqual(a.params, b.params));
  EXPECT_TRUE(bitEqual(a.adamM, b.adamM));
  EXPECT_TRUE(bitEqual(a.adamV, b.adamV));
  EXPECT_TRUE(bitEqual(a.mems, b.mems));
  EXPECT_EQ(a.rngState, b.rngState);
  EXPECT_EQ(a.dataPosition, b.dataPosition);
  EXPECT_EQ(a.specFingerprint, b.specFingerprint);
  EXPECT_EQ(a.specSummary, b.specSummary);
}

void expectOneLine(const std::string &msg) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

} // namespace

//===----------------------------------------------------------------------===//
// Round trip and layout
//===----------------------------------------------------------------------===//

TEST(Checkpoint, RoundTripIsBitExact) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState(7);
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  TrainState out;
  Status s = loadCheckpoint(path, tinyShapes(), in.specFingerprint, out);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectStateEq(in, out);
  // The awkward values survived bit for bit.
  const float *b = out.params.at("lm_loss.bias").f32();
  EXPECT_EQ(bitsOf(b[0]), 0x7fc12345u);
  EXPECT_EQ(bitsOf(b[1]), 0xffa00001u);
  EXPECT_EQ(bitsOf(b[2]), 0x80000000u);
  EXPECT_EQ(bitsOf(b[3]), 0x00000001u);
  // No temporary file is left behind.
  EXPECT_TRUE(filesWithPrefix(dir.path(), "ckpt.safetensors.tmp.").empty());
}

TEST(Checkpoint, RoundTripWithoutMemsAndEmptyStrings) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState(3);
  in.step = 0;
  in.mems.clear();
  in.rngState.clear();
  in.dataPosition.clear();
  in.specSummary.clear();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  TrainState out;
  out.mems["stale"] = Tensor::zeros(DType::F32, {1});
  Status s = loadCheckpoint(path, tinyShapes(), in.specFingerprint, out);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectStateEq(in, out);
}

TEST(Checkpoint, SaveOverwritesPreviousCheckpoint) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState a = makeState(1), b = makeState(2);
  b.specFingerprint = a.specFingerprint;
  ASSERT_TRUE(saveCheckpoint(path, a).isOk());
  ASSERT_TRUE(saveCheckpoint(path, b).isOk());
  TrainState out;
  ASSERT_TRUE(loadCheckpoint(path, tinyShapes(), a.specFingerprint, out).isOk());
  expectStateEq(b, out);
}

TEST(Checkpoint, FileLayoutIsHuggingFaceCompatible) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState(1);
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());

  // The runtime's plain safetensors reader loads it.
  TensorMap all;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(readSafetensors(path, all, &meta).isOk());
  size_t nParams = in.params.size();
  EXPECT_EQ(all.size(), 3 * nParams + in.mems.size());
  for (const auto &[name, t] : in.params) {
    EXPECT_TRUE(all.count(name)) << name;
    EXPECT_TRUE(all.count("optimizer.adam_m." + name)) << name;
    EXPECT_TRUE(all.count("optimizer.adam_v." + name)) << name;
  }
  EXPECT_TRUE(all.count("transformer.word_embedding.weight"));
  EXPECT_TRUE(all.count("transformer.layer.1.rel_attn.seg_embed"));
  EXPECT_TRUE(all.count("lm_loss.bias"));
  EXPECT_FALSE(all.count("lm_loss.weight")); // tied, not stored
  EXPECT_TRUE(all.count("state.mems.0"));
  EXPECT_TRUE(all.count("state.mems.1"));

  EXPECT_EQ(meta["format"], "pt"); // what transformers' loader requires
  EXPECT_EQ(meta["xlnetc.format"], "xlnetc-checkpoint");
  EXPECT_EQ(meta["xlnetc.version"], "1");
  EXPECT_EQ(meta["xlnetc.step"], std::to_string(in.step));
  EXPECT_EQ(meta["xlnetc.rng_state"], in.rngState);
  EXPECT_EQ(meta["xlnetc.data_position"], in.dataPosition);
  EXPECT_EQ(meta["xlnetc.spec_fingerprint"], in.specFingerprint);
  EXPECT_EQ(meta["xlnetc.spec_summary"], in.specSummary);

  // The header length keeps the data 8-byte aligned.
  std::string bytes = readFile(path);
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | uint8_t(bytes[i]);
  EXPECT_EQ(headerLen % 8, 0u);
}

TEST(Checkpoint, SummaryOfParamShapes) {
  EXPECT_EQ(summarizeParamShapes(tinyShapes()),
            "n_layer 2, d_model 8, n_head 2, d_head 4, d_inner 16, n_token 50");
}

//===----------------------------------------------------------------------===//
// Save errors
//===----------------------------------------------------------------------===//

TEST(Checkpoint, SaveRejectsInconsistentStates) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  auto saveError = [&](const TrainState &s) {
    Status st = saveCheckpoint(path, s);
    EXPECT_FALSE(std::filesystem::exists(path));
    EXPECT_TRUE(filesWithPrefix(dir.path(), "ckpt.safetensors.tmp.").empty());
    return st ? std::string() : st.message();
  };
  {
    TrainState s = makeState();
    s.adamV.erase("transformer.mask_emb");
    EXPECT_NE(saveError(s).find("no Adam second moment for parameter "
                                "'transformer.mask_emb'"),
              std::string::npos);
  }
  {
    TrainState s = makeState();
    s.adamM["transformer.mask_emb"] = Tensor::zeros(DType::F32, {1, 8});
    EXPECT_NE(saveError(s).find("f32[1, 8], but the parameter is f32[1, 1, 8]"),
              std::string::npos);
  }
  {
    TrainState s = makeState();
    s.adamM["not.a.param"] = Tensor::zeros(DType::F32, {1});
    EXPECT_NE(saveError(s).find("'not.a.param', which is not a parameter"),
              std::string::npos);
  }
  {
    TrainState s = makeState();
    s.params["state.x"] = Tensor::zeros(DType::F32, {1});
    EXPECT_NE(saveError(s).find("'state.x' is not a valid parameter name"),
              std::string::npos);
  }
  {
    TrainState s = makeState();
    s.params["transformer.mask_emb"] = Tensor::zeros(DType::I64, {1, 1, 8});
    EXPECT_NE(saveError(s).find("is i64[1, 1, 8], expected f32"),
              std::string::npos);
  }
  {
    TrainState s = makeState();
    s.rngState = std::string("\xff\xfe not utf-8", 13);
    EXPECT_NE(saveError(s).find("not valid UTF-8"), std::string::npos);
  }
}

TEST(Checkpoint, SaveIntoMissingDirectoryFails) {
  TempDir dir;
  Status s = saveCheckpoint(dir.file("no/such/dir/ckpt.safetensors"),
                            makeState());
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("cannot save checkpoint"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("No such file or directory"), std::string::npos)
      << s.message();
}

//===----------------------------------------------------------------------===//
// Load errors
//===----------------------------------------------------------------------===//

TEST(Checkpoint, LoadMissingFile) {
  TempDir dir;
  std::string path = dir.file("nope.safetensors");
  std::string msg = loadError(path, "fp");
  EXPECT_EQ(msg, "checkpoint " + path + " does not exist");
}

TEST(Checkpoint, LoadDirectory) {
  TempDir dir;
  std::string msg = loadError(dir.path(), "fp");
  EXPECT_EQ(msg, "checkpoint " + dir.path() + " is a directory, not a file");
}

TEST(Checkpoint, LoadTruncatedFileAtEveryBoundary) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  std::string bytes = readFile(path);
  uint64_t headerLen = 0;
  for (int i = 7; i >= 0; --i)
    headerLen = (headerLen << 8) | uint8_t(bytes[i]);
  std::vector<size_t> lengths = {0, 1, 4, 7, 8, 9, 8 + headerLen / 2,
                                 8 + headerLen - 1, 8 + headerLen,
                                 8 + headerLen + 1, bytes.size() / 2,
                                 bytes.size() - 4, bytes.size() - 1};
  for (size_t n = 0; n < bytes.size(); n += 97)
    lengths.push_back(n);
  std::string cut = dir.file("cut.safetensors");
  for (size_t n : lengths) {
    writeFile(cut, bytes.substr(0, n));
    std::string msg = loadError(cut, in.specFingerprint);
    EXPECT_EQ(msg.rfind("checkpoint " + cut + " is truncated or corrupt: ", 0),
              0u)
        << "length " << n << ": " << msg;
    expectOneLine(msg);
  }
}

TEST(Checkpoint, LoadCorruptHeader) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  std::string bytes = readFile(path);
  bytes[8] = '#'; // the '{' of the JSON header
  writeFile(path, bytes);
  std::string msg = loadError(path, in.specFingerprint);
  EXPECT_EQ(msg, "checkpoint " + path +
                     " is truncated or corrupt: header is not valid JSON");
  writeFile(path, std::string(4096, '\x7f')); // garbage
  msg = loadError(path, in.specFingerprint);
  EXPECT_EQ(msg.rfind("checkpoint " + path + " is truncated or corrupt: ", 0),
            0u)
      << msg;
}

TEST(Checkpoint, LoadNotACheckpoint) {
  TempDir dir;
  std::string path = dir.file("weights.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(writeSafetensors(path, in.params, {{"format", "pt"}}).isOk());
  std::string msg = loadError(path, in.specFingerprint);
  EXPECT_EQ(msg.rfind(path + " is not an xlnetc training checkpoint", 0), 0u)
      << msg;
  EXPECT_NE(msg.find("init-from"), std::string::npos) << msg;

  // A foreign file in dtypes the plan does not have is "not a checkpoint"
  // too, not "corrupt".
  writeRawSafetensors(path, {{"x", "BF16", {2}, std::string(4, '\0')}});
  msg = loadError(path, in.specFingerprint);
  EXPECT_EQ(msg.rfind(path + " is not an xlnetc training checkpoint", 0), 0u)
      << msg;

  ASSERT_TRUE(writeSafetensors(path, in.params,
                               {{"xlnetc.format", "something-else"}})
                  .isOk());
  msg = loadError(path, in.specFingerprint);
  EXPECT_NE(msg.find("'xlnetc.format' is 'something-else'"), std::string::npos)
      << msg;
}

TEST(Checkpoint, LoadNewerFormatVersion) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(writeSafetensors(path, in.params,
                               {{"xlnetc.format", "xlnetc-checkpoint"},
                                {"xlnetc.version", "2"}})
                  .isOk());
  EXPECT_EQ(loadError(path, in.specFingerprint),
            "checkpoint " + path +
                " has format version '2'; this xlnetc reads version 1");
}

TEST(Checkpoint, LoadOtherSpecFingerprint) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  in.specFingerprint = "aaaa";
  in.specSummary = "n_layer 2, d_model 8, batch 4, seq_len 16";
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());

  TrainState out;
  Status s = loadCheckpoint(path, tinyShapes(), "bbbb", out,
                            "n_layer 2, d_model 8, batch 8, seq_len 16");
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(),
            "checkpoint " + path +
                " was written for another spec: it has [n_layer 2, d_model 8, "
                "batch 4, seq_len 16], the current spec is [n_layer 2, "
                "d_model 8, batch 8, seq_len 16] (fingerprint aaaa vs bbbb); "
                "the parameter shapes agree, so only the step shape differs "
                "(init-from can reuse the weights)");
  EXPECT_TRUE(out.params.empty()); // untouched

  // Another model: the summary of the current spec is derived from the
  // expected shapes when none is given.
  XLNetDims big = tinyDims();
  big.nLayer = 3;
  std::string msg = loadError(path, "cccc", xlnetParamShapes(big));
  EXPECT_EQ(msg, "checkpoint " + path +
                     " was written for another spec: it has [n_layer 2, "
                     "d_model 8, batch 4, seq_len 16], the current spec is "
                     "[n_layer 3, d_model 8, n_head 2, d_head 4, d_inner 16, "
                     "n_token 50] (fingerprint aaaa vs cccc)");

  // An empty expected fingerprint skips the check.
  EXPECT_EQ(loadError(path, ""), "");
}

TEST(Checkpoint, LoadWrongShape) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  XLNetDims d = tinyDims();
  d.dInner = 32;
  std::string msg = loadError(path, in.specFingerprint, xlnetParamShapes(d));
  EXPECT_EQ(msg.rfind("checkpoint " + path +
                          " does not match the spec: parameter "
                          "'transformer.layer.0.ff.layer_1.bias' is F32[16], "
                          "expected F32[32] (and ",
                      0),
            0u)
      << msg;
  expectOneLine(msg);
}

TEST(Checkpoint, LoadMissingParam) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  ParamShapes shapes = tinyShapes();
  shapes["transformer.extra"] = {4};
  EXPECT_EQ(loadError(path, in.specFingerprint, shapes),
            "checkpoint " + path +
                " does not match the spec: parameter 'transformer.extra' is "
                "missing (expected f32[4]) (and 2 more problems)");
}

TEST(Checkpoint, LoadUnexpectedParam) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  ParamShapes shapes = tinyShapes();
  shapes.erase("transformer.mask_emb");
  EXPECT_EQ(loadError(path, in.specFingerprint, shapes),
            "checkpoint " + path +
                " does not match the spec: unexpected parameter "
                "'transformer.mask_emb' (F32[1, 1, 8])");

  // A moment without its parameter.
  TensorMap all;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(readSafetensors(path, all, &meta).isOk());
  all["optimizer.adam_m.ghost"] = Tensor::zeros(DType::F32, {2});
  ASSERT_TRUE(writeSafetensors(path, all, meta).isOk());
  EXPECT_EQ(loadError(path, in.specFingerprint),
            "checkpoint " + path +
                " does not match the spec: unexpected optimizer tensor "
                "'optimizer.adam_m.ghost' (the spec has no parameter 'ghost')");
}

TEST(Checkpoint, LoadWrongDtype) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  // Rewrite with one parameter as I64, keeping the metadata.
  TensorMap all;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(readSafetensors(path, all, &meta).isOk());
  all["transformer.mask_emb"] = Tensor::zeros(DType::I64, {1, 1, 8});
  ASSERT_TRUE(writeSafetensors(path, all, meta).isOk());
  EXPECT_EQ(loadError(path, in.specFingerprint),
            "checkpoint " + path +
                " does not match the spec: parameter 'transformer.mask_emb' "
                "is I64[1, 1, 8], expected F32[1, 1, 8]");
}

TEST(Checkpoint, LoadMissingMoments) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState in = makeState();
  ASSERT_TRUE(saveCheckpoint(path, in).isOk());
  TensorMap all;
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(readSafetensors(path, all, &meta).isOk());

  // One moment missing.
  TensorMap some = all;
  some.erase("optimizer.adam_v.lm_loss.bias");
  ASSERT_TRUE(writeSafetensors(path, some, meta).isOk());
  EXPECT_EQ(loadError(path, in.specFingerprint),
            "checkpoint " + path +
                " does not match the spec: Adam second moment "
                "'optimizer.adam_v.lm_loss.bias' is missing");

  // All of them: a weights-only file with the tag.
  TensorMap weights = in.params;
  ASSERT_TRUE(writeSafetensors(path, weights, meta).isOk());
  EXPECT_EQ(loadError(path, in.specFingerprint),
            "checkpoint " + path +
                " has no Adam moments (optimizer.adam_m.* / "
                "optimizer.adam_v.*): it holds weights only and cannot resume "
                "training (use init-from to start from its weights)");
}

TEST(Checkpoint, FailedLoadLeavesOutputUntouched) {
  TempDir dir;
  TrainState before = makeState(5);
  TrainState out = before;
  Status s = loadCheckpoint(dir.file("missing"), tinyShapes(), "x", out);
  ASSERT_FALSE(s.isOk());
  expectStateEq(before, out);
}

//===----------------------------------------------------------------------===//
// Atomicity
//===----------------------------------------------------------------------===//

namespace {

/// Runs saveCheckpoint(path, state) in a child process whose files may not
/// grow beyond `limit` bytes. With `killed`, exceeding the limit kills the
/// child (SIGXFSZ) in the middle of the write; otherwise the write fails
/// with EFBIG and the child exits 0 when saveCheckpoint reported the error
/// and removed its temporary file. Returns the wait status.
int saveInLimitedChild(const std::string &path, const TrainState &state,
                       rlim_t limit, bool killed) {
  pid_t pid = ::fork();
  if (pid == 0) {
    struct rlimit none = {0, 0};
    ::setrlimit(RLIMIT_CORE, &none);
    ::signal(SIGXFSZ, killed ? SIG_DFL : SIG_IGN);
    struct rlimit fsize = {limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &fsize);
    Status s = saveCheckpoint(path, state);
    if (s.isOk())
      ::_exit(10);
    if (s.message().find("File too large") == std::string::npos)
      ::_exit(11);
    std::string dir = parentDirectory(path);
    std::string base = path.substr(dir.size() + 1);
    ::_exit(filesWithPrefix(dir, base + ".tmp.").empty() ? 0 : 12);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST(CheckpointAtomicity, KilledSaveKeepsPreviousCheckpoint) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState a = makeState(1), b = makeState(2);
  ASSERT_TRUE(saveCheckpoint(path, a).isOk());
  std::string aBytes = readFile(path);
  ASSERT_GT(aBytes.size(), 8192u);

  // The child dies (SIGXFSZ) with half of B written.
  int status = saveInLimitedChild(path, b, aBytes.size() / 2, /*killed=*/true);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGXFSZ);

  // Its partial temporary file is left behind, the checkpoint is intact.
  std::vector<std::string> leftovers =
      filesWithPrefix(dir.path(), "ckpt.safetensors.tmp.");
  ASSERT_EQ(leftovers.size(), 1u);
  EXPECT_LT(std::filesystem::file_size(dir.file(leftovers[0])), aBytes.size());
  EXPECT_EQ(readFile(path), aBytes);
  TrainState out;
  Status s = loadCheckpoint(path, tinyShapes(), a.specFingerprint, out);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectStateEq(a, out);

  // The leftover does not get in the way of the next save.
  ASSERT_TRUE(saveCheckpoint(path, b).isOk());
  s = loadCheckpoint(path, tinyShapes(), b.specFingerprint, out);
  ASSERT_TRUE(s.isOk()) << s.message();
  expectStateEq(b, out);
}

TEST(CheckpointAtomicity, FailedWriteKeepsPreviousCheckpointAndCleansUp) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState a = makeState(1), b = makeState(2);
  ASSERT_TRUE(saveCheckpoint(path, a).isOk());
  std::string aBytes = readFile(path);

  // The write fails with EFBIG ("disk full" alike): an error, no temp file.
  int status = saveInLimitedChild(path, b, aBytes.size() / 2, /*killed=*/false);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_TRUE(filesWithPrefix(dir.path(), "ckpt.safetensors.tmp.").empty());
  EXPECT_EQ(readFile(path), aBytes);
  TrainState out;
  ASSERT_TRUE(loadCheckpoint(path, tinyShapes(), a.specFingerprint, out).isOk());
  expectStateEq(a, out);
}

TEST(CheckpointAtomicity, FailedRenameKeepsTargetAndCleansUp) {
  TempDir dir;
  // The target is a non-empty directory: the final rename fails.
  std::string path = dir.file("ckpt.safetensors");
  std::filesystem::create_directory(path);
  writeFile(path + "/keep", "x");
  Status s = saveCheckpoint(path, makeState());
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("cannot rename"), std::string::npos)
      << s.message();
  EXPECT_EQ(readFile(path + "/keep"), "x");
  EXPECT_TRUE(filesWithPrefix(dir.path(), "ckpt.safetensors.tmp.").empty());
}

TEST(CheckpointAtomicity, StaleTempFileIsIgnored) {
  TempDir dir;
  std::string path = dir.file("ckpt.safetensors");
  TrainState a = makeState(1);
  std::string stale = atomicTempPrefix(path) + std::to_string(::getpid()) + ".0";
  writeFile(stale, "partial garbage");
  ASSERT_TRUE(saveCheckpoint(path, a).isOk());
  EXPECT_EQ(readFile(stale), "partial garbage"); // not ours to delete
  TrainState out;
  ASSERT_TRUE(loadCheckpoint(path, tinyShapes(), a.specFingerprint, out).isOk());
  expectStateEq(a, out);
}
