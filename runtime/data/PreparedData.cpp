//===- PreparedData.cpp - Corpora tokenized once, read memory-mapped ------===//

#include "runtime/data/PreparedData.h"

#include "runtime/data/TextInput.h"
#include "runtime/device/Sha256.h"
#include "runtime/io/InputFile.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace xlnetc::rt::data {

// The shards are the host's bytes: little-endian, as the format says.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "prepared data is little-endian; this host is not");

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

//===----------------------------------------------------------------------===//
// The shard files
//===----------------------------------------------------------------------===//

/// A shard's tokens file: this 32-byte header, then the packed tokens
/// (little-endian, `width` bytes each). Its count is the rest's size over
/// the width, checked against the manifest's.
constexpr char kTokensMagic[16] = "xlnetc-tokens";
/// A shard's index file: this 16-byte magic, uint32 version, uint32 0,
/// uint64 lines, uint64 documents, then the token offsets (uint64, from
/// the shard's first token) where each line and each document starts.
constexpr char kIndexMagic[16] = "xlnetc-index";
constexpr uint32_t kShardVersion = 1;
constexpr size_t kHeaderBytes = 32, kIndexHeaderBytes = 40;

std::string tokensHeader(int width) {
  std::string h(kHeaderBytes, '\0');
  std::memcpy(h.data(), kTokensMagic, sizeof kTokensMagic);
  const uint32_t version = kShardVersion, w = uint32_t(width);
  std::memcpy(h.data() + 16, &version, 4);
  std::memcpy(h.data() + 20, &w, 4);
  return h;
}

std::string shardName(size_t unit) { return fmt::format("shard-{:05d}", unit); }

std::string errnoText() { return std::strerror(errno); }

/// A file of the directory `dirFd`, opened without following a link.
class DirFile {
public:
  ~DirFile() { close(); }
  int fd = -1;
  void close() {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
};

/// Writes `name` (a new file: a stale one is removed first, never written
/// through a link) in `dirFd`, in blocks, hashing what it writes.
class ShardWriter {
public:
  ShardWriter(int dirFd, std::string dir, std::string name)
      : dirFd_(dirFd), dir_(std::move(dir)), name_(std::move(name)) {}
  ~ShardWriter() {
    if (file_.fd >= 0) { // not finished: nothing half-written stays
      file_.close();
      ::unlinkat(dirFd_, name_.c_str(), 0);
    }
  }

