//===- Gemm.h - One GEMM call with cuBLASLt's semantics --------*- C++ -*-===//
//
// The CUDA executor runs every matrix product of the plan as one call
// described by a GemmDesc, resolved at compile time: on a GPU it becomes a
// cuBLASLt matmul (CudaDevice), on the emulated device the same descriptor
// runs on OpenBLAS plus the epilogue loops below (gemmReference), so both
// devices compute the same thing. An epilogue cuBLASLt cannot fuse runs as
// the GEMM and an epilogue kernel instead (GemmFallback.h).
//
// The convention is cuBLASLt's, column-major:
//
//   D[m,n] = epilogue(alpha · op(A)[m,k] · op(B)[k,n] + beta · C[m,n])
//
// with op(X) = X or Xᵀ, leading dimensions lda/ldb/ldc, and `batch`
// independent products at strides strideA/B/C. A row-major [M,N] = [M,K] ·
// [K,N] product is the column-major D = Bᵀ-view · Aᵀ-view, i.e. A and B swap
// (docs/Devices.md "GEMMs"). The epilogues are cuBLASLt's:
//
//   Default      D = acc
//   Bias         D = acc + bias[row]
//   ReluBias     D = relu(acc + bias[row])
//   GeluBias     D = gelu_tanh(acc + bias[row])
//   GeluAuxBias  aux = acc + bias[row]; D = gelu_tanh(aux)
//   DGeluBGrad   D = acc · gelu_tanh'(aux); bias = Σ_col D[row, col]
//
// cuBLASLt's GELU is the tanh form (official XLNet's "gelu"); gelu_erf and
// relu without a bias get their own epilogue kernels.
//
// A and B are both f32 or both bf16; C, D, aux and the bias (or bias
// gradient) share one type, f32 or bf16 (cuBLASLt's rule: the bias has D's
// type). The products and the epilogue
// compute in f32 (CUBLAS_COMPUTE_32F) and a bf16 result is rounded once, to
// nearest even, when it is stored.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_GEMM_H
#define XLNETC_RUNTIME_DEVICE_GEMM_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>

namespace xlnetc::rt::dev {

enum class GemmEpilogue {
  Default,
  Bias,
  ReluBias,
  GeluBias,
  GeluAuxBias,
  DGeluBGrad
};

/// "default", "bias", "relu_bias", "gelu_bias", "gelu_aux_bias",
/// "dgelu_bgrad".
const char *gemmEpilogueName(GemmEpilogue e);

/// The storage of a GEMM's matrices (cuBLASLt's Atype/Btype, Ctype/Dtype).
enum class GemmType { F32, BF16 };

/// "f32" or "bf16".
inline const char *gemmTypeName(GemmType t) {
  return t == GemmType::BF16 ? "bf16" : "f32";
}
/// Bytes per element: 4 or 2.
inline int64_t gemmTypeSize(GemmType t) { return t == GemmType::BF16 ? 2 : 4; }

/// Everything about one GEMM call that is known at compile time.
struct GemmDesc {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  float alpha = 1.0f, beta = 0.0f;
  GemmEpilogue epilogue = GemmEpilogue::Default;
  /// Storage of A and B, and of C, D, aux and bias.
  GemmType ab = GemmType::F32, cd = GemmType::F32;
};

/// The device addresses of one call (host addresses on the emulated device).
/// C is read when beta != 0 and may equal D. `bias` has m entries (read by
/// the bias epilogues, written by DGeluBGrad); `aux` is [m, n] with leading
/// dimension ldc (written by GeluAuxBias, read by DGeluBGrad).
struct GemmPointers {
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void *d = nullptr;
  void *bias = nullptr;
  void *aux = nullptr;
};

/// The elements each operand spans (from its first element to its last, all
/// batch entries), for range checks: A, B, C/D/aux, bias.
struct GemmExtents {
  int64_t a = 0, b = 0, cd = 0, bias = 0;
};
GemmExtents gemmExtents(const GemmDesc &desc);

/// Checks the descriptor's own consistency (dims positive, leading
/// dimensions large enough, pointers the epilogue needs present).
Status validateGemm(const GemmDesc &desc, const GemmPointers &p);

/// The reference: operands in host memory (bf16 ones widened to f32 exactly),
/// OpenBLAS sgemm per batch entry, then the epilogue, bf16 results rounded
/// when stored; what the emulated device runs.
Status gemmReference(const GemmDesc &desc, const GemmPointers &p);

/// One line describing a call, for the generated source and messages:
/// "gemm m=256 n=1024 k=64 opA=N opB=T batch=1 epilogue=bias" (and
/// " types=bf16/bf16" when A/B or C/D are not f32).
std::string describeGemm(const GemmDesc &desc);

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_GEMM_H
