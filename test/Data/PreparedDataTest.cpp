//===- PreparedDataTest.cpp - prepare-data against reading into memory ----===//
//
// The prepared stream is the corpus read into memory, token for token and
// flag for flag: one file cut into many units (units starting inside and
// outside documents, a long line), several files joined by the official
// create_data rule, gzip and zstd inputs; resumed after an interruption it
// is the same; shared by ranks (threads here, mpirun in
// prepare-data-mpi.test) it is the same, and a rank that sees other inputs
// stops every rank; bad directories are one clear error each.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/PreparedData.h"
#include "runtime/data/SyntheticCorpus.h"
#include "test/Data/DataTestUtil.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;
using namespace xlnetc::rt::test;

namespace {

class PreparedDataTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    ASSERT_TRUE(writeDemoCorpus(dir_->file("demo.txt"), /*seed=*/3, /*approxLines=*/1500));
    testing::internal::CaptureStderr();
    trainStatus_ = new Status(trainTokenizer(dir_->file("demo.txt"), 400, dir_->file("m")));
    testing::internal::GetCapturedStderr();
  }
  static void TearDownTestSuite() {
    delete trainStatus_;
    delete dir_;
  }
  void SetUp() override { ASSERT_TRUE(*trainStatus_) << trainStatus_->message(); }

  static std::string model() { return dir_->file("m.model"); }
  static Tokenizer tokenizer() {
    Tokenizer t;
    EXPECT_TRUE(Tokenizer::load(model(), t));
    return t;
  }

  /// Prepares `inputs` into `out` with units of `unitBytes`.
  static Status prepare(const std::vector<std::string> &inputs, const std::string &out,
                        int64_t unitBytes, PreparedCounts &counts, int threads = 2) {
    PrepareOptions o;
    o.inputs = inputs;
    o.outDir = out;
    o.tokenizer = model();
    o.unitBytes = unitBytes;
    o.threads = threads;
    return prepareData(o, counts);
  }

  /// The files read into memory one by one and joined as the official
  /// create_data joins them: a file whose first flag equals the last one
  /// before it is flipped.
  static Corpus joined(const std::vector<std::string> &files) {
    Corpus all;
    const Tokenizer t = tokenizer();
    for (const std::string &f : files) {
      Corpus c;
      Status st = readTextCorpus(f, t, {}, c);
      EXPECT_TRUE(st) << st.message();
      const bool flip = !all.sentIds.empty() && !c.sentIds.empty() &&
                        c.sentIds.front() == all.sentIds.back();
      for (size_t k = 0; k < c.tokens.size(); ++k) {
        all.tokens.push_back(c.tokens[k]);
        all.sentIds.push_back(uint8_t(c.sentIds[k] ^ flip));
      }
      all.numLines += c.numLines;
      all.numDocuments += c.numDocuments;
    }
    return all;
  }

  /// The prepared directory holds exactly `want`.
  static void expectSame(const std::string &dir, const Corpus &want) {
    PreparedData p;
    Status st = openPreparedData(dir, p);
    ASSERT_TRUE(st) << st.message();
    ASSERT_EQ(p.source.store->size(), int64_t(want.tokens.size()));
    for (int64_t k = 0; k < p.source.store->size(); ++k) {
      ASSERT_EQ(p.source.store->token(k), want.tokens[size_t(k)]) << "token " << k;
      ASSERT_EQ(p.source.store->flag(k), want.sentIds[size_t(k)]) << "flag " << k;
    }
    StreamDigest d;
    for (size_t k = 0; k < want.tokens.size(); ++k)
      d.add(want.tokens[k], want.sentIds[k]);
    EXPECT_EQ(p.source.digest.hash, d.hash);
    EXPECT_EQ(p.source.digest.count, d.count);
    EXPECT_EQ(p.counts.lines, want.numLines);
    EXPECT_EQ(p.counts.documents, want.numDocuments);
    EXPECT_EQ(p.counts.tokenBytes, 2); // vocab 400
  }

  static TempDir *dir_;
  static Status *trainStatus_;
};
TempDir *PreparedDataTest::dir_ = nullptr;
Status *PreparedDataTest::trainStatus_ = nullptr;