  Status open() {
    ::unlinkat(dirFd_, name_.c_str(), 0);
    file_.fd = ::openat(dirFd_, name_.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (file_.fd < 0)
      return Status::error(fmt::format("{}/{}: cannot create: {}", dir_, name_, errnoText()));
    return Status::ok();
  }
  Status write(const void *data, size_t n) {
    sha_.update(data, n);
    buffer_.append(static_cast<const char *>(data), n);
    bytes_ += n;
    return buffer_.size() >= (size_t(1) << 20) ? flush() : Status::ok();
  }
  /// Flushes, syncs and closes; then renames to `finalName`.
  Status finish(const std::string &finalName) {
    XLNETC_RETURN_IF_ERROR(flush());
    if (::fsync(file_.fd) != 0)
      return Status::error(fmt::format("{}/{}: cannot sync: {}", dir_, name_, errnoText()));
    file_.close();
    if (::renameat(dirFd_, name_.c_str(), dirFd_, finalName.c_str()) != 0) {
      const std::string why = errnoText();
      ::unlinkat(dirFd_, name_.c_str(), 0);
      return Status::error(fmt::format("{}/{}: cannot rename: {}", dir_, finalName, why));
    }
    return Status::ok();
  }
  std::string sha256() const { return sha_.hexDigest(); }
  uint64_t bytes() const { return bytes_; }

private:
  Status flush() {
    size_t done = 0;
    while (done < buffer_.size()) {
      const ssize_t n = ::write(file_.fd, buffer_.data() + done, buffer_.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return Status::error(fmt::format("{}/{}: cannot write: {}", dir_, name_,
                                         n < 0 ? errnoText() : std::string("no progress")));
      done += size_t(n);
    }
    buffer_.clear();
    return Status::ok();
  }

  int dirFd_;
  std::string dir_, name_;
  DirFile file_;
  Sha256 sha_;
  std::string buffer_;
  uint64_t bytes_ = 0;
};

/// The SHA-256 of what is left to read of `fd` (named `where` in
/// messages), in blocks: never the whole file in memory.
Status sha256Of(int fd, const std::string &where, std::string &hex) {
  Sha256 sha;
  std::vector<char> block(size_t(1) << 20);
  for (;;) {
    const ssize_t n = ::read(fd, block.data(), block.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return Status::error(fmt::format("{}: read error: {}", where, errnoText()));
    if (n == 0)
      break;
    sha.update(block.data(), size_t(n));
  }
  hex = sha.hexDigest();
  return Status::ok();
}

/// Writes `text` to `name` in `dirFd` through a temporary file renamed in.
Status writeSmallFile(int dirFd, const std::string &dir, const std::string &name,
                      const std::string &text) {
  ShardWriter w(dirFd, dir, "." + name + ".partial");
  XLNETC_RETURN_IF_ERROR(w.open());
  XLNETC_RETURN_IF_ERROR(w.write(text.data(), text.size()));
  return w.finish(name);
}

bool existsIn(int dirFd, const std::string &name) {
  struct stat st;
  return ::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

//===----------------------------------------------------------------------===//
// The plan: inputs and units
//===----------------------------------------------------------------------===//

struct InputFileInfo {
  std::string path;
  int64_t size = 0, mtimeNs = 0;
  Compression compression = Compression::None;
};

struct Unit {
  size_t input = 0;
  int64_t begin = 0, end = 0; // bytes of the input (the whole file when compressed)
};

/// What a unit made (its JSON file).
struct UnitResult {
  int64_t count = 0, lines = 0, documents = 0, textTokens = 0;
  bool hasTokens = false, firstFlag = false, lastFlag = false; // stored (from "true")
  bool endSentId = true; // the next line's flag after the unit, from "true"
  StreamDigest digest;
  std::string tokensSha, indexSha;
  int64_t tokensBytes = 0, indexBytes = 0;
};

std::string hex64(uint64_t v) { return fmt::format("{:016x}", v); }

/// JSON text that never throws: bytes that are not UTF-8 (a file name can
/// hold any) are written as U+FFFD.
std::string dumpJson(const json &j, int indent = 1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}
uint64_t parseHex64(const std::string &s) { return std::stoull(s, nullptr, 16); }

json unitJson(size_t index, const Unit &u, const UnitResult &r) {
  return {{"shard", shardName(index)},
          {"input", u.input},
          {"begin", u.begin},
          {"end", u.end},
          {"tokens", r.count},
          {"lines", r.lines},
          {"documents", r.documents},
          {"text_tokens", r.textTokens},
          {"has_tokens", r.hasTokens},
          {"first_flag", r.firstFlag},
          {"last_flag", r.lastFlag},
          {"end_sent_id", r.endSentId},
          {"digest", {{"hash", hex64(r.digest.hash)}, {"flag_part", hex64(r.digest.flagPart)}}},
          {"sha256", {{"tokens", r.tokensSha}, {"index", r.indexSha}}},
          {"bytes", {{"tokens", r.tokensBytes}, {"index", r.indexBytes}}}};
}

/// Reads a unit's JSON back; false when it is not one (a damaged file is
/// redone, not trusted).
bool parseUnitJson(const json &j, UnitResult &r) {
  try {
    r.count = j.at("tokens").get<int64_t>();
    r.lines = j.at("lines").get<int64_t>();
    r.documents = j.at("documents").get<int64_t>();
    r.textTokens = j.at("text_tokens").get<int64_t>();
    r.hasTokens = j.at("has_tokens").get<bool>();
    r.firstFlag = j.at("first_flag").get<bool>();
    r.lastFlag = j.at("last_flag").get<bool>();
    r.endSentId = j.at("end_sent_id").get<bool>();
    r.digest.hash = parseHex64(j.at("digest").at("hash").get<std::string>());
    r.digest.flagPart = parseHex64(j.at("digest").at("flag_part").get<std::string>());
    r.digest.count = r.count;
    r.tokensSha = j.at("sha256").at("tokens").get<std::string>();
    r.indexSha = j.at("sha256").at("index").get<std::string>();
    r.tokensBytes = j.at("bytes").at("tokens").get<int64_t>();
    r.indexBytes = j.at("bytes").at("index").get<int64_t>();
    return true;
  } catch (const std::exception &) {
    return false;
  }
}

/// Cuts `file` into units of about `unitBytes`, each starting at a line.
Status planUnits(const InputFileInfo &file, size_t index, int64_t unitBytes,
                 std::vector<Unit> &units) {
  if (file.compression != Compression::None || file.size <= unitBytes) {
    units.push_back({index, 0, file.size});
    return Status::ok();
  }
  int fd = -1;
  XLNETC_RETURN_IF_ERROR(openInputFile(file.path, fd));
  DirFile guard;
  guard.fd = fd;
  int64_t begin = 0;
  char block[1 << 16];
  while (begin < file.size) {
    int64_t cut = begin + unitBytes;
    // The next line start at or after cut.
    while (cut < file.size) {
      const ssize_t n = ::pread(fd, block, sizeof block, cut);
      if (n <= 0)
        return Status::error(fmt::format("{}: read error at byte {}: {}", file.path, cut,
                                         n < 0 ? errnoText() : std::string("end of file")));
      const void *nl = std::memchr(block, '\n', size_t(n));
      if (nl) {
        cut += static_cast<const char *>(nl) - block + 1;
        break;
      }
      cut += n;
    }
    cut = std::min(cut, file.size);
    units.push_back({index, begin, cut});
    begin = cut;
  }
  return Status::ok();
}

/// Whether the line before byte `begin` (a line start) of `path` is not
/// blank: the unit then starts inside a document.
Status previousLineInDocument(const std::string &path, int64_t begin, bool &inDocument) {
  inDocument = false;
  if (begin == 0)
    return Status::ok();
  int fd = -1;
  XLNETC_RETURN_IF_ERROR(openInputFile(path, fd));
  DirFile guard;
  guard.fd = fd;
  // Backwards from the newline that ends the previous line.
  int64_t at = begin - 1;
  char block[4096];
  while (at > 0) {
    const int64_t from = std::max<int64_t>(0, at - int64_t(sizeof block));
    const ssize_t n = ::pread(fd, block, size_t(at - from), from);
    if (n != at - from)
      return Status::error(fmt::format("{}: read error before byte {}", path, begin));
    for (int64_t k = n - 1; k >= 0; --k) {
      const char c = block[k];
      if (c == '\n')
        return Status::ok(); // the previous line was blank
      if (!(c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f')) {
        inDocument = true;
        return Status::ok();
      }
    }
    at = from;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// One unit
//===----------------------------------------------------------------------===//

struct UnitJob {
  int dirFd;
  std::string dir;
  const Tokenizer *tokenizer;
  CorpusOptions corpus;
  int width;
  int64_t vocabSize;
};

/// The index of a shard: its header, then where each line and each
/// document starts.
Status writeIndex(ShardWriter &file, const std::vector<uint64_t> &lineStarts,
                  const std::vector<uint64_t> &documentStarts) {
  XLNETC_RETURN_IF_ERROR(file.open());
  std::string header(kIndexHeaderBytes, '\0');
  std::memcpy(header.data(), kIndexMagic, sizeof kIndexMagic);
  const uint32_t version = kShardVersion;
  const uint64_t nLines = lineStarts.size(), nDocs = documentStarts.size();
  std::memcpy(header.data() + 16, &version, 4);
  std::memcpy(header.data() + 24, &nLines, 8);
  std::memcpy(header.data() + 32, &nDocs, 8);
  XLNETC_RETURN_IF_ERROR(file.write(header.data(), header.size()));
  XLNETC_RETURN_IF_ERROR(file.write(lineStarts.data(), lineStarts.size() * 8));
  return file.write(documentStarts.data(), documentStarts.size() * 8);
}

/// Runs the _create_data loop over unit `index` and writes its shard and
/// its JSON. `tokensDone` grows as it goes (progress).
Status runUnit(const UnitJob &job, size_t index, const Unit &unit, const InputFileInfo &file,
               std::atomic<int64_t> &tokensDone, std::atomic<bool> &stop,
               UnitResult &r) {
  const std::string name = shardName(index);
  LineState state;
  XLNETC_RETURN_IF_ERROR(previousLineInDocument(file.path, unit.begin, state.inDocument));
  std::unique_ptr<TextInput> input;
  XLNETC_RETURN_IF_ERROR(TextInput::open(file.path, input));
  if (unit.begin > 0)
    XLNETC_RETURN_IF_ERROR(input->seek(uint64_t(unit.begin)));
  TextInputBuf buf(*input, file.compression == Compression::None
                               ? uint64_t(unit.end - unit.begin)
                               : UINT64_MAX);
  std::istream in(&buf);

  ShardWriter tokens(job.dirFd, job.dir, "." + name + ".tok.partial");
  XLNETC_RETURN_IF_ERROR(tokens.open());
  const std::string header = tokensHeader(job.width);
  XLNETC_RETURN_IF_ERROR(tokens.write(header.data(), header.size()));
  std::vector<uint64_t> lineStarts, documentStarts;
  std::vector<uint16_t> packed16;
  std::vector<uint32_t> packed32;
  const std::string where =
      unit.begin > 0 ? fmt::format("{} (from byte {}, line", file.path, unit.begin)
                     : fmt::format("{} (line", file.path);
  LineEncoder encode = [&](const std::string &line, int64_t lineNo,
                           std::vector<int64_t> &ids) -> Status {
    if (stop.load(std::memory_order_relaxed))
      return Status::error("stopped");
    return job.tokenizer->encode(line, ids, job.corpus.uncased, job.corpus.keepAccents)
        .withPrefix(fmt::format("{} {}): ", where, lineNo));
  };
  TokenSink sink = [&](const TokenRun &run) -> Status {
    if (run.lineStart)
      lineStarts.push_back(uint64_t(r.count));
    if (run.documentStart)
      documentStarts.push_back(uint64_t(r.count));
    packed16.clear();
    packed32.clear();
    for (int64_t id : run.ids) {
      if (id < 0 || id >= job.vocabSize)
        return Status::error(fmt::format("{} {}): token id {} is outside the vocabulary [0, {})",
                                         where, run.lineNo, id, job.vocabSize));
      r.digest.add(id, run.flag);
      const uint32_t v = packToken(id, run.flag, job.width);
      if (job.width == 2)
        packed16.push_back(uint16_t(v));
      else
        packed32.push_back(v);
    }
    if (!r.hasTokens)
      r.firstFlag = run.flag != 0;
    r.hasTokens = true;
    r.lastFlag = run.flag != 0;
    r.count += int64_t(run.ids.size());
    tokensDone.fetch_add(int64_t(run.ids.size()), std::memory_order_relaxed);
    return job.width == 2 ? tokens.write(packed16.data(), packed16.size() * 2)
                          : tokens.write(packed32.data(), packed32.size() * 4);
  };
  LineCounts counts;
  Status st = readLines(in, file.path, 1, job.corpus, encode, sink, state, counts);
  XLNETC_RETURN_IF_ERROR(buf.status()); // a decompression error ends the stream early
  XLNETC_RETURN_IF_ERROR(st);
  r.lines = counts.lines;
  r.documents = counts.documents;
  r.textTokens = counts.textTokens;
  r.endSentId = state.sentId;

  // The index, then both files in place, then the unit's JSON: a unit
  // whose JSON is there is done.
  ShardWriter indexFile(job.dirFd, job.dir, "." + name + ".idx.partial");
  XLNETC_RETURN_IF_ERROR(writeIndex(indexFile, lineStarts, documentStarts));
  r.tokensSha = tokens.sha256();
  r.indexSha = indexFile.sha256();
  r.tokensBytes = int64_t(tokens.bytes());
  r.indexBytes = int64_t(indexFile.bytes());
  XLNETC_RETURN_IF_ERROR(tokens.finish(name + ".tok"));
  XLNETC_RETURN_IF_ERROR(indexFile.finish(name + ".idx"));
  return writeSmallFile(job.dirFd, job.dir, name + ".json", dumpJson(unitJson(index, unit, r)));
}

//===----------------------------------------------------------------------===//
// The directory
//===----------------------------------------------------------------------===//

/// Opens (creating it if missing) the output directory, never through a
/// link; refuses one that holds other things than a preparation.
Status openOutputDir(const std::string &dir, int &fd, bool &hasPlan, bool &hasManifest) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(dir, ec)) && !fs::create_directories(dir, ec) && ec)
    return Status::error(fmt::format("{}: cannot create the directory: {}", dir, ec.message()));
  fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return Status::error(fmt::format(
        "{}: {}", dir,
        errno == ELOOP || errno == ENOTDIR
            ? "not a directory (or a symbolic link: prepare-data does not write through one)"
            : errnoText()));
  // One preparation at a time writes here (the lock goes with the
  // descriptor).
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    return Status::error(fmt::format("{}: another prepare-data is writing there (it holds "
                                     "the directory's lock)",
                                     dir));
  hasPlan = existsIn(fd, kPreparedPlan);
  hasManifest = existsIn(fd, kPreparedManifest);
  // Ours: a plan or manifest of this format; or only what a preparation
  // leaves before it writes its plan (the tokenizer, its sample, partials).
  for (const char *name : {kPreparedPlan, kPreparedManifest}) {
    std::string text;
    if (!existsIn(fd, name))
      continue;
    const json j = readFileInside(dir, name, text) ? json::parse(text, nullptr, false) : json();
    if (!j.is_object() || !j.contains("format") || j["format"] != kPreparedFormat)
      return Status::error(fmt::format(
          "{}/{}: not one prepare-data wrote: not writing in {}", dir, name, dir));
  }
  if (hasPlan || hasManifest)
    return Status::ok();
  for (const auto &entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name == kPreparedTokenizer || name == ".sample.txt" || name == ".spiece-train" ||
        (name[0] == '.' && name.size() > 8 && name.compare(name.size() - 8, 8, ".partial") == 0))
      continue;
    return Status::error(fmt::format(
        "{}: not empty and not a prepared-data directory ({} is in it): not writing there",
        dir, name));
  }
  return Status::ok();
}

/// The tokenizer's model: --tokenizer's (`copy`: to be copied into the
/// directory once the plan allows), the one an earlier run of this
/// preparation kept or trained, or one trained on a sample now.
Status chooseTokenizer(const PrepareOptions &o, int dirFd, const std::vector<InputFileInfo> &files,
                       std::string &model, bool &copy) {
  copy = false;
  if (!o.tokenizer.empty()) {
    XLNETC_RETURN_IF_ERROR(readInputFile(o.tokenizer, model));
    copy = true;
    return Status::ok();
  }
  if (existsIn(dirFd, kPreparedTokenizer))
    return readFileInside(o.outDir, kPreparedTokenizer, model);
  // A sample: the first sampleBytes of the inputs, whole lines.
  {
    ShardWriter w(dirFd, o.outDir, ".sample.txt.partial");
    XLNETC_RETURN_IF_ERROR(w.open());
    int64_t left = o.sampleBytes;
    // Lines past this are skipped: SentencePiece's trainer skips any line
    // over 4192 bytes, and memory stays bounded.
    std::vector<char> line(size_t(1) << 16);
    for (const InputFileInfo &f : files) {
      std::unique_ptr<TextInput> in;
      XLNETC_RETURN_IF_ERROR(TextInput::open(f.path, in));
      TextInputBuf buf(*in);
      std::istream s(&buf);
      while (left > 0) {
        if (!s.getline(line.data(), std::streamsize(line.size()))) {
          if (s.eof())
            break;
          s.clear(); // a longer line: skipped
          s.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
          continue;
        }
        const size_t n = std::strlen(line.data()); // the last line may have no newline
        line[n] = '\n';
        XLNETC_RETURN_IF_ERROR(w.write(line.data(), n + 1));
        left -= int64_t(n + 1);
      }
      XLNETC_RETURN_IF_ERROR(buf.status());
      if (left <= 0)
        break;
    }
    XLNETC_RETURN_IF_ERROR(w.finish(".sample.txt"));
  }
  const std::string kept = (fs::path(o.outDir) / kPreparedTokenizer).string();
  if (o.note)
    o.note(fmt::format("no --tokenizer: training a SentencePiece unigram model (vocab {}) on "
                       "the first {} MiB of the inputs -> {}",
                       o.vocabSize, o.sampleBytes >> 20, kept));
  const std::string scratch = (fs::path(o.outDir) / ".spiece-train").string();
  std::error_code ec;
  fs::remove_all(scratch, ec);
  fs::create_directory(scratch, ec);
  Status st = trainTokenizer((fs::path(o.outDir) / ".sample.txt").string(), o.vocabSize,
                             scratch + "/spiece");
  ::unlinkat(dirFd, ".sample.txt", 0);
  if (st)
    st = readInputFile(scratch + "/spiece.model", model);
  if (st)
    st = writeSmallFile(dirFd, o.outDir, kPreparedTokenizer, model);
  fs::remove_all(scratch, ec);
  return st;
}

json planJson(const std::vector<InputFileInfo> &files, const std::vector<Unit> &units,
              const PrepareOptions &o, const std::string &tokenizerSha, int64_t vocab,
              int width) {
  json inputs = json::array(), us = json::array();
  for (const InputFileInfo &f : files)
    inputs.push_back({{"path", f.path},
                      {"size", f.size},
                      {"mtime_ns", f.mtimeNs},
                      {"compression", compressionName(f.compression)}});
  for (const Unit &u : units)
    us.push_back({u.input, u.begin, u.end});
  return {{"format", kPreparedFormat},
          {"version", kPreparedVersion},
          {"inputs", inputs},
          {"units", us},
          {"options", {{"use_eod", o.corpus.useEod}, {"keep_accents", o.corpus.keepAccents},
                       {"uncased", o.corpus.uncased}}},
          {"tokenizer", {{"sha256", tokenizerSha}, {"vocab_size", vocab}}},
          {"token_bytes", width}};
}

/// Why `old` (the plan an earlier run wrote) is not `now`'s, or "".
std::string planDifference(const json &old, const json &now) {
  if (!old.is_object() || old.value("format", "") != kPreparedFormat)
    return "its files are not ones prepare-data wrote";
  auto field = [](const json &j, const char *key) { return j.value(key, json()); };
  const json a = field(old, "inputs"), b = field(now, "inputs");
  if (a != b) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      if (a[i] != b[i])
        return a[i].value("path", "") == b[i].value("path", "")
                   ? fmt::format("{} changed since it was prepared from (size {} then, {} now; "
                                 "or modified since)",
                                 b[i].value("path", ""), a[i].value("size", int64_t(0)),
                                 b[i].value("size", int64_t(0)))
                   : fmt::format("its input {} is {}, not {}", i + 1, a[i].value("path", ""),
                                 b[i].value("path", ""));
    return fmt::format("it holds {} input files, not {}", a.size(), b.size());
  }
  if (field(old, "options") != field(now, "options"))
    return fmt::format("it was made with options {}, not {}", dumpJson(field(old, "options"), -1),
                       dumpJson(field(now, "options"), -1));
  if (field(old, "tokenizer") != field(now, "tokenizer"))
    return "it was made with another tokenizer";
  if (field(old, "units") != field(now, "units"))
    return "its units differ (another --unit-mb)";
  return "";
}

/// Joins the units into the manifest (the official concatenation of files:
/// flags run on within a file; a file whose first flag equals the last
/// one before it is flipped).
json manifestJson(const json &plan, const std::vector<InputFileInfo> &files,
                  const std::vector<Unit> &units, const std::vector<UnitResult> &results,
                  PreparedCounts &counts, StreamDigest &digest) {
  json shards = json::array();
  std::vector<bool> invert(units.size());
  bool havePrev = false, prevLast = false;
  for (size_t u = 0; u < units.size();) {
    const size_t input = units[u].input;
    size_t end = u;
    std::vector<bool> within;
    bool start = true;
    for (; end < units.size() && units[end].input == input; ++end) {
      within.push_back(!start); // stored from "true"
      start = start == results[end].endSentId; // the next unit's first flag
    }
    bool flipFile = false;
    for (size_t k = u; k < end; ++k)
      if (results[k].hasTokens) {
        const bool first = results[k].firstFlag != within[k - u];
        flipFile = havePrev && first == prevLast;
        break;
      }
    for (size_t k = u; k < end; ++k) {
      invert[k] = within[k - u] != flipFile;
      if (results[k].hasTokens) {
        havePrev = true;
        prevLast = results[k].lastFlag != invert[k];
      }
    }
    u = end;
  }
  for (size_t k = 0; k < units.size(); ++k) {
    const UnitResult &r = results[k];
    digest.append(r.digest, invert[k]);
    counts.tokens += r.count;
    counts.lines += r.lines;
    counts.documents += r.documents;
    shards.push_back({{"tokens", shardName(k) + ".tok"},
                      {"index", shardName(k) + ".idx"},
                      {"count", r.count},
                      {"invert", bool(invert[k])},
                      {"input", units[k].input},
                      {"begin", units[k].begin},
                      {"end", units[k].end},
                      {"sha256", {{"tokens", r.tokensSha}, {"index", r.indexSha}}},
                      {"bytes", {{"tokens", r.tokensBytes}, {"index", r.indexBytes}}}});
  }
  counts.shards = int64_t(units.size());
  for (const InputFileInfo &f : files)
    counts.inputBytes += f.size;
  json m = plan;
  m.erase("units");
  m["shards"] = shards;
  m["counts"] = {{"tokens", counts.tokens},   {"lines", counts.lines},
                 {"documents", counts.documents}, {"shards", counts.shards},
                 {"input_bytes", counts.inputBytes}};
  m["digest"] = {{"count", digest.count}, {"hash", hex64(digest.hash)},
                 {"flag_part", hex64(digest.flagPart)}};
  return m;
}

} // namespace

bool isPreparedDataDir(const std::string &path) {
  std::error_code ec;
  return fs::is_directory(path, ec) &&
         (fs::exists(fs::path(path) / kPreparedManifest, ec) ||
          fs::exists(fs::path(path) / kPreparedPlan, ec));
}

Status fileSha256(const std::string &path, std::string &hex) {
  int fd = -1;
  XLNETC_RETURN_IF_ERROR(openInputFile(path, fd));
  DirFile guard;
  guard.fd = fd;
  return sha256Of(fd, path, hex);
}

namespace {

/// One run of prepareData, phase by phase.
class Preparation {
public:
  explicit Preparation(const PrepareOptions &o) : o(o) {}

