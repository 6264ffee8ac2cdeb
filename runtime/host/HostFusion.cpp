//===- HostFusion.cpp - The host executor's layout choices ----------------===//

#include "runtime/host/HostFusion.h"

#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanDataflow.h"
#include "runtime/Tensor.h"

#include <algorithm>

namespace xlnetc::rt::host {

int64_t HostFusions::keptProbsBytes() const {
  int64_t floats = 0;
  for (int64_t n : keptProbsFloats)
    floats += n;
  return floats * int64_t(sizeof(float));
}

HostFusions findHostFusions(const Plan &plan, bool keepProbs) {
  const std::vector<Step> &steps = plan.steps;
  auto buf = [&](int id) -> const Buffer & { return plan.buffers[size_t(id)]; };
  HostFusions f;
  // A rel_attention_grad and the rel_attention of its operands: in[0] of
  // the gradient is dout, the rest are the forward's operands. The
  // probabilities grow with seq_len × klen, the arena (the step's other
  // temporaries) with seq_len: they are kept, in plan order, while all kept
  // together take no more than the arena, so the step's memory at most
  // doubles; longer sequences recompute.
  f.memory = planMemory(plan, /*program=*/nullptr);
  f.lastReader = planDataflow(plan).lastReader;
  for (const Step &s : steps)
    if ((s.kind == OpKind::AddLayerNorm || s.kind == OpKind::AddLayerNormGrad) &&
        s.attrs.xDropout) {
      const Buffer &x = buf(s.in[s.kind == OpKind::AddLayerNorm ? 0 : 1]);
      f.scratchBytes = std::max(f.scratchBytes, numelOf(x.shape) * int64_t(sizeof(float)));
    }
  f.keptProbs.assign(steps.size(), -1);
  const int64_t budget = f.memory.arenaBytes;
  int64_t keptBytes = 0;
  for (size_t g = 0; keepProbs && g < steps.size(); ++g) {
    const Step &grad = steps[g];
    if (grad.kind != OpKind::RelAttentionGrad || grad.in.empty())
      continue;
    const std::vector<int> operands(grad.in.begin() + 1, grad.in.end());
    for (size_t fw = 0; fw < g; ++fw) {
      const Step &forward = steps[fw];
      if (forward.kind != OpKind::RelAttention || forward.in != operands ||
          forward.attrs.scale != grad.attrs.scale || f.keptProbs[fw] >= 0)
        continue;
      // q [B, T, N, H], k [B, K, N, H]: B·T·N·K probabilities.
      const std::vector<int64_t> &q = buf(forward.in[0]).shape, &k = buf(forward.in[1]).shape;
      if (q.size() != 4 || k.size() != 4)
        break;
      const int64_t floats = q[0] * q[1] * q[2] * k[1];
      if (keptBytes + floats * int64_t(sizeof(float)) > budget)
        break;
      keptBytes += floats * int64_t(sizeof(float));
      f.keptProbs[fw] = f.keptProbs[g] = int(f.keptProbsFloats.size());
      f.keptProbsFloats.push_back(floats);
      break;
    }
  }
  return f;
}

} // namespace xlnetc::rt::host
