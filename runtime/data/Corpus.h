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
