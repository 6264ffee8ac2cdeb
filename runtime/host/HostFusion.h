//===- HostFusion.h - Plan steps the host executor runs as one --*- C++ -*-===//
//
// The host executor's one fusion, found on the plan (no MLIR), as the CUDA
// emitter's accumulate fusion (passes/Target/CUDA/CudaEmitter.cpp) is:
//
//   gemm or gemm_wgrad(...) -> Y;  add(X, Y) (or add(Y, X)) -> Z
//   => the GEMM writes Z = X + its product (OpenBLAS with beta 1 on a copy
//      of X); Y is never written and the add does not run
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
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_HOSTFUSION_H
#define XLNETC_RUNTIME_HOST_HOSTFUSION_H

#include <cstddef>
#include <vector>

namespace xlnetc::rt {
struct Plan;
} // namespace xlnetc::rt

namespace xlnetc::rt::host {

struct HostFusions {
  /// A GEMM step that writes `into` = `init` + its product for the add step
  /// `add`.
  struct Accumulate {
    int init = -1, into = -1;
    size_t add = 0;
  };
  /// Per step: the GEMM that does its work (an absorbed add), or -1.
  std::vector<int> absorbedBy;
  /// Per step: its accumulation when it is a fused GEMM (into < 0: none).
  std::vector<Accumulate> accumulate;
  /// Per step: the buffers it reads or writes as run (an absorbed add none,
  /// a fused GEMM its operands, init and into, never its own result): the
  /// lifetimes of planMemory(plan, touched).
  std::vector<std::vector<int>> touched;

  size_t absorbedCount() const;
};

/// The fusions of `plan` (a plan that parsePlan or verifyPlan accepted).
HostFusions findHostFusions(const Plan &plan);

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_HOSTFUSION_H
