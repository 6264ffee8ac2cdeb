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

/// Which rows of the global batch a step's batch rows are, so that a mask
/// is the same however a run is split into processes and micro-batches
/// (docs/Training.md "One run, however it is split"): local row b < half is
/// global row base0 + b, the others base1 + (b - half) (with bi_data a
/// rank's or micro-batch's rows are a forward half and its backward copy).
/// The default is a whole batch in one step: every row is its own.
struct DropoutRows {
  int64_t base0 = 0, base1 = 0, half = INT64_MAX;
};

/// The step's draws as the device kernels read them from device memory
/// (XlStepRandom, runtime/device/kernels/xlnetc_k_common.cuh).
struct StepRandomRecord {
  uint64_t seed;
  int64_t base0, base1, half;
};
static_assert(sizeof(StepRandomRecord) == 32, "XlStepRandom is 4 words");
XLNETC_HASH_INLINE StepRandomRecord stepRandomRecord(uint64_t seed, const DropoutRows &r) {
  return {seed, r.base0, r.base1, r.half};
}

/// The global batch row of local row `b`.
XLNETC_HASH_INLINE int64_t globalRow(const DropoutRows &r, int64_t b) {
  return b < r.half ? r.base0 + b : r.base1 + (b - r.half);
}

/// The hash index of flat element `i` of a tensor whose outer dimension is
/// the batch, `rowElems` elements a row: i with its row made global. 0
/// rowElems: a tensor without a batch dimension (the relative positions),
/// the same for every row: i itself.
XLNETC_HASH_INLINE uint64_t globalIndex(const DropoutRows &r, int64_t i, int64_t rowElems) {
  if (rowElems == 0)
    return uint64_t(i);
  const int64_t b = i / rowElems;
  return uint64_t((globalRow(r, b) - b) * rowElems + i);
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
