//===- Batch.h - Batch tensors from the raw records ------------*- C++ -*-===//
//
// The parser half of the official pipeline on a whole batch: from the raw
// records (raw.input, raw.target, raw.is_masked, raw.perm_index, seg_id, all
// [bsz, seq_len]) build the batch-first tensors of golden/README.md
// ("Batch tensors"):
//   input_k [B,S] i64, seg_id [B,S] i64, perm_mask [B,S,S] f32,
//   target_mapping [B,NP,S] f32, target [B,NP] i64, target_mask [B,NP] f32.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_BATCH_H
#define XLNETC_RUNTIME_DATA_BATCH_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>

namespace xlnetc::rt::data {

/// Names of the raw tensors (kept in every batch for --dump-batch).
inline constexpr const char *kRawInput = "raw.input";
inline constexpr const char *kRawTarget = "raw.target";
inline constexpr const char *kRawIsMasked = "raw.is_masked";
inline constexpr const char *kRawPermIndex = "raw.perm_index";

/// Derives input_k, seg_id, perm_mask, perm_rank (its compact form: query
/// ranks, key ranks per row, i64 [B,2,S]), target_mapping, target and
/// target_mask from `raw` (the four raw.* tensors and seg_id; raw.is_masked
/// may be i64 or bool, the rest i64) with permuteExample and
/// buildPredictionTargets. Each row of raw.perm_index must be a permutation
/// of 0..reuseLen-1 followed by one of 0..S-reuseLen-1. The seven tensors are
/// written into `out` (other entries are left alone). Errors name the tensor
/// and row: missing tensors, wrong dtypes or shapes, a bad permutation, more
/// targets than numPredict. Without `densePermMask` (the training pipeline)
/// no perm_mask is built or written: the S×S mask never exists, only
/// perm_rank.
Status deriveBatchFromRaw(const TensorMap &raw, int64_t reuseLen,
                          int64_t numPredict, TensorMap &out,
                          bool densePermMask = true);

/// The compact form of a dense perm_mask f32 [B,S,S]: perm_rank i64 [B,2,S]
/// (row 0 the query ranks, row 1 the key ranks; permMaskRanks). A row
/// without the rank form is an error naming it, or, with `firstWithout`,
/// is reported there (-1: every row has it) and `permRank` is left alone.
Status permRankFromMask(const Tensor &permMask, Tensor &permRank,
                        int64_t *firstWithout = nullptr);

/// Any dense perm_mask f32 [B,S,S] bit-packed: perm_bits i64
/// [B,S,ceil(S/64)] (runtime/PermMask.h).
Status permBitsFromMask(const Tensor &permMask, Tensor &permBits);

/// Which compact form of perm_mask a step reads.
enum class PermMaskForm { Ranks, Bits };

/// Gives the batch the compact permutation mask the compiled step reads
/// (docs/DataPipeline.md "The compact form of perm_mask"): a perm_rank or
/// perm_bits already there is kept (checked against a perm_mask beside it);
/// else a dense perm_mask becomes perm_rank when every row has the rank
/// form, and perm_bits otherwise (the first row without ranks in
/// `firstWithoutRanks`). `form` says which the batch now has (Ranks when it
/// has no permutation mask at all: the step reports the missing input).
Status compactPermMask(TensorMap &batch, PermMaskForm &form,
                       int64_t *firstWithoutRanks = nullptr);

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_BATCH_H
