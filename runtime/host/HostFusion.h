//===- HostFusion.h - Plan steps the host executor runs as one --*- C++ -*-===//
//
// The host executor's one fusion, found on the plan (no MLIR), as the CUDA
// emitter's accumulate and add-into fusions (passes/Target/CUDA/
// CudaEmitter.cpp) are:
//
//   gemm or gemm_wgrad(...) -> Y;  add(X, Y) (or add(Y, X)) -> Z
//   => the GEMM writes Z = X + its product (OpenBLAS with beta 1 on a copy
//      of X); Y is never written and the add does not run
//   embedding_grad(ids, dout) -> Y;  add(X, Y) -> Z
//   => the scatter starts from a copy of X: Z = X + its rows' sums, rounded
//      as the add rounds them (the tied word embedding's two gradients meet
//      without a dense [V, D] temporary and an add)
//
// where the GEMM has no bias and no activation, Y is read by the add alone
// and not returned, X is there when the GEMM runs (an input or parameter,
// or written before it), Z is not returned, and X, Y and Z are f32 of one
// size. That is where the gradients of what several consumers read meet:
// the two streams' shared weights, a residual and its branch, a layer's
// input. It saves the add's pass over X, Y and Z and OpenBLAS's zeroing of
// Y. The sum is the GEMM's: where OpenBLAS splits the inner dimension into
// panels, X joins the first panel's partial sum rather than the whole
// product, a different (equally fp32) rounding than the add's.
//
// And one reuse: a rel_attention_grad whose operands are those of a
// rel_attention of the same step (and the same scale) reads the softmax
// probabilities that rel_attention kept ([B, N, T, K] floats, before
// dropatt, in the workspace beside the arena) instead of recomputing the
// score products and the softmax, as the device's flash-style backward
// does: the host has the memory, and that recomputation was a quarter of
// the backward's sgemm work. The gradient is the same function of the same
// probabilities; only a score product's rounding could differ, where
// OpenBLAS would have summed the backward's larger product in another order.
// The probabilities grow with seq_len × klen: pairs are kept, in plan order,
// while all kept probabilities together are no larger than the arena (the
// step's other temporaries); a step with longer sequences recomputes.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_HOSTFUSION_H
#define XLNETC_RUNTIME_HOST_HOSTFUSION_H

#include "runtime/MemoryPlan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace xlnetc::rt {
struct Plan;
} // namespace xlnetc::rt

namespace xlnetc::rt::host {

struct HostFusions {
  /// A GEMM or embedding_grad step that writes `into` = `init` + its
  /// result for the add step `add`.
  struct Accumulate {
    int init = -1, into = -1;
    size_t add = 0;
  };
  /// Per step: the step that does its work (an absorbed add), or -1.
  std::vector<int> absorbedBy;
  /// Per step: its accumulation when it does an add (into < 0: none).
  std::vector<Accumulate> accumulate;
  /// Per step: the buffers it reads or writes as run (an absorbed add none,
  /// a fused GEMM its operands, init and into, never its own result): the
  /// lifetimes of planMemory(plan, touched).
  std::vector<std::vector<int>> touched;
  /// Per step: the kept probabilities a rel_attention writes or its
  /// rel_attention_grad reads (an index into keptProbsFloats), or -1.
  std::vector<int> keptProbs;
  /// Per kept probabilities: its size in floats, B·N·T·K.
  std::vector<int64_t> keptProbsFloats;
  /// The arena of the steps as run: planMemory(plan, touched).
  MemoryPlan memory;

  size_t absorbedCount() const;
  /// The bytes of every kept probabilities together.
  int64_t keptProbsBytes() const;
};

/// The fusions of `plan` (a plan that parsePlan or verifyPlan accepted):
/// the adds summed in GEMMs when `accumulate`, the probabilities kept for
/// the attention backward when `keepProbs`.
HostFusions findHostFusions(const Plan &plan, bool accumulate, bool keepProbs);

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_HOSTFUSION_H
