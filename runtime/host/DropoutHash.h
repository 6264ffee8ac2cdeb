//===- DropoutHash.h - The dropout hash, shared by every executor -*- C++ -*-===//
//
// Self-contained (no other headers, always inlined): VecKernels.cpp, built
// once per x86-64 level, includes it, and an out-of-line copy built for
// AVX-512 must never be what the linker picks for baseline callers.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_DROPOUTHASH_H
#define XLNETC_RUNTIME_HOST_DROPOUTHASH_H

#include <cstdint>

#define XLNETC_HASH_INLINE [[gnu::always_inline]] inline

namespace xlnetc::rt::host {

//===----------------------------------------------------------------------===//
// Dropout hash, shared by every executor
//===----------------------------------------------------------------------===//

/// The splitmix64 finaliser (Steele et al.).
XLNETC_HASH_INLINE uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// Per-(step seed, site) key; hashing it first keeps masks of different
/// seeds or sites uncorrelated.
XLNETC_HASH_INLINE uint64_t dropoutKey(uint64_t seed, int64_t site) {
  return splitmix64(seed ^ (uint64_t(site) * 0x9e3779b97f4a7c15ull));
}

/// Whether element `index` is kept: u = top 24 bits of
/// splitmix64(key ^ index) scaled to [0, 1), kept iff u >= rate (as float).
XLNETC_HASH_INLINE bool dropoutKeep(uint64_t key, uint64_t index, float rate) {
  uint64_t h = splitmix64(key ^ index);
  float u = float(h >> 40) * (1.0f / 16777216.0f);
  return u >= rate;
}

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_DROPOUTHASH_H
