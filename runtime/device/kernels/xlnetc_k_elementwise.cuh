//===- xlnetc_k_elementwise.cuh - Elementwise plan ops ----------*- C++ -*-===//
//
// add, cast, dropout, activation and activation_grad (docs/Plan.md),
// matching the host kernels of runtime/host/Kernels.cpp and Backward.cpp. Assumes
// xlnetc_prelude.cuh was included first; conventions in xlnetc_k_common.cuh.
//
// Every op is one grid-stride loop over the flat elements: thread t of
// block b starts at b*BLOCK + t and steps by gridDim.x*BLOCK, so the 32
// lanes of a warp touch 32 consecutive floats (one 128-byte line: fully
// coalesced) on every iteration, and any grid size >= 1 covers all
// elements. The loops are scalar: the executor may hand in views at any
// 4-byte offset, so 16-byte vector accesses are not known to be aligned.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_ELEMENTWISE_CUH
#define XLNETC_K_ELEMENTWISE_CUH

#include "xlnetc_k_common.cuh"

/// First flat index of this thread and the grid-stride step.
template <int BLOCK> XL_DEVICE xl_i64 xl_grid_first() {
  return static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
}
template <int BLOCK> XL_DEVICE xl_i64 xl_grid_step() {
  return static_cast<xl_i64>(gridDim.x) * BLOCK;
}

/// add: out = a + b, N elements (host add).
template <xl_i64 N, int BLOCK, typename T_a, typename T_b, typename T_out>
XL_DEVICE void xl_add(const T_a *XL_RESTRICT a, const T_b *XL_RESTRICT b,
                      T_out *XL_RESTRICT out, XlStepRandom rnd) {
  (void)rnd;
  for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
    out[i] = a[i] + b[i];
}

/// cast: out = x in out's storage type (float to xl_bf16 rounds to nearest
/// even, xl_bf16 to float is exact).
template <xl_i64 N, int BLOCK, typename T_x, typename T_out>
XL_DEVICE void xl_cast(const T_x *XL_RESTRICT x, T_out *XL_RESTRICT out,
                       XlStepRandom rnd) {
  (void)rnd;
  for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
    out[i] = static_cast<float>(x[i]);
}

/// dropout: inverted dropout of N elements (host dropout). RATE_BITS are
/// the bits of float(rate) (C++17 has no float template parameters); the
/// element index of the hash is the flat index, its batch row made global
/// (ROW_ELEMS elements a row; 0: x has no batch dimension). Rate 0 is an
/// exact copy.
template <xl_i64 N, unsigned RATE_BITS, int BLOCK, xl_i64 ROW_ELEMS, typename T_x,
          typename T_out>
XL_DEVICE void xl_dropout(const T_x *XL_RESTRICT x, T_out *XL_RESTRICT out,
                          xl_i64 site, XlStepRandom rnd) {
  if constexpr (RATE_BITS == 0u) {
    (void)site;
    (void)rnd;
    for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
      out[i] = x[i];
  } else {
    const float rate = __uint_as_float(RATE_BITS);
    const float scale = 1.0f / (1.0f - rate);
    const XlDropKey key = xl_drop_key(rnd, site, ROW_ELEMS);
    for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
      out[i] = xl_drop_keep(key, i, rate) ? x[i] * scale : 0.0f;
  }
}

/// activation: out = act(x) elementwise (host applyActivation); ACT is an
/// XL_ACT_* code.
template <xl_i64 N, int ACT, int BLOCK, typename T_x, typename T_out>
XL_DEVICE void xl_activation(const T_x *XL_RESTRICT x, T_out *XL_RESTRICT out,
                             XlStepRandom rnd) {
  (void)rnd;
  for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
    out[i] = xl_activate<ACT>(x[i]);
}

/// activation in place: y = act(y), the epilogue of a GEMM whose activation
/// cuBLASLt cannot apply (gelu_erf; relu or gelu_tanh without a bias).
template <xl_i64 N, int ACT, int BLOCK, typename T_y>
XL_DEVICE void xl_activation_inplace(T_y *y, XlStepRandom rnd) {
  (void)rnd;
  for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
    y[i] = xl_activate<ACT>(y[i]);
}

/// activation_grad: dx = dy * act'(x), the product in double like the host
/// (activationGrad).
template <xl_i64 N, int ACT, int BLOCK, typename T_dy, typename T_x, typename T_out>
XL_DEVICE void
xl_activation_grad(const T_dy *XL_RESTRICT dy, const T_x *XL_RESTRICT x,
                   T_out *XL_RESTRICT out, XlStepRandom rnd) {
  (void)rnd;
  for (xl_i64 i = xl_grid_first<BLOCK>(); i < N; i += xl_grid_step<BLOCK>())
    out[i] = static_cast<float>(static_cast<double>(dy[i]) *
                                xl_activate_grad<ACT>(x[i]));
}

#endif // XLNETC_K_ELEMENTWISE_CUH
