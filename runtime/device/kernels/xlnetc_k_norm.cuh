//===- xlnetc_k_norm.cuh - Layer norm and row-sum ops -----------*- C++ -*-===//
//
// add_layer_norm, add_layer_norm_grad and bias_grad (docs/Plan.md), matching
// runtime/host/Kernels.cpp and Backward.cpp. Assumes xlnetc_prelude.cuh was
// included first; conventions in xlnetc_k_common.cuh.
//
// Row-wise ops: one block per row, rows in a grid-stride loop over
// blockIdx.x. Thread t owns columns t, t + BLOCK, ... of the row and keeps
// them in registers (kPer = ceil(D / BLOCK) of them, unrolled: D and BLOCK
// are compile-time), so a row is read from global memory once, and each
// pass of a warp over the row reads 32 consecutive floats (coalesced). The
// row statistics are double block sums in a fixed tree (xl_block_sum), so
// they do not depend on the grid. The emitter should pick BLOCK >= D / 16
// or so to keep kPer, and the registers, small.
//
// Sums over rows (dgamma, dbeta, bias_grad) are two launches of the same
// template, no atomics:
//
//   PHASE 0: the rows are cut into fixed parts of ROWS_PER_PART rows; each
//            part (grid-stride over parts/items) sums its rows in row order
//            in double and writes its partial sums to `workspace`;
//   PHASE 1: every column sums the partials over the parts in part order.
//
// The partition depends only on the template parameters, so the result is
// bitwise the same for any grid. Workspace sizes (doubles):
//
//   add_layer_norm_grad: ceil(ROWS / ROWS_PER_PART) * 2 * D
//   bias_grad:           ceil(ROWS / ROWS_PER_PART) * N
//
// With ROWS_PER_PART = 32, add_layer_norm_grad's partition is the host's
// (kBlockRows in Backward.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_K_NORM_CUH
#define XLNETC_K_NORM_CUH

#include "xlnetc_k_common.cuh"

/// Where add_layer_norm(_grad) reads its operand x: straight from memory,
/// or, when the emitter fused the dropout that made x (XDROP), recomputed
/// from the dropout's input: dropout(x) by the same hash and index as
/// xl_dropout (`key`: xl_drop_key with x's elements a batch row),
/// rounded to the dropout's output type (Y_BF16: xl_bf16, else float), so the
/// value is bitwise what the dropout would have stored.
template <int XDROP, unsigned XDROP_BITS, int Y_BF16> struct XlLnX {
  template <typename T_x>
  XL_DEVICE static float at(const T_x *x, xl_i64 i, const XlDropKey &key) {
    if constexpr (!XDROP) {
      (void)key;
      return static_cast<float>(x[i]);
    } else {
      float y = static_cast<float>(x[i]);
      if constexpr (XDROP_BITS != 0u) {
        const float rate = __uint_as_float(XDROP_BITS);
        y = xl_drop_keep(key, i, rate)
                ? y * (1.0f / (1.0f - rate))
                : 0.0f;
      }
      if constexpr (Y_BF16)
        return static_cast<float>(xl_float2bf16(y));
      else
        return y;
    }
  }
};

/// The statistics of one row of LayerNorm(x + residual), shared by the
/// forward and the backward so both compute them identically: v[j] = x +
/// residual of this thread's columns d = threadIdx.x + j·BLOCK (rounded to
/// float as on the host, 0 past D; x read through X, row `row`), the mean
/// and the biased variance as two passes in double over the block.
template <int D, int BLOCK, int PER, class X, typename T_x, typename T_rr>
XL_DEVICE void xl_ln_row_stats(const T_x *XL_RESTRICT x, xl_i64 row, const XlDropKey &key,
                               const T_rr *XL_RESTRICT rr, float (&v)[PER],
                               double *scratch, double &mean, double &var) {
  double sum = 0.0;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int d = threadIdx.x + j * BLOCK;
    v[j] = d < D ? X::at(x, row * D + d, key) + static_cast<float>(rr[d]) : 0.0f;
    sum += static_cast<double>(v[j]);
  }
  mean = xl_block_sum<BLOCK>(sum, scratch) / double(D);
  double sq = 0.0;
#pragma unroll
  for (int j = 0; j < PER; ++j) {
    const int d = threadIdx.x + j * BLOCK;
    if (d < D) {
      const double c = static_cast<double>(v[j]) - mean;
      sq += c * c;
    }
  }
  var = xl_block_sum<BLOCK>(sq, scratch) / double(D);
}