/// Text that exercises the unit cuts: documents of varied length, blank
/// lines in runs and with spaces, a file starting with a blank line, a
/// line of 300 KiB (read in segments), no newline at the end.
std::string awkwardText(int seed) {
  std::string text = seed % 2 ? "\n  \n" : "";
  const char *words[] = {"the", "red", "cat", "sat", "on", "a", "mat", "in", "Paris", "1990,"};
  for (int line = 0; line < 1200; ++line) {
    if ((line * 7 + seed) % 11 == 0) {
      text += (line % 3 ? "\n" : " \t\n");
      continue;
    }
    for (int w = 0; w < 3 + (line * 5 + seed) % 9; ++w)
      text += std::string(w ? " " : "") + words[(line + w * 3 + seed) % 10];
    text += '\n';
    if (line == 600)
      for (int k = 0; k < 300 * 1024 / 8; ++k)
        text += k + 1 == 300 * 1024 / 8 ? "word\n" : "Paris   ";
  }
  text += "the end without a newline";
  return text;
}

/// The collectives of `ranks` threads: each call waits for every rank's
/// value; allOk is whether all passed true, allSame whether all passed one
/// value.
class ThreadRanks {
public:
  explicit ThreadRanks(int ranks) : ranks_(ranks) {}
  bool allOk(bool ok) {
    const std::vector<uint64_t> all = gather(ok);
    return std::all_of(all.begin(), all.end(), [](uint64_t v) { return v != 0; });
  }
  bool allSame(uint64_t value) {
    const std::vector<uint64_t> all = gather(value);
    return std::all_of(all.begin(), all.end(), [&](uint64_t v) { return v == all[0]; });
  }

private:
  std::vector<uint64_t> gather(uint64_t value) {
    std::unique_lock<std::mutex> lock(m_);
    const int64_t round = round_;
    values_.push_back(value);
    if (int(values_.size()) == ranks_) {
      result_ = std::move(values_);
      values_.clear();
      ++round_;
      cv_.notify_all();
      return result_;
    }
    cv_.wait(lock, [&] { return round_ != round; });
    return result_;
  }

  const int ranks_;
  std::mutex m_;
  std::condition_variable cv_;
  int64_t round_ = 0;
  std::vector<uint64_t> values_, result_;
};

} // namespace

TEST_F(PreparedDataTest, OneFileInManyUnitsIsTheCorpusInMemory) {
  TempDir d;
  const std::string text = d.file("a.txt");
  writeText(text, awkwardText(1));
  for (int64_t unit : {int64_t(1) << 30, int64_t(4096), int64_t(777)}) {
    PreparedCounts counts;
    const std::string out = d.file("out-" + std::to_string(unit));
    Status st = prepare({text}, out, unit, counts);
    ASSERT_TRUE(st) << st.message();
    EXPECT_GE(counts.shards, unit < 5000 ? 8 : 1);
    expectSame(out, joined({text}));
    EXPECT_TRUE(verifyPreparedData(out));
  }
}

