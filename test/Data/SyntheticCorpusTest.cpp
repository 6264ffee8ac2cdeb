//===- SyntheticCorpusTest.cpp - Seeded demo and memory corpora -----------===//

#include "runtime/data/SyntheticCorpus.h"
#include "runtime/data/Corpus.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

TEST(SyntheticCorpusTest, DemoCorpusIsDeterministicReadableText) {
  TempDir dir;
  ASSERT_TRUE(writeDemoCorpus(dir.file("a.txt"), 1));
  ASSERT_TRUE(writeDemoCorpus(dir.file("b.txt"), 1));
  ASSERT_TRUE(writeDemoCorpus(dir.file("c.txt"), 2));
  std::string a = readText(dir.file("a.txt"));
  EXPECT_EQ(a, readText(dir.file("b.txt")));
  EXPECT_NE(a, readText(dir.file("c.txt")));
  // A few hundred KB at the default.
  EXPECT_GT(a.size(), 150000u);
  EXPECT_LT(a.size(), 600000u);
  // Sentences, documents separated by blank lines, several hundred words.
  std::istringstream in(a);
  std::string line;
  int64_t lines = 0, blank = 0;
  std::set<std::string> words;
  while (std::getline(in, line)) {
    if (line.empty()) {
      ++blank;
      continue;
    }
    ++lines;
    EXPECT_TRUE(line.back() == '.' || line.back() == '"') << line;
    std::istringstream ws(line);
    for (std::string w; ws >> w;) {
      while (!w.empty() && std::ispunct(static_cast<unsigned char>(w.back())))
        w.pop_back();
      while (!w.empty() && std::ispunct(static_cast<unsigned char>(w[0])))
        w.erase(0, 1);
      words.insert(w);
    }
  }
  EXPECT_EQ(lines, 5000);
  EXPECT_GT(blank, 300);
  EXPECT_GT(words.size(), 400u);
  EXPECT_EQ(a.substr(0, 5).find('\n'), std::string::npos);
  EXPECT_FALSE(writeDemoCorpus(dir.file("d.txt"), 1, 0));
  EXPECT_FALSE(writeDemoCorpus(dir.file("no/dir/e.txt"), 1, 10));
}

TEST(SyntheticCorpusTest, MemoryCorpusIsChunkPairs) {
  TempDir dir;
  MemoryCorpusOptions o;
  o.batchSize = 2;
  o.seqLen = 12;
  o.reuseLen = 4;
  o.vocabSize = 40;
  o.minStepsPerEpoch = 3;
  int64_t rowLen = 0;
  ASSERT_TRUE(writeMemoryCorpus(dir.file("m.ids"), 9, o, &rowLen));
  // 12 + 2*4 = 20 tokens for 3 windows, rounded up to a multiple of 8.
  EXPECT_EQ(rowLen, 24);
  Corpus c;
  ASSERT_TRUE(readIdsCorpus(dir.file("m.ids"), 40, {}, c));
  ASSERT_EQ(c.tokens.size(), 48u);
  for (size_t k = 0; k < 48; k += 8)
    for (size_t j = 0; j < 4; ++j)
      EXPECT_EQ(c.tokens[k + j], c.tokens[k + 4 + j]);
  for (int64_t id : c.tokens) {
    EXPECT_GE(id, 9);
    EXPECT_LT(id, 40);
  }
  ASSERT_TRUE(writeMemoryCorpus(dir.file("n.ids"), 9, o));
  EXPECT_EQ(readText(dir.file("m.ids")), readText(dir.file("n.ids")));
  o.vocabSize = 10;
  EXPECT_FALSE(writeMemoryCorpus(dir.file("x.ids"), 9, o));
  o.vocabSize = 40;
  o.biData = true;
  o.batchSize = 3;
  EXPECT_FALSE(writeMemoryCorpus(dir.file("x.ids"), 9, o));
}

} // namespace
