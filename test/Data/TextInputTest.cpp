//===- TextInputTest.cpp - Plain, gzip and zstd corpora; expandInputs -----===//

#include "runtime/data/TextInput.h"

#include <gtest/gtest.h>

#include <zlib.h>
#include <zstd.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace xlnetc::rt;
using namespace xlnetc::rt::data;

namespace {

namespace fs = std::filesystem;

/// A fresh directory (mkdtemp), removed with everything in it at the end.
class ScratchDir {
public:
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "xlnet-textinput-XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()))
      path_ = name.data();
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty())
      fs::remove_all(path_, ec); // links are removed, not followed
  }
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  /// The directory; empty when mkdtemp failed.
  const std::string &path() const { return path_; }
  /// `name` inside it.
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

void writeBytes(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// About 3 MB of text: lines of varied length and script, blank lines, a
/// CRLF line, a 1 MB line without a newline in it, no newline at the end.
const std::string &variedText() {
  static const std::string text = [] {
    static const char *words[] = {"the",   "corpus", "naïve", "日本語", "Ελληνικά", "tab\there",
                                  "a",     "xlnet",  "1234",  "—",      "emoji😀",   "segment",
                                  "words", "of",     "text",  "zstd",   "gzip",     "line"};
    std::mt19937 rng(20240611);
    auto word = [&] { return std::string(words[rng() % (sizeof(words) / sizeof(*words))]); };
    std::string s;
    auto addLines = [&](size_t bytes) {
      const size_t stop = s.size() + bytes;
      while (s.size() < stop) {
        const unsigned kind = rng() % 20;
        if (kind == 0) {
          s += "\n"; // a blank line
          continue;
        }
        const unsigned count = kind == 1 ? 200 + rng() % 2000 : 1 + rng() % 30;
        for (unsigned i = 0; i < count; ++i)
          s += (i ? " " : "") + word();
        s += kind == 2 ? "\r\n" : "\n";
      }
    };
    addLines(size_t(1) << 20);
    std::string longLine;
    while (longLine.size() < (size_t(1) << 20))
      longLine += word() + " ";
    s += longLine + "\n";
    addLines(size_t(3) << 19);
    s += "the last line has no newline";
    return s;
  }();
  return text;
}

/// `text` as a gzip file (one member), written with zlib's gzwrite.
std::string gzipBytes(const ScratchDir &dir, const std::string &text) {
  const std::string path = dir.file("fixture.gz.tmp");
  gzFile gz = ::gzopen(path.c_str(), "wb");
  EXPECT_NE(gz, nullptr);
  if (!gz)
    return {};
  for (size_t at = 0; at < text.size(); at += size_t(1) << 20) {
    const size_t chunk = std::min(text.size() - at, size_t(1) << 20);
    EXPECT_EQ(::gzwrite(gz, text.data() + at, unsigned(chunk)), int(chunk));
  }
  EXPECT_EQ(::gzclose(gz), Z_OK);
  std::string bytes = readBytes(path);
  fs::remove(path);
  return bytes;
}

/// `text` as one zstd frame.
std::string zstdBytes(const std::string &text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

/// Reads `input` to the end (or its first error) in reads of cycling small
/// sizes, or in 1 MB reads when `large`.
Status readAll(TextInput &input, std::string &out, bool large) {
  static const size_t smallSizes[] = {1, 2, 3, 5, 8, 13, 64, 100, 511, 4096, 777};
  std::vector<char> buf(size_t(1) << 20);
  out.clear();
  for (size_t i = 0;; ++i) {
    const size_t want = large ? buf.size() : smallSizes[i % (sizeof(smallSizes) / sizeof(*smallSizes))];
    size_t got = 0;
    Status s = input.read(buf.data(), want, got);
    if (!s)
      return s;
    if (got == 0)
      return Status::ok();
    EXPECT_LE(got, want);
    out.append(buf.data(), got);
  }
}

/// Opens `path`, expects `compression`, and reads `text` back both ways.
void expectRoundTrip(const std::string &path, const std::string &text, Compression compression) {
  for (bool large : {false, true}) {
    SCOPED_TRACE(large ? "large reads" : "small reads");
    std::unique_ptr<TextInput> input;
    Status s = TextInput::open(path, input);
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(input->compression(), compression);
    EXPECT_EQ(input->path(), path);
    EXPECT_EQ(input->fileSize(), fs::file_size(path));
    EXPECT_EQ(input->seekable(), compression == Compression::None);
    std::string got;
    s = readAll(*input, got, large);
    ASSERT_TRUE(s) << s.message();
    ASSERT_EQ(got.size(), text.size());
    EXPECT_TRUE(got == text); // not EXPECT_EQ: no 3 MB diff on failure
    EXPECT_EQ(input->offset(), text.size());
    EXPECT_EQ(input->consumed(), input->fileSize());
    // The end stays the end.
    char c;
    size_t n = 1;
    s = input->read(&c, 1, n);
    EXPECT_TRUE(s) << s.message();
    EXPECT_EQ(n, 0u);
  }
}

/// The error reading `path` to the end gives; the bytes before it in
/// `prefix`. Expects exactly one error, returned again by the next read.
std::string readError(const std::string &path, std::string &prefix) {
  std::unique_ptr<TextInput> input;
  Status s = TextInput::open(path, input);
  EXPECT_TRUE(s) << s.message();
  if (!s)
    return s.message();
  s = readAll(*input, prefix, /*large=*/false);
  EXPECT_FALSE(s) << path << " read without an error";
  if (s)
    return "";
  char c;
  size_t got = 7;
  Status again = input->read(&c, 1, got);
  EXPECT_FALSE(again);
  EXPECT_EQ(again.message(), s.message());
  EXPECT_EQ(got, 0u);
  return s.message();
}

bool contains(const std::string &haystack, const std::string &needle) {
  return haystack.find(needle) != std::string::npos;
}

} // namespace

TEST(TextInputTest, PlainRoundTrip) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  ASSERT_GT(text.size(), size_t(2) << 20);
  writeBytes(dir.file("corpus.gz"), text); // the name says gzip: the bytes do not
  expectRoundTrip(dir.file("corpus.gz"), text, Compression::None);
}