TEST_F(PreparedDataTest, SeveralFilesAreJoinedAsCreateDataJoinsThem) {
  TempDir d;
  std::vector<std::string> files;
  for (int k = 0; k < 4; ++k) {
    files.push_back(d.file("in/part-" + std::to_string(k) + ".txt"));
    std::filesystem::create_directories(d.file("in"));
    writeText(files.back(), awkwardText(k).substr(0, size_t(2000 + 1500 * k)));
  }
  // A gzip copy of one file in a second directory: told by its content.
  std::filesystem::create_directories(d.file("gz"));
  gzFile gz = gzopen(d.file("gz/part-4.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  const std::string last = awkwardText(5);
  ASSERT_EQ(gzwrite(gz, last.data(), unsigned(last.size())), int(last.size()));
  gzclose(gz);
  writeText(d.file("plain-4.txt"), last);
  PreparedCounts counts;
  Status st = prepare({d.file("in"), d.file("gz")}, d.file("out"), 3000, counts);
  ASSERT_TRUE(st) << st.message();
  std::vector<std::string> asRead = files;
  asRead.push_back(d.file("plain-4.txt"));
  expectSame(d.file("out"), joined(asRead));
}

TEST_F(PreparedDataTest, AnInterruptedPreparationResumesToTheSameData) {
  TempDir d;
  const std::string text = d.file("a.txt");
  writeText(text, awkwardText(2));
  PreparedCounts whole, resumed;
  ASSERT_TRUE(prepare({text}, d.file("whole"), 2048, whole));
  // Interrupted after 3 units (the test hook), one of them then damaged.
  PrepareOptions o;
  o.inputs = {text};
  o.outDir = d.file("cut");
  o.tokenizer = model();
  o.unitBytes = 2048;
  o.threads = 1;
  o.stopAfterUnits = 3;
  Status st = prepareData(o, resumed);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("interrupted after 3 units"), std::string::npos) << st.message();
  PreparedData p;
  EXPECT_FALSE(openPreparedData(d.file("cut"), p)); // no manifest yet
  std::filesystem::resize_file(d.file("cut/shard-00001.tok"), 10);
  std::vector<std::string> notes;
  o.stopAfterUnits = -1;
  o.threads = 2;
  o.note = [&](const std::string &n) { notes.push_back(n); };
  st = prepareData(o, resumed);
  ASSERT_TRUE(st) << st.message();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("resuming: 2 of ", 0), 0u) << notes[0];
  EXPECT_EQ(resumed.tokens, whole.tokens);
  expectSame(d.file("cut"), joined({text}));
  EXPECT_EQ(readText(d.file("cut/manifest.json")), readText(d.file("whole/manifest.json")));
  // An input changed before the resume: refused, what was done kept.
  o.outDir = d.file("cut2");
  o.stopAfterUnits = 2;
  ASSERT_FALSE(prepareData(o, resumed));
  writeText(text, awkwardText(2) + "\nmore\n");
  o.stopAfterUnits = -1;
  st = prepareData(o, resumed);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a.txt changed since it was prepared from"), std::string::npos)
      << st.message();
  EXPECT_TRUE(std::filesystem::exists(d.file("cut2/shard-00000.tok")));
}

TEST_F(PreparedDataTest, RanksShareTheUnitsAndStopTogether) {
  TempDir d;
  const std::string text = d.file("a.txt");
  writeText(text, awkwardText(3));
  writeText(d.file("b.txt"), awkwardText(4));
  PreparedCounts whole;
  ASSERT_TRUE(prepare({text}, d.file("whole"), 2048, whole, /*threads=*/1));
  // Three ranks; `inputsOf(r)` their inputs.
  auto run = [&](const std::string &out, auto inputsOf, std::vector<Status> &status,
                 std::vector<PreparedCounts> &counts, std::vector<int64_t> &unitsRun) {
    ThreadRanks world(3);
    status.assign(3, Status::ok());
    counts.assign(3, PreparedCounts());
    unitsRun.assign(3, 0);
    std::vector<std::thread> ranks;
    for (int r = 0; r < 3; ++r)
      ranks.emplace_back([&, r] {
        PrepareOptions o;
        o.inputs = inputsOf(r);
        o.outDir = out;
        o.tokenizer = model();
        o.unitBytes = 2048;
        o.threads = 1;
        o.rank = r;
        o.ranks = 3;
        o.allOk = [&world](bool ok) { return world.allOk(ok); };
        o.allSame = [&world](uint64_t v) { return world.allSame(v); };
        o.progress = [&, r](const PrepareProgress &p) { unitsRun[size_t(r)] = p.unitsDone; };
        status[size_t(r)] = prepareData(o, counts[size_t(r)]);
      });
    for (std::thread &t : ranks)
      t.join();
  };
  std::vector<Status> st;
  std::vector<PreparedCounts> counts;
  std::vector<int64_t> unitsRun;
  run(d.file("shared"), [&](int) { return std::vector<std::string>{text}; }, st, counts,
      unitsRun);
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(st[size_t(r)]) << "rank " << r << ": " << st[size_t(r)].message();
    EXPECT_EQ(counts[size_t(r)].tokens, whole.tokens) << "rank " << r;
    // Dealt out in turn: rank r runs units r, r+3, ...
    EXPECT_EQ(unitsRun[size_t(r)], (whole.shards - r + 2) / 3) << "rank " << r;
  }
  EXPECT_EQ(readText(d.file("shared/manifest.json")), readText(d.file("whole/manifest.json")));
  expectSame(d.file("shared"), joined({text}));
  // Again on the finished directory: nothing to do on every rank.
  run(d.file("shared"), [&](int) { return std::vector<std::string>{text}; }, st, counts,
      unitsRun);
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(st[size_t(r)]) << "rank " << r << ": " << st[size_t(r)].message();
    EXPECT_EQ(counts[size_t(r)].tokens, whole.tokens) << "rank " << r;
    EXPECT_EQ(unitsRun[size_t(r)], 0) << "rank " << r;
  }
  // Rank 2 sees another input: it says how its plan differs, the others
  // name the stage, and no manifest is written.
  run(d.file("differ"),
      [&](int r) {
        return r == 2 ? std::vector<std::string>{text, d.file("b.txt")}
                      : std::vector<std::string>{text};
      },
      st, counts, unitsRun);
  ASSERT_FALSE(st[2]);
  EXPECT_NE(st[2].message().find("rank 2's inputs or options differ from rank 0's"),
            std::string::npos)
      << st[2].message();
  for (int r : {0, 1}) {
    ASSERT_FALSE(st[size_t(r)]);
    EXPECT_NE(st[size_t(r)].message().find("another rank failed to join the directory rank 0 "
                                           "opened"),
              std::string::npos)
        << st[size_t(r)].message();
  }
  EXPECT_FALSE(std::filesystem::exists(d.file("differ/manifest.json")));
}

