//===- Sha256.h - SHA-256 for kernel cache keys -----------------*- C++ -*-===//
//
// A small, dependency-free SHA-256 (FIPS 180-4) with incremental update. The
// kernel cache names its entries by the hex digest of everything that went
// into a compiled artifact (source, headers, options, compiler version, arch)
// and authenticates each entry with an HMAC-SHA-256 (RFC 2104) under the
// user's secret key, stored with it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_SHA256_H
#define XLNETC_RUNTIME_DEVICE_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace xlnetc::rt {

/// Incremental SHA-256. `digest()` does not disturb the running state, so a
/// caller may read a digest, update further and read again.
class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();

  /// Appends `size` bytes at `data`.
  Sha256 &update(const void *data, size_t size);
  /// Appends the bytes of `data`.
  Sha256 &update(std::string_view data) {
    return update(data.data(), data.size());
  }

  /// The digest of everything appended so far.
  Digest digest() const;
  /// The digest as 64 lowercase hex characters.
  std::string hexDigest() const;

  /// One-shot helpers.
  static Digest hash(std::string_view data);
  static std::string hexHash(std::string_view data);
  /// Lowercase hex of `digest`.
  static std::string toHex(const Digest &digest);

private:
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;     // bytes waiting in buffer_
  uint64_t totalBytes_ = 0; // message length so far
};

/// HMAC-SHA-256 (RFC 2104, FIPS 198-1): a keyed digest; without the key, no
/// one can make a message whose tag matches.
class HmacSha256 {
public:
  explicit HmacSha256(std::string_view key);
  HmacSha256 &update(const void *data, size_t size) {
    inner_.update(data, size);
    return *this;
  }
  HmacSha256 &update(std::string_view data) { return update(data.data(), data.size()); }
  /// The tag of everything appended so far.
  Sha256::Digest digest() const;

private:
  Sha256 inner_;
  std::array<uint8_t, 64> outerPad_;
};

/// Compares two digests in time independent of where they differ.
bool digestsEqual(const Sha256::Digest &a, const uint8_t *b);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_DEVICE_SHA256_H
