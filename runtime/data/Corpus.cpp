//===- Corpus.cpp - Reading pretraining corpora into one token stream -----===//

#include "runtime/data/Corpus.h"

#include "runtime/io/InputFile.h"
#include "runtime/exec/MemoryCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>

namespace xlnetc::rt::data {

namespace {

bool isAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

bool isBlank(const std::string &line) {
  for (char c : line)
    if (!isAsciiSpace(c))
      return false;
  return true;
}

Status openCorpus(const std::string &path, std::ifstream &in) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::error(fmt::format("{}: corpus file not found", path));
  if (std::string kind = oddFileKind(path); !kind.empty())
    return Status::error(fmt::format("{}: {}, not a corpus file", path, kind));
  in.open(path, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("{}: cannot open the corpus", path));
  return Status::ok();
}

/// A line longer than this is encoded in segments of at most this many
/// bytes, so no line is held whole and the encoder's working memory (about
/// 200 bytes per byte of text in SentencePiece, as issue 25's probe of a
/// 50 MB line found) stays bounded.
constexpr size_t kSegmentBytes = size_t(1) << 18;

/// The lines of a stream, each handed over in segments of at most
/// kSegmentBytes: a longer line is cut at the last ASCII whitespace of the
/// segment, so SentencePiece, whose pieces never span whitespace, gives the
/// same ids as for the whole line; a segment without whitespace is cut at a
/// UTF-8 character boundary. Lines are those of std::getline.
class LineSegments {
public:
  explicit LineSegments(std::istream &in) : in_(in) {}

  /// The next segment; `lineEnd` when it ends its line. False at the end.
  bool next(std::string &segment, bool &lineEnd) {
    for (;;) {
      const size_t newline = buffer_.find('\n', pos_);
      const size_t available = (newline == std::string::npos ? buffer_.size() : newline) - pos_;
      if (available > kSegmentBytes) {
        const size_t cut = cutPoint();
        segment.assign(buffer_, pos_, cut - pos_);
        pos_ = cut;
        lineEnd = false;
        return true;
      }
      if (newline != std::string::npos || end_) {
        if (newline == std::string::npos && available == 0)
          return false; // nothing after the last newline
        segment.assign(buffer_, pos_, available);
        pos_ += available + (newline != std::string::npos ? 1 : 0);
        lineEnd = true;
        return true;
      }
      // More of this line: keep what is left, read the next block.
      buffer_.erase(0, pos_);
      pos_ = 0;
      char block[1 << 16];
      in_.read(block, sizeof(block));
      buffer_.append(block, size_t(in_.gcount()));
      end_ = in_.gcount() == 0;
    }
  }
  bool bad() const { return in_.bad(); }

private:
  /// Where to end a segment of a line longer than kSegmentBytes.
  size_t cutPoint() const {
    const size_t limit = pos_ + kSegmentBytes;
    for (size_t i = limit; i > pos_; --i)
      if (isAsciiSpace(buffer_[i]))
        return i;
    size_t i = limit;
    while (i > pos_ + 1 && (static_cast<unsigned char>(buffer_[i]) & 0xc0) == 0x80)
      --i; // not inside a UTF-8 character
    return i;
  }

  std::istream &in_;
  std::string buffer_;
  size_t pos_ = 0;
  bool end_ = false;
};

} // namespace

