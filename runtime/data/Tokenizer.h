//===- Tokenizer.h - SentencePiece models for the data pipeline -*- C++ -*-===//
//
// Loads and trains SentencePiece unigram models (the Debian libsentencepiece)
// with XLNet's special ids, and encodes lines the way the official
// prepro_utils.preprocess_text + encode_ids do. Every failure is a Status
// naming the file; SentencePiece's own logging stays quiet unless asked for.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_TOKENIZER_H
#define XLNETC_RUNTIME_DATA_TOKENIZER_H

#include "runtime/Status.h"
#include "runtime/data/LocalPerm.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sentencepiece {
class SentencePieceProcessor;
} // namespace sentencepiece

namespace xlnetc::rt::data {

/// The special ids of XLNet's vocabulary (semantics.md §7); kClsId = 3 and
/// kSepId = 4 come from LocalPerm.h.
inline constexpr int64_t kUnkId = 0;
inline constexpr int64_t kBosId = 1;
inline constexpr int64_t kEosId = 2;
inline constexpr int64_t kPadId = 5;
inline constexpr int64_t kMaskId = 6;
inline constexpr int64_t kEodId = 7;
inline constexpr int64_t kEopId = 8;
/// Number of special ids; ordinary pieces start here.
inline constexpr int64_t kNumSpecialIds = 9;

/// The piece spelled for special id `id` (0..8), e.g. "<cls>" for 3.
const char *specialPieceName(int64_t id);

/// The official data_utils._is_start_piece: the piece starts a word when it
/// begins with "▁" (U+2581) or "<", or is exactly one of the punctuation
/// characters !"#$%&()*+,-./:;?@[\]^_`{|}~ (string.punctuation without
/// ' < = > — the official set is spelled that way).
bool isStartPiece(std::string_view piece);

/// A loaded SentencePiece model with the special ids checked.
class Tokenizer {
public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(Tokenizer &&) noexcept;
  Tokenizer &operator=(Tokenizer &&) noexcept;

  /// Loads the model at `path`. Errors (each naming the file): missing file,
  /// not a SentencePiece model, special ids not at 0..8.
  static Status load(const std::string &path, Tokenizer &out);

  /// Number of pieces (the model's vocab_size / n_token).
  int64_t vocabSize() const;
  /// The piece of `id` ("" when out of range).
  std::string idToPiece(int64_t id) const;
  /// isStartPiece(idToPiece(id)); false when out of range.
  bool isStartPiece(int64_t id) const;
  /// isStartPiece for every id, indexed by id (1 = start piece).
  std::vector<uint8_t> startPieceTable() const;

  /// Encodes one line like the official pipeline: preprocess_text (collapse
  /// whitespace, `` and '' to ", NFKD with the combining characters dropped
  /// unless `keepAccents` — the official and HuggingFace default —, lowercase
  /// when `uncased`) then encode_ids (pieces, with a trailing comma after a
  /// digit split off: "1990," -> "1990" ","). Appends nothing for an empty
  /// line.
  Status encode(std::string_view line, std::vector<int64_t> &ids,
                bool uncased = false, bool keepAccents = false) const;
  /// Pieces joined back to text (for messages and tests).
  std::string decode(const std::vector<int64_t> &ids) const;

  /// The file the model was loaded from.
  const std::string &path() const { return path_; }

private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::string path_;
  /// Per id: its piece is needed, not just its id (one ending in a digit
  /// and a comma, encode_pieces' case, or the unknown piece).
  std::vector<uint8_t> needsPieces_;
};

/// The largest vocabulary trainTokenizer trains: SentencePiece's default
/// seed_sentencepiece_size, the candidates a unigram model starts from.
constexpr int64_t kMaxTrainedVocab = 1000000;

/// Options of trainTokenizer beyond the vocab size.
struct TrainTokenizerOptions {
  /// Print SentencePiece's training log (it is silenced otherwise).
  bool verbose = false;
  /// "unigram" (XLNet's) or "bpe".
  std::string modelType = "unigram";
  /// Fraction of characters covered; 1.0 suits small English corpora.
  double characterCoverage = 1.0;
  /// When false the vocab may come out smaller than asked on a small corpus
  /// instead of failing.
  bool hardVocabLimit = false;
  /// SentencePiece's random seed (training uses one thread, so the model is
  /// a function of the corpus, the options and this seed).
  uint32_t seed = 1;
  /// Lowercase the text before training (the official "uncased").
  bool uncased = false;
};

/// Trains a SentencePiece model on `corpusPath` (one sentence per line),
/// writing `modelPrefix`.model and `modelPrefix`.vocab, with the special ids
/// <unk>0 <s>1 </s>2 <cls>3 <sep>4 <pad>5 <mask>6 <eod>7 <eop>8. Errors name
/// the corpus or the prefix; SentencePiece's failures are explained in the
/// user's terms (too many distinct characters for the vocabulary, a corpus
/// too small for it) with its message as the detail.
Status trainTokenizer(const std::string &corpusPath, int64_t vocabSize,
                      const std::string &modelPrefix,
                      const TrainTokenizerOptions &options = {});

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_TOKENIZER_H
