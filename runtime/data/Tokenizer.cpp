//===- Tokenizer.cpp - SentencePiece models for the data pipeline ---------===//

#include "runtime/data/Tokenizer.h"

#include "runtime/io/InputFile.h"

#include <fmt/format.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <filesystem>
#include <fstream>
#include <unordered_map>

namespace xlnetc::rt::data {

namespace {

/// "▁" (U+2581) in UTF-8.
constexpr std::string_view kWordStart = "\xE2\x96\x81";

constexpr const char *kSpecialNames[kNumSpecialIds] = {
    "<unk>", "<s>",    "</s>",  "<cls>", "<sep>",
    "<pad>", "<mask>", "<eod>", "<eop>"};

bool isAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/// unicodedata.normalize('NFKD', s) without the combining characters
/// (unicodedata.combining(c) != 0): the official accent stripping, by ICU.
/// ASCII text is returned as it is.
std::string stripAccents(const std::string &text) {
  if (std::all_of(text.begin(), text.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x80; }))
    return text;
  UErrorCode err = U_ZERO_ERROR;
  const icu::Normalizer2 *nfkd = icu::Normalizer2::getNFKDInstance(err);
  if (U_FAILURE(err))
    return text; // ICU without its data: keep the text (never reached on Debian)
  const icu::UnicodeString decomposed =
      nfkd->normalize(icu::UnicodeString::fromUTF8(text), err);
  if (U_FAILURE(err))
    return text;
  icu::UnicodeString kept;
  for (int32_t i = 0; i < decomposed.length();) {
    const UChar32 c = decomposed.char32At(i);
    if (u_getCombiningClass(c) == 0)
      kept.append(c);
    i += U16_LENGTH(c);
  }
  std::string out;
  kept.toUTF8String(out);
  return out;
}

/// prepro_utils.preprocess_text: collapse whitespace, `` and '' to ", the
/// NFKD accent stripping unless `keepAccents`, optional ASCII lowercasing.
std::string preprocessText(std::string_view line, bool uncased, bool keepAccents) {
  std::string collapsed;
  size_t k = 0;
  while (k < line.size()) {
    while (k < line.size() && isAsciiSpace(line[k]))
      ++k;
    size_t b = k;
    while (k < line.size() && !isAsciiSpace(line[k]))
      ++k;
    if (k > b) {
      if (!collapsed.empty())
        collapsed += ' ';
      collapsed.append(line.substr(b, k - b));
    }
  }
  std::string out;
  out.reserve(collapsed.size());
  for (size_t i = 0; i < collapsed.size(); ++i) {
    if (i + 1 < collapsed.size() &&
        ((collapsed[i] == '`' && collapsed[i + 1] == '`') ||
         (collapsed[i] == '\'' && collapsed[i + 1] == '\''))) {
      out += '"';
      ++i;
      continue;
    }
    out += collapsed[i];
  }
  if (!keepAccents)
    out = stripAccents(out);
  if (uncased)
    for (char &c : out)
      if (c >= 'A' && c <= 'Z')
        c = char(c - 'A' + 'a');
  return out;
}

bool startsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

/// Checks that ids 0..8 carry XLNet's special pieces.
Status checkSpecialIds(const sentencepiece::SentencePieceProcessor &sp,
                       const std::string &path) {
  int n = sp.GetPieceSize();
  if (n < kNumSpecialIds)
    return Status::error(fmt::format(
        "{}: the SentencePiece model has {} pieces; XLNet needs at least the "
        "{} special ids <unk>0 <s>1 </s>2 <cls>3 <sep>4 <pad>5 <mask>6 <eod>7 "
        "<eop>8",
        path, n, kNumSpecialIds));
  std::string wrong;
  for (int id = 0; id < kNumSpecialIds; ++id) {
    const std::string &piece = sp.IdToPiece(id);
    if (piece != kSpecialNames[id]) {
      int at = sp.PieceToId(kSpecialNames[id]);
      bool present = at != sp.unk_id() || id == kUnkId;
      wrong += fmt::format("{}{} is at {} (id {} is \"{}\")",
                           wrong.empty() ? "" : "; ", kSpecialNames[id],
                           present ? std::to_string(at) : "missing", id, piece);
    }
  }
  if (!wrong.empty())
    return Status::error(fmt::format(
        "{}: the SentencePiece model does not have XLNet's special ids "
        "(<unk>0 <s>1 </s>2 <cls>3 <sep>4 <pad>5 <mask>6 <eod>7 <eop>8): {}",
        path, wrong));
  return Status::ok();
}

} // namespace

