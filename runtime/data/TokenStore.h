//===- TokenStore.h - A corpus's tokens, in memory or memory-mapped -*- C++ -*-===//
//
// The batch stream reads a corpus as one stream of tokens, each with its
// sentence flag (Corpus::sentIds). A TokenStore holds that stream packed,
// one unsigned integer per token: the id in the low bits, the flag in the
// top bit (uint16 when every id is below 2^15, else uint32). Its pieces are
// concatenated: one owned piece for a corpus read into memory, one
// memory-mapped shard each for prepared data (PreparedData.h), whose flags
// may be stored inverted (a shard's flags start at "true", as each file's do
// in the official create_data; the official concatenation flips a file whose
// first flag equals the last one before it).
//
// StreamDigest hashes such a stream so that pieces hashed apart (prepare-
// data's units, in parallel) combine to the digest of the whole: it is what
// the batch stream's fingerprint reads, so a run over prepared data has the
// fingerprint of the same text read into memory.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_TOKENSTORE_H
#define XLNETC_RUNTIME_DATA_TOKENSTORE_H

#include "runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt::data {

struct Corpus;

/// A polynomial hash mod 2^64 of the values 2·token + flag + 1, mergeable:
/// digest(AB) = digest(A)·P^|B| + digest(B), and that of B with its flags
/// inverted follows from B's own (flagPart keeps what inversion changes).
struct StreamDigest {
  uint64_t hash = 0;
  uint64_t flagPart = 0; // the same polynomial over the flags alone
  int64_t count = 0;

  void add(int64_t token, uint8_t flag);
  /// Appends the digest of the tokens that follow, their flags inverted
  /// when `invert`.
  void append(const StreamDigest &next, bool invert);
};

/// The packed form of one token: `id` in the low bits, `flag` in the top bit
/// of an element of `width` bytes (2 or 4).
inline uint32_t packToken(int64_t id, uint8_t flag, int width) {
  return uint32_t(id) | (uint32_t(flag != 0) << (8 * width - 1));
}

/// The element width (2 or 4 bytes) that holds ids below `vocabSize` and
/// the flag bit.
inline int tokenWidthFor(int64_t vocabSize) { return vocabSize <= (1 << 15) ? 2 : 4; }

/// A corpus's token stream: concatenated pieces of packed tokens.
class TokenStore {
public:
  /// One piece: `count` packed tokens of `width` bytes at `data` (kept alive
  /// by the store), its flags inverted when `invert`.
  struct Piece {
    const void *data = nullptr;
    int64_t count = 0;
    int width = 4;
    bool invert = false;
  };

  TokenStore() = default;
  /// A store of `pieces`; `keepAlive` owns what they point into (an owned
  /// buffer, memory maps).
  TokenStore(std::vector<Piece> pieces, std::shared_ptr<void> keepAlive);

  /// The corpus's tokens and flags packed into one owned piece (4 bytes a
  /// token; the Corpus can go once this is made).
  static std::shared_ptr<const TokenStore> fromCorpus(const Corpus &corpus);

  int64_t size() const { return size_; }
  int64_t token(int64_t pos) const {
    const Located l = locate(pos);
    return int64_t(l.value & ~l.flagBit);
  }
  uint8_t flag(int64_t pos) const {
    const Located l = locate(pos);
    return uint8_t(((l.value & l.flagBit) != 0) != l.piece->invert);
  }
  /// The digest of the whole stream (a pass over every token).
  StreamDigest digest() const;

private:
  struct Located {
    const Piece *piece;
    uint32_t value, flagBit;
  };
  Located locate(int64_t pos) const;

  std::vector<Piece> pieces_;
  std::vector<int64_t> starts_; // starts_[i]: the position of piece i's first token
  int64_t size_ = 0;
  std::shared_ptr<void> keepAlive_;
};

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_TOKENSTORE_H