  /// 1. The inputs and their units.
  Status planInputs();
  /// 2. The directory, the tokenizer, the plan (or the earlier run's).
  /// `finished`: the directory already holds these inputs prepared.
  /// `join` (the other ranks of an MPI job): rank 0 opened it and holds its
  /// lock; only read what it wrote and check it is this rank's plan too.
  Status openDirectory(bool join, bool &finished, PreparedCounts &counts);
  /// 3. The units an earlier run finished; the rest to do. `say`: note a
  /// resumption.
  void findUnitsDone(bool say);
  /// Of the rest, only this rank's share.
  void keepShare(int rank, int ranks);
  /// An error when units are left to do.
  Status checkAllDone() const;
  /// A hash of the units left to do.
  uint64_t todoHash() const {
    uint64_t h = todo.size();
    for (size_t u : todo)
      h = h * 0x100000001b3ull ^ (uint64_t(u) + 1);
    return h;
  }
  /// 4. The units to do, on every core, with progress.
  Status runUnits();
  /// 5. The manifest, last; the plan and the units' files go.
  Status writeManifest(PreparedCounts &counts);

private:
  const PrepareOptions &o;
  std::vector<InputFileInfo> files;
  std::vector<Unit> units;
  DirFile dir;
  bool hasPlan = false;
  Tokenizer tokenizer;
  int64_t vocab = 0;
  int width = 0;
  json plan;
  std::vector<UnitResult> results;
  std::vector<size_t> todo;
  int64_t bytesResumed = 0, unitsResumed = 0; // done before this run
};

Status Preparation::planInputs() {
  std::vector<std::string> paths;
  XLNETC_RETURN_IF_ERROR(expandInputs(o.inputs, paths));
  // The output directory inside an input directory: its files are no
  // inputs (a rerun would find the shards of the first).
  std::error_code ec;
  const fs::path out = fs::weakly_canonical(o.outDir, ec);
  std::vector<std::string> kept;
  for (const std::string &p : paths) {
    const fs::path in = fs::weakly_canonical(p, ec);
    const auto [o_end, i_end] = std::mismatch(out.begin(), out.end(), in.begin(), in.end());
    if (!out.empty() && o_end == out.end())
      continue;
    kept.push_back(p);
  }
  if (kept.empty())
    return Status::error(fmt::format("no input files outside {}", o.outDir));
  paths = std::move(kept);
  for (const std::string &p : paths) {
    std::unique_ptr<TextInput> in;
    XLNETC_RETURN_IF_ERROR(TextInput::open(p, in));
    struct stat st;
    if (::stat(p.c_str(), &st) != 0)
      return Status::error(fmt::format("{}: {}", p, errnoText()));
    files.push_back({p, int64_t(in->fileSize()),
                     int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                     in->compression()});
  }
  if (o.unitBytes < 1)
    return Status::error("the unit size must be positive");
  for (size_t i = 0; i < files.size(); ++i)
    XLNETC_RETURN_IF_ERROR(planUnits(files[i], i, o.unitBytes, units));
  return Status::ok();
}

Status Preparation::openDirectory(bool join, bool &finished, PreparedCounts &counts) {
  finished = false;
  bool hasManifest = false;
  std::string model;
  bool copyModel = false;
  if (!join) {
    XLNETC_RETURN_IF_ERROR(openOutputDir(o.outDir, dir.fd, hasPlan, hasManifest));
    XLNETC_RETURN_IF_ERROR(chooseTokenizer(o, dir.fd, files, model, copyModel));
  } else {
    dir.fd = ::open(o.outDir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir.fd < 0)
      return Status::error(fmt::format("{}: {} (rank 0 opened it: does this rank see the same "
                                       "file system?)",
                                       o.outDir, errnoText()));
    hasPlan = existsIn(dir.fd, kPreparedPlan);
    hasManifest = existsIn(dir.fd, kPreparedManifest);
    if (!hasPlan && !hasManifest)
      return Status::error(fmt::format("{}: holds no {} after rank 0 wrote it: does this rank "
                                       "see the same file system?",
                                       o.outDir, kPreparedPlan));
    XLNETC_RETURN_IF_ERROR(readFileInside(o.outDir, kPreparedTokenizer, model));
  }
  XLNETC_RETURN_IF_ERROR(Tokenizer::load(
      copyModel ? o.tokenizer : (fs::path(o.outDir) / kPreparedTokenizer).string(), tokenizer));
  vocab = tokenizer.vocabSize();
  width = tokenWidthFor(vocab);
  plan = planJson(files, units, o, Sha256::hexHash(model), vocab, width);
  // A finished preparation of the same inputs is left as it is; anything
  // else there is not overwritten.
  for (const char *kept : {kPreparedManifest, kPreparedPlan}) {
    if (!(kept == kPreparedManifest ? hasManifest : hasPlan))
      continue;
    std::string text;
    XLNETC_RETURN_IF_ERROR(readFileInside(o.outDir, kept, text));
    json old = json::parse(text, nullptr, false);
    json now = plan;
    if (kept == kPreparedManifest && old.is_object())
      now.erase("units"), old.erase("shards");
    std::string why;
    try {
      why = planDifference(old, now);
    } catch (const std::exception &) {
      why = fmt::format("its {} is damaged", kept);
    }
    if (!why.empty() && join)
      return Status::error(fmt::format("{}: rank {}'s inputs or options differ from rank 0's: "
                                       "{}",
                                       o.outDir, o.rank, why));
    if (!why.empty())
      return Status::error(fmt::format(
          "{}: holds {} that differs from this one: {}; prepare into another --out (or "
          "remove it)",
          o.outDir, kept == kPreparedManifest ? "prepared data" : "an unfinished preparation",
          why));
    if (kept == kPreparedManifest) {
      PreparedData done;
      XLNETC_RETURN_IF_ERROR(openPreparedData(o.outDir, done));
      if (o.note && !join)
        o.note(fmt::format("{} already holds these inputs prepared: nothing to do", o.outDir));
      counts = done.counts;
      finished = true;
      return Status::ok();
    }
  }
  if (join)
    return Status::ok();
  if (copyModel)
    XLNETC_RETURN_IF_ERROR(writeSmallFile(dir.fd, o.outDir, kPreparedTokenizer, model));
  if (!hasPlan)
    XLNETC_RETURN_IF_ERROR(writeSmallFile(dir.fd, o.outDir, kPreparedPlan, dumpJson(plan)));
  return Status::ok();
}

void Preparation::findUnitsDone(bool say) {
  results.assign(units.size(), UnitResult());
  todo.clear();
  bytesResumed = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    std::string text;
    const std::string name = shardName(u);
    // Done: its JSON read back, its two files there at the sizes it says
    // (a damaged one is redone).
    if (existsIn(dir.fd, name + ".json") && readFileInside(o.outDir, name + ".json", text) &&
        parseUnitJson(json::parse(text, nullptr, false), results[u])) {
      struct stat t, x;
      if (::fstatat(dir.fd, (name + ".tok").c_str(), &t, AT_SYMLINK_NOFOLLOW) == 0 &&
          ::fstatat(dir.fd, (name + ".idx").c_str(), &x, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISREG(t.st_mode) && S_ISREG(x.st_mode) && t.st_size == results[u].tokensBytes &&
          x.st_size == results[u].indexBytes) {
        bytesResumed += units[u].end - units[u].begin;
        continue;
      }
    }
    results[u] = UnitResult();
    todo.push_back(u);
  }
  unitsResumed = int64_t(units.size() - todo.size());
  if (say && hasPlan && o.note)
    o.note(fmt::format("resuming: {} of {} units done before", unitsResumed, units.size()));
}

void Preparation::keepShare(int rank, int ranks) {
  std::vector<size_t> mine;
  for (size_t k = size_t(rank); k < todo.size(); k += size_t(ranks))
    mine.push_back(todo[k]);
  todo = std::move(mine);
}

Status Preparation::runUnits() {
  const int threads = std::max(
      1, std::min(int(todo.size()),
                  o.threads > 0 ? o.threads : int(std::thread::hardware_concurrency())));
  const UnitJob job{dir.fd, o.outDir, &tokenizer, o.corpus, width, vocab};
  std::atomic<size_t> next{0};
  std::atomic<int64_t> tokensDone{0}, bytesDone{bytesResumed}, unitsDone{0};
  std::atomic<bool> stop{false};
  std::mutex errorMutex;
  Status firstError = Status::ok();
  auto failWith = [&](Status st) {
    std::lock_guard<std::mutex> lock(errorMutex);
    if (firstError && st.message() != "stopped")
      firstError = std::move(st);
    stop = true;
  };
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1)) < todo.size() && !stop.load();) {
      const size_t u = todo[k];
      if (Status st = runUnit(job, u, units[u], files[units[u].input], tokensDone, stop,
                              results[u]);
          !st)
        return failWith(st);
      bytesDone += units[u].end - units[u].begin;
      if (++unitsDone == o.stopAfterUnits)
        return failWith(Status::error(fmt::format(
            "{}: interrupted after {} units (XLNETC_FAULT_PREPARE_UNITS, a test hook)",
            o.outDir, o.stopAfterUnits)));
    }
  };
  // Nothing thrown in a worker (out of memory, a library) escapes its
  // thread: it is the preparation's error.
  auto worker = [&] {
    try {
      work();
    } catch (const std::exception &e) {
      failWith(Status::error(fmt::format("{}: {}", o.outDir, e.what())));
    }
  };
  const auto start = std::chrono::steady_clock::now();
  // This rank's share: the units done before and the ones it does.
  int64_t totalBytes = bytesResumed;
  for (size_t u : todo)
    totalBytes += units[u].end - units[u].begin;
  auto report = [&] {
    if (!o.progress)
      return;
    PrepareProgress p;
    p.bytesDone = bytesDone;
    p.bytesResumed = bytesResumed;
    p.bytesTotal = totalBytes;
    p.tokens = tokensDone;
    p.unitsResumed = unitsResumed;
    p.unitsDone = p.unitsResumed + unitsDone;
    p.unitsTotal = unitsResumed + int64_t(todo.size());
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    o.progress(p);
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 0; t < threads && !todo.empty(); ++t)
      pool.emplace_back(worker);
  } catch (const std::exception &e) { // no thread: the ones started finish
    failWith(Status::error(fmt::format("cannot start a worker thread: {}", e.what())));
  }
  for (auto last = start; unitsDone.load() < int64_t(todo.size()) && !stop.load();) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (std::chrono::steady_clock::now() - last >= std::chrono::seconds(1)) {
      last = std::chrono::steady_clock::now();
      report();
    }
  }
  for (std::thread &t : pool)
    t.join();
  report();
  return firstError;
}