const char *specialPieceName(int64_t id) {
  return id >= 0 && id < kNumSpecialIds ? kSpecialNames[id] : "";
}

bool isStartPiece(std::string_view piece) {
  // The official set: '!"#$%&\"()*+,-./:;?@[\\]^_`{|}~' (no ' < = >).
  static constexpr std::string_view kSpecialPieces =
      "!\"#$%&()*+,-./:;?@[\\]^_`{|}~";
  if (startsWith(piece, kWordStart) || startsWith(piece, "<"))
    return true;
  return piece.size() == 1 &&
         kSpecialPieces.find(piece[0]) != std::string_view::npos;
}

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer &&) noexcept = default;
Tokenizer &Tokenizer::operator=(Tokenizer &&) noexcept = default;

Status Tokenizer::load(const std::string &path, Tokenizer &out) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::error(
        fmt::format("{}: SentencePiece model not found", path));
  if (std::string kind = oddFileKind(path); !kind.empty())
    return Status::error(
        fmt::format("{}: {}, not a SentencePiece model file", path, kind));
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  sentencepiece::util::Status s = sp->Load(path);
  if (!s.ok())
    return Status::error(
        fmt::format("{}: not a SentencePiece model ({})", path, s.ToString()));
  if (sp->GetPieceSize() == 0)
    return Status::error(
        fmt::format("{}: not a SentencePiece model (no pieces)", path));
  XLNETC_RETURN_IF_ERROR(checkSpecialIds(*sp, path));
  // The pieces whose ids alone do not do: encode_pieces re-encodes a digit
  // then a comma at the end, and an unknown piece's text is not its id's.
  out.needsPieces_.assign(size_t(sp->GetPieceSize()), 0);
  for (int id = 0; id < sp->GetPieceSize(); ++id) {
    const std::string &piece = sp->IdToPiece(id);
    const size_t n = piece.size();
    out.needsPieces_[size_t(id)] =
        (n > 1 && piece[n - 1] == ',' && piece[n - 2] >= '0' && piece[n - 2] <= '9') ||
        sp->IsUnknown(id);
  }
  out.sp_ = std::move(sp);
  out.path_ = path;
  return Status::ok();
}

int64_t Tokenizer::vocabSize() const { return sp_ ? sp_->GetPieceSize() : 0; }

std::string Tokenizer::idToPiece(int64_t id) const {
  if (!sp_ || id < 0 || id >= vocabSize())
    return "";
  return sp_->IdToPiece(int(id));
}

bool Tokenizer::isStartPiece(int64_t id) const {
  if (!sp_ || id < 0 || id >= vocabSize())
    return false;
  return data::isStartPiece(sp_->IdToPiece(int(id)));
}

std::vector<uint8_t> Tokenizer::startPieceTable() const {
  std::vector<uint8_t> table(static_cast<size_t>(vocabSize()));
  for (int64_t id = 0; id < vocabSize(); ++id)
    table[size_t(id)] = isStartPiece(id) ? 1 : 0;
  return table;
}

Status Tokenizer::encode(std::string_view line, std::vector<int64_t> &ids,
                         bool uncased, bool keepAccents) const {
  if (!sp_)
    return Status::error("Tokenizer::encode: no model loaded");
  std::string text = preprocessText(line, uncased, keepAccents);
  if (text.empty())
    return Status::ok();
  // The ids straight from SentencePiece (no piece strings made: most of
  // the time of a corpus's encoding went to those), unless a piece needs
  // encode_pieces' fix: one ending in a digit and a comma (known by its id
  // after SentencePiece's own normalization), or an unknown piece (whose
  // text its id does not tell).
  {
    std::vector<int> direct;
    sentencepiece::util::Status s = sp_->Encode(text, &direct);
    if (!s.ok())
      return Status::error(fmt::format("{}: encoding failed: {}", path_, s.ToString()));
    bool plain = true;
    for (int id : direct)
      plain = plain && id >= 0 && size_t(id) < needsPieces_.size() && !needsPieces_[size_t(id)];
    if (plain) {
      ids.insert(ids.end(), direct.begin(), direct.end());
      return Status::ok();
    }
  }
  std::vector<std::string> pieces;
  sentencepiece::util::Status s = sp_->Encode(text, &pieces);
  if (!s.ok())
    return Status::error(
        fmt::format("{}: encoding failed: {}", path_, s.ToString()));
  // encode_pieces: "1990," is re-encoded as "1990" + "," so numbers do not
  // swallow the comma.
  std::vector<std::string> fixed;
  for (const std::string &piece : pieces) {
    size_t n = piece.size();
    bool digitComma = n > 1 && piece[n - 1] == ',' && piece[n - 2] >= '0' &&
                      piece[n - 2] <= '9';
    if (!digitComma) {
      fixed.push_back(piece);
      continue;
    }
    std::string body = piece.substr(0, n - 1);
    for (size_t at; (at = body.find(kWordStart)) != std::string::npos;)
      body.erase(at, kWordStart.size());
    std::vector<std::string> sub;
    s = sp_->Encode(body, &sub);
    if (!s.ok())
      return Status::error(
          fmt::format("{}: encoding failed: {}", path_, s.ToString()));
    if (!startsWith(piece, kWordStart) && !sub.empty() &&
        startsWith(sub[0], kWordStart)) {
      if (sub[0].size() == kWordStart.size())
        sub.erase(sub.begin());
      else
        sub[0].erase(0, kWordStart.size());
    }
    sub.push_back(",");
    fixed.insert(fixed.end(), sub.begin(), sub.end());
  }
  for (const std::string &piece : fixed)
    ids.push_back(sp_->PieceToId(piece));
  return Status::ok();
}

