//===- xlnetc_k_epilogue.cuh - GEMM epilogues as kernels --------*- C++ -*-===//
//
// The epilogues of runtime/device/Gemm.h as kernels, for a GEMM whose fused
// epilogue cuBLASLt cannot run on this GPU, type or alignment: the executor
// runs that GEMM with the default epilogue into `acc` (D itself for an f32
// D, an f32 scratch matrix for a bf16 D, so a bf16 result is rounded once,
// here) and then one of these kernels (docs/Devices.md "GEMMs"). Unlike the
// op templates, these kernels take their shapes at run time: the executor
// decides on the fallback when it prepares a program, and this module is
// compiled once for every program.
//
// The formulas are gemmReference's (Gemm.cpp), in float: on the emulated
// device the fallback gives bitwise the fused call's results.
//
// Every kernel takes, in this order:
//
//   acc      f32 [batch] m×n column-major: leading dimension ldc, batch
//            entries strideC apart (D's layout); may be D itself (f32 D)
//   bias     m entries: read by the bias epilogues, written by dgelu_bgrad
//   aux      D's layout: written by gelu_aux_bias, read by dgelu_bgrad
//            (null for the others)
//   d        the result, D's type (T: float or xl_bf16)
//   m, n, ldc, batch, strideC
//
// and is exported for T = float and xl_bf16 as
// xl_gemm_epilogue_<epilogue>_<f32|bf16> (gemmEpilogueName's names).
// Assumes xlnetc_prelude.cuh was included first.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_EPILOGUE_CUH
#define XLNETC_K_EPILOGUE_CUH

#include "xlnetc_k_common.cuh"

/// The epilogues of the elementwise kernel (GemmEpilogue's order).
#define XL_EPI_BIAS 1
#define XL_EPI_RELU_BIAS 2
#define XL_EPI_GELU_BIAS 3
#define XL_EPI_GELU_AUX_BIAS 4

/// gelu_tanh and its derivative in float, as cuBLASLt's GELU epilogues and
/// gemmReference compute them (the same operations in the same order).
XL_DEVICE float xl_epi_gelu(float x) {
  const float c = 0.7978845608028654f; // sqrt(2/pi)
  return 0.5f * x * (1.0f + tanhf(c * (x + 0.044715f * x * x * x)));
}
XL_DEVICE float xl_epi_gelu_grad(float x) {
  const float c = 0.7978845608028654f;
  float u = c * (x + 0.044715f * x * x * x);
  float t = tanhf(u);
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x);
}

/// bias, relu_bias, gelu_bias, gelu_aux_bias: x = acc + bias[row], then
/// (gelu_aux_bias) aux = x, and d = act(x). One grid-stride loop over the
/// batch·n·m elements, rows fastest (a warp reads 32 consecutive rows of one
/// column: coalesced); any grid covers them.
template <int EPI, int BLOCK, typename T>
XL_DEVICE void xl_gemm_epilogue(const float *acc, const T *bias, T *aux, T *d, xl_i64 m,
                                xl_i64 n, xl_i64 ldc, xl_i64 batch, xl_i64 strideC) {
  const xl_i64 total = batch * n * m;
  for (xl_i64 i = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; i < total;
       i += static_cast<xl_i64>(gridDim.x) * BLOCK) {
    const xl_i64 row = i % m, col = (i / m) % n, entry = i / (m * n);
    const xl_i64 at = entry * strideC + col * ldc + row;
    float x = acc[at] + static_cast<float>(bias[row]);
    if constexpr (EPI == XL_EPI_RELU_BIAS) {
      x = x > 0.0f ? x : 0.0f;
    } else if constexpr (EPI == XL_EPI_GELU_BIAS) {
      x = xl_epi_gelu(x);
    } else if constexpr (EPI == XL_EPI_GELU_AUX_BIAS) {
      aux[at] = x;
      x = xl_epi_gelu(x);
    } else {
      static_assert(EPI == XL_EPI_BIAS, "unknown epilogue");
    }
    d[at] = x;
  }
}