Status Preparation::checkAllDone() const {
  if (todo.empty())
    return Status::ok();
  return Status::error(fmt::format("{}: {} of the ranks' units are not there once they "
                                   "finished ({} first): do the ranks see the same file "
                                   "system?",
                                   o.outDir, todo.size(), shardName(todo.front())));
}

Status Preparation::writeManifest(PreparedCounts &counts) {
  StreamDigest digest;
  const json manifest = manifestJson(plan, files, units, results, counts, digest);
  counts.tokenBytes = width;
  counts.vocabSize = vocab;
  if (counts.tokens == 0)
    return Status::error(fmt::format("{}: the inputs have no tokens", o.outDir));
  XLNETC_RETURN_IF_ERROR(writeSmallFile(dir.fd, o.outDir, kPreparedManifest, dumpJson(manifest)));
  ::fsync(dir.fd); // the renames of the shards and the manifest
  for (size_t u = 0; u < units.size(); ++u)
    ::unlinkat(dir.fd, (shardName(u) + ".json").c_str(), 0);
  ::unlinkat(dir.fd, kPreparedPlan, 0);
  return Status::ok();
}

} // namespace

namespace {

/// With several ranks, whether every rank got this far: `st` itself when it
/// failed, an error naming the others when only they did.
Status agree(const PrepareOptions &o, Status st, const char *what) {
  if (o.ranks <= 1)
    return st;
  const bool all = o.allOk(bool(st));
  if (!st || all)
    return st;
  return Status::error(fmt::format("{}: another rank failed {} (its error is in its output); "
                                   "rank {} stops",
                                   o.outDir, what, o.rank));
}

/// With several ranks, whether every rank sees the same `value` (what it
/// read of the directory): an error on every rank when not.
Status sameOnEveryRank(const PrepareOptions &o, uint64_t value, const char *what) {
  if (o.ranks <= 1 || o.allSame(value))
    return Status::ok();
  return Status::error(fmt::format("{}: the ranks see {} differently (a directory that is not "
                                   "on one shared file system, or not yet in sync); rank {} "
                                   "stops",
                                   o.outDir, what, o.rank));
}

} // namespace

