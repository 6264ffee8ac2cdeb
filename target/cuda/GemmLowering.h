//===- GemmLowering.h - A plan's gemm steps as GEMM calls -------*- C++ -*-===//
//
// Resolves a `gemm` or `gemm_wgrad` step of a plan (docs/Plan.md) into one
// GemmDesc with cuBLASLt's column-major semantics, at compile time: the
// executor then only binds buffer addresses. The plan's tensors are
// row-major, so every product is computed transposed (Yᵀ = op(W)ᵀ·Xᵀ): the
// row-major operands are read as their column-major transposes.
//
//   gemm        Y[M,N] = act(X[M,K] · op(W) + bias)  op(W) = W[K,N] or W[N,K]ᵀ
//               → A = W (transA = transpose_w), B = X, m = N, n = M
//   gemm_wgrad  dW[K,N] = Xᵀ · dY   → A = dY, B = X (transB), m = N, n = K
//               dW[N,K] = dYᵀ · X   → A = X, B = dY (transB), m = K, n = N
//
// X is viewed as [M, K] with its last k_rank dims as K (host::gemmView).
// Epilogues: a bias alone → bias; relu or gelu_tanh with a bias →
// relu_bias / gelu_bias; the fused forms of docs/Plan.md: an init → C with
// beta 1, a second output → gelu_aux_bias, activation_grad → dgelu_bgrad. An activation the epilogue cannot apply (gelu_erf,
// or relu/gelu_tanh without a bias) is returned as `followUp`, for the
// activation kernel to apply in place afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_TARGET_CUDA_GEMMLOWERING_H
#define XLNETC_TARGET_CUDA_GEMMLOWERING_H

#include "runtime/plan/Plan.h"
#include "runtime/device/Gemm.h"

namespace xlnetc::rt::dev {

/// One gemm / gemm_wgrad step as a GEMM call on plan buffers.
struct GemmStepCall {
  GemmDesc desc;
  int a = -1, b = -1; ///< buffer ids of the A and B operands
  int bias = -1;      ///< buffer id of the bias (DGELU_BGRAD: its gradient), or -1
  int aux = -1;       ///< the GELU epilogues' aux matrix (the pre-activation), or -1
  int c = -1;         ///< the init: D = C + the product (beta 1), or -1
  int out = -1;       ///< buffer id of D
  /// Applied by the activation kernel after the GEMM (None: nothing).
  Activation followUp = Activation::None;
};

/// Resolves `step` (a gemm or gemm_wgrad of `plan`). Errors name the step.
Status lowerGemmStep(const Plan &plan, const Step &step, GemmStepCall &out);

} // namespace xlnetc::rt::dev

#endif // XLNETC_TARGET_CUDA_GEMMLOWERING_H