TEST(TextInputTest, GzipRoundTrip) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  writeBytes(dir.file("corpus.txt"), gzipBytes(dir, text)); // told by magic, not name
  expectRoundTrip(dir.file("corpus.txt"), text, Compression::Gzip);
}

TEST(TextInputTest, TwoMemberGzipRoundTrip) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const size_t half = text.size() / 2 + 12345;
  writeBytes(dir.file("two.gz"),
             gzipBytes(dir, text.substr(0, half)) + gzipBytes(dir, text.substr(half)));
  expectRoundTrip(dir.file("two.gz"), text, Compression::Gzip);
  // An empty member in between is nothing.
  writeBytes(dir.file("three.gz"), gzipBytes(dir, text.substr(0, half)) + gzipBytes(dir, "") +
                                       gzipBytes(dir, text.substr(half)));
  expectRoundTrip(dir.file("three.gz"), text, Compression::Gzip);
}

TEST(TextInputTest, ZstdRoundTrip) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  writeBytes(dir.file("corpus.zst"), zstdBytes(text));
  expectRoundTrip(dir.file("corpus.zst"), text, Compression::Zstd);
}

TEST(TextInputTest, TwoFrameZstdRoundTrip) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const size_t third = text.size() / 3;
  writeBytes(dir.file("two.zst"), zstdBytes(text.substr(0, third)) + zstdBytes(text.substr(third)));
  expectRoundTrip(dir.file("two.zst"), text, Compression::Zstd);
}

