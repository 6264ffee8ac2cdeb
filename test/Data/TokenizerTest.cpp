//===- TokenizerTest.cpp - SentencePiece loading, training, encoding ------===//

#include "runtime/data/Tokenizer.h"
#include "runtime/data/BatchStream.h"
#include "runtime/data/Corpus.h"
#include "runtime/data/SyntheticCorpus.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>

#include <memory>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

/// One small model trained once for the whole suite (training dominates
/// the run time).
class TokenizerTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    corpus_ = dir_->file("demo.txt");
    ASSERT_TRUE(writeDemoCorpus(corpus_, /*seed=*/7, /*approxLines=*/1500));
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    trainStatus_ =
        new Status(trainTokenizer(corpus_, /*vocabSize=*/400, dir_->file("m")));
    trainLog_ = testing::internal::GetCapturedStderr() +
                testing::internal::GetCapturedStdout();
  }
  static void TearDownTestSuite() {
    delete trainStatus_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(*trainStatus_) << trainStatus_->message();
  }
  static std::string model() { return dir_->file("m.model"); }

  static TempDir *dir_;
  static std::string corpus_;
  static Status *trainStatus_;
  static std::string trainLog_;
};
TempDir *TokenizerTest::dir_ = nullptr;
std::string TokenizerTest::corpus_;
Status *TokenizerTest::trainStatus_ = nullptr;
std::string TokenizerTest::trainLog_;

TEST(IsStartPieceTest, OfficialDefinition) {
  EXPECT_TRUE(isStartPiece("\xE2\x96\x81the"));
  EXPECT_TRUE(isStartPiece("\xE2\x96\x81"));
  EXPECT_TRUE(isStartPiece("<cls>"));
  EXPECT_TRUE(isStartPiece("<"));
  for (const char *p : {".", ",", "!", "?", "\"", "(", ")",  "-", ":", ";",
                        "[", "]", "{", "}", "~",  "`", "\\", "_", "@", "#"})
    EXPECT_TRUE(isStartPiece(p)) << p;
  // Not in the official set: ' = > (and '<' only counts as a prefix).
  for (const char *p : {"'", "=", ">", "ing", "s", "", "..", ".a", "a."})
    EXPECT_FALSE(isStartPiece(p)) << p;
}

TEST(SpecialIdsTest, Names) {
  EXPECT_STREQ(specialPieceName(kClsId), "<cls>");
  EXPECT_STREQ(specialPieceName(kSepId), "<sep>");
  EXPECT_STREQ(specialPieceName(kEodId), "<eod>");
  EXPECT_STREQ(specialPieceName(9), "");
}

TEST_F(TokenizerTest, TrainedModelHasTheSpecialIds) {
  Tokenizer tok;
  Status s = Tokenizer::load(model(), tok);
  ASSERT_TRUE(s) << s.message();
  EXPECT_GT(tok.vocabSize(), 100);
  EXPECT_LE(tok.vocabSize(), 400);
  const char *names[] = {"<unk>", "<s>",    "</s>",  "<cls>", "<sep>",
                         "<pad>", "<mask>", "<eod>", "<eop>"};
  for (int id = 0; id < 9; ++id)
    EXPECT_EQ(tok.idToPiece(id), names[id]) << id;
  EXPECT_EQ(tok.path(), model());
  EXPECT_TRUE(tok.isStartPiece(kClsId));
}

TEST_F(TokenizerTest, TrainingIsQuiet) {
  EXPECT_EQ(trainLog_, "") << "SentencePiece logged while training";
}

TEST_F(TokenizerTest, VerboseTrainingLogs) {
  // The capture works: asking for the log shows SentencePiece's output.
  TempDir dir;
  TrainTokenizerOptions o;
  o.verbose = true;
  testing::internal::CaptureStderr();
  Status s = trainTokenizer(corpus_, 400, dir.file("loud"), o);
  std::string log = testing::internal::GetCapturedStderr();
  // Later trainings in this process must stay quiet again.
  testing::internal::CaptureStderr();
  Status q = trainTokenizer(corpus_, 400, dir.file("quiet"));
  std::string quiet = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(q) << q.message();
  EXPECT_NE(log.find("trainer_interface"), std::string::npos) << log.size();
  EXPECT_EQ(quiet, "");
}