TEST_F(PreparedDataTest, BadDirectoriesAreOneClearError) {
  TempDir d;
  const std::string text = d.file("a.txt");
  writeText(text, awkwardText(3));
  PreparedCounts counts;
  ASSERT_TRUE(prepare({text}, d.file("out"), 4096, counts));
  PreparedData p;
  // The same command again: nothing to do.
  {
    PrepareOptions o;
    o.inputs = {text};
    o.outDir = d.file("out");
    o.tokenizer = model();
    o.unitBytes = 4096;
    std::vector<std::string> notes;
    o.note = [&](const std::string &n) { notes.push_back(n); };
    ASSERT_TRUE(prepareData(o, counts));
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_NE(notes[0].find("nothing to do"), std::string::npos) << notes[0];
  }
  // Other inputs into it: refused, nothing touched.
  writeText(d.file("b.txt"), "another corpus\n");
  Status st = prepare({d.file("b.txt")}, d.file("out"), 4096, counts);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("holds prepared data that differs from this one"),
            std::string::npos)
      << st.message();
  ASSERT_TRUE(openPreparedData(d.file("out"), p));
  // A directory holding something else.
  std::filesystem::create_directories(d.file("other"));
  writeText(d.file("other/notes.txt"), "mine");
  st = prepare({text}, d.file("other"), 4096, counts);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("not empty and not a prepared-data directory"), std::string::npos)
      << st.message();
  EXPECT_EQ(readText(d.file("other/notes.txt")), "mine");
  // A truncated shard.
  const std::string shard = d.file("out/shard-00001.tok");
  std::filesystem::resize_file(shard, std::filesystem::file_size(shard) - 2);
  st = openPreparedData(d.file("out"), p);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("shard-00001.tok: "), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("the shard is truncated"), std::string::npos) << st.message();
  // A shard changed in place: only the checksums tell.
  std::filesystem::resize_file(shard, std::filesystem::file_size(shard) + 2);
  EXPECT_TRUE(openPreparedData(d.file("out"), p));
  st = verifyPreparedData(d.file("out"));
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("shard-00001.tok: its SHA-256 is not the one"), std::string::npos)
      << st.message();
  // A shard replaced by a link out of the directory.
  std::filesystem::remove(shard);
  std::filesystem::create_symlink(text, shard);
  st = openPreparedData(d.file("out"), p);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a symbolic link: not followed"), std::string::npos)
      << st.message();
}