TEST(TextInputTest, EmptyAndShortFilesArePlain) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  for (const std::string &bytes : {std::string(), std::string("\x1f"), std::string("\x28\xb5\x2f"),
                                   std::string("ab\n")}) {
    writeBytes(dir.file("short"), bytes);
    expectRoundTrip(dir.file("short"), bytes, Compression::None);
  }
  // An empty gzip member and an empty zstd frame are no data at all.
  writeBytes(dir.file("empty.gz"), gzipBytes(dir, ""));
  expectRoundTrip(dir.file("empty.gz"), "", Compression::Gzip);
  writeBytes(dir.file("empty.zst"), zstdBytes(""));
  expectRoundTrip(dir.file("empty.zst"), "", Compression::Zstd);
}

TEST(TextInputTest, OpenErrorsNameTheFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::unique_ptr<TextInput> input;
  Status s = TextInput::open(dir.file("missing.txt"), input);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("missing.txt"))) << s.message();
  EXPECT_EQ(input, nullptr);

  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  s = TextInput::open(dir.file("fifo"), input); // must not wait for a writer
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("fifo"))) << s.message();
  EXPECT_TRUE(contains(s.message(), "FIFO")) << s.message();

  s = TextInput::open(dir.path(), input);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), "directory")) << s.message();
}

TEST(TextInputTest, SeekOnPlainFiles) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  writeBytes(dir.file("plain.txt"), text);
  std::unique_ptr<TextInput> input;
  Status s = TextInput::open(dir.file("plain.txt"), input);
  ASSERT_TRUE(s) << s.message();
  ASSERT_TRUE(input->seekable());

  char buf[100];
  size_t got = 0;
  ASSERT_TRUE(input->read(buf, 2, got)); // inside what the magic probe read
  EXPECT_EQ(std::string(buf, got), text.substr(0, got));

  for (uint64_t at : {uint64_t(1000), uint64_t(3), uint64_t(0), uint64_t(text.size() - 10)}) {
    s = input->seek(at);
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(input->offset(), at);
    EXPECT_EQ(input->consumed(), at);
    std::string rest;
    s = readAll(*input, rest, /*large=*/at == 0);
    ASSERT_TRUE(s) << s.message();
    EXPECT_TRUE(rest == text.substr(at)) << "after seek(" << at << ")";
    EXPECT_EQ(input->offset(), text.size());
  }
  ASSERT_TRUE(input->seek(text.size()));
  ASSERT_TRUE(input->read(buf, sizeof(buf), got));
  EXPECT_EQ(got, 0u);
  s = input->seek(text.size() + 1);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("plain.txt"))) << s.message();

  // Compressed files are read in order.
  for (const auto &[name, bytes] : {std::make_pair(std::string("c.gz"), gzipBytes(dir, text)),
                                    std::make_pair(std::string("c.zst"), zstdBytes(text))}) {
    writeBytes(dir.file(name), bytes);
    s = TextInput::open(dir.file(name), input);
    ASSERT_TRUE(s) << s.message();
    EXPECT_FALSE(input->seekable());
    s = input->seek(0);
    ASSERT_FALSE(s);
    EXPECT_TRUE(contains(s.message(), dir.file(name))) << s.message();
    EXPECT_TRUE(contains(s.message(), compressionName(input->compression()))) << s.message();
    // Reading is unharmed by the refusal.
    std::string all;
    ASSERT_TRUE(readAll(*input, all, true));
    EXPECT_TRUE(all == text);
  }
}