std::string Tokenizer::decode(const std::vector<int64_t> &ids) const {
  if (!sp_)
    return "";
  std::vector<int> v(ids.begin(), ids.end());
  std::string text;
  if (!sp_->Decode(v, &text).ok())
    return "";
  return text;
}

namespace {

/// The first two numbers after `key` in `text` ("... 1000 vs 2614."), or
/// false.
bool numbersAfter(const std::string &text, const std::string &key, int64_t &a,
                  int64_t &b) {
  size_t at = text.find(key);
  if (at == std::string::npos)
    return false;
  const char *p = text.c_str() + at + key.size();
  int64_t found[2];
  for (int64_t &n : found) {
    while (*p && !std::isdigit(static_cast<unsigned char>(*p)))
      ++p;
    if (!*p)
      return false;
    char *end = nullptr;
    n = std::strtoll(p, &end, 10);
    p = end;
  }
  a = found[0], b = found[1];
  return true;
}

/// SentencePiece's training error in the user's terms, its own message kept
/// as the detail.
std::string explainTrainingFailure(const std::string &corpusPath, int64_t vocabSize,
                                   const std::string &detail) {
  int64_t have = 0, need = 0;
  std::string what;
  if (detail.find("required_chars") != std::string::npos &&
      numbersAfter(detail, "required_chars", have, need))
    what = fmt::format("the corpus has more distinct characters than the vocabulary can "
                       "hold: {} pieces are needed for its characters and the special "
                       "pieces, and n_token is {}. Raise n_token to at least {}, pass "
                       "--tokenizer with an existing model, or check that the corpus is "
                       "text",
                       need, vocabSize, need);
  else if (detail.find("Vocabulary size too high") != std::string::npos &&
           numbersAfter(detail, "too high", have, need))
    what = fmt::format("the corpus is too small for a vocabulary of {} pieces (n_token): "
                       "it supports at most {}. Lower n_token, use a larger corpus, or "
                       "pass --tokenizer with an existing model",
                       vocabSize, need);
  else
    what = "SentencePiece could not train a tokenizer on it";
  return fmt::format("{}: {} (SentencePiece: {})", corpusPath, what, detail);
}

/// SentencePiece's default max_sentence_length: longer lines are skipped.
constexpr size_t kMaxSentenceBytes = 4192;

/// Whether `line` has a character SentencePiece's normalisation keeps: not
/// white space (any Unicode space: NBSP and U+3000 included) and not a
/// default-ignorable code point (zero-width characters), which nmt_nfkc
/// removes.
bool hasText(const std::string &line) {
  const icu::UnicodeString u = icu::UnicodeString::fromUTF8(line);
  for (int32_t i = 0; i < u.length();) {
    const UChar32 c = u.char32At(i);
    i += U16_LENGTH(c);
    if (!u_isUWhiteSpace(c) && !u_hasBinaryProperty(c, UCHAR_DEFAULT_IGNORABLE_CODE_POINT))
      return true;
  }
  return false;
}

/// An error unless `path` has a line SentencePiece learns from: with text
/// (hasText) and at most kMaxSentenceBytes long. Reads the file in blocks,
/// holding at most kMaxSentenceBytes + 1 bytes of a line.
Status checkTrainableText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("{}: cannot open the tokenizer training corpus", path));
  std::vector<char> block(1 << 16);
  std::string line;
  size_t lineBytes = 0, lines = 0, longLines = 0;
  // True when the line just ended is one to learn from.
  auto endLine = [&] {
    const bool tooLong = lineBytes > kMaxSentenceBytes;
    if (!tooLong && hasText(line))
      return true;
    longLines += tooLong ? 1 : 0;
    ++lines;
    lineBytes = 0;
    line.clear();
    return false;
  };
  while (in) {
    in.read(block.data(), std::streamsize(block.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      const char c = block[size_t(i)];
      if (c == '\n') {
        if (endLine())
          return Status::ok();
        continue;
      }
      if (++lineBytes <= kMaxSentenceBytes)
        line.push_back(c);
    }
  }
  if (lineBytes > 0 && endLine())
    return Status::ok();
  return Status::error(fmt::format(
      "{}: no line to train a tokenizer on: {} of its {} lines are blank (white space or "
      "invisible characters only) and {} longer than SentencePiece's {} bytes; give a corpus "
      "with text, or --tokenizer with an existing SentencePiece model",
      path, lines - longLines, lines, longLines, kMaxSentenceBytes));
}

} // namespace

