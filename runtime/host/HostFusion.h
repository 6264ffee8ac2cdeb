//===- HostFusion.h - The host executor's layout choices --------*- C++ -*-===//
//
// The fusions both executors run are in the plan (--xlnet-fuse-kernels,
// docs/Plan.md "Fused forms"): the host reads them, it searches for none.
// What stays here is the one choice that depends on the host's memory, not
// on the ops:
//
// A rel_attention_grad whose operands are those of a rel_attention of the
// same step (and the same scale) reads the softmax probabilities that
// rel_attention kept ([B, N, T, K] floats, before dropatt, in the workspace
// beside the arena) instead of recomputing the score products and the
// softmax, as the device's flash-style backward does: the host has the
// memory, and that recomputation was a quarter of the backward's sgemm
// work. The gradient is the same function of the same probabilities; only a
// score product's rounding could differ, where OpenBLAS would have summed
// the backward's larger product in another order. The probabilities grow
// with seq_len × klen: pairs are kept, in plan order, while all kept
// probabilities together are no larger than the arena (the step's other
// temporaries); a step with longer sequences recomputes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_HOSTFUSION_H
#define XLNETC_RUNTIME_HOST_HOSTFUSION_H

#include "runtime/plan/MemoryPlan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xlnetc::rt {
struct Plan;
} // namespace xlnetc::rt

namespace xlnetc::rt::host {

struct HostFusions {
  /// Per step: the kept probabilities a rel_attention writes or its
  /// rel_attention_grad reads (an index into keptProbsFloats), or -1.
  std::vector<int> keptProbs;
  /// Per kept probabilities: its size in floats, B·N·T·K.
  std::vector<int64_t> keptProbsFloats;
  /// The arena of the plan's temporaries (planMemory).
  MemoryPlan memory;
  /// Per buffer: the last step reading it, or -1 (PlanDataflow::lastReader).
  std::vector<int> lastReader;
  /// The largest x a LayerNorm step drops itself (x_dropout): the host
  /// executor's one scratch buffer outside the arena.
  int64_t scratchBytes = 0;

  /// The bytes of every kept probabilities together.
  int64_t keptProbsBytes() const;
};

/// The memory plan of `plan` (a plan that parsePlan or verifyPlan accepted)
/// and, when `keepProbs`, the probabilities kept for the attention backward.
HostFusions findHostFusions(const Plan &plan, bool keepProbs);

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_HOSTFUSION_H