TEST(TextInputBufTest, LimitStopsExactlyThere) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  writeBytes(dir.file("c.gz"), gzipBytes(dir, text));
  std::unique_ptr<TextInput> input;
  Status s = TextInput::open(dir.file("c.gz"), input);
  ASSERT_TRUE(s) << s.message();

  const uint64_t limit = 1234567;
  {
    TextInputBuf buf(*input, limit, 1000);
    std::istream in(&buf);
    std::string line, got;
    while (std::getline(in, line)) {
      got += line;
      if (!in.eof())
        got += '\n';
    }
    EXPECT_TRUE(buf.status()) << buf.status().message();
    EXPECT_EQ(buf.remaining(), 0u);
    ASSERT_EQ(got.size(), limit);
    EXPECT_TRUE(got == text.substr(0, limit));
  }
  // The TextInput gave exactly `limit` bytes: the rest follows.
  EXPECT_EQ(input->offset(), limit);
  std::string rest;
  ASSERT_TRUE(readAll(*input, rest, true));
  EXPECT_TRUE(rest == text.substr(limit));

  // No limit, or one past the end: the whole text, line by line.
  for (uint64_t all : {UINT64_MAX, uint64_t(text.size() + 5)}) {
    s = TextInput::open(dir.file("c.gz"), input);
    ASSERT_TRUE(s) << s.message();
    TextInputBuf buf(*input, all);
    std::istream in(&buf);
    std::vector<std::string> lines, expected;
    for (std::string line; std::getline(in, line);)
      lines.push_back(line);
    std::istringstream reference(text);
    for (std::string line; std::getline(reference, line);)
      expected.push_back(line);
    EXPECT_TRUE(buf.status()) << buf.status().message();
    EXPECT_EQ(lines.size(), expected.size());
    EXPECT_TRUE(lines == expected);
    EXPECT_EQ(lines.back(), "the last line has no newline");
  }

  // A limit of 0 is the end at once.
  s = TextInput::open(dir.file("c.gz"), input);
  ASSERT_TRUE(s) << s.message();
  TextInputBuf none(*input, 0);
  std::istream in(&none);
  EXPECT_EQ(in.get(), std::char_traits<char>::eof());
  EXPECT_EQ(input->offset(), 0u);
}

TEST(TextInputBufTest, ReadErrorIsKeptAndTheStreamEnds) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  std::string gz = gzipBytes(dir, text);
  writeBytes(dir.file("cut.gz"), gz.substr(0, gz.size() / 2));
  std::unique_ptr<TextInput> input;
  Status s = TextInput::open(dir.file("cut.gz"), input);
  ASSERT_TRUE(s) << s.message();
  TextInputBuf buf(*input);
  std::istream in(&buf);
  std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_LT(got.size(), text.size());
  EXPECT_TRUE(got == text.substr(0, got.size()));
  ASSERT_FALSE(buf.status());
  EXPECT_TRUE(contains(buf.status().message(), dir.file("cut.gz"))) << buf.status().message();
  EXPECT_TRUE(contains(buf.status().message(), "truncated")) << buf.status().message();
}

TEST(TextInputTest, TruncatedGzipIsOneErrorNamingTheFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const std::string gz = gzipBytes(dir, text);
  // Cut in the data, in the 8-byte trailer, and just after the header.
  for (size_t keep : {gz.size() / 2, gz.size() - 3, size_t(10)}) {
    SCOPED_TRACE(keep);
    const std::string path = dir.file("cut.gz");
    writeBytes(path, gz.substr(0, keep));
    std::string prefix;
    const std::string message = readError(path, prefix);
    EXPECT_TRUE(contains(message, path + ": ")) << message;
    EXPECT_TRUE(contains(message, "ends inside a gzip member")) << message;
    EXPECT_TRUE(contains(message, "truncated")) << message;
    EXPECT_TRUE(contains(message, "at decompressed byte " + std::to_string(prefix.size())))
        << message;
    EXPECT_TRUE(prefix == text.substr(0, prefix.size()));
  }
  // The second member cut short: the first is read whole first.
  const std::string two = gz + gz.substr(0, gz.size() / 3);
  writeBytes(dir.file("two.gz"), two);
  std::string prefix;
  const std::string message = readError(dir.file("two.gz"), prefix);
  EXPECT_TRUE(contains(message, "ends inside a gzip member: truncated")) << message;
  EXPECT_GT(prefix.size(), text.size());
}