Status prepareData(const PrepareOptions &o, PreparedCounts &counts) {
  if (o.ranks > 1 && (!o.allOk || !o.allSame || o.rank < 0 || o.rank >= o.ranks))
    return Status::error("prepare-data: a rank without its world (an internal error)");
  // Every rank calls agree() at the same four points and sameOnEveryRank()
  // at two, whatever failed.
  const bool lead = o.rank == 0;
  Preparation p(o);
  bool finished = false;
  Status st = p.planInputs();
  if (st && lead)
    st = p.openDirectory(/*join=*/false, finished, counts);
  XLNETC_RETURN_IF_ERROR(agree(o, std::move(st), "to plan its inputs or open the directory"));
  st = lead ? Status::ok() : p.openDirectory(/*join=*/true, finished, counts);
  XLNETC_RETURN_IF_ERROR(agree(o, std::move(st), "to join the directory rank 0 opened"));
  XLNETC_RETURN_IF_ERROR(sameOnEveryRank(o, finished, "whether the preparation is finished"));
  if (finished)
    return Status::ok();
  // Every rank reads which units are done before any rank writes one, and
  // all must have read the same.
  p.findUnitsDone(/*say=*/lead);
  XLNETC_RETURN_IF_ERROR(sameOnEveryRank(o, p.todoHash(), "which units are left to do"));
  if (o.ranks > 1)
    p.keepShare(o.rank, o.ranks);
  XLNETC_RETURN_IF_ERROR(agree(o, p.runUnits(), "tokenizing its units"));
  Status written = Status::ok();
  if (lead) {
    if (o.ranks > 1) { // every rank's units, read back from their files
      p.findUnitsDone(/*say=*/false);
      written = p.checkAllDone();
    }
    if (written)
      written = p.writeManifest(counts);
  }
  XLNETC_RETURN_IF_ERROR(agree(o, std::move(written), "writing the manifest"));
  if (lead)
    return Status::ok();
  PreparedData done;
  XLNETC_RETURN_IF_ERROR(openPreparedData(o.outDir, done));
  counts = done.counts;
  return Status::ok();
}