Status readLines(std::istream &in, const std::string &path, int64_t firstLineNo,
                 const CorpusOptions &options,
                 const LineEncoder &encode, const TokenSink &sink, LineState &state,
                 LineCounts &counts) {
  LineSegments lines(in);
  std::string segment;
  std::vector<int64_t> ids;
  bool lineEnd = false, blank = true;
  // Whether the next tokens handed on start a line, a document.
  bool lineStart = true, documentStart = !state.inDocument;
  auto hand = [&](int64_t lineNo) -> Status {
    if (ids.empty())
      return Status::ok();
    TokenRun run{ids, state.sentId ? uint8_t(1) : uint8_t(0), lineNo, lineStart, documentStart};
    lineStart = documentStart = false;
    return sink(run);
  };
  for (int64_t lineNo = firstLineNo; lines.next(segment, lineEnd);) {
    if (lineEnd && !segment.empty() && segment.back() == '\r')
      segment.pop_back();
    // A line's segments are encoded and handed on as they come (the flag
    // is the line's from its start); the line is blank when all of them
    // are.
    if (!isBlank(segment)) {
      if (!state.inDocument)
        ++counts.documents;
      state.inDocument = true;
      blank = false;
      ids.clear();
      XLNETC_RETURN_IF_ERROR(encode(segment, lineNo, ids));
      counts.textTokens += int64_t(ids.size());
      XLNETC_RETURN_IF_ERROR(hand(lineNo));
    }
    if (!lineEnd)
      continue;
    ++counts.lines;
    lineStart = true;
    if (blank) {
      state.inDocument = false;
      documentStart = true;
      if (!options.useEod) {
        ++lineNo;
        continue;
      }
      // The <eod> takes the flag of the sentence before it: the official
      // code flips here and again after appending. It ends the document
      // before it: it starts no document.
      state.sentId = !state.sentId;
      ids.assign(1, kEodId);
      const bool next = documentStart;
      documentStart = false;
      XLNETC_RETURN_IF_ERROR(hand(lineNo));
      documentStart = next;
      lineStart = true;
    }
    state.sentId = !state.sentId;
    blank = true;
    ++lineNo;
  }
  if (lines.bad())
    return Status::error(fmt::format("{}: read error", path));
  return Status::ok();
}

namespace {

/// The _create_data loop over the lines of `in` into `out`, starting at
/// line number `firstLineNo`, within options.maxBytes.
Status readCorpusLines(std::istream &in, int64_t firstLineNo, const CorpusOptions &options,
                       const LineEncoder &encode, Corpus &out) {
  // The memory the corpus may take (options.maxBytes): its tokens and
  // flags as they will be allocated once `adding` more tokens go in.
  auto checkBudget = [&](int64_t lineNo, size_t adding) -> Status {
    if (options.maxBytes <= 0)
      return Status::ok();
    const size_t want = out.tokens.size() + adding;
    const size_t capacity =
        want <= out.tokens.capacity() ? out.tokens.capacity() : std::max(want, 2 * out.tokens.size());
    const int64_t held = int64_t(capacity * (sizeof(int64_t) + 1));
    if (held <= options.maxBytes)
      return Status::ok();
    return Status::error(fmt::format(
        "{}:{}: the corpus does not fit in memory: its {} tokens so far take {} (9 bytes a "
        "token, as allocated), past the {} it may have ({}); use a smaller corpus, "
        "xlnetc prepare-data (docs/DataPipeline.md), or --no-memory-check",
        out.path, lineNo, want, formatBytes(held), formatBytes(options.maxBytes),
        options.maxBytesWhat));
  };
  TokenSink sink = [&](const TokenRun &run) -> Status {
    // The corpus grows by doubling: count what the next growth would
    // allocate, before it does.
    XLNETC_RETURN_IF_ERROR(checkBudget(run.lineNo, run.ids.size()));
    out.tokens.insert(out.tokens.end(), run.ids.begin(), run.ids.end());
    out.sentIds.insert(out.sentIds.end(), run.ids.size(), run.flag);
    return Status::ok();
  };
  LineState state;
  LineCounts counts;
  XLNETC_RETURN_IF_ERROR(
      readLines(in, out.path, firstLineNo, options, encode, sink, state, counts));
  out.numLines = counts.lines;
  out.numDocuments = counts.documents;
  if (out.numLines == 0)
    return Status::error(fmt::format("{}: the corpus is empty", out.path));
  if (counts.textTokens == 0)
    return Status::error(fmt::format(
        "{}: the corpus has no tokens ({} lines, all blank or encoding to "
        "nothing)",
        out.path, out.numLines));
  return Status::ok();
}

/// The header line without trailing whitespace.
std::string trimRight(std::string s) {
  while (!s.empty() && isAsciiSpace(s.back()))
    s.pop_back();
  return s;
}

} // namespace

bool isIdsCorpusFile(const std::string &path) {
  if (!oddFileKind(path).empty())
    return false; // openCorpus names what it is
  std::ifstream in(path, std::ios::binary);
  std::string first;
  if (!in || !std::getline(in, first))
    return false;
  return trimRight(first) == kIdsCorpusHeader;
}

