//===- Synthetic.cpp - generated batches ----------------------------------===//

#include "xlnetc/Driver/Synthetic.h"

#include "runtime/train/StateNames.h"
#include "runtime/data/LocalPerm.h"

#include <algorithm>
#include <numeric>
#include <random>

namespace xlnetc {

rt::Status syntheticBatch(const ModelSpec &spec, const StepShape &shape,
                          uint64_t seed, rt::TensorMap &batch) {
  namespace data = rt::data;
  const int64_t B = shape.batch, S = shape.seqLen, NP = shape.numPredict;
  const int64_t reuse = shape.reuseLen > 0 && shape.reuseLen < S ? shape.reuseLen : S / 2;
  const int64_t rest = S - reuse;
  std::mt19937_64 rng(seed ^ 0x5eedba7c4ULL);
  const int64_t firstWord = spec.nToken > 9 ? 9 : 0; // skip the special ids
  std::uniform_int_distribution<int64_t> token(firstWord, spec.nToken - 1);

  std::vector<int64_t> inputK, segId, target;
  std::vector<float> permMask, targetMapping, targetMask;
  std::vector<int64_t> permRank;
  for (int64_t b = 0; b < B; ++b) {
    // 1. Record: [reuse | A SEP B SEP CLS], targets are the next tokens.
    std::vector<int64_t> in(S), seg(S, 0), next(S);
    for (int64_t &t : in)
      t = token(rng);
    int64_t aLen = std::max<int64_t>((rest - 3) / 2, 0);
    if (rest >= 3) {
      in[reuse + aLen] = data::kSepId;
      in[S - 2] = data::kSepId;
      in[S - 1] = data::kClsId;
      std::fill(seg.begin() + reuse + aLen + 1, seg.end() - 1, 1);
      seg[S - 1] = 2;
    }
    for (int64_t i = 0; i + 1 < S; ++i)
      next[i] = in[i + 1];
    next[S - 1] = token(rng);

    // 2. Masked positions: ceil(np/2) in the reuse part, floor(np/2) after.
    std::vector<int64_t> masked(S, 0);
    auto pick = [&](int64_t begin, int64_t end, int64_t count) {
      std::vector<int64_t> cand;
      for (int64_t i = begin; i < end; ++i)
        if (in[i] != data::kSepId && in[i] != data::kClsId)
          cand.push_back(i);
      std::shuffle(cand.begin(), cand.end(), rng);
      for (int64_t i = 0; i < std::min<int64_t>(count, cand.size()); ++i)
        masked[cand[i]] = 1;
    };
    pick(0, reuse, (NP + 1) / 2);
    pick(reuse, S, NP / 2);

    // 3. Permutation: one random order per block of perm_size, per half.
    auto halfIndex = [&](int64_t len, std::vector<int64_t> &index) {
      int64_t block = spec.permSize > 0 && len % spec.permSize == 0 ? spec.permSize : len;
      std::vector<int64_t> perm(block);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      return data::blockPermutationIndex(perm, len, index);
    };
    std::vector<int64_t> index, restIndex;
    XLNETC_RETURN_IF_ERROR(halfIndex(reuse, index));
    XLNETC_RETURN_IF_ERROR(halfIndex(rest, restIndex));
    index.insert(index.end(), restIndex.begin(), restIndex.end());

    data::LocalPermResult perm;
    data::PredictionTargets pred;
    XLNETC_RETURN_IF_ERROR(data::permuteExample(in, next, masked, index, reuse, perm));
    XLNETC_RETURN_IF_ERROR(
        data::buildPredictionTargets(perm.targetMask, perm.newTargets, NP, pred));
    inputK.insert(inputK.end(), in.begin(), in.end());
    segId.insert(segId.end(), seg.begin(), seg.end());
    permMask.insert(permMask.end(), perm.permMask.begin(), perm.permMask.end());
    permRank.insert(permRank.end(), perm.queryRank.begin(), perm.queryRank.end());
    permRank.insert(permRank.end(), perm.keyRank.begin(), perm.keyRank.end());
    targetMapping.insert(targetMapping.end(), pred.targetMapping.begin(),
                         pred.targetMapping.end());
    target.insert(target.end(), pred.target.begin(), pred.target.end());
    targetMask.insert(targetMask.end(), pred.targetMask.begin(), pred.targetMask.end());
  }

  batch.clear();
  batch["input_k"] = rt::Tensor::fromI64({B, S}, inputK);
  batch["seg_id"] = rt::Tensor::fromI64({B, S}, segId);
  batch["perm_mask"] = rt::Tensor::fromF32({B, S, S}, permMask);
  batch["perm_rank"] = rt::Tensor::fromI64({B, 2, S}, permRank);
  batch["target_mapping"] = rt::Tensor::fromF32({B, NP, S}, targetMapping);
  batch["target"] = rt::Tensor::fromI64({B, NP}, target);
  batch["target_mask"] = rt::Tensor::fromF32({B, NP}, targetMask);
  for (int64_t l = 0; shape.mlen > 0 && l < spec.nLayer; ++l)
    batch[rt::train::names::mems(l)] =
        rt::Tensor::zeros(rt::DType::F32, {shape.mlen, B, spec.dModel});
  return rt::Status::ok();
}

} // namespace xlnetc
