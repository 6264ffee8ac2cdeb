//===- Backward.cpp - Host kernels of the backward ops --------------------===//
//
// The gradients of the forward kernels in Kernels.cpp (rel_attention's is in
// RelAttentionGrad.cpp), one per backward op of docs/Plan.md. Every sum over
// rows accumulates in double in a fixed order, so the results do not depend
// on the number of threads.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

namespace xlnetc::rt::host {

namespace {

/// Columns per task of the column-parallel row sums (a chunk of double
/// accumulators stays in L1).
constexpr int64_t kColumnChunk = 256;

/// out[c] = Σ_r in[r, c] for in [rows, n], in double. Tasks own disjoint
/// column chunks and walk the rows in order.
void sumRows(const float *in, int64_t rows, int64_t n, float *out) {
  int64_t chunks = (n + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for schedule(static) if (chunks > 1 &&                    \
                                              worthThreads(rows * n))
  for (int64_t ch = 0; ch < chunks; ++ch) {
    int64_t c0 = ch * kColumnChunk, c1 = std::min(n, c0 + kColumnChunk);
    double acc[kColumnChunk] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const float *row = in + r * n;
      for (int64_t c = c0; c < c1; ++c)
        acc[c - c0] += double(row[c]);
    }
    for (int64_t c = c0; c < c1; ++c)
      out[c] = float(acc[c - c0]);
  }
}

} // namespace

Status embeddingGrad(const Tensor &ids, const Tensor &dout, Tensor &out, const Tensor *init) {
  int64_t B = ids.shape[0], S = ids.shape[1];
  int64_t V = out.shape[0], D = out.shape[1];
  const int64_t *id = ids.i64();
  // 1. Validate serially so the error names the first bad id.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      if (id[b * S + s] < 0 || id[b * S + s] >= V)
        return Status::error(fmt::format(
            "id {} at b={}, s={} is outside [0, {})", id[b * S + s], b, s, V));
  float *o = out.f32();
  if (init && init->f32() != o) // (the init may be out itself: updated in place)
    std::copy(init->f32(), init->f32() + V * D, o);
  else if (!init)
    std::fill(o, o + V * D, 0.0f);
  // 2. Group the positions by id (stable: each group in position order), so
  //    every touched table row is owned by one task and summed in double.
  std::vector<int64_t> order(static_cast<size_t>(B * S));
  std::iota(order.begin(), order.end(), int64_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t l, int64_t r) { return id[l] < id[r]; });
  std::vector<int64_t> groupStart;
  for (size_t k = 0; k < order.size(); ++k)
    if (k == 0 || id[order[k]] != id[order[k - 1]])
      groupStart.push_back(int64_t(k));
  groupStart.push_back(int64_t(order.size()));
  int64_t groups = int64_t(groupStart.size()) - 1;
  const float *d = dout.f32();
#pragma omp parallel if (worthThreads(B * S * D))
  {
    std::vector<double> acc(static_cast<size_t>(D));
#pragma omp for schedule(dynamic, 16)
    for (int64_t g = 0; g < groups; ++g) {
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t k = groupStart[g]; k < groupStart[g + 1]; ++k) {
        const float *row = d + order[k] * D;
        for (int64_t c = 0; c < D; ++c)
          acc[c] += double(row[c]);
      }
      // Rounded to float, then added to init as the add would (0 without).
      float *dst = o + id[order[groupStart[g]]] * D;
      for (int64_t c = 0; c < D; ++c)
        dst[c] = init ? dst[c] + float(acc[c]) : float(acc[c]);
    }
  }
  return Status::ok();
}

void maskEmbeddingGrad(const Tensor &dout, Tensor &out) {
  int64_t D = dout.shape[2];
  int64_t rows = D == 0 ? 0 : dout.numel() / D;
  sumRows(dout.f32(), rows, D, out.f32());
}

