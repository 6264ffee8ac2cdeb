//===- Kernels.cpp - Reference host kernels (all but rel_attention) -------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <cblas.h>
#include <omp.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace xlnetc::rt::host {

Status embedding(const Tensor &ids, const Tensor &table, Tensor &out) {
  int64_t B = ids.shape[0], S = ids.shape[1];
  int64_t V = table.shape[0], D = table.shape[1];
  const int64_t *id = ids.i64();
  // 1. Validate serially so the error names the first bad id.
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      if (id[b * S + s] < 0 || id[b * S + s] >= V)
        return Status::error(
            fmt::format("id {} at b={}, s={} is outside [0, {})",
                        id[b * S + s], b, s, V));
  // 2. Gather rows.
  const float *tab = table.f32();
  float *o = out.f32();
#pragma omp parallel for if (worthThreads(B * S * D))
  for (int64_t r = 0; r < B * S; ++r)
    std::memcpy(o + r * D, tab + id[r] * D, sizeof(float) * size_t(D));
  return Status::ok();
}

void maskEmbedding(const Tensor &maskEmb, Tensor &out) {
  int64_t D = maskEmb.shape[2];
  int64_t rows = out.numel() / std::max<int64_t>(D, 1);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out.f32() + r * D, maskEmb.f32(), sizeof(float) * size_t(D));
}

void relPosEncoding(int64_t klen, int64_t clampLen, Tensor &out) {
  int64_t P = out.shape[0], R = out.shape[1], D = out.shape[2];
  int64_t half = D / 2;
  std::vector<double> invFreq(static_cast<size_t>(half));
  for (int64_t k = 0; k < half; ++k)
    invFreq[k] = 1.0 / std::pow(10000.0, double(2 * k) / double(D));
  float *o = out.f32();
#pragma omp parallel for collapse(2) if (worthThreads(P * R * D))
  for (int64_t p = 0; p < P; ++p)
    for (int64_t r = 0; r < R; ++r) {
      double pos = p == 0 ? double(klen - r) : double(-klen + r);
      if (clampLen > 0)
        pos = std::clamp(pos, -double(clampLen), double(clampLen));
      float *row = o + (p * R + r) * D;
      for (int64_t k = 0; k < half; ++k) {
        row[k] = float(std::sin(pos * invFreq[k]));
        row[half + k] = float(std::cos(pos * invFreq[k]));
      }
      if (D % 2) // an odd D's last column is 0 (the arena is not zeroed)
        row[D - 1] = 0.0f;
    }
}

void relSegment(const Tensor &segId, int64_t mlen, Tensor &out) {
  int64_t B = segId.shape[0], S = segId.shape[1], K = mlen + S;
  const int64_t *seg = segId.i64();
  uint8_t *o = out.b8();
#pragma omp parallel for collapse(2) if (worthThreads(B * S * K))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < K; ++j) {
        int64_t keySeg = j < mlen ? 0 : seg[b * S + (j - mlen)];
        o[(b * S + i) * K + j] = seg[b * S + i] != keySeg;
      }
}

void attnMask(const Tensor &permMask, int64_t mlen, MaskStream stream,
              Tensor &out) {
  int64_t B = permMask.shape[0], S = permMask.shape[1], K = mlen + S;
  const float *pm = permMask.f32();
  uint8_t *o = out.b8();
#pragma omp parallel for collapse(2) if (worthThreads(B * S * K))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < S; ++i) {
      uint8_t *row = o + (b * S + i) * K;
      for (int64_t j = 0; j < K; ++j)
        row[j] = j < mlen ? 0 : pm[(b * S + i) * S + (j - mlen)] > 0.0f;
      if (stream == MaskStream::Content)
        row[mlen + i] = 0;
    }
}

Status targetPositions(const Tensor &targetMapping, Tensor &out) {
  int64_t B = targetMapping.shape[0], NP = targetMapping.shape[1],
          S = targetMapping.shape[2];
  const float *tm = targetMapping.f32();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < NP; ++r) {
      const float *row = tm + (b * NP + r) * S;
      int64_t col = -1;
      for (int64_t s = 0; s < S; ++s) {
        if (row[s] == 0.0f)
          continue;
        if (row[s] != 1.0f)
          return Status::error(fmt::format(
              "target_mapping row b={}, row {} is not one-hot: value {} at "
              "column {}",
              b, r, row[s], s));
        if (col >= 0)
          return Status::error(fmt::format(
              "target_mapping row b={}, row {} is not one-hot: ones at "
              "columns {} and {}",
              b, r, col, s));
        col = s;
      }
      out.i64()[b * NP + r] = col;
    }
  return Status::ok();
}