TEST(TextInputTest, TruncatedZstdIsOneErrorNamingTheFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const std::string zst = zstdBytes(text);
  for (size_t keep : {zst.size() / 2, zst.size() - 1, size_t(6)}) {
    SCOPED_TRACE(keep);
    const std::string path = dir.file("cut.zst");
    writeBytes(path, zst.substr(0, keep));
    std::string prefix;
    const std::string message = readError(path, prefix);
    EXPECT_TRUE(contains(message, path + ": ")) << message;
    EXPECT_TRUE(contains(message, "ends inside a zstd frame")) << message;
    EXPECT_TRUE(contains(message, "truncated")) << message;
    EXPECT_TRUE(contains(message, "at decompressed byte " + std::to_string(prefix.size())))
        << message;
    EXPECT_TRUE(prefix == text.substr(0, prefix.size()));
  }
}

TEST(TextInputTest, CorruptGzipIsOneErrorNamingTheFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const std::string gz = gzipBytes(dir, text);
  const std::string path = dir.file("bad.gz");

  // The CRC-32 of the trailer: every byte comes out, then the check fails.
  std::string bad = gz;
  bad[bad.size() - 8] ^= 0x55;
  writeBytes(path, bad);
  std::string prefix;
  std::string message = readError(path, prefix);
  EXPECT_TRUE(contains(message, path + ": ")) << message;
  EXPECT_TRUE(contains(message, "corrupt gzip data: incorrect data check")) << message;
  EXPECT_TRUE(prefix == text);

  // Bytes in the middle of the deflate data.
  bad = gz;
  for (size_t i = 0; i < 16; ++i)
    bad[gz.size() / 2 + i] ^= char(0xa5 + i);
  writeBytes(path, bad);
  message = readError(path, prefix);
  EXPECT_TRUE(contains(message, path + ": ")) << message;
  EXPECT_TRUE(contains(message, "gzip")) << message;
  // What came out before the error may be garbage, even longer than text.

  // Bytes after the last member that start no other.
  writeBytes(path, gz + "trailing bytes, not gzip\n");
  message = readError(path, prefix);
  EXPECT_TRUE(contains(message, path + ": ")) << message;
  EXPECT_TRUE(contains(message, "corrupt gzip data")) << message;
  EXPECT_TRUE(contains(message, "at decompressed byte " + std::to_string(text.size()))) << message;
  EXPECT_TRUE(prefix == text);
}

TEST(TextInputTest, CorruptZstdIsOneErrorNamingTheFile) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string &text = variedText();
  const std::string path = dir.file("bad.zst");
  writeBytes(path, zstdBytes(text) + "trailing bytes, not zstd\n");
  std::string prefix;
  const std::string message = readError(path, prefix);
  EXPECT_TRUE(contains(message, path + ": ")) << message;
  EXPECT_TRUE(contains(message, "corrupt zstd data")) << message;
  EXPECT_TRUE(prefix == text);
}

//===----------------------------------------------------------------------===//
// expandInputs
//===----------------------------------------------------------------------===//

namespace {

/// A tree to expand:
///   tree/b.txt  tree/a/x.txt  tree/a/y.gz  tree/a/sub/z.txt  tree/a-b.txt
///   tree/.hidden  tree/.git/config  tree/empty/  tree/fifo (a FIFO)
///   tree/link.txt -> outside/o.txt  tree/linkdir -> outside
///   outside/o.txt
void makeTree(const ScratchDir &dir) {
  for (const char *sub : {"tree", "tree/a", "tree/a/sub", "tree/.git", "tree/empty", "outside"})
    ASSERT_TRUE(fs::create_directory(dir.file(sub))) << sub;
  for (const char *file : {"tree/b.txt", "tree/a/x.txt", "tree/a/y.gz", "tree/a/sub/z.txt",
                           "tree/a-b.txt", "tree/.hidden", "tree/.git/config", "outside/o.txt"})
    writeBytes(dir.file(file), std::string(file) + "\n");
  ASSERT_EQ(::mkfifo(dir.file("tree/fifo").c_str(), 0600), 0);
  fs::create_symlink(dir.file("outside/o.txt"), dir.file("tree/link.txt"));
  fs::create_directory_symlink(dir.file("outside"), dir.file("tree/linkdir"));
}

std::vector<std::string> inTree(const ScratchDir &dir, std::vector<std::string> names) {
  for (std::string &name : names)
    name = dir.file(name);
  return names;
}

} // namespace