Status trainTokenizer(const std::string &corpusPath, int64_t vocabSize,
                      const std::string &modelPrefix,
                      const TrainTokenizerOptions &options) {
  std::error_code ec;
  if (std::string kind = oddFileKind(corpusPath); !kind.empty())
    return Status::error(fmt::format("{}: {}, not a tokenizer training corpus", corpusPath, kind));
  if (!std::filesystem::is_regular_file(corpusPath, ec))
    return Status::error(
        fmt::format("{}: tokenizer training corpus not found", corpusPath));
  if (std::filesystem::file_size(corpusPath, ec) == 0)
    return Status::error(
        fmt::format("{}: tokenizer training corpus is empty", corpusPath));
  // SentencePiece ends the process (LOG(FATAL)) when no line is left to
  // learn from; say so first.
  XLNETC_RETURN_IF_ERROR(checkTrainableText(corpusPath));
  if (vocabSize <= kNumSpecialIds)
    return Status::error(fmt::format(
        "trainTokenizer: vocab size {} leaves no room beyond the {} special "
        "ids",
        vocabSize, kNumSpecialIds));
  if (vocabSize > kMaxTrainedVocab)
    return Status::error(fmt::format(
        "{}: cannot train a tokenizer of {} pieces (n_token): SentencePiece starts "
        "from at most {} candidate pieces, so a trained vocabulary is never larger; "
        "lower n_token or pass --tokenizer with an existing model",
        corpusPath, vocabSize, kMaxTrainedVocab));
  if (options.modelType != "unigram" && options.modelType != "bpe")
    return Status::error(
        fmt::format("trainTokenizer: model type '{}' is not unigram or bpe",
                    options.modelType));
  if (modelPrefix.empty())
    return Status::error("trainTokenizer: empty model prefix");
  std::filesystem::path parent =
      std::filesystem::path(modelPrefix).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec))
    return Status::error(fmt::format(
        "{}: the directory of the model prefix does not exist", modelPrefix));

  // Ids 0..2 and 5 are SentencePiece's meta pieces; the control symbols fill
  // the free ids in order: <cls>3 <sep>4, then <mask>6 <eod>7 <eop>8.
  std::unordered_map<std::string, std::string> args = {
      {"input", corpusPath},
      {"model_prefix", modelPrefix},
      {"vocab_size", std::to_string(vocabSize)},
      {"model_type", options.modelType},
      {"character_coverage", fmt::format("{}", options.characterCoverage)},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "5"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<s>"},
      {"eos_piece", "</s>"},
      {"pad_piece", "<pad>"},
      {"control_symbols", "<cls>,<sep>,<mask>,<eod>,<eop>"},
      {"hard_vocab_limit", options.hardVocabLimit ? "true" : "false"},
      // Determinism: one thread, every sentence, no shuffling.
      {"num_threads", "1"},
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"minloglevel", options.verbose ? "0" : "2"},
  };
  if (options.uncased)
    args["normalization_rule_name"] = "nmt_nfkc_cf";
  sentencepiece::SetRandomGeneratorSeed(options.seed);
  sentencepiece::util::Status s =
      sentencepiece::SentencePieceTrainer::Train(args);
  if (!s.ok())
    return Status::error(explainTrainingFailure(corpusPath, vocabSize, s.ToString()));
  Tokenizer check;
  return Tokenizer::load(modelPrefix + ".model", check)
      .withPrefix("trainTokenizer: ");
}

} // namespace xlnetc::rt::data