namespace {

/// A memory-mapped shard, unmapped when the last store using it goes.
struct Mapping {
  void *base = MAP_FAILED;
  size_t size = 0;
  ~Mapping() {
    if (base != MAP_FAILED)
      ::munmap(base, size);
  }
};

struct Mappings {
  std::vector<std::unique_ptr<Mapping>> all;
};

/// Maps shard `name` of `dir` (`dirFd`) holding `count` tokens of `width`.
Status mapShard(int dirFd, const std::string &dir, const std::string &name, int64_t count,
                int width, std::unique_ptr<Mapping> &out) {
  const std::string path = dir + "/" + name;
  if (!isPlainName(name))
    return Status::error(fmt::format("{}/{}: its shard \"{}\" is not a plain file name in the "
                                     "directory",
                                     dir, kPreparedManifest, name));
  DirFile f;
  f.fd = ::openat(dirFd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0)
    return Status::error(fmt::format("{}: {}", path,
                                     errno == ELOOP ? "a symbolic link: not followed out of the "
                                                      "prepared directory"
                                                    : errnoText()));
  struct stat st;
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(fmt::format("{}: not a regular file", path));
  // Compared without overflow: a count past what the file can hold is
  // caught before it is multiplied.
  const int64_t room = (int64_t(st.st_size) - int64_t(kHeaderBytes)) / width;
  if (count > room)
    return Status::error(fmt::format("{}: {} bytes, too few for the manifest's {} tokens of {} "
                                     "bytes: the shard is truncated",
                                     path, int64_t(st.st_size), count, width));
  const int64_t want = int64_t(kHeaderBytes) + count * width;
  if (st.st_size != want)
    return Status::error(fmt::format(
        "{}: {} bytes, the manifest's {} tokens of {} bytes take {}: the shard is longer than "
        "recorded",
        path, int64_t(st.st_size), count, width, want));
  char header[kHeaderBytes];
  if (::pread(f.fd, header, kHeaderBytes, 0) != ssize_t(kHeaderBytes) ||
      std::memcmp(header, tokensHeader(width).data(), kHeaderBytes) != 0)
    return Status::error(fmt::format("{}: not an xlnetc tokens shard of {}-byte tokens (its "
                                     "header)",
                                     path, width));
  auto m = std::make_unique<Mapping>();
  m->size = size_t(st.st_size);
  m->base = ::mmap(nullptr, m->size, PROT_READ, MAP_SHARED, f.fd, 0);
  if (m->base == MAP_FAILED)
    return Status::error(fmt::format("{}: cannot map: {}", path, errnoText()));
  out = std::move(m);
  return Status::ok();
}

} // namespace