/// add_layer_norm: out = LayerNorm(x + residual) over the last dim D
/// (biased variance, two passes in double like the host), x and residual
/// [ROWS, D], gamma and beta [D]. EPS_BITS are the bits of the double eps.
/// xl_dropout_add_layer_norm is the same with x the input of a dropout
/// (rate XDROP_BITS, site `xsite`, ROW_ELEMS elements of x a batch row)
/// that is never stored (XlLnX).
template <xl_i64 ROWS, int D, xl_u64 EPS_BITS, int BLOCK, int XDROP,
          unsigned XDROP_BITS, int Y_BF16, xl_i64 ROW_ELEMS, typename T_x, typename T_residual,
          typename T_gamma, typename T_beta, typename T_out>
XL_DEVICE void
xl_add_layer_norm_impl(const T_x *XL_RESTRICT x, const T_residual *XL_RESTRICT residual,
                       const T_gamma *XL_RESTRICT gamma, const T_beta *XL_RESTRICT beta,
                       T_out *XL_RESTRICT out, xl_i64 xsite, XlStepRandom rnd) {
  static_assert(D > 0, "add_layer_norm: D must be positive");
  using X = XlLnX<XDROP, XDROP_BITS, Y_BF16>;
  constexpr int kPer = (D + BLOCK - 1) / BLOCK;
  XL_SHARED double scratch[BLOCK / 32];
  const double eps = __longlong_as_double(static_cast<long long>(EPS_BITS));
  const XlDropKey key = xl_drop_key(rnd, XDROP ? xsite : 0, ROW_ELEMS);
  for (xl_i64 row = blockIdx.x; row < ROWS; row += gridDim.x) {
    const auto *rr = residual + row * D;
    float v[kPer]; // x + residual, rounded to float as on the host
    double mean, var;
    xl_ln_row_stats<D, BLOCK, kPer, X>(x, row, key, rr, v, scratch, mean, var);
    const double inv = 1.0 / sqrt(var + eps);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int d = threadIdx.x + j * BLOCK;
      if (d < D)
        out[row * D + d] = static_cast<float>(
            (static_cast<double>(v[j]) - mean) * inv * gamma[d] + beta[d]);
    }
  }
}

template <xl_i64 ROWS, int D, xl_u64 EPS_BITS, int BLOCK, typename T_x, typename T_residual, typename T_gamma, typename T_beta, typename T_out>
XL_DEVICE void
xl_add_layer_norm(const T_x *XL_RESTRICT x, const T_residual *XL_RESTRICT residual,
                  const T_gamma *XL_RESTRICT gamma, const T_beta *XL_RESTRICT beta,
                  T_out *XL_RESTRICT out, XlStepRandom rnd) {
  xl_add_layer_norm_impl<ROWS, D, EPS_BITS, BLOCK, 0, 0u, 0, 0>(x, residual, gamma, beta,
                                                                out, 0, rnd);
}

template <xl_i64 ROWS, int D, xl_u64 EPS_BITS, int BLOCK, unsigned XDROP_BITS,
          int Y_BF16, xl_i64 ROW_ELEMS, typename T_x, typename T_residual, typename T_gamma,
          typename T_beta, typename T_out>
XL_DEVICE void xl_dropout_add_layer_norm(
    const T_x *XL_RESTRICT x, const T_residual *XL_RESTRICT residual,
    const T_gamma *XL_RESTRICT gamma, const T_beta *XL_RESTRICT beta,
    T_out *XL_RESTRICT out, xl_i64 xsite, XlStepRandom rnd) {
  xl_add_layer_norm_impl<ROWS, D, EPS_BITS, BLOCK, 1, XDROP_BITS, Y_BF16, ROW_ELEMS>(
      x, residual, gamma, beta, out, xsite, rnd);
}

/// add_layer_norm_grad, the two phases (see the file comment):
///  PHASE 0 writes dsum [ROWS, D] (the gradient of x and residual) and the
///          per-part partials of dgamma and dbeta to workspace
///          [parts][2][D] (dgamma's D, then dbeta's D);
///  PHASE 1 writes dgamma and dbeta [D] from the workspace.
/// Both phases take the same arguments; each ignores what it does not use.
/// xl_add_layer_norm_grad_fused is the same with the emitter's fusions: x
/// read through XlLnX (XDROP: the forward's dropout, recomputed); with
/// DDROP, PHASE 0 also writing ddrop = dropout(dsum) (rate DDROP_BITS, site
/// `dsite`; both dropouts' tensors ROW_ELEMS elements a batch row) from dsum
/// as stored — the gradient through the forward's
/// dropout, which the plan computes as a separate dropout step; and with
/// dgamma_init / dbeta_init (not null) PHASE 1 writing init + the gain's
/// gradient as stored — the other stream's gradient of the same LayerNorm,
/// which the plan adds in an `add` step.
template <xl_i64 ROWS, int D, xl_u64 EPS_BITS, int ROWS_PER_PART, int PHASE,
          int BLOCK, int XDROP, unsigned XDROP_BITS, int Y_BF16, int DDROP,
          unsigned DDROP_BITS, xl_i64 ROW_ELEMS, typename T_dout, typename T_x, typename T_residual,
          typename T_gamma, typename T_dgInit, typename T_dbInit, typename T_dsum,
          typename T_ddrop, typename T_dgamma, typename T_dbeta>
