//===- Corpus.h - Reading pretraining corpora into one token stream -*- C++
//-*-===//
//
// The reading half of the official create_data.py (_create_data): a corpus is
// one sentence per line, a blank line ends a document. Every line becomes a
// sentence whose sent_id alternates (True, False, ...); with use_eod a blank
// line appends <eod> with the sent_id of the sentence before it. Two formats:
//   - text: encoded with a SentencePiece Tokenizer;
//   - ids: first line exactly `#xlnetc-ids`, then whitespace-separated
//     integer ids per line (same line and blank-line meaning), so tests and
//     synthetic corpora control token counts exactly.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_CORPUS_H
#define XLNETC_RUNTIME_DATA_CORPUS_H

#include "runtime/Status.h"
#include "runtime/data/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <istream>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

/// The first line of an ids corpus.
inline constexpr const char *kIdsCorpusHeader = "#xlnetc-ids";

/// One corpus as a single token stream.
struct Corpus {
  /// Token ids of all lines, concatenated.
  std::vector<int64_t> tokens;
  /// Per token: the sentence flag (0/1), alternating line by line; a change
  /// between neighbours is a sentence boundary (a cut point).
  std::vector<uint8_t> sentIds;
  /// Per vocab id: 1 when _is_start_piece holds (word start for span
  /// masking). An ids corpus read without a tokenizer treats every id as a
  /// word start.
  std::vector<uint8_t> startPiece;
  /// The vocabulary size the ids were checked against.
  int64_t vocabSize = 0;
  /// Lines read (blank lines included) and documents (non-empty runs of
  /// lines between blank lines).
  int64_t numLines = 0;
  int64_t numDocuments = 0;
  /// The file it came from (for messages).
  std::string path;
};

/// Reading options (official flags use_eod and uncased).
struct CorpusOptions {
  /// A blank line appends <eod> (official default true).
  bool useEod = true;
  /// Lowercase text lines before encoding.
  bool uncased = false;
  /// Keep accents (skip preprocess_text's NFKD accent stripping).
  bool keepAccents = false;
  /// The memory the corpus may take (its tokens and sentence flags, as
  /// allocated); 0: no bound. Reading stops with an error naming the line
  /// it reached, `maxBytesWhat` saying where the bound comes from.
  int64_t maxBytes = 0;
  std::string maxBytesWhat;
};

/// Encodes one non-blank line (or a segment of a long one; 1-based
/// `lineNo`) into `ids`.
using LineEncoder =
    std::function<Status(const std::string &line, int64_t lineNo, std::vector<int64_t> &ids)>;

/// Tokens of one line as readLines hands them on: all of a line's, a
/// segment's of a long line, or the <eod> of a blank line; never empty.
struct TokenRun {
  const std::vector<int64_t> &ids;
  uint8_t flag;       ///< their sentence flag (Corpus::sentIds)
  int64_t lineNo;     ///< the line they come from (1-based, for messages)
  bool lineStart;     ///< the first tokens of their line
  bool documentStart; ///< the first tokens of a document
};
using TokenSink = std::function<Status(const TokenRun &run)>;

/// The reading state between lines: the next line's sentence flag, and
/// whether the line before was part of a document (not blank). A reading
/// from the start of a file starts from the default.
struct LineState {
  bool sentId = true; // official: sent_id = True
  bool inDocument = false;
};

/// What readLines read: lines (blank ones included), documents begun
/// (non-empty runs of lines), tokens the text encoded to (no <eod>).
struct LineCounts {
  int64_t lines = 0, documents = 0, textTokens = 0;
};

/// The official _create_data loop over the lines of `in`, line numbers
/// from `firstLineNo`, from `state` (left where the reading ended): every
/// line's tokens go to `sink` as they are encoded, so memory stays bounded
/// whatever the length of a line (LineSegments: lines longer than 256 KiB
/// are encoded in segments cut at whitespace). A read error names `path`.
Status readLines(std::istream &in, const std::string &path, int64_t firstLineNo,
                 const CorpusOptions &options,
                 const LineEncoder &encode, const TokenSink &sink, LineState &state,
                 LineCounts &counts);

/// True when `path` starts with the ids header.
bool isIdsCorpusFile(const std::string &path);

/// Reads a text corpus, encoding every line with `tokenizer`. Errors name the
/// file: missing, unreadable, empty, no tokens.
Status readTextCorpus(const std::string &path, const Tokenizer &tokenizer,
                      const CorpusOptions &options, Corpus &out);

/// Reads an ids corpus; every id must be in [0, vocabSize) (errors name the
/// file, the line and the id). `startPiece` (indexed by id) marks word
/// starts; empty means every id is one.
Status readIdsCorpus(const std::string &path, int64_t vocabSize,
                     const CorpusOptions &options, Corpus &out,
                     const std::vector<uint8_t> &startPiece = {});

/// Reads either format, chosen by the header. A text corpus needs
/// `tokenizer`; an ids corpus uses the tokenizer's vocab and start pieces when
/// given, else `vocabSize` and all-start.
Status readCorpus(const std::string &path, const Tokenizer *tokenizer,
                  int64_t vocabSize, const CorpusOptions &options, Corpus &out);

/// Writes an ids corpus: the header, then one line per entry of `lines`
/// (an empty entry writes a blank line, i.e. a document boundary).
Status writeIdsCorpus(const std::string &path,
                      const std::vector<std::vector<int64_t>> &lines);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_CORPUS_H