Status openPreparedData(const std::string &dir, PreparedData &out) {
  std::string text;
  XLNETC_RETURN_IF_ERROR(readFileInside(dir, kPreparedManifest, text)
                             .withPrefix(fmt::format("{}: not prepared data: ", dir)));
  const std::string where = dir + "/" + kPreparedManifest;
  const json m = json::parse(text, nullptr, false);
  if (!m.is_object() || !m.contains("format") || m["format"] != kPreparedFormat)
    return Status::error(fmt::format("{}: not a prepared-data manifest (format '{}')", where,
                                     kPreparedFormat));
  if (!m.contains("version") || m["version"] != kPreparedVersion)
    return Status::error(fmt::format("{}: version {} (this xlnetc reads {})", where,
                                     dumpJson(m.value("version", json()), -1), kPreparedVersion));
  PreparedData p;
  p.dir = dir;
  std::vector<TokenStore::Piece> pieces;
  auto maps = std::make_shared<Mappings>();
  try {
    const int width = m.at("token_bytes").get<int>();
    if (width != 2 && width != 4)
      return Status::error(fmt::format("{}: token_bytes {} (2 or 4)", where, width));
    p.counts.tokenBytes = width;
    p.counts.vocabSize = m.at("tokenizer").at("vocab_size").get<int64_t>();
    p.tokenizerSha256 = m.at("tokenizer").at("sha256").get<std::string>();
    if (tokenWidthFor(p.counts.vocabSize) != width)
      return Status::error(fmt::format("{}: token_bytes {} does not fit vocab_size {}", where,
                                       width, p.counts.vocabSize));
    p.corpus.useEod = m.at("options").at("use_eod").get<bool>();
    p.corpus.keepAccents = m.at("options").at("keep_accents").get<bool>();
    p.corpus.uncased = m.at("options").at("uncased").get<bool>();
    const json &c = m.at("counts");
    p.counts.tokens = c.at("tokens").get<int64_t>();
    p.counts.lines = c.at("lines").get<int64_t>();
    p.counts.documents = c.at("documents").get<int64_t>();
    p.counts.shards = c.at("shards").get<int64_t>();
    p.counts.inputBytes = c.at("input_bytes").get<int64_t>();
    const json &d = m.at("digest");
    p.source.digest.count = d.at("count").get<int64_t>();
    p.source.digest.hash = parseHex64(d.at("hash").get<std::string>());
    p.source.digest.flagPart = parseHex64(d.at("flag_part").get<std::string>());
    int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd < 0)
      return Status::error(fmt::format("{}: {}", dir, errnoText()));
    DirFile dirGuard;
    dirGuard.fd = dirFd;
    int64_t total = 0;
    for (const json &s : m.at("shards")) {
      const int64_t count = s.at("count").get<int64_t>();
      if (count < 0)
        return Status::error(fmt::format("{}: a shard of {} tokens", where, count));
      std::unique_ptr<Mapping> map;
      XLNETC_RETURN_IF_ERROR(
          mapShard(dirFd, dir, s.at("tokens").get<std::string>(), count, width, map));
      pieces.push_back({static_cast<const char *>(map->base) + kHeaderBytes, count, width,
                        s.at("invert").get<bool>()});
      maps->all.push_back(std::move(map));
      total += count;
    }
    if (total != p.counts.tokens || total != p.source.digest.count ||
        int64_t(pieces.size()) != p.counts.shards)
      return Status::error(fmt::format("{}: its shards hold {} tokens in {}, its counts say {} "
                                       "in {}",
                                       where, total, pieces.size(), p.counts.tokens,
                                       p.counts.shards));
  } catch (const std::exception &e) {
    return Status::error(fmt::format("{}: a field is missing or of the wrong type ({})", where,
                                     e.what()));
  }
  p.source.store = std::make_shared<TokenStore>(std::move(pieces), maps);
  p.source.vocabSize = p.counts.vocabSize;
  p.source.path = dir;
  out = std::move(p);
  return Status::ok();
}

