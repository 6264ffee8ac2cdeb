//===- CorpusTest.cpp - Corpus reading (ids format, errors) ---------------===//

#include "runtime/data/Corpus.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

Status readIds(const std::string &text, Corpus &c, int64_t vocab = 100,
               CorpusOptions options = {}) {
  static TempDir dir;
  std::string path = dir.file("c.ids");
  writeText(path, text);
  return readIdsCorpus(path, vocab, options, c);
}

TEST(CorpusTest, SentenceIdsAndEodFollowTheOfficialLoop) {
  // Official trace: sent_id starts True and flips after every line; a blank
  // line flips first, so its <eod> joins the sentence before it.
  Corpus c;
  Status s = readIds("#xlnetc-ids\n10 11\n12\n\n13 14 15\n16\n", c);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(c.tokens,
            (std::vector<int64_t>{10, 11, 12, kEodId, 13, 14, 15, 16}));
  EXPECT_EQ(c.sentIds, (std::vector<uint8_t>{1, 1, 0, 0, 1, 1, 1, 0}));
  EXPECT_EQ(c.numLines, 5);
  EXPECT_EQ(c.numDocuments, 2);
  EXPECT_EQ(c.vocabSize, 100);
  EXPECT_EQ(c.startPiece, std::vector<uint8_t>(100, 1));
}

/// A line longer than a segment: cut at whitespace (never inside an id),
/// the ids those of the whole line; a run without whitespace longer than a
/// segment is cut too (and here is no id).
TEST(CorpusTest, LongLinesAreReadInSegments) {
  std::string line;
  std::vector<int64_t> want = {7};
  for (int i = 0; line.size() < 600000; ++i) {
    line += std::to_string(10 + i % 80) + (i % 3 ? " " : "\t");
    want.push_back(10 + i % 80);
  }
  want.push_back(8);
  Corpus c;
  Status s = readIds("#xlnetc-ids\n7\n" + line + "\n8\n", c);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(c.tokens, want);
  EXPECT_EQ(c.numLines, 3);
  s = readIds("#xlnetc-ids\n" + std::string(300000, '1') + "\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(":2: '"), std::string::npos) << s.message().substr(0, 200);
}

TEST(CorpusTest, WithoutEodBlankLinesAreSkipped) {
  Corpus c;
  CorpusOptions o;
  o.useEod = false;
  ASSERT_TRUE(readIds("#xlnetc-ids\n10 11\n12\n\n\n13\r\n", c, 100, o));
  EXPECT_EQ(c.tokens, (std::vector<int64_t>{10, 11, 12, 13}));
  EXPECT_EQ(c.sentIds, (std::vector<uint8_t>{1, 1, 0, 1}));
  EXPECT_EQ(c.numDocuments, 2);
}

TEST(CorpusTest, HeaderDetection) {
  TempDir dir;
  writeText(dir.file("a"), "#xlnetc-ids  \n1 2\n");
  writeText(dir.file("b"), "hello\n");
  EXPECT_TRUE(isIdsCorpusFile(dir.file("a")));
  EXPECT_FALSE(isIdsCorpusFile(dir.file("b")));
  EXPECT_FALSE(isIdsCorpusFile(dir.file("missing")));
  Corpus c;
  Status s = readCorpus(dir.file("a"), nullptr, 50, {}, c);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(c.tokens, (std::vector<int64_t>{1, 2}));
}

TEST(CorpusTest, Errors) {
  TempDir dir;
  Corpus c;
  Status s = readIdsCorpus(dir.file("none.ids"), 100, {}, c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), dir.file("none.ids") + ": corpus file not found");
  s = readCorpus(dir.file("none.txt"), nullptr, 100, {}, c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), dir.file("none.txt") + ": corpus file not found");

  writeText(dir.file("empty"), "");
  s = readIdsCorpus(dir.file("empty"), 100, {}, c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), dir.file("empty") + ": the corpus is empty");

  s = readIds("#xlnetc-ids\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(": the corpus is empty"), std::string::npos)
      << s.message();
  s = readIds("#xlnetc-ids\n\n \n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("the corpus has no tokens (2 lines"),
            std::string::npos)
      << s.message();

  s = readIds("#xlnetc-ids\n1 2\n3 x4 5\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("c.ids:3: 'x4' is not a token id"),
            std::string::npos)
      << s.message();
  s = readIds("#xlnetc-ids\n1 2\n\n3 100\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(
                "c.ids:4: token id 100 is outside the vocabulary [0, 100)"),
            std::string::npos)
      << s.message();
  s = readIds("#xlnetc-ids\n-1\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("c.ids:2: token id -1"), std::string::npos);
  s = readIds("1 2 3\n", c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("c.ids:1: an ids corpus must start with"),
            std::string::npos);
  s = readIds("#xlnetc-ids\n1\n", c, 5);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("vocab size 5"), std::string::npos);
}

TEST(CorpusTest, WriteIdsRoundTrip) {
  TempDir dir;
  std::string path = dir.file("w.ids");
  ASSERT_TRUE(writeIdsCorpus(path, {{9, 10}, {}, {11}}));
  EXPECT_EQ(readText(path), "#xlnetc-ids\n9 10\n\n11\n");
  Corpus c;
  ASSERT_TRUE(readIdsCorpus(path, 20, {}, c));
  EXPECT_EQ(c.tokens, (std::vector<int64_t>{9, 10, kEodId, 11}));
  EXPECT_FALSE(writeIdsCorpus(dir.file("no/dir/x"), {{1}}));
}

} // namespace
