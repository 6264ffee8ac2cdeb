//===- PermMask.h - The two compact forms of perm_mask ----------*- C++ -*-===//
//
// The attention ops read the permutation mask in a compact form
// (docs/Plan.md "Compact masks"):
//   perm_rank i64 [B,2,S]   query ranks (row 0) and key ranks (row 1):
//                           perm_mask[b,i,j] = rank[b,0,i] <= rank[b,1,j];
//                           what the data pipeline produces;
//   perm_bits i64 [B,S,W]   W = permBitsWords(S): bit j % 64 of word j / 64
//                           of row (b, i) is perm_mask[b,i,j]; for a user's
//                           perm_mask that has no rank form.
// The shapes never coincide (W < S for S > 1, and 2 != 1 for S = 1), so the
// shape of a compact mask says its form. Header-only: the dialect, the
// planner and both devices share it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PERMMASK_H
#define XLNETC_RUNTIME_PERMMASK_H

#include <cstdint>

namespace xlnetc::rt {

/// Words per row of perm_bits for sequence length S.
constexpr int64_t permBitsWords(int64_t S) { return (S + 63) / 64; }

/// Whether a compact mask of dims [d0, d1, d2] is perm_rank (else it must be
/// perm_bits [B, S, permBitsWords(S)]).
constexpr bool isPermRankShape(int64_t d1, int64_t d2, int64_t S) {
  return d1 == 2 && d2 == S;
}

/// Bit j of row `row` (the row's first word) of perm_bits.
inline bool permBit(const int64_t *row, int64_t j) {
  return (static_cast<uint64_t>(row[j / 64]) >> (j % 64)) & 1u;
}

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PERMMASK_H