namespace {

/// The SHA-256 of `name` in `dir`, read in blocks (never whole), no link
/// followed.
Status sha256Inside(const std::string &dir, const std::string &name, std::string &hex) {
  if (!isPlainName(name))
    return Status::error(fmt::format("{}/{}: names \"{}\", not a plain file name", dir,
                                     kPreparedManifest, name));
  DirFile d, f;
  d.fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (d.fd >= 0)
    f.fd = ::openat(d.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (f.fd < 0 || ::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(fmt::format("{}/{}: {}", dir, name,
                                     f.fd < 0 && errno == ELOOP
                                         ? "a symbolic link: not followed out of the directory"
                                         : "cannot read it as a regular file"));
  return sha256Of(f.fd, dir + "/" + name, hex);
}

} // namespace

Status verifyPreparedData(const std::string &dir) {
  PreparedData p;
  XLNETC_RETURN_IF_ERROR(openPreparedData(dir, p));
  std::string text;
  XLNETC_RETURN_IF_ERROR(readFileInside(dir, kPreparedManifest, text));
  const json m = json::parse(text, nullptr, false);
  try {
    for (const json &s : m.at("shards"))
      for (const char *kind : {"tokens", "index"}) {
        const std::string name = s.at(kind).get<std::string>();
        std::string hex;
        XLNETC_RETURN_IF_ERROR(sha256Inside(dir, name, hex));
        if (hex != s.at("sha256").at(kind).get<std::string>())
          return Status::error(fmt::format(
              "{}/{}: its SHA-256 is not the one {} records (the file was changed or damaged)",
              dir, name, kPreparedManifest));
      }
  } catch (const std::exception &e) {
    return Status::error(fmt::format("{}/{}: a shard's field is missing or of the wrong type "
                                     "({})",
                                     dir, kPreparedManifest, e.what()));
  }
  std::string hex;
  XLNETC_RETURN_IF_ERROR(sha256Inside(dir, kPreparedTokenizer, hex));
  if (hex != p.tokenizerSha256)
    return Status::error(fmt::format("{}/{}: not the tokenizer the data was prepared with "
                                     "(its SHA-256)",
                                     dir, kPreparedTokenizer));
  return Status::ok();
}

} // namespace xlnetc::rt::data