void memConcat(const Tensor &mems, const Tensor &h, Tensor &out) {
  int64_t M = mems.shape[0], B = h.shape[0], S = h.shape[1], D = h.shape[2];
  int64_t K = M + S;
  float *o = out.f32();
#pragma omp parallel for collapse(2) if (worthThreads(B * K * D))
  for (int64_t b = 0; b < B; ++b)
    for (int64_t j = 0; j < K; ++j) {
      const float *src = j < M ? mems.f32() + (j * B + b) * D
                               : h.f32() + (b * S + (j - M)) * D;
      std::memcpy(o + (b * K + j) * D, src, sizeof(float) * size_t(D));
    }
}

void memCache(const Tensor *mems, const Tensor &h, int64_t reuseLen,
              Tensor &out) {
  int64_t M = mems ? mems->shape[0] : 0;
  int64_t B = h.shape[0], S = h.shape[1], D = h.shape[2];
  int64_t L = out.shape[0];
  // Row l of the output is row first + l of concat(mems, h[:, :reuse_len]).
  int64_t first = M + reuseLen - L;
  float *o = out.f32();
  for (int64_t l = 0; l < L; ++l)
    for (int64_t b = 0; b < B; ++b) {
      int64_t t = first + l;
      const float *src = t < M ? mems->f32() + (t * B + b) * D
                               : h.f32() + (b * S + (t - M)) * D;
      std::memcpy(o + (l * B + b) * D, src, sizeof(float) * size_t(D));
    }
}

float activate(Activation act, float xf) {
  double x = xf;
  switch (act) {
  case Activation::None:
    return xf;
  case Activation::Relu:
    return xf > 0.0f ? xf : 0.0f;
  case Activation::GeluTanh: {
    const double c = std::sqrt(2.0 / M_PI);
    return float(0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x))));
  }
  case Activation::GeluErf:
    return float(0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))));
  }
  return xf;
}

GemmView gemmView(const std::vector<int64_t> &x, int kRank,
                  const std::vector<int64_t> &y) {
  // x: [lead..., K...]; y: [lead..., N...].
  size_t lead = x.size() - size_t(kRank);
  GemmView v;
  for (size_t d = 0; d < lead; ++d)
    v.M *= x[d];
  for (size_t d = lead; d < x.size(); ++d)
    v.K *= x[d];
  for (size_t d = lead; d < y.size(); ++d)
    v.N *= y[d];
  return v;
}

void gemm(const Tensor &x, const Tensor &w, const Tensor *bias, int kRank,
          bool transposeW, Activation act, Tensor &out, const Tensor *init) {
  // Plain variables, not a structured binding: the OpenMP region below
  // uses them (C++17 forbids capturing bindings; GCC allows it).
  const GemmView view = gemmView(x, kRank, out);
  const int64_t Mx = view.M, Kx = view.K, Nw = view.N;
  float *y = out.f32();
  if (Mx == 0 || Nw == 0)
    return;
  if (Kx == 0) {
    if (init && init->f32() != y)
      std::copy(init->f32(), init->f32() + Mx * Nw, y);
    else if (!init)
      std::fill(y, y + Mx * Nw, 0.0f);
    if (bias || act != Activation::None)
      vecKernels().biasActivation(y, Mx, Nw, Nw, bias ? bias->f32() : nullptr, act);
    return;
  }
  blockedSgemm(false, transposeW, Mx, Nw, Kx, x.f32(), Kx, w.f32(), transposeW ? Kx : Nw, y,
               Nw, bias ? bias->f32() : nullptr, act, init ? init->f32() : nullptr);
}

void blockedSgemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                  int64_t ldc, const float *bias, Activation act, const float *init) {
  // One threading runtime: OpenMP splits C into blocks and each block is one
  // single-threaded sgemm plus its epilogue (OpenBLAS's own threads would
  // spin against OpenMP's; see HostThreadScope). Every block packs all of
  // the operand it does not split, so split the dimension whose other
  // operand is smaller: rows (each block packs all of B, K × N) when
  // N <= M, else columns (each packs all of A, M × K). Every element of C
  // is one dot product inside one sgemm, but OpenBLAS picks its kernel (the
  // small-matrix path or not) by the block's shape: the last bits may
  // depend on the thread count. A step is bitwise reproducible for a given
  // thread count.
  const int threads = omp_get_max_threads();
  const bool byRows = N <= M;
  const int64_t extent = byRows ? M : N;
  const int64_t blocks =
      worthThreads(M * N * std::max<int64_t>(K, 1) / 16) ? std::min<int64_t>(extent, threads) : 1;
  const VecKernels &vec = vecKernels();
#pragma omp parallel for if (blocks > 1)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t e0 = extent * blk / blocks, e1 = extent * (blk + 1) / blocks;
    if (e1 == e0)
      continue;
    const float *a = A, *b = B;
    float *c = C;
    int64_t m = M, n = N;
    const float *c0 = init; // this block's start of init
    if (byRows) {
      a = transA ? A + e0 : A + e0 * lda;
      c = C + e0 * ldc;
      c0 = init ? init + e0 * ldc : nullptr;
      m = e1 - e0;
    } else {
      b = transB ? B + e0 * ldb : B + e0;
      c = C + e0;
      c0 = init ? init + e0 : nullptr;
      n = e1 - e0;
    }
    if (c0 && c0 != c) // (the init may be C itself: a sum updated in place)
      for (int64_t r = 0; r < m; ++r)
        std::memcpy(c + r * ldc, c0 + r * ldc, sizeof(float) * size_t(n));
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, blasint(m), blasint(n), blasint(K), 1.0f,
                a, blasint(lda), b, blasint(ldb), c0 ? 1.0f : 0.0f, c, blasint(ldc));
    if (bias || act != Activation::None)
      vec.biasActivation(c, m, n, ldc, bias ? bias + (byRows ? 0 : e0) : nullptr, act);
  }
}

void addLayerNorm(const Tensor &x, const Tensor &residual,
                  const Tensor &gamma, const Tensor &beta, double eps,
                  Tensor &out) {
  int64_t D = x.shape.back();
  int64_t rows = D == 0 ? 0 : x.numel() / D;
  const float *xs = x.f32(), *rs = residual.f32();
  const float *g = gamma.f32(), *be = beta.f32();
  float *o = out.f32();
  const VecKernels &vec = vecKernels();
#pragma omp parallel for if (worthThreads(rows * D))
  for (int64_t r = 0; r < rows; ++r)
    vec.layerNormRow(xs + r * D, rs + r * D, g, be, eps, D, o + r * D);
}

void dropout(const Tensor &x, double rate, int64_t site, uint64_t seed,
             const DropoutRows &rows, int64_t rowElems, Tensor &out) {
  int64_t n = x.numel();
  if (rate == 0.0) {
    std::memcpy(out.f32(), x.f32(), sizeof(float) * size_t(n));
    return;
  }
  const uint64_t key = dropoutKey(seed, site);
  const float r = float(rate), scale = 1.0f / (1.0f - r);
  const float *xs = x.f32();
  float *o = out.f32();
  const VecKernels &vec = vecKernels();
  // The index runs on within a batch row; a chunk is cut where rows end.
  forEachChunk(n, [&](int64_t c, int64_t len) {
    for (int64_t i = c, end = c + len; i < end;) {
      const int64_t stop = rowElems > 0 ? std::min(end, (i / rowElems + 1) * rowElems) : end;
      vec.dropout(xs + i, o + i, stop - i, key, globalIndex(rows, i, rowElems), r, scale);
      i = stop;
    }
  });
}

Status lmLoss(const Tensor &logits, const Tensor &target,
              const Tensor &targetMask, Tensor &loss, Tensor &perTokenLoss) {
  int64_t B = logits.shape[0], NP = logits.shape[1], V = logits.shape[2];
  const int64_t *tgt = target.i64();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t r = 0; r < NP; ++r)
      if (tgt[b * NP + r] < 0 || tgt[b * NP + r] >= V)
        return Status::error(fmt::format(
            "target {} at b={}, slot {} is outside [0, {})", tgt[b * NP + r],
            b, r, V));
  const float *lg = logits.f32();
  float *ptl = perTokenLoss.f32();
  std::vector<double> rowLoss(static_cast<size_t>(B * NP));
  const VecKernels &vec = vecKernels();
#pragma omp parallel for if (worthThreads(B * NP * V))
  for (int64_t row = 0; row < B * NP; ++row) {
    // logsumexp: the exps in fp32, their sum in double (VecKernels::expSum).
    const float *l = lg + row * V;
    float mx = 0;
    const double sum = vec.expSum(l, V, nullptr, mx);
    rowLoss[row] = double(mx) + std::log(sum) - double(l[tgt[row]]);
    ptl[row] = float(rowLoss[row]);
  }
  double num = 0.0, den = 0.0;
  for (int64_t row = 0; row < B * NP; ++row) {
    num += rowLoss[row] * double(targetMask.f32()[row]);
    den += double(targetMask.f32()[row]);
  }
  loss.f32()[0] = float(num / den);
  return Status::ok();
}

} // namespace xlnetc::rt::host