XL_DEVICE void xl_add_layer_norm_grad_fused(
    const T_dout *XL_RESTRICT dout, const T_x *XL_RESTRICT x,
    const T_residual *XL_RESTRICT residual, const T_gamma *XL_RESTRICT gamma,
    const T_dgInit *XL_RESTRICT dgammaInit, const T_dbInit *XL_RESTRICT dbetaInit,
    T_dsum *XL_RESTRICT dsum, T_ddrop *XL_RESTRICT ddrop,
    T_dgamma *XL_RESTRICT dgamma, T_dbeta *XL_RESTRICT dbeta,
    double *XL_RESTRICT workspace, xl_i64 xsite, xl_i64 dsite,
    XlStepRandom rnd) {
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  static_assert(ROWS_PER_PART > 0, "ROWS_PER_PART must be positive");
  static_assert(D > 0, "add_layer_norm_grad: D must be positive");
  using X = XlLnX<XDROP, XDROP_BITS, Y_BF16>;
  constexpr xl_i64 kParts = (ROWS + ROWS_PER_PART - 1) / ROWS_PER_PART;
  if constexpr (PHASE == 1) {
    (void)xsite, (void)dsite, (void)rnd;
    // Column d sums its partials in part order; adjacent threads read
    // adjacent doubles of each part (coalesced).
    for (xl_i64 d = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
         d < D; d += static_cast<xl_i64>(gridDim.x) * BLOCK) {
      double sg = 0.0, sb = 0.0;
      for (xl_i64 p = 0; p < kParts; ++p) {
        sg += workspace[p * 2 * D + d];
        sb += workspace[p * 2 * D + D + d];
      }
      // As stored, then the add on what was stored (rounded as `add` would).
      const float g = static_cast<float>(static_cast<T_dgamma>(static_cast<float>(sg)));
      const float b = static_cast<float>(static_cast<T_dbeta>(static_cast<float>(sb)));
      dgamma[d] = dgammaInit ? static_cast<float>(dgammaInit[d]) + g : g;
      dbeta[d] = dbetaInit ? static_cast<float>(dbetaInit[d]) + b : b;
    }
  } else {
    constexpr int kPer = (D + BLOCK - 1) / BLOCK;
    XL_SHARED double scratch[BLOCK / 32];
    const double eps = __longlong_as_double(static_cast<long long>(EPS_BITS));
    const XlDropKey xkey = xl_drop_key(rnd, XDROP ? xsite : 0, ROW_ELEMS);
    const XlDropKey dkey = xl_drop_key(rnd, DDROP ? dsite : 0, ROW_ELEMS);
    for (xl_i64 part = blockIdx.x; part < kParts; part += gridDim.x) {
      double pg[kPer], pb[kPer]; // this thread's columns of the partials
#pragma unroll
      for (int j = 0; j < kPer; ++j)
        pg[j] = pb[j] = 0.0;
      const xl_i64 end =
          (part + 1) * ROWS_PER_PART < ROWS ? (part + 1) * ROWS_PER_PART : ROWS;
      for (xl_i64 row = part * ROWS_PER_PART; row < end; ++row) {
        const auto *gr = dout + row * D;
        const auto *rr = residual + row * D;
        // The forward's statistics, recomputed the same way.
        float v[kPer], g[kPer];
        double mean, var;
        xl_ln_row_stats<D, BLOCK, kPer, X>(x, row, xkey, rr, v, scratch, mean, var);
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          const int d = threadIdx.x + j * BLOCK;
          g[j] = d < D ? float(gr[d]) : 0.0f;
        }
        const double inv = 1.0 / sqrt(var + eps);
        // dz = inv (gy - mean(gy) - xhat mean(gy xhat)), gy = dout gamma.
        double mg = 0.0, mgx = 0.0;
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          const int d = threadIdx.x + j * BLOCK;
          if (d < D) {
            const double xhat = (static_cast<double>(v[j]) - mean) * inv;
            const double gy =
                static_cast<double>(g[j]) * static_cast<double>(gamma[d]);
            mg += gy;
            mgx += gy * xhat;
            pg[j] += static_cast<double>(g[j]) * xhat;
            pb[j] += static_cast<double>(g[j]);
          }
        }
        mg = xl_block_sum<BLOCK>(mg, scratch) / double(D);
        mgx = xl_block_sum<BLOCK>(mgx, scratch) / double(D);
#pragma unroll
        for (int j = 0; j < kPer; ++j) {
          const int d = threadIdx.x + j * BLOCK;
          if (d < D) {
            const double xhat = (static_cast<double>(v[j]) - mean) * inv;
            const T_dsum ds = static_cast<float>(
                inv * (static_cast<double>(g[j]) * static_cast<double>(gamma[d]) -
                       mg - xhat * mgx));
            dsum[row * D + d] = ds;
            if constexpr (DDROP) {
              const float dv = static_cast<float>(ds);
              if constexpr (DDROP_BITS == 0u) {
                ddrop[row * D + d] = dv;
              } else {
                const float rate = __uint_as_float(DDROP_BITS);
                ddrop[row * D + d] =
                    xl_drop_keep(dkey, row * D + d, rate)
                        ? dv * (1.0f / (1.0f - rate))
                        : 0.0f;
              }
            }
          }
        }
      }
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const int d = threadIdx.x + j * BLOCK;
        if (d < D) {
          workspace[part * 2 * D + d] = pg[j];
          workspace[part * 2 * D + D + d] = pb[j];
        }
      }
    }
  }
}

