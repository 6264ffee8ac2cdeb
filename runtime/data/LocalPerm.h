//===- LocalPerm.h - XLNet's _local_perm and target padding ----*- C++ -*-===//
//
// The deterministic part of the official data pipeline (data_utils.py):
// given an explicit permutation index, build the permutation mask, the new
// targets and the target mask of one half (_local_perm), combine the reuse
// half with the rest, and pad the prediction targets to num_predict as the
// official parser does. Randomness (sampling the index) stays with the
// caller, so these functions are exact and testable.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_LOCALPERM_H
#define XLNETC_RUNTIME_DATA_LOCALPERM_H

#include "runtime/Status.h"

#include <cstdint>
#include <vector>

namespace xlnetc::rt::data {

/// Special token ids of the released SentencePiece model.
inline constexpr int64_t kClsId = 3;
inline constexpr int64_t kSepId = 4;

/// Output of _local_perm for one sequence (or half) of length len.
struct LocalPermResult {
  /// len×len row-major; 1 = query i may NOT attend to key j. Empty when
  /// the caller asked for the ranks alone (densePermMask false: the
  /// training pipeline, which never builds an S×S mask).
  std::vector<float> permMask;
  /// concat(inputs[0:1], targets[:-1]): each position predicts itself.
  std::vector<int64_t> newTargets;
  /// 1 = masked and not SEP/CLS (a prediction target).
  std::vector<float> targetMask;
  /// Content-stream input: the inputs unchanged.
  std::vector<int64_t> inputK;
  /// Query-stream flag: equal to targetMask.
  std::vector<float> inputQ;
  /// The compact form of permMask (design/cuda.md §3): permMask[i,j] =
  /// queryRank[i] <= keyRank[j]. Within one _local_perm, queryRank is the
  /// official self_rev_index and keyRank the rev_index (-1 for a visible
  /// key); combinePermHalves shifts the rest's ranks (permMaskRanks).
  std::vector<int64_t> queryRank;
  std::vector<int64_t> keyRank;
};

/// Checks that `permMask` (len×len, row-major, > 0 = masked) has the rank
/// form masked(i,j) = queryRank[i] <= keyRank[j] and computes ranks that
/// reproduce it exactly. Such masks are the Ferrers relations: the sets of
/// keys the rows mask are nested. Every mask of the official pipeline has
/// the form; any other mask (a hand-written one, say) returns false and the
/// ranks are left empty.
bool permMaskRanks(const float *permMask, int64_t len,
                   std::vector<int64_t> &queryRank,
                   std::vector<int64_t> &keyRank);

/// The dense len×len mask of ranks: out[i*len + j] = queryRank[i] <=
/// keyRank[j] ? 1 : 0.
std::vector<float> permMaskFromRanks(const std::vector<int64_t> &queryRank,
                                     const std::vector<int64_t> &keyRank);

/// The permutation index of the official code for block permutation `perm`
/// (a permutation of 0..perm_size-1) over `len` positions:
/// index[c*perm_size + k] = c*perm_size + perm[k]. len must be a multiple of
/// perm_size.
Status blockPermutationIndex(const std::vector<int64_t> &perm, int64_t len,
                             std::vector<int64_t> &index);

/// The official _local_perm with an explicit `index` (a permutation of
/// 0..len-1; smaller = earlier in the factorisation order):
///   non_func = !(SEP or CLS); non_mask = !is_masked & non_func
///   rev_index = non_mask ? -1 : index
///   target_mask = !non_mask & non_func
///   self_rev_index = target_mask ? rev_index : rev_index + 1
///   perm_mask[i,j] = self_rev_index[i] <= rev_index[j] & !non_mask[j]
/// All vectors have length len; isMasked is nonzero for masked positions.
Status localPerm(const std::vector<int64_t> &inputs,
                 const std::vector<int64_t> &targets,
                 const std::vector<int64_t> &isMasked,
                 const std::vector<int64_t> &index, LocalPermResult &out,
                 int64_t sepId = kSepId, int64_t clsId = kClsId,
                 bool densePermMask = true);

/// Combines the reuse half (length reuse_len) and the rest (length rest) into
/// one sequence of length reuse_len + rest: perm masks block-diagonal, the
/// reuse half may not attend to the rest (ones), the rest may attend to the
/// whole reuse half (zeros); the other vectors are concatenated. The ranks
/// of the rest are shifted by reuse_len + 1, which is exactly that: a reuse
/// query's rank (at most reuse_len) is at most every shifted key rank (at
/// least reuse_len), a rest query's (at least reuse_len + 1) is above every
/// reuse key rank (at most reuse_len - 1).
LocalPermResult combinePermHalves(const LocalPermResult &reuse,
                                  const LocalPermResult &rest);

/// The full per-example pipeline: _local_perm on [0, reuse_len) and on
/// [reuse_len, seq_len) with the two halves of `index` (each local to its
/// half, as raw.perm_index stores it), then combinePermHalves.
Status permuteExample(const std::vector<int64_t> &inputs,
                      const std::vector<int64_t> &targets,
                      const std::vector<int64_t> &isMasked,
                      const std::vector<int64_t> &index, int64_t reuseLen,
                      LocalPermResult &out, int64_t sepId = kSepId,
                      int64_t clsId = kClsId, bool densePermMask = true);

/// Prediction targets padded to num_predict, as the official parser builds
/// them.
struct PredictionTargets {
  /// num_predict×seq_len; one-hot rows for the target positions in
  /// position order, then all-zero padding rows.
  std::vector<float> targetMapping;
  /// newTargets at those positions, 0 for padding.
  std::vector<int64_t> target;
  /// 1 for real slots, 0 for padding.
  std::vector<float> targetMask;
};

/// Builds the padded targets from a sequence-long target mask and targets.
/// More than num_predict targets is an error.
Status buildPredictionTargets(const std::vector<float> &seqTargetMask,
                              const std::vector<int64_t> &seqTargets,
                              int64_t numPredict, PredictionTargets &out);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_LOCALPERM_H