void memConcatGrad(const Tensor &dout, Tensor &out) {
  int64_t B = dout.shape[0], K = dout.shape[1], D = dout.shape[2];
  int64_t S = out.shape[1];
  const float *d = dout.f32();
  float *o = out.f32();
  // The h part of [mems ; h] is the last S rows of every batch row.
#pragma omp parallel for if (worthThreads(B * S * D))
  for (int64_t b = 0; b < B; ++b)
    std::memcpy(o + b * S * D, d + (b * K + (K - S)) * D,
                sizeof(float) * size_t(S * D));
}

void applyActivation(const Tensor &x, Activation act, Tensor &out) {
  const int64_t n = x.numel();
  const float *xs = x.f32();
  float *o = out.f32();
  const VecKernels &vec = vecKernels();
  forEachChunk(n, [&](int64_t c, int64_t len) {
    std::copy(xs + c, xs + c + len, o + c);
    vec.biasActivation(o + c, 1, len, len, nullptr, act);
  });
}

double activateGrad(Activation act, float xf) {
  double x = xf;
  switch (act) {
  case Activation::None:
    return 1.0;
  case Activation::Relu:
    return xf > 0.0f ? 1.0 : 0.0;
  case Activation::GeluTanh: {
    // y = 0.5 x (1 + tanh u), u = c (x + 0.044715 x³):
    // y' = 0.5 (1 + tanh u) + 0.5 x (1 - tanh² u) c (1 + 3 · 0.044715 x²).
    const double c = std::sqrt(2.0 / M_PI), a = 0.044715;
    double th = std::tanh(c * (x + a * x * x * x));
    return 0.5 * (1.0 + th) +
           0.5 * x * (1.0 - th * th) * c * (1.0 + 3.0 * a * x * x);
  }
  case Activation::GeluErf:
    // y = x Φ(x): y' = Φ(x) + x φ(x).
    return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
           x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
  }
  return 1.0;
}

void activationGrad(const Tensor &dy, const Tensor &x, Activation act,
                    Tensor &out) {
  const int64_t n = x.numel();
  const float *g = dy.f32(), *xs = x.f32();
  float *o = out.f32();
  const VecKernels &vec = vecKernels();
  forEachChunk(n, [&](int64_t c, int64_t len) {
    vec.activationGrad(g + c, xs + c, o + c, len, act);
  });
}

void gemmWgrad(const Tensor &x, const Tensor &dy, int kRank, bool transposeW,
               Tensor &out, const Tensor *init) {
  // Plain variables, not a structured binding: the OpenMP region below
  // uses them (C++17 forbids capturing bindings; GCC allows it).
  const GemmView view = gemmView(x, kRank, dy);
  const int64_t Mx = view.M, Kx = view.K, Nw = view.N;
  float *o = out.f32();
  if (Kx == 0 || Nw == 0)
    return;
  if (Mx == 0) {
    if (init && init->f32() != o)
      std::copy(init->f32(), init->f32() + Kx * Nw, o);
    else if (!init)
      std::fill(o, o + Kx * Nw, 0.0f);
    return;
  }
  // out [rowsOut, colsOut] = Aᵀ · Bm with A [Mx, rowsOut], Bm [Mx, colsOut]:
  // A = x, Bm = dy (w [Kx, Nw]) or A = dy, Bm = x (w [Nw, Kx]).
  int64_t rowsOut = transposeW ? Nw : Kx, colsOut = transposeW ? Kx : Nw;
  const float *A = transposeW ? dy.f32() : x.f32();
  const float *Bm = transposeW ? x.f32() : dy.f32();
  blockedSgemm(true, false, rowsOut, colsOut, Mx, A, rowsOut, Bm, colsOut, o, colsOut,
               nullptr, Activation::None, init ? init->f32() : nullptr);
}

void biasGrad(const Tensor &dy, Tensor &out) {
  int64_t n = out.numel();
  if (n == 0)
    return;
  sumRows(dy.f32(), dy.numel() / n, n, out.f32());
}

