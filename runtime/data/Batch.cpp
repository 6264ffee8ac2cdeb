//===- Batch.cpp - Batch tensors from the raw records ---------------------===//

#include "runtime/data/Batch.h"

#include "runtime/data/LocalPerm.h"

#include <fmt/format.h>

#include <algorithm>

namespace xlnetc::rt::data {

namespace {

/// `t` exists with a dtype in `dtypes` and rank 2.
Status findRaw(const TensorMap &raw, const char *name,
               std::initializer_list<DType> dtypes, const Tensor *&t) {
  auto it = raw.find(name);
  if (it == raw.end())
    return Status::error(fmt::format("missing tensor '{}'", name));
  t = &it->second;
  if (std::find(dtypes.begin(), dtypes.end(), t->dtype) == dtypes.end())
    return Status::error(
        fmt::format("'{}' is {}; expected {}", name, t->typeStr(),
                    dtypes.size() == 1 ? "i64" : "i64 or bool"));
  if (t->shape.size() != 2)
    return Status::error(fmt::format(
        "'{}' is {}; expected rank 2 [bsz, seq_len]", name, t->typeStr()));
  return Status::ok();
}

/// Row `b` of a [B, S] i64 or bool tensor as int64 values.
std::vector<int64_t> rowOf(const Tensor &t, int64_t b) {
  int64_t S = t.shape[1];
  std::vector<int64_t> v(static_cast<size_t>(S));
  for (int64_t k = 0; k < S; ++k)
    v[size_t(k)] = t.dtype == DType::Bool ? int64_t(t.b8()[b * S + k])
                                          : t.i64()[b * S + k];
  return v;
}

/// v[begin, begin+len) is a permutation of 0..len-1.
Status checkHalf(const std::vector<int64_t> &v, int64_t begin, int64_t len,
                 const char *half) {
  std::vector<bool> seen(size_t(len), false);
  for (int64_t k = 0; k < len; ++k) {
    int64_t x = v[size_t(begin + k)];
    if (x < 0 || x >= len || seen[size_t(x)])
      return Status::error(fmt::format(
          "the {} (positions {}..{}) is not a permutation of 0..{}: position "
          "{} holds {}{}",
          half, begin, begin + len - 1, len - 1, begin + k, x,
          x >= 0 && x < len ? " twice" : ""));
    seen[size_t(x)] = true;
  }
  return Status::ok();
}

} // namespace

Status deriveBatchFromRaw(const TensorMap &raw, int64_t reuseLen,
                          int64_t numPredict, TensorMap &out) {
  auto fail = [](const Status &s) {
    return s.withPrefix("deriveBatchFromRaw: ");
  };
  const Tensor *input, *target, *isMasked, *permIndex, *segId;
  if (Status s = findRaw(raw, kRawInput, {DType::I64}, input); !s)
    return fail(s);
  if (Status s = findRaw(raw, kRawTarget, {DType::I64}, target); !s)
    return fail(s);
  if (Status s =
          findRaw(raw, kRawIsMasked, {DType::I64, DType::Bool}, isMasked);
      !s)
    return fail(s);
  if (Status s = findRaw(raw, kRawPermIndex, {DType::I64}, permIndex); !s)
    return fail(s);
  if (Status s = findRaw(raw, "seg_id", {DType::I64}, segId); !s)
    return fail(s);
  const std::vector<int64_t> &shape = input->shape;
  for (const auto &[name, t] :
       {std::pair{kRawTarget, target}, std::pair{kRawIsMasked, isMasked},
        std::pair{kRawPermIndex, permIndex}, std::pair{"seg_id", segId}})
    if (t->shape != shape)
      return fail(Status::error(fmt::format("'{}' has shape {} but '{}' has {}",
                                            name, shapeStr(t->shape), kRawInput,
                                            shapeStr(shape))));
  int64_t B = shape[0], S = shape[1];
  if (reuseLen < 0 || reuseLen > S)
    return fail(Status::error(
        fmt::format("reuse_len {} is outside [0, seq_len {}]", reuseLen, S)));
  if (numPredict < 0)
    return fail(
        Status::error(fmt::format("num_predict {} is negative", numPredict)));

  Tensor permMask = Tensor::zeros(DType::F32, {B, S, S});
  Tensor permRank = Tensor::zeros(DType::I64, {B, 2, S});
  Tensor mapping = Tensor::zeros(DType::F32, {B, numPredict, S});
  Tensor tgt = Tensor::zeros(DType::I64, {B, numPredict});
  Tensor tgtMask = Tensor::zeros(DType::F32, {B, numPredict});
  Tensor inputK = Tensor::zeros(DType::I64, {B, S});
  for (int64_t b = 0; b < B; ++b) {
    std::vector<int64_t> index = rowOf(*permIndex, b);
    auto rowPrefix = fmt::format("row {}: ", b);
    if (Status s = checkHalf(index, 0, reuseLen, "reuse half"); !s)
      return fail(s.withPrefix(rowPrefix + "raw.perm_index: "));
    if (Status s = checkHalf(index, reuseLen, S - reuseLen, "second half"); !s)
      return fail(s.withPrefix(rowPrefix + "raw.perm_index: "));
    LocalPermResult r;
    if (Status s = permuteExample(rowOf(*input, b), rowOf(*target, b),
                                  rowOf(*isMasked, b), index, reuseLen, r);
        !s)
      return fail(s.withPrefix(rowPrefix));
    PredictionTargets t;
    if (Status s =
            buildPredictionTargets(r.targetMask, r.newTargets, numPredict, t);
        !s)
      return fail(s.withPrefix(rowPrefix));
    std::copy(r.permMask.begin(), r.permMask.end(), permMask.f32() + b * S * S);
    std::copy(r.queryRank.begin(), r.queryRank.end(), permRank.i64() + b * 2 * S);
    std::copy(r.keyRank.begin(), r.keyRank.end(), permRank.i64() + (b * 2 + 1) * S);
    std::copy(t.targetMapping.begin(), t.targetMapping.end(),
              mapping.f32() + b * numPredict * S);
    std::copy(t.target.begin(), t.target.end(), tgt.i64() + b * numPredict);
    std::copy(t.targetMask.begin(), t.targetMask.end(),
              tgtMask.f32() + b * numPredict);
    std::copy(r.inputK.begin(), r.inputK.end(), inputK.i64() + b * S);
  }
  Tensor seg = *segId; // copied before `out` changes (raw may alias out)
  out["input_k"] = std::move(inputK);
  out["seg_id"] = std::move(seg);
  out["perm_mask"] = std::move(permMask);
  out["perm_rank"] = std::move(permRank);
  out["target_mapping"] = std::move(mapping);
  out["target"] = std::move(tgt);
  out["target_mask"] = std::move(tgtMask);
  return Status::ok();
}

Status permRankFromMask(const Tensor &permMask, Tensor &permRank) {
  if (permMask.dtype != DType::F32 || permMask.shape.size() != 3 ||
      permMask.shape[1] != permMask.shape[2])
    return Status::error(fmt::format("perm_mask must be f32 [B, S, S], got {}",
                                     permMask.typeStr()));
  int64_t B = permMask.shape[0], S = permMask.shape[1];
  permRank = Tensor::zeros(DType::I64, {B, 2, S});
  std::vector<int64_t> q, k;
  for (int64_t b = 0; b < B; ++b) {
    if (!permMaskRanks(permMask.f32() + b * S * S, S, q, k))
      return Status::error(fmt::format(
          "perm_mask row b={} has no rank form: the sets of keys its query "
          "rows may not attend to are not nested, which every mask of the "
          "official pipeline is (docs/DataPipeline.md \"The compact form of "
          "perm_mask\"); such masks are not supported",
          b));
    std::copy(q.begin(), q.end(), permRank.i64() + b * 2 * S);
    std::copy(k.begin(), k.end(), permRank.i64() + (b * 2 + 1) * S);
  }
  return Status::ok();
}

Status ensurePermRank(TensorMap &batch) {
  auto it = batch.find("perm_mask");
  auto given = batch.find("perm_rank");
  if (given != batch.end()) {
    // Both given: they must say the same (a stale perm_rank would win
    // silently otherwise).
    if (it != batch.end() && given->second.dtype == DType::I64 &&
        given->second.shape.size() == 3 && given->second.shape[1] == 2 &&
        it->second.dtype == DType::F32 && it->second.shape.size() == 3 &&
        it->second.shape[0] == given->second.shape[0] &&
        it->second.shape[1] == given->second.shape[2]) {
      int64_t B = it->second.shape[0], S = it->second.shape[1];
      for (int64_t b = 0; b < B; ++b) {
        const int64_t *r = given->second.i64() + b * 2 * S;
        std::vector<float> dense = permMaskFromRanks(
            std::vector<int64_t>(r, r + S), std::vector<int64_t>(r + S, r + 2 * S));
        const float *m = it->second.f32() + b * S * S;
        for (int64_t x = 0; x < S * S; ++x)
          if ((m[x] > 0.0f) != (dense[size_t(x)] > 0.0f))
            return Status::error(fmt::format(
                "perm_rank and perm_mask disagree at batch row b={}, query "
                "{}, key {}",
                b, x / S, x % S));
      }
    }
    return Status::ok();
  }
  if (it == batch.end())
    return Status::ok(); // the step reports the missing input
  Tensor rank;
  XLNETC_RETURN_IF_ERROR(permRankFromMask(it->second, rank));
  batch["perm_rank"] = std::move(rank);
  return Status::ok();
}

} // namespace xlnetc::rt::data