/// dgelu_bgrad (not batched): d = acc · gelu_tanh'(aux) and bias[row] = the
/// sum of the row's f32 products over the columns in order, in double. One
/// thread per row (rows in a grid-stride loop), so every sum has one fixed
/// order, gemmReference's, whatever the grid, without atomics; a warp walks
/// 32 consecutive rows column by column (coalesced).
template <int BLOCK, typename T>
XL_DEVICE void xl_gemm_epilogue_dgelu_bgrad(const float *acc, T *bias, const T *aux, T *d,
                                            xl_i64 m, xl_i64 n, xl_i64 ldc) {
  for (xl_i64 row = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x; row < m;
       row += static_cast<xl_i64>(gridDim.x) * BLOCK) {
    double sum = 0.0;
    for (xl_i64 col = 0; col < n; ++col) {
      const xl_i64 at = col * ldc + row;
      const float x = acc[at] * xl_epi_gelu_grad(static_cast<float>(aux[at]));
      d[at] = x;
      sum += x;
    }
    bias[row] = static_cast<float>(sum);
  }
}

/// The block sizes the executor launches with (GemmFallback.cpp).
#define XL_EPI_BLOCK 256
#define XL_EPI_DGELU_BLOCK 128

#define XL_EPI_EXPORT(NAME, EPI, T, TYPE)                                      \
  XL_KERNEL void xl_gemm_epilogue_##NAME##_##TYPE(                             \
      const float *acc, T *bias, T *aux, T *d, xl_i64 m, xl_i64 n, xl_i64 ldc, \
      xl_i64 batch, xl_i64 strideC) {                                          \
    xl_gemm_epilogue<EPI, XL_EPI_BLOCK>(acc, bias, aux, d, m, n, ldc, batch,   \
                                        strideC);                              \
  }                                                                            \
  XL_EXPORT(xl_gemm_epilogue_##NAME##_##TYPE)

#define XL_EPI_EXPORT_DGELU(T, TYPE)                                           \
  XL_KERNEL void xl_gemm_epilogue_dgelu_bgrad_##TYPE(                          \
      const float *acc, T *bias, T *aux, T *d, xl_i64 m, xl_i64 n, xl_i64 ldc, \
      xl_i64 batch, xl_i64 strideC) {                                          \
    (void)batch;                                                               \
    (void)strideC;                                                             \
    xl_gemm_epilogue_dgelu_bgrad<XL_EPI_DGELU_BLOCK>(acc, bias, aux, d, m, n,  \
                                                     ldc);                     \
  }                                                                            \
  XL_EXPORT(xl_gemm_epilogue_dgelu_bgrad_##TYPE)

XL_EPI_EXPORT(bias, XL_EPI_BIAS, float, f32)
XL_EPI_EXPORT(relu_bias, XL_EPI_RELU_BIAS, float, f32)
XL_EPI_EXPORT(gelu_bias, XL_EPI_GELU_BIAS, float, f32)
XL_EPI_EXPORT(gelu_aux_bias, XL_EPI_GELU_AUX_BIAS, float, f32)
XL_EPI_EXPORT_DGELU(float, f32)
XL_EPI_EXPORT(bias, XL_EPI_BIAS, xl_bf16, bf16)
XL_EPI_EXPORT(relu_bias, XL_EPI_RELU_BIAS, xl_bf16, bf16)
XL_EPI_EXPORT(gelu_bias, XL_EPI_GELU_BIAS, xl_bf16, bf16)
XL_EPI_EXPORT(gelu_aux_bias, XL_EPI_GELU_AUX_BIAS, xl_bf16, bf16)
XL_EPI_EXPORT_DGELU(xl_bf16, bf16)

#endif // XLNETC_K_EPILOGUE_CUH