Status readTextCorpus(const std::string &path, const Tokenizer &tokenizer,
                      const CorpusOptions &options, Corpus &out) {
  out = Corpus();
  out.path = path;
  std::ifstream in;
  XLNETC_RETURN_IF_ERROR(openCorpus(path, in));
  if (tokenizer.vocabSize() == 0)
    return Status::error(
        fmt::format("{}: no tokenizer loaded to encode the corpus", path));
  out.vocabSize = tokenizer.vocabSize();
  out.startPiece = tokenizer.startPieceTable();
  LineEncoder encode = [&](const std::string &line, int64_t lineNo,
                           std::vector<int64_t> &ids) {
    return tokenizer.encode(line, ids, options.uncased, options.keepAccents)
        .withPrefix(fmt::format("{}:{}: ", path, lineNo));
  };
  return readCorpusLines(in, 1, options, encode, out);
}

Status readIdsCorpus(const std::string &path, int64_t vocabSize,
                     const CorpusOptions &options, Corpus &out,
                     const std::vector<uint8_t> &startPiece) {
  out = Corpus();
  out.path = path;
  std::ifstream in;
  XLNETC_RETURN_IF_ERROR(openCorpus(path, in));
  if (vocabSize < kNumSpecialIds)
    return Status::error(
        fmt::format("{}: vocab size {} is smaller than the {} special ids",
                    path, vocabSize, kNumSpecialIds));
  if (!startPiece.empty() && int64_t(startPiece.size()) != vocabSize)
    return Status::error(
        fmt::format("{}: start-piece table has {} entries for vocab size {}",
                    path, startPiece.size(), vocabSize));
  std::string header;
  if (!std::getline(in, header))
    return Status::error(fmt::format("{}: the corpus is empty", path));
  if (trimRight(header) != kIdsCorpusHeader)
    return Status::error(
        fmt::format("{}:1: an ids corpus must start with the line '{}'", path,
                    kIdsCorpusHeader));
  out.vocabSize = vocabSize;
  out.startPiece = startPiece.empty()
                       ? std::vector<uint8_t>(size_t(vocabSize), 1)
                       : startPiece;
  LineEncoder encode = [&](const std::string &line, int64_t lineNo,
                           std::vector<int64_t> &ids) {
    const char *p = line.data(), *end = p + line.size();
    while (p < end) {
      while (p < end && isAsciiSpace(*p))
        ++p;
      const char *b = p;
      while (p < end && !isAsciiSpace(*p))
        ++p;
      if (p == b)
        break;
      int64_t id = 0;
      auto [ptr, ec] = std::from_chars(b, p, id);
      if (ec != std::errc() || ptr != p)
        return Status::error(fmt::format("{}:{}: '{}' is not a token id", path,
                                         lineNo, std::string(b, p)));
      if (id < 0 || id >= vocabSize)
        return Status::error(
            fmt::format("{}:{}: token id {} is outside the vocabulary [0, {})",
                        path, lineNo, id, vocabSize));
      ids.push_back(id);
    }
    return Status::ok();
  };
  // The header was line 1 but is not part of the corpus.
  XLNETC_RETURN_IF_ERROR(readCorpusLines(in, 2, options, encode, out));
  return Status::ok();
}

Status readCorpus(const std::string &path, const Tokenizer *tokenizer,
                  int64_t vocabSize, const CorpusOptions &options,
                  Corpus &out) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::error(fmt::format("{}: corpus file not found", path));
  if (isIdsCorpusFile(path)) {
    if (tokenizer)
      return readIdsCorpus(path, tokenizer->vocabSize(), options, out,
                           tokenizer->startPieceTable());
    return readIdsCorpus(path, vocabSize, options, out);
  }
  if (!tokenizer)
    return Status::error(fmt::format(
        "{}: a text corpus needs a SentencePiece model (or start the file "
        "with '{}' for pre-tokenized ids)",
        path, kIdsCorpusHeader));
  return readTextCorpus(path, *tokenizer, options, out);
}

Status writeIdsCorpus(const std::string &path,
                      const std::vector<std::vector<int64_t>> &lines) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return Status::error(fmt::format("{}: cannot create the corpus", path));
  std::string text = std::string(kIdsCorpusHeader) + "\n";
  for (const auto &line : lines) {
    for (size_t k = 0; k < line.size(); ++k) {
      if (k)
        text += ' ';
      text += std::to_string(line[k]);
    }
    text += '\n';
  }
  out << text;
  out.close();
  if (!out)
    return Status::error(fmt::format("{}: write failed", path));
  return Status::ok();
}

} // namespace xlnetc::rt::data
