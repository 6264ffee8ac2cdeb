//===- LocalPerm.cpp - XLNet's _local_perm and target padding -------------===//

#include "runtime/data/LocalPerm.h"

#include <fmt/format.h>

#include <algorithm>

namespace xlnetc::rt::data {

namespace {

/// `v` is a permutation of 0..n-1.
Status checkPermutation(const std::vector<int64_t> &v, const char *what) {
  std::vector<bool> seen(v.size(), false);
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] < 0 || uint64_t(v[k]) >= v.size() || seen[v[k]])
      return Status::error(fmt::format(
          "{} is not a permutation of 0..{}: entry {} is {}", what,
          int64_t(v.size()) - 1, k, v[k]));
    seen[v[k]] = true;
  }
  return Status::ok();
}

} // namespace

Status blockPermutationIndex(const std::vector<int64_t> &perm, int64_t len,
                             std::vector<int64_t> &index) {
  int64_t ps = int64_t(perm.size());
  XLNETC_RETURN_IF_ERROR(checkPermutation(perm, "perm"));
  if (ps == 0 || len % ps != 0)
    return Status::error(fmt::format(
        "length {} is not a multiple of perm_size {}", len, ps));
  index.resize(size_t(len));
  for (int64_t c = 0; c < len / ps; ++c)
    for (int64_t k = 0; k < ps; ++k)
      index[c * ps + k] = c * ps + perm[k];
  return Status::ok();
}

Status localPerm(const std::vector<int64_t> &inputs,
                 const std::vector<int64_t> &targets,
                 const std::vector<int64_t> &isMasked,
                 const std::vector<int64_t> &index, LocalPermResult &out,
                 int64_t sepId, int64_t clsId, bool densePermMask) {
  size_t len = inputs.size();
  if (targets.size() != len || isMasked.size() != len || index.size() != len)
    return Status::error(fmt::format(
        "localPerm: lengths differ (inputs {}, targets {}, is_masked {}, "
        "index {})",
        len, targets.size(), isMasked.size(), index.size()));
  XLNETC_RETURN_IF_ERROR(checkPermutation(index, "localPerm: index"));

  // 1. Per-position vectors of the official code.
  std::vector<int64_t> revIndex(len), selfRevIndex(len);
  std::vector<bool> maskedOrFunc(len);
  out.targetMask.assign(len, 0.0f);
  for (size_t k = 0; k < len; ++k) {
    bool nonFunc = inputs[k] != sepId && inputs[k] != clsId;
    bool nonMask = isMasked[k] == 0 && nonFunc;
    maskedOrFunc[k] = !nonMask;
    revIndex[k] = nonMask ? -1 : index[k];
    bool target = !nonMask && nonFunc;
    out.targetMask[k] = target ? 1.0f : 0.0f;
    // A target may not see itself; everything else may.
    selfRevIndex[k] = target ? revIndex[k] : revIndex[k] + 1;
  }
  // 2. perm_mask[i,j] = self_rev_index[i] <= rev_index[j] & masked_or_func[j].
  out.permMask.clear();
  if (densePermMask) {
    out.permMask.assign(len * len, 0.0f);
    for (size_t i = 0; i < len; ++i)
      for (size_t j = 0; j < len; ++j)
        out.permMask[i * len + j] =
            selfRevIndex[i] <= revIndex[j] && maskedOrFunc[j] ? 1.0f : 0.0f;
  }
  // 3. Each position predicts its own token.
  out.newTargets.assign(len, 0);
  for (size_t k = 0; k < len; ++k)
    out.newTargets[k] = k == 0 ? inputs[0] : targets[k - 1];
  out.inputK = inputs;
  out.inputQ = out.targetMask;
  out.queryRank = selfRevIndex;
  out.keyRank = revIndex; // -1 exactly where masked_or_func is false
  return Status::ok();
}