template <xl_i64 ROWS, int D, xl_u64 EPS_BITS, int ROWS_PER_PART, int PHASE,
          int BLOCK, typename T_dout, typename T_x, typename T_residual, typename T_gamma, typename T_dsum, typename T_dgamma, typename T_dbeta>
XL_DEVICE void
xl_add_layer_norm_grad(const T_dout *XL_RESTRICT dout,
                       const T_x *XL_RESTRICT x,
                       const T_residual *XL_RESTRICT residual,
                       const T_gamma *XL_RESTRICT gamma, T_dsum *XL_RESTRICT dsum,
                       T_dgamma *XL_RESTRICT dgamma, T_dbeta *XL_RESTRICT dbeta,
                       double *XL_RESTRICT workspace, XlStepRandom rnd) {
  xl_add_layer_norm_grad_fused<ROWS, D, EPS_BITS, ROWS_PER_PART, PHASE, BLOCK, 0, 0u, 0,
                               0, 0u, 0>(dout, x, residual, gamma,
                                     static_cast<const float *>(nullptr),
                                     static_cast<const float *>(nullptr), dsum,
                                     static_cast<float *>(nullptr), dgamma, dbeta,
                                     workspace, 0, 0, rnd);
}

/// bias_grad, the two phases (see the file comment): out[c] = sum over r of
/// dy[r, c], dy viewed as [ROWS, N]. PHASE 0 writes workspace [parts][N]
/// (item (part, c) in a grid-stride loop, adjacent threads on adjacent
/// columns: coalesced); PHASE 1 writes out [N]. With `init` (not null) it
/// writes init[c] + the sum instead, rounded as the plan's `add` of the two
/// would be (the emitter's add-into fusion).
template <xl_i64 ROWS, xl_i64 N, int ROWS_PER_PART, int PHASE, int BLOCK, typename T_dy, typename T_init, typename T_out>
XL_DEVICE void xl_bias_grad(const T_dy *XL_RESTRICT dy,
                            const T_init *XL_RESTRICT init,
                            T_out *XL_RESTRICT out,
                            double *XL_RESTRICT workspace,
                            XlStepRandom rnd) {
  (void)rnd;
  static_assert(PHASE == 0 || PHASE == 1, "PHASE is 0 or 1");
  static_assert(ROWS_PER_PART > 0, "ROWS_PER_PART must be positive");
  constexpr xl_i64 kParts = (ROWS + ROWS_PER_PART - 1) / ROWS_PER_PART;
  const xl_i64 step = static_cast<xl_i64>(gridDim.x) * BLOCK;
  const xl_i64 first = static_cast<xl_i64>(blockIdx.x) * BLOCK + threadIdx.x;
  if constexpr (PHASE == 0) {
    for (xl_i64 i = first; i < kParts * N; i += step) {
      const xl_i64 part = i / N, c = i - part * N;
      const xl_i64 end =
          (part + 1) * ROWS_PER_PART < ROWS ? (part + 1) * ROWS_PER_PART : ROWS;
      double acc = 0.0;
      for (xl_i64 r = part * ROWS_PER_PART; r < end; ++r)
        acc += static_cast<double>(dy[r * N + c]);
      workspace[i] = acc;
    }
  } else {
    for (xl_i64 c = first; c < N; c += step) {
      double acc = 0.0;
      for (xl_i64 p = 0; p < kParts; ++p)
        acc += workspace[p * N + c];
      // The sum as stored (T_out), then the add on what was stored.
      const float sum = static_cast<float>(static_cast<T_out>(static_cast<float>(acc)));
      out[c] = init ? static_cast<float>(init[c]) + sum : sum;
    }
  }
}

#endif // XLNETC_K_NORM_CUH