TEST_F(TokenizerTest, DemoCorpusStreamsBatches) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model(), tok));
  Corpus c;
  Status s = readCorpus(corpus_, &tok, 0, {}, c);
  ASSERT_TRUE(s) << s.message();
  EXPECT_GT(c.numDocuments, 100);
  PipelineConfig cfg;
  cfg.batchSize = 4;
  cfg.seqLen = 64;
  cfg.reuseLen = 32;
  cfg.numPredict = 10;
  cfg.permSize = 32;
  cfg.biData = true;
  cfg.seed = 1;
  BatchStream stream;
  s = BatchStream::create(std::move(c), cfg, stream);
  ASSERT_TRUE(s) << s.message();
  for (int k = 0; k < 3; ++k) {
    Batch b;
    s = stream.next(b);
    ASSERT_TRUE(s) << s.message();
    // Every real slot predicts an ordinary piece (never SEP/CLS).
    const Tensor &t = b.tensors.at("target"), &m = b.tensors.at("target_mask");
    float real = 0;
    for (int64_t j = 0; j < t.numel(); ++j) {
      real += m.f32()[j];
      if (m.f32()[j] != 0) {
        EXPECT_NE(t.i64()[j], kSepId);
        EXPECT_NE(t.i64()[j], kClsId);
      }
    }
    EXPECT_GE(real, 4 * 7); // at most three masked SEP/SEP/CLS per row
  }
}

TEST_F(TokenizerTest, TrainingIsDeterministic) {
  TempDir dir;
  testing::internal::CaptureStderr();
  Status s = trainTokenizer(corpus_, 400, dir.file("again"));
  testing::internal::GetCapturedStderr();
  ASSERT_TRUE(s) << s.message();
  // The .model embeds the prefix; the .vocab (pieces and scores) does not.
  std::string again = readText(dir.file("again.vocab"));
  EXPECT_GT(again.size(), 1000u);
  EXPECT_TRUE(again == readText(dir_->file("m.vocab")));
}

TEST_F(TokenizerTest, EncodeDecodeRoundTrip) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model(), tok));
  std::vector<int64_t> ids;
  ASSERT_TRUE(tok.encode("  Anna   found the  red book. ", ids));
  ASSERT_FALSE(ids.empty());
  for (int64_t id : ids) {
    EXPECT_GE(id, kNumSpecialIds);
    EXPECT_LT(id, tok.vocabSize());
  }
  EXPECT_EQ(tok.decode(ids), "Anna found the red book.");
  EXPECT_TRUE(tok.isStartPiece(ids[0])); // "▁Anna" or "▁" + ...
  // `` and '' become ".
  std::vector<int64_t> a, b;
  ASSERT_TRUE(tok.encode("``Where?''", a));
  ASSERT_TRUE(tok.encode("\"Where?\"", b));
  EXPECT_EQ(a, b);
  // uncased lowercases first.
  std::vector<int64_t> lower, upper;
  ASSERT_TRUE(tok.encode("the red book", lower));
  ASSERT_TRUE(tok.encode("THE RED BOOK", upper, /*uncased=*/true));
  EXPECT_EQ(lower, upper);
  std::vector<int64_t> none;
  ASSERT_TRUE(tok.encode("   ", none));
  EXPECT_TRUE(none.empty());
}

TEST_F(TokenizerTest, DigitCommaIsSplit) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model(), tok));
  std::vector<int64_t> ids;
  ASSERT_TRUE(tok.encode("In 1990, they left", ids));
  // The comma is a piece of its own, right after the digits.
  int64_t comma = -1;
  for (size_t k = 0; k < ids.size(); ++k)
    if (tok.idToPiece(ids[k]) == ",")
      comma = int64_t(k);
  ASSERT_GE(comma, 1) << tok.decode(ids);
  std::string before = tok.idToPiece(ids[size_t(comma - 1)]);
  EXPECT_TRUE(before.back() >= '0' && before.back() <= '9') << before;
}

TEST_F(TokenizerTest, TextCorpusIsEncodedLineByLine) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model(), tok));
  TempDir dir;
  std::string path = dir.file("c.txt");
  writeText(path, "Anna found the book.\nBen lost it.\n\nClara sang.\n");
  Corpus c;
  Status s = readCorpus(path, &tok, 0, {}, c);
  ASSERT_TRUE(s) << s.message();
  std::vector<int64_t> l1, l2, l3;
  ASSERT_TRUE(tok.encode("Anna found the book.", l1));
  ASSERT_TRUE(tok.encode("Ben lost it.", l2));
  ASSERT_TRUE(tok.encode("Clara sang.", l3));
  std::vector<int64_t> expect = l1;
  expect.insert(expect.end(), l2.begin(), l2.end());
  expect.push_back(kEodId);
  expect.insert(expect.end(), l3.begin(), l3.end());
  EXPECT_EQ(c.tokens, expect);
  EXPECT_EQ(c.vocabSize, tok.vocabSize());
  EXPECT_EQ(c.numDocuments, 2);
  EXPECT_EQ(c.startPiece, tok.startPieceTable());
  // A text corpus without a tokenizer is a clear error.
  s = readCorpus(path, nullptr, 100, {}, c);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(path), std::string::npos);
}

