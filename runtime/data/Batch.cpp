//===- Batch.cpp - Batch tensors from the raw records ---------------------===//

#include "runtime/data/Batch.h"

#include "runtime/data/LocalPerm.h"
#include "runtime/PermMask.h"

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
                          int64_t numPredict, TensorMap &out, bool densePermMask) {
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

  Tensor permMask = densePermMask ? Tensor::zeros(DType::F32, {B, S, S}) : Tensor();
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
                                  rowOf(*isMasked, b), index, reuseLen, r, kSepId,
                                  kClsId, densePermMask);
        !s)
      return fail(s.withPrefix(rowPrefix));
    PredictionTargets t;
    if (Status s =
            buildPredictionTargets(r.targetMask, r.newTargets, numPredict, t);
        !s)
      return fail(s.withPrefix(rowPrefix));
    if (densePermMask)
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
  if (densePermMask)
    out["perm_mask"] = std::move(permMask);
  out["perm_rank"] = std::move(permRank);
  out["target_mapping"] = std::move(mapping);
  out["target"] = std::move(tgt);
  out["target_mask"] = std::move(tgtMask);
  return Status::ok();
}

namespace {

Status checkDensePermMask(const Tensor &permMask) {
  if (permMask.dtype != DType::F32 || permMask.shape.size() != 3 ||
      permMask.shape[1] != permMask.shape[2])
    return Status::error(fmt::format("perm_mask must be f32 [B, S, S], got {}",
                                     permMask.typeStr()));
  return Status::ok();
}

/// Whether compact mask `given` (perm_rank or perm_bits) stands for the
/// dense `permMask` of the same batch; the first difference in `error`.
Status checkAgreement(const Tensor &permMask, const char *name,
                      const Tensor &given) {
  XLNETC_RETURN_IF_ERROR(checkDensePermMask(permMask));
  int64_t B = permMask.shape[0], S = permMask.shape[1];
  bool ranks = std::string(name) == "perm_rank";
  std::vector<int64_t> want = ranks ? std::vector<int64_t>{B, 2, S}
                                    : std::vector<int64_t>{B, S, permBitsWords(S)};
  if (given.dtype != DType::I64 || given.shape != want)
    return Status::error(fmt::format("{} must be i64 {} for perm_mask {}, got {}",
                                     name, shapeStr(want), permMask.typeStr(),
                                     given.typeStr()));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j) {
        const int64_t *g = given.i64();
        bool compact = ranks ? g[(b * 2) * S + i] <= g[(b * 2 + 1) * S + j]
                             : permBit(g + (b * S + i) * permBitsWords(S), j);
        if ((permMask.f32()[(b * S + i) * S + j] > 0.0f) != compact)
          return Status::error(fmt::format(
              "{} and perm_mask disagree at batch row b={}, query {}, key {}",
              name, b, i, j));
      }
  return Status::ok();
}

} // namespace

Status permRankFromMask(const Tensor &permMask, Tensor &permRank,
                        int64_t *firstWithout) {
  XLNETC_RETURN_IF_ERROR(checkDensePermMask(permMask));
  int64_t B = permMask.shape[0], S = permMask.shape[1];
  Tensor out = Tensor::zeros(DType::I64, {B, 2, S});
  std::vector<int64_t> q, k;
  for (int64_t b = 0; b < B; ++b) {
    if (!permMaskRanks(permMask.f32() + b * S * S, S, q, k)) {
      if (firstWithout) {
        *firstWithout = b;
        return Status::ok();
      }
      return Status::error(fmt::format(
          "perm_mask row b={} has no rank form: the sets of keys its query "
          "rows may not attend to are not nested, which every mask of the "
          "official pipeline is (docs/DataPipeline.md \"The compact form of "
          "perm_mask\")",
          b));
    }
    std::copy(q.begin(), q.end(), out.i64() + b * 2 * S);
    std::copy(k.begin(), k.end(), out.i64() + (b * 2 + 1) * S);
  }
  if (firstWithout)
    *firstWithout = -1;
  permRank = std::move(out);
  return Status::ok();
}

Status permBitsFromMask(const Tensor &permMask, Tensor &permBits) {
  XLNETC_RETURN_IF_ERROR(checkDensePermMask(permMask));
  int64_t B = permMask.shape[0], S = permMask.shape[1], W = permBitsWords(S);
  permBits = Tensor::zeros(DType::I64, {B, S, W});
  for (int64_t row = 0; row < B * S; ++row)
    for (int64_t j = 0; j < S; ++j)
      if (permMask.f32()[row * S + j] > 0.0f)
        permBits.i64()[row * W + j / 64] = static_cast<int64_t>(
            static_cast<uint64_t>(permBits.i64()[row * W + j / 64]) |
            (uint64_t(1) << (j % 64)));
  return Status::ok();
}

Status compactPermMask(TensorMap &batch, PermMaskForm &form,
                       int64_t *firstWithoutRanks) {
  if (firstWithoutRanks)
    *firstWithoutRanks = -1;
  auto dense = batch.find("perm_mask");
  if (batch.count("perm_rank") && batch.count("perm_bits"))
    return Status::error("the batch has both perm_rank and perm_bits: give one compact "
                         "form of perm_mask");
  for (const char *name : {"perm_rank", "perm_bits"}) {
    auto given = batch.find(name);
    if (given == batch.end())
      continue;
    // Given with the dense mask: they must say the same (a stale compact
    // mask would win silently otherwise).
    if (dense != batch.end())
      XLNETC_RETURN_IF_ERROR(checkAgreement(dense->second, name, given->second));
    form = std::string(name) == "perm_rank" ? PermMaskForm::Ranks
                                            : PermMaskForm::Bits;
    return Status::ok();
  }
  form = PermMaskForm::Ranks;
  if (dense == batch.end())
    return Status::ok(); // the step reports the missing input
  int64_t without = -1;
  Tensor compact;
  XLNETC_RETURN_IF_ERROR(permRankFromMask(dense->second, compact, &without));
  if (without >= 0) {
    XLNETC_RETURN_IF_ERROR(permBitsFromMask(dense->second, compact));
    batch["perm_bits"] = std::move(compact);
    form = PermMaskForm::Bits;
    if (firstWithoutRanks)
      *firstWithoutRanks = without;
    return Status::ok();
  }
  batch["perm_rank"] = std::move(compact);
  return Status::ok();
}

} // namespace xlnetc::rt::data