void addLayerNormGrad(const Tensor &dout, const Tensor &x,
                      const Tensor &residual, const Tensor &gamma, double eps,
                      Tensor &dsum, Tensor &dgamma, Tensor &dbeta) {
  int64_t D = x.shape.back();
  int64_t rows = D == 0 ? 0 : x.numel() / D;
  const float *g = dout.f32(), *xs = x.f32(), *rs = residual.f32(),
              *gm = gamma.f32();
  float *ds = dsum.f32();
  // dgamma and dbeta are sums over rows: each fixed block of rows keeps its
  // own double partial sums, added in block order at the end.
  constexpr int64_t kBlockRows = 32;
  int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  std::vector<double> partial(static_cast<size_t>(blocks * 2 * D), 0.0);
  const VecKernels &vec = vecKernels();
#pragma omp parallel if (worthThreads(rows * D))
  {
    std::vector<double> xhat(static_cast<size_t>(D));
#pragma omp for schedule(static)
    for (int64_t blk = 0; blk < blocks; ++blk) {
      double *pg = partial.data() + blk * 2 * D, *pb = pg + D;
      for (int64_t r = blk * kBlockRows; r < std::min(rows, (blk + 1) * kBlockRows); ++r)
        vec.layerNormGradRow(g + r * D, xs + r * D, rs + r * D, gm, eps, D, xhat.data(), pg,
                             pb, ds + r * D);
    }
  }
  for (int64_t d = 0; d < D; ++d) {
    double sg = 0.0, sb = 0.0;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      sg += partial[blk * 2 * D + d];
      sb += partial[blk * 2 * D + D + d];
    }
    dgamma.f32()[d] = float(sg);
    dbeta.f32()[d] = float(sb);
  }
}

Status lmLossGrad(const Tensor &logits, const Tensor &target,
                  const Tensor &targetMask, Tensor &dlogits, const Tensor *count) {
  int64_t B = logits.shape[0], NP = logits.shape[1], V = logits.shape[2];
  const int64_t *tgt = target.i64();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < NP; ++r)
      if (tgt[b * NP + r] < 0 || tgt[b * NP + r] >= V)
        return Status::error(
            fmt::format("target {} at b={}, slot {} is outside [0, {})",
                        tgt[b * NP + r], b, r, V));
  const float *lg = logits.f32(), *mask = targetMask.f32();
  float *o = dlogits.f32();
  double den = 0.0;
  for (int64_t row = 0; row < B * NP; ++row)
    den += double(mask[row]);
  if (count) // the micro-batches' count (gradient accumulation)
    den = double(count->f32()[0]);
#pragma omp parallel if (worthThreads(B * NP * V))
  {
    const VecKernels &vec = vecKernels();
#pragma omp for schedule(static)
    for (int64_t row = 0; row < B * NP; ++row) {
      float *orow = o + row * V;
      // d loss / d ptl[row] = mask / Σ mask; 0 for an all-zero mask (the
      // forward's loss is NaN then, but no gradient flows).
      double w = den == 0.0 ? 0.0 : double(mask[row]) / den;
      if (w == 0.0) {
        std::fill(orow, orow + V, 0.0f);
        continue;
      }
      // softmax · w, less w at the target (the exps in fp32, their sum in
      // double; VecKernels::expSum).
      float mx = 0;
      const double sum = vec.expSum(lg + row * V, V, orow, mx);
      const float scale = float(w / sum);
      const double eTarget = orow[tgt[row]];
      for (int64_t v = 0; v < V; ++v)
        orow[v] *= scale;
      orow[tgt[row]] = float(eTarget * (w / sum) - w);
    }
  }
  return Status::ok();
}

void add(const Tensor &a, const Tensor &b, Tensor &out) {
  int64_t n = a.numel();
  const float *x = a.f32(), *y = b.f32();
  float *o = out.f32();
#pragma omp parallel for if (worthThreads(n))
  for (int64_t i = 0; i < n; ++i)
    o[i] = x[i] + y[i];
}

} // namespace xlnetc::rt::host