/// A line far longer than a segment (runtime/data/Corpus.cpp) is encoded
/// in segments cut at whitespace, not held whole, and gives exactly the ids
/// of the whole line; so do its neighbours, and a CRLF ending.
TEST_F(TokenizerTest, ALongLineIsStreamedInSegmentsWithTheSameIds) {
  Tokenizer tok;
  ASSERT_TRUE(Tokenizer::load(model(), tok));
  std::string longLine;
  for (int i = 0; longLine.size() < 700000; ++i)
    longLine += (i % 7 == 0 ? "Anna found 1,990 books, " : "and Ben lost them.  ");
  TempDir dir;
  std::string path = dir.file("long.txt");
  writeText(path, "Clara sang.\n" + longLine + "\r\nBen lost it.\n");
  Corpus c;
  Status s = readCorpus(path, &tok, 0, {}, c);
  ASSERT_TRUE(s) << s.message();
  std::vector<int64_t> expect;
  for (const std::string &line : {std::string("Clara sang."), longLine, std::string("Ben lost it.")})
    ASSERT_TRUE(tok.encode(line, expect));
  EXPECT_EQ(c.tokens.size(), expect.size());
  EXPECT_EQ(c.tokens, expect);
  EXPECT_EQ(c.numLines, 3);
  EXPECT_EQ(c.numDocuments, 1);
}

/// SentencePiece ends the process when no line is left to train on: such a
/// corpus is refused first, saying why.
TEST(TrainTokenizerTest, NothingToLearnFromIsAnError) {
  TempDir dir;
  const std::string blank = dir.file("blank.txt"), longOnly = dir.file("long.txt");
  writeText(blank, "  \n\t\n\n \r\n");
  writeText(longOnly, std::string(5000, 'x') + "\n   \n");
  Status s = trainTokenizer(blank, 400, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("no line to train a tokenizer on: 4 of its 4 lines are blank"),
            std::string::npos)
      << s.message();
  // Unicode spaces (NBSP, U+3000) and zero-width characters are blank too:
  // SentencePiece's normalisation leaves nothing of them.
  const std::string unicode = dir.file("unicode.txt");
  writeText(unicode, "\xc2\xa0\xc2\xa0\n\xe3\x80\x80\n\xe2\x80\x8b\xe2\x80\x8b\n");
  s = trainTokenizer(unicode, 400, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("3 of its 3 lines are blank"), std::string::npos) << s.message();
  s = trainTokenizer(longOnly, 400, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("1 of its 2 lines are blank (white space or invisible characters "
                             "only) and 1 longer than SentencePiece's 4192"),
            std::string::npos)
      << s.message();
}

TEST(TokenizerLoadTest, MissingFile) {
  Tokenizer tok;
  Status s = Tokenizer::load("/nonexistent/spiece.model", tok);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "/nonexistent/spiece.model: SentencePiece model not found");
}

TEST(TokenizerLoadTest, NotAModel) {
  TempDir dir;
  for (const std::string &text :
       {std::string("this is not a sentencepiece model\n"), std::string(),
        std::string("\x08\x96\x01garbage", 11)}) {
    std::string path = dir.file("bad.model");
    writeText(path, text);
    Tokenizer tok;
    Status s = Tokenizer::load(path, tok);
    ASSERT_FALSE(s) << "accepted " << text.size() << " bytes";
    EXPECT_EQ(s.message().rfind(path + ": not a SentencePiece model", 0), 0u)
        << s.message();
  }
  Tokenizer tok;
  Status s = Tokenizer::load(dir.file(""), tok);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("directory"), std::string::npos);
}

TEST_F(TokenizerTest, ModelWithoutXLNetSpecialIds) {
  // SentencePiece's defaults: <unk>0 <s>1 </s>2, no <cls>/<sep>.
  TempDir dir;
  std::string prefix = dir.file("plain");
  auto st =
      sentencepiece::SentencePieceTrainer::Train({{"input", corpus_},
                                                  {"model_prefix", prefix},
                                                  {"vocab_size", "200"},
                                                  {"hard_vocab_limit", "false"},
                                                  {"num_threads", "1"},
                                                  {"minloglevel", "2"}});
  ASSERT_TRUE(st.ok()) << st.ToString();
  Tokenizer tok;
  Status s = Tokenizer::load(prefix + ".model", tok);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(prefix + ".model: the SentencePiece model does "
                                      "not have XLNet's special ids"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("<cls> is at missing"), std::string::npos)
      << s.message();
}

TEST(TrainTokenizerTest, Errors) {
  TempDir dir;
  Status s = trainTokenizer(dir.file("none.txt"), 100, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            dir.file("none.txt") + ": tokenizer training corpus not found");
  writeText(dir.file("empty.txt"), "");
  s = trainTokenizer(dir.file("empty.txt"), 100, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("is empty"), std::string::npos);
  writeText(dir.file("one.txt"), "hello world\n");
  s = trainTokenizer(dir.file("one.txt"), 5, dir.file("m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("vocab size 5"), std::string::npos);
  s = trainTokenizer(dir.file("one.txt"), 100, dir.file("no/such/dir/m"));
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("does not exist"), std::string::npos);
}

} // namespace