TEST(ExpandInputsTest, WalksSortedSkippingDotFilesAndLinks) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files;
  Status s = expandInputs({dir.file("tree")}, files);
  ASSERT_TRUE(s) << s.message();
  // Byte order of the paths: '-' (2d) < '/' (2f).
  EXPECT_EQ(files, inTree(dir, {"tree/a-b.txt", "tree/a/sub/z.txt", "tree/a/x.txt",
                                "tree/a/y.gz", "tree/b.txt"}));

  // A trailing slash is kept as the user wrote it, without doubling.
  s = expandInputs({dir.file("tree/a/")}, files);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(files, inTree(dir, {"tree/a/sub/z.txt", "tree/a/x.txt", "tree/a/y.gz"}));
}

TEST(ExpandInputsTest, NamedFilesAndLinksAreTakenInOrder) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files;
  // Links the user names are followed: a file, and a directory.
  Status s = expandInputs(
      {dir.file("tree/b.txt"), dir.file("tree/link.txt"), dir.file("tree/a/sub")}, files);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(files, inTree(dir, {"tree/b.txt", "tree/link.txt", "tree/a/sub/z.txt"}));

  s = expandInputs({dir.file("tree/linkdir")}, files);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(files, inTree(dir, {"tree/linkdir/o.txt"}));

  s = expandInputs({}, files);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(files.empty());
}

TEST(ExpandInputsTest, FifoNamedDirectlyIsAnError) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files{"untouched"};
  Status s = expandInputs({dir.file("tree/b.txt"), dir.file("tree/fifo")}, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("tree/fifo"))) << s.message();
  EXPECT_TRUE(contains(s.message(), "FIFO")) << s.message();
  EXPECT_EQ(files, std::vector<std::string>{"untouched"}); // set only on success
}

TEST(ExpandInputsTest, EmptyDirectoryIsAnError) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files;
  Status s = expandInputs({dir.file("tree/empty")}, files);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), dir.file("tree/empty") + ": no files in it");
  // Only dot-files, links and FIFOs in it is no files either.
  ASSERT_TRUE(fs::create_directory(dir.file("tree/dots")));
  writeBytes(dir.file("tree/dots/.profile"), "hidden\n");
  fs::create_symlink(dir.file("outside/o.txt"), dir.file("tree/dots/o.txt"));
  ASSERT_EQ(::mkfifo(dir.file("tree/dots/fifo").c_str(), 0600), 0);
  s = expandInputs({dir.file("tree/dots")}, files);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), dir.file("tree/dots") + ": no files in it");
  // A dot-directory the user names is walked: only names inside are skipped.
  s = expandInputs({dir.file("tree/.git")}, files);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(files, inTree(dir, {"tree/.git/config"}));
}

TEST(ExpandInputsTest, MissingInputIsAnError) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files;
  Status s = expandInputs({dir.file("tree"), dir.file("nope.txt")}, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("nope.txt"))) << s.message();
  EXPECT_TRUE(contains(s.message(), "no such file")) << s.message();
}

TEST(ExpandInputsTest, DuplicatesAreAnErrorNamingBothSpellings) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  makeTree(dir);
  std::vector<std::string> files;
  Status s = expandInputs({dir.file("tree"), dir.file("tree/a/../b.txt")}, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("tree/a/../b.txt"))) << s.message();
  EXPECT_TRUE(contains(s.message(), dir.file("tree/b.txt"))) << s.message();

  // A link the user names to a file also reached another way.
  s = expandInputs({dir.file("outside"), dir.file("tree/link.txt")}, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("tree/link.txt"))) << s.message();
  EXPECT_TRUE(contains(s.message(), dir.file("outside/o.txt"))) << s.message();

  // The same directory twice.
  s = expandInputs({dir.file("tree/a"), dir.file("tree/a/sub")}, files);
  ASSERT_FALSE(s);
  EXPECT_TRUE(contains(s.message(), dir.file("tree/a/sub/z.txt"))) << s.message();
}