LocalPermResult combinePermHalves(const LocalPermResult &reuse,
                                  const LocalPermResult &rest) {
  size_t r = reuse.inputK.size(), n = rest.inputK.size(), len = r + n;
  LocalPermResult out;
  // The dense mask only when both halves have theirs (ranks always).
  const bool dense = reuse.permMask.size() == r * r && rest.permMask.size() == n * n;
  if (dense)
    out.permMask.assign(len * len, 0.0f);
  for (size_t i = 0; dense && i < r; ++i) {
    for (size_t j = 0; j < r; ++j)
      out.permMask[i * len + j] = reuse.permMask[i * r + j];
    for (size_t j = r; j < len; ++j)
      out.permMask[i * len + j] = 1.0f; // reuse half cannot see the rest
  }
  for (size_t i = 0; dense && i < n; ++i)
    for (size_t j = 0; j < n; ++j) // the rest sees the whole reuse half
      out.permMask[(r + i) * len + r + j] = rest.permMask[i * n + j];
  auto cat = [](auto a, const auto &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  out.newTargets = cat(reuse.newTargets, rest.newTargets);
  out.targetMask = cat(reuse.targetMask, rest.targetMask);
  out.inputK = cat(reuse.inputK, rest.inputK);
  out.inputQ = cat(reuse.inputQ, rest.inputQ);
  auto shifted = [&](std::vector<int64_t> v) {
    for (int64_t &x : v)
      x += int64_t(r) + 1;
    return v;
  };
  out.queryRank = cat(reuse.queryRank, shifted(rest.queryRank));
  out.keyRank = cat(reuse.keyRank, shifted(rest.keyRank));
  return out;
}

bool permMaskRanks(const float *permMask, int64_t len,
                   std::vector<int64_t> &queryRank,
                   std::vector<int64_t> &keyRank) {
  queryRank.clear();
  keyRank.clear();
  // A key's rank is the number of rows that mask it; a row masks exactly
  // the keys masked by at least as many rows as its least-masked key
  // (nested rows), so its rank is that key's count (len + 1: none).
  std::vector<int64_t> k(size_t(len), 0), q(size_t(len), len + 1);
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j)
      if (permMask[i * len + j] > 0.0f)
        ++k[size_t(j)];
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j)
      if (permMask[i * len + j] > 0.0f)
        q[size_t(i)] = std::min(q[size_t(i)], k[size_t(j)]);
  for (int64_t i = 0; i < len; ++i)
    for (int64_t j = 0; j < len; ++j)
      if ((permMask[i * len + j] > 0.0f) != (q[size_t(i)] <= k[size_t(j)]))
        return false;
  queryRank = std::move(q);
  keyRank = std::move(k);
  return true;
}

std::vector<float> permMaskFromRanks(const std::vector<int64_t> &queryRank,
                                     const std::vector<int64_t> &keyRank) {
  size_t len = queryRank.size();
  std::vector<float> out(len * keyRank.size());
  for (size_t i = 0; i < len; ++i)
    for (size_t j = 0; j < keyRank.size(); ++j)
      out[i * keyRank.size() + j] = queryRank[i] <= keyRank[j] ? 1.0f : 0.0f;
  return out;
}

Status permuteExample(const std::vector<int64_t> &inputs,
                      const std::vector<int64_t> &targets,
                      const std::vector<int64_t> &isMasked,
                      const std::vector<int64_t> &index, int64_t reuseLen,
                      LocalPermResult &out, int64_t sepId, int64_t clsId,
                      bool densePermMask) {
  size_t len = inputs.size();
  if (reuseLen < 0 || size_t(reuseLen) > len)
    return Status::error(fmt::format(
        "permuteExample: reuse_len {} outside [0, {}]", reuseLen, len));
  if (targets.size() != len || isMasked.size() != len || index.size() != len)
    return Status::error(fmt::format(
        "permuteExample: lengths differ (inputs {}, targets {}, is_masked {}, "
        "index {})",
        len, targets.size(), isMasked.size(), index.size()));
  auto head = [&](const std::vector<int64_t> &v) {
    return std::vector<int64_t>(v.begin(), v.begin() + reuseLen);
  };
  auto tail = [&](const std::vector<int64_t> &v) {
    return std::vector<int64_t>(v.begin() + reuseLen, v.end());
  };
  LocalPermResult first, second;
  XLNETC_RETURN_IF_ERROR(localPerm(head(inputs), head(targets),
                                   head(isMasked), head(index), first, sepId,
                                   clsId, densePermMask)
                             .withPrefix("reuse half: "));
  XLNETC_RETURN_IF_ERROR(localPerm(tail(inputs), tail(targets),
                                   tail(isMasked), tail(index), second, sepId,
                                   clsId, densePermMask)
                             .withPrefix("second half: "));
  out = combinePermHalves(first, second);
  return Status::ok();
}

Status buildPredictionTargets(const std::vector<float> &seqTargetMask,
                              const std::vector<int64_t> &seqTargets,
                              int64_t numPredict, PredictionTargets &out) {
  size_t len = seqTargetMask.size();
  if (seqTargets.size() != len)
    return Status::error(fmt::format(
        "buildPredictionTargets: target mask has {} entries, targets {}", len,
        seqTargets.size()));
  std::vector<size_t> positions;
  for (size_t k = 0; k < len; ++k)
    if (seqTargetMask[k] != 0.0f)
      positions.push_back(k);
  if (numPredict < 0 || positions.size() > size_t(numPredict))
    return Status::error(fmt::format(
        "buildPredictionTargets: {} targets exceed num_predict {}",
        positions.size(), numPredict));
  out.targetMapping.assign(size_t(numPredict) * len, 0.0f);
  out.target.assign(size_t(numPredict), 0);
  out.targetMask.assign(size_t(numPredict), 0.0f);
  for (size_t m = 0; m < positions.size(); ++m) {
    out.targetMapping[m * len + positions[m]] = 1.0f;
    out.target[m] = seqTargets[positions[m]];
    out.targetMask[m] = 1.0f;
  }
  return Status::ok();
}

} // namespace xlnetc::rt::data
