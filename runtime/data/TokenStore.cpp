//===- TokenStore.cpp - A corpus's tokens, in memory or memory-mapped -----===//

#include "runtime/data/TokenStore.h"

#include "runtime/data/Corpus.h"

#include <algorithm>

namespace xlnetc::rt::data {

namespace {

constexpr uint64_t kDigestPrime = 0x100000001b3ull;

/// P^n and 1 + P + ... + P^(n-1), mod 2^64, by doubling.
void powerAndSum(int64_t n, uint64_t &power, uint64_t &sum) {
  power = 1;
  sum = 0;
  for (int bit = 62; bit >= 0; --bit) {
    sum = sum * (1 + power); // G(2m) = G(m)(1 + P^m)
    power = power * power;
    if ((n >> bit) & 1) {
      sum = sum * kDigestPrime + 1; // G(m+1) = G(m)·P + 1
      power = power * kDigestPrime;
    }
  }
}

} // namespace

void StreamDigest::add(int64_t token, uint8_t flag) {
  hash = hash * kDigestPrime + (2 * uint64_t(token) + flag + 1);
  flagPart = flagPart * kDigestPrime + flag;
  ++count;
}

void StreamDigest::append(const StreamDigest &next, bool invert) {
  uint64_t power = 1, sum = 0;
  powerAndSum(next.count, power, sum);
  // Inverting the flags turns each value v = 2t + f + 1 into v + 1 - 2f:
  // the hash gains the geometric sum and loses twice the flags' part.
  const uint64_t nextHash = invert ? next.hash + sum - 2 * next.flagPart : next.hash;
  const uint64_t nextFlags = invert ? sum - next.flagPart : next.flagPart;
  hash = hash * power + nextHash;
  flagPart = flagPart * power + nextFlags;
  count += next.count;
}

TokenStore::TokenStore(std::vector<Piece> pieces, std::shared_ptr<void> keepAlive)
    : keepAlive_(std::move(keepAlive)) {
  for (const Piece &p : pieces) {
    if (p.count == 0)
      continue; // so that every position has one piece
    pieces_.push_back(p);
    starts_.push_back(size_);
    size_ += p.count;
  }
}

std::shared_ptr<const TokenStore> TokenStore::fromCorpus(const Corpus &corpus) {
  auto packed = std::make_shared<std::vector<uint32_t>>(corpus.tokens.size());
  for (size_t k = 0; k < corpus.tokens.size(); ++k)
    (*packed)[k] = packToken(corpus.tokens[k], corpus.sentIds[k], 4);
  Piece piece{packed->data(), int64_t(packed->size()), 4, false};
  return std::make_shared<TokenStore>(std::vector<Piece>{piece}, std::move(packed));
}

TokenStore::Located TokenStore::locate(int64_t pos) const {
  // The last piece starting at or before pos (none is empty).
  const size_t i = size_t(std::upper_bound(starts_.begin(), starts_.end(), pos) -
                          starts_.begin()) - 1;
  const Piece &p = pieces_[i];
  const int64_t k = pos - starts_[i];
  if (p.width == 2)
    return {&p, static_cast<const uint16_t *>(p.data)[k], 0x8000u};
  return {&p, static_cast<const uint32_t *>(p.data)[k], 0x80000000u};
}

StreamDigest TokenStore::digest() const {
  StreamDigest d;
  for (const Piece &p : pieces_) {
    StreamDigest piece;
    const uint32_t bit = p.width == 2 ? 0x8000u : 0x80000000u;
    for (int64_t k = 0; k < p.count; ++k) {
      const uint32_t v = p.width == 2 ? static_cast<const uint16_t *>(p.data)[k]
                                      : static_cast<const uint32_t *>(p.data)[k];
      piece.add(int64_t(v & ~bit), uint8_t((v & bit) != 0));
    }
    d.append(piece, p.invert);
  }
  return d;
}

} // namespace xlnetc::rt::data
