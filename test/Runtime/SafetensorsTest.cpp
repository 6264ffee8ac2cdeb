//===- SafetensorsTest.cpp - Safetensors reader and writer ----------------===//

#include "runtime/io/Safetensors.h"
#include "runtime/train/WeightsReader.h"
#include "test/Runtime/TestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace xlnetc::rt;
namespace fs = std::filesystem;

namespace {

/// A fresh temporary directory per test.
class SafetensorsTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("xlnetc-st-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string &name) const { return dir_ / name; }

  /// Writes a file: 8-byte LE `headerLen`, `header`, `data`.
  std::string raw(const std::string &header, const std::string &data,
                  uint64_t headerLen) {
    std::string p = path("raw.safetensors");
    std::ofstream os(p, std::ios::binary);
    for (int i = 0; i < 8; ++i)
      os.put(char((headerLen >> (8 * i)) & 0xff));
    os << header << data;
    return p;
  }
  std::string raw(const std::string &header, const std::string &data) {
    return raw(header, data, header.size());
  }
  /// Reads `p` and returns the error message ("" when it succeeded).
  static std::string readError(const std::string &p) {
    TensorMap m;
    Status s = readSafetensors(p, m);
    return s ? "" : s.message();
  }

  fs::path dir_;
};

TEST_F(SafetensorsTest, RoundTripKeepsEveryDtypeShapeAndMetadata) {
  TensorMap in;
  in["b.weights"] = Tensor::fromF32({2, 3}, {1, -2, 3.5f, 0, 1e-20f, -7});
  in["a.ids"] = Tensor::fromI64({3}, {-1, 0, 1ll << 40});
  in["c.mask"] = Tensor::fromBool({2, 2}, {1, 0, 0, 1});
  in["d.scalar"] = Tensor::fromF32({}, {42});
  std::string p = path("t.safetensors");
  ASSERT_TRUE(writeSafetensors(p, in, {{"seq_len", "16"}}));

  TensorMap out;
  std::map<std::string, std::string> meta;
  Status s = readSafetensors(p, out, &meta);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(meta.at("seq_len"), "16");
  for (const auto &[name, t] : in) {
    const Tensor &r = out.at(name);
    EXPECT_EQ(r.dtype, t.dtype) << name;
    EXPECT_EQ(r.shape, t.shape) << name;
    EXPECT_EQ(0, std::memcmp(r.bytes(), t.bytes(), t.nbytes())) << name;
  }

  // Layout: header padded with spaces to 8 bytes, data in sorted-name order.
  std::ifstream is(p, std::ios::binary);
  unsigned char len[8];
  is.read(reinterpret_cast<char *>(len), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | len[i];
  EXPECT_EQ(n % 8, 0u);
  std::string header(n, '\0');
  is.read(header.data(), std::streamsize(n));
  auto j = nlohmann::json::parse(header);
  // a.ids (24 bytes) first, then b.weights (24), c.mask (4), d.scalar (4).
  EXPECT_EQ(j["a.ids"]["data_offsets"], nlohmann::json({0, 24}));
  EXPECT_EQ(j["b.weights"]["data_offsets"], nlohmann::json({24, 48}));
  EXPECT_EQ(j["c.mask"]["data_offsets"], nlohmann::json({48, 52}));
  EXPECT_EQ(j["d.scalar"]["data_offsets"], nlohmann::json({52, 56}));
  EXPECT_EQ(j["c.mask"]["dtype"], "BOOL");
  EXPECT_EQ(fs::file_size(p), 8 + n + 56);
}

TEST_F(SafetensorsTest, MissingFile) {
  std::string p = path("nope.safetensors");
  std::string e = readError(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("cannot open"), std::string::npos) << e;
}

TEST_F(SafetensorsTest, FileShorterThanEightBytes) {
  std::string p = path("short.safetensors");
  std::ofstream(p) << "abc";
  std::string e = readError(p);
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("shorter than the 8-byte header length"), std::string::npos)
      << e;
}

TEST_F(SafetensorsTest, HeaderLengthLargerThanFile) {
  std::string e = readError(raw("{}", "", 1000));
  EXPECT_NE(e.find("header length 1000 is larger than the rest of the file "
                   "(2 bytes)"),
            std::string::npos)
      << e;
}

TEST_F(SafetensorsTest, TruncatedData) {
  // Header promises 8 bytes of data, the file holds 4.
  std::string e = readError(
      raw(R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
          std::string(4, '\0')));
  EXPECT_NE(e.find("tensor 'x': data_offsets [0, 8] out of range (data "
                   "section has 4 bytes)"),
            std::string::npos)
      << e;
}

TEST_F(SafetensorsTest, HeaderNotJsonOrNotObject) {
  EXPECT_NE(readError(raw("{not json", "")).find("header is not valid JSON"),
            std::string::npos);
  EXPECT_NE(readError(raw("[1, 2]", "")).find("header JSON is not an object"),
            std::string::npos);
}

TEST_F(SafetensorsTest, UnsupportedDtypeIsNamed) {
  std::string e = readError(
      raw(R"({"w":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
          std::string(4, '\0')));
  EXPECT_NE(e.find("tensor 'w': unsupported dtype 'F16' (supported: F32, I64, "
                   "BOOL)"),
            std::string::npos)
      << e;
}

TEST_F(SafetensorsTest, MissingEntryFields) {
  std::string data(4, '\0');
  EXPECT_NE(readError(raw(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", data))
                .find("missing or non-string 'dtype'"),
            std::string::npos);
  EXPECT_NE(
      readError(raw(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", data))
          .find("missing or non-array 'shape'"),
      std::string::npos);
  EXPECT_NE(readError(raw(R"({"w":{"dtype":"F32","shape":[1]}})", data))
                .find("missing or malformed 'data_offsets'"),
            std::string::npos);
}

TEST_F(SafetensorsTest, OffsetsInconsistentWithShape) {
  // I64 [3] needs 24 bytes; the offsets span 16.
  std::string e = readError(
      raw(R"({"ids":{"dtype":"I64","shape":[3],"data_offsets":[0,16]}})",
          std::string(24, '\0')));
  EXPECT_NE(e.find("span 16 bytes but I64[3] needs 24"), std::string::npos)
      << e;
  // begin > end.
  e = readError(raw(R"({"x":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})",
                    std::string(4, '\0')));
  EXPECT_NE(e.find("out of range"), std::string::npos) << e;
}

/// The format's layout rules, in both readers (this one and the weights
/// index of --init-from and --weights): no overlapping data, no bytes that
/// belong to no tensor, no name twice.
TEST_F(SafetensorsTest, RejectsOverlapsGapsAndDuplicateNames) {
  const auto bothFail = [&](const std::string &header, size_t dataBytes,
                            const std::string &want) {
    const std::string p = raw(header, std::string(dataBytes, '\0'));
    const std::string e = readError(p);
    EXPECT_NE(e.find(want), std::string::npos) << header << "\n  got: " << e;
    train::SafetensorsIndex index;
    Status s = train::indexSafetensors(p, index);
    ASSERT_FALSE(s) << header;
    EXPECT_NE(s.message().find(want), std::string::npos)
        << header << "\n  got: " << s.message();
  };
  // b's data begins inside a's.
  bothFail(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
           R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
           12, "tensors 'a' and 'b' overlap: data_offsets [0, 8] and [4, 12]");
  // Both name the same bytes.
  bothFail(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
           4, "overlap");
  // Bytes [4, 8) belong to no tensor.
  bothFail(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
           R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
           12, "bytes [4, 8) of the data section belong to no tensor (before 'b'");
  // Bytes after the last tensor.
  bothFail(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 8,
           "bytes [4, 8) at the end of the data section belong to no tensor");
  // The same name twice (JSON would silently keep one).
  bothFail(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
           R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8, "the header names 'a' twice");
  // Allowed: empty tensors at any boundary, in any header order.
  const std::string ok =
      raw(R"({"z":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
          R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
          R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
          R"("__metadata__":{"a":"1"}})",
          std::string(8, '\0'));
  EXPECT_EQ(readError(ok), "");
  train::SafetensorsIndex index;
  EXPECT_TRUE(train::indexSafetensors(ok, index));
}

TEST_F(SafetensorsTest, FailedWriteKeepsTheExistingFile) {
  std::string p = path("keep.safetensors");
  TensorMap good;
  good["x"] = Tensor::fromF32({1}, {3});
  ASSERT_TRUE(writeSafetensors(p, good));
  // Make the temporary file impossible to create: a directory in its place.
  fs::create_directories(p + ".tmp." + std::to_string(::getpid()));
  TensorMap other;
  other["y"] = Tensor::fromF32({1}, {4});
  Status s = writeSafetensors(p, other);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find(p), std::string::npos) << s.message();
  TensorMap back;
  ASSERT_TRUE(readSafetensors(p, back));
  EXPECT_EQ(back.count("x"), 1u);
  EXPECT_EQ(back.at("x").f32()[0], 3.0f);
}

} // namespace
