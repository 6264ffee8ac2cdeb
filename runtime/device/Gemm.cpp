//===- Gemm.cpp - The reference GEMM with cuBLASLt's semantics -----------===//

#include "runtime/device/Gemm.h"

#include "runtime/BFloat16.h"

#include <cblas.h>
#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace xlnetc::rt::dev {

namespace {

/// gelu_tanh and its derivative in float, the form cuBLASLt's GELU
/// epilogues compute.
float geluTanh(float x) {
  const float c = 0.7978845608028654f; // sqrt(2/pi)
  return 0.5f * x * (1.0f + std::tanh(c * (x + 0.044715f * x * x * x)));
}
float geluTanhGrad(float x) {
  const float c = 0.7978845608028654f;
  float u = c * (x + 0.044715f * x * x * x);
  float t = std::tanh(u);
  return 0.5f * (1.0f + t) +
         0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * 0.044715f * x * x);
}

} // namespace

const char *gemmEpilogueName(GemmEpilogue e) {
  switch (e) {
  case GemmEpilogue::Default:
    return "default";
  case GemmEpilogue::Bias:
    return "bias";
  case GemmEpilogue::ReluBias:
    return "relu_bias";
  case GemmEpilogue::GeluBias:
    return "gelu_bias";
  case GemmEpilogue::GeluAuxBias:
    return "gelu_aux_bias";
  case GemmEpilogue::DGeluBGrad:
    return "dgelu_bgrad";
  }
  return "?";
}

std::string describeGemm(const GemmDesc &d) {
  return fmt::format("gemm m={} n={} k={} opA={} opB={} lda={} ldb={} ldc={} "
                     "batch={} alpha={} beta={} epilogue={}",
                     d.m, d.n, d.k, d.transA ? 'T' : 'N', d.transB ? 'T' : 'N',
                     d.lda, d.ldb, d.ldc, d.batch, d.alpha, d.beta,
                     gemmEpilogueName(d.epilogue)) +
         (d.ab == GemmType::F32 && d.cd == GemmType::F32
              ? std::string()
              : fmt::format(" types={}/{}", gemmTypeName(d.ab), gemmTypeName(d.cd)));
}

GemmExtents gemmExtents(const GemmDesc &d) {
  // A column-major rows×cols matrix with leading dimension ld spans
  // ld·(cols-1) + rows elements; batch entry i starts at i·stride.
  auto span = [&](int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    return (d.batch - 1) * stride + ld * (cols - 1) + rows;
  };
  GemmExtents e;
  e.a = d.transA ? span(d.k, d.m, d.lda, d.strideA) : span(d.m, d.k, d.lda, d.strideA);
  e.b = d.transB ? span(d.n, d.k, d.ldb, d.strideB) : span(d.k, d.n, d.ldb, d.strideB);
  e.cd = span(d.m, d.n, d.ldc, d.strideC);
  e.bias = d.epilogue == GemmEpilogue::Default ? 0 : d.m;
  return e;
}

Status validateGemm(const GemmDesc &d, const GemmPointers &p) {
  auto bad = [&](const std::string &why) {
    return Status::error(fmt::format("invalid GEMM ({}): {}", describeGemm(d), why));
  };
  if (d.m <= 0 || d.n <= 0 || d.k <= 0 || d.batch <= 0)
    return bad("m, n, k and batch must be positive");
  // Column-major storage: op(A) is m×k, so A is m×k (lda ≥ m) or k×m.
  int64_t aRows = d.transA ? d.k : d.m, bRows = d.transB ? d.n : d.k;
  if (d.lda < aRows)
    return bad(fmt::format("lda {} < {} rows of A", d.lda, aRows));
  if (d.ldb < bRows)
    return bad(fmt::format("ldb {} < {} rows of B", d.ldb, bRows));
  if (d.ldc < d.m)
    return bad(fmt::format("ldc {} < m", d.ldc));
  if (!p.a || !p.b || !p.d)
    return bad("A, B and D are required");
  if (d.beta != 0.0f && !p.c)
    return bad("beta != 0 needs C");
  bool needsBias = d.epilogue != GemmEpilogue::Default;
  bool needsAux = d.epilogue == GemmEpilogue::GeluAuxBias ||
                  d.epilogue == GemmEpilogue::DGeluBGrad;
  if (needsBias && !p.bias)
    return bad("the epilogue needs a bias pointer");
  if (needsAux && !p.aux)
    return bad("the epilogue needs an aux pointer");
  // cuBLASLt's rule for the aux matrix (its leading dimension is ldc here).
  if (needsAux && d.ldc % 8 != 0)
    return bad("the aux matrix's leading dimension (ldc) must be a multiple "
               "of 8");
  // Batched, the aux matrices lie strideC apart, as D's do (cuBLASLt's
  // EPILOGUE_AUX_BATCH_STRIDE; it must be a multiple of 8 and no less than
  // one entry's ldc·n: the matrices may not overlap).
  if (needsAux && d.batch > 1 && (d.strideC % 8 != 0 || d.strideC < d.ldc * d.n))
    return bad(fmt::format("a batched aux matrix needs strideC ({}) a multiple of 8 and at "
                           "least ldc·n ({})",
                           d.strideC, d.ldc * d.n));
  if (d.epilogue == GemmEpilogue::DGeluBGrad && d.batch != 1)
    return bad("dgelu_bgrad is not batched");
  return Status::ok();
}

namespace {

/// `n` elements at `p` of type `t` as f32 (bf16 widened exactly); for f32,
/// no copy: `storage` stays empty and the pointer is `p` itself.
float *asF32(const void *p, GemmType t, int64_t n, std::vector<float> &storage) {
  if (!p || t == GemmType::F32)
    return static_cast<float *>(const_cast<void *>(p));
  storage.resize(size_t(n));
  const uint16_t *h = static_cast<const uint16_t *>(p);
  for (int64_t i = 0; i < n; ++i)
    storage[size_t(i)] = floatFromBf16(h[i]);
  return storage.data();
}

/// Stores the m×n entries of every batch entry of the f32 matrix `src`
/// (C/D layout: leading dimension ldc, stride strideC) to the bf16 `dst`,
/// rounded; entries between columns are not touched.
void storeBf16(const GemmDesc &d, const float *src, void *dst) {
  uint16_t *h = static_cast<uint16_t *>(dst);
  for (int64_t i = 0; i < d.batch; ++i)
    for (int64_t col = 0; col < d.n; ++col)
      for (int64_t row = 0; row < d.m; ++row) {
        int64_t at = i * d.strideC + row + col * d.ldc;
        h[at] = bf16FromFloat(src[at]);
      }
}

/// The f32 computation on f32 views of the operands.
void gemmF32(const GemmDesc &d, const float *A, const float *B, const float *C,
             float *D, float *bias, float *aux);

} // namespace

Status gemmReference(const GemmDesc &d, const GemmPointers &p) {
  XLNETC_RETURN_IF_ERROR(validateGemm(d, p));
  const GemmExtents e = gemmExtents(d);
  std::vector<float> a, b, cd, x;
  const float *A = asF32(p.a, d.ab, e.a, a);
  const float *B = asF32(p.b, d.ab, e.b, b);
  // f32 C/D/aux/bias are used in place; bf16 ones are computed in f32
  // copies (D starting as C when beta != 0; aux widened for DGeluBGrad).
  float *D = static_cast<float *>(p.d), *aux = static_cast<float *>(p.aux);
  const float *C = static_cast<const float *>(p.c);
  if (d.cd == GemmType::BF16) {
    if (d.beta != 0.0f)
      D = asF32(p.c, d.cd, e.cd, cd);
    else
      cd.assign(size_t(e.cd), 0.0f), D = cd.data();
    C = D;
    aux = asF32(p.aux, d.cd, p.aux ? e.cd : 0, x);
  }
  std::vector<float> bias;
  float *biasF = asF32(p.bias, d.cd, e.bias, bias);
  gemmF32(d, A, B, C, D, biasF, aux);
  if (d.cd == GemmType::BF16) {
    storeBf16(d, D, p.d);
    if (d.epilogue == GemmEpilogue::GeluAuxBias)
      storeBf16(d, aux, p.aux);
    if (d.epilogue == GemmEpilogue::DGeluBGrad)
      for (int64_t row = 0; row < d.m; ++row)
        static_cast<uint16_t *>(p.bias)[row] = bf16FromFloat(biasF[row]);
  }
  return Status::ok();
}

namespace {

void gemmF32(const GemmDesc &d, const float *A, const float *B, const float *C,
             float *D, float *bias, float *aux) {
  for (int64_t i = 0; i < d.batch; ++i) {
    const float *Ai = A + i * d.strideA;
    const float *Bi = B + i * d.strideB;
    float *Di = D + i * d.strideC;
    // beta·C first (C may alias D), then D += alpha·op(A)·op(B).
    float beta = 0.0f;
    if (d.beta != 0.0f) {
      const float *Ci = C + i * d.strideC;
      if (Ci != Di)
        for (int64_t col = 0; col < d.n; ++col)
          for (int64_t row = 0; row < d.m; ++row)
            Di[row + col * d.ldc] = Ci[row + col * d.ldc];
      beta = d.beta;
    }
    cblas_sgemm(CblasColMajor, d.transA ? CblasTrans : CblasNoTrans,
                d.transB ? CblasTrans : CblasNoTrans, int(d.m), int(d.n),
                int(d.k), d.alpha, Ai, int(d.lda), Bi, int(d.ldb), beta, Di,
                int(d.ldc));
  }
  // The epilogue (on D of batch entry 0..batch-1; bias per row).
  for (int64_t i = 0; i < d.batch; ++i) {
    float *Di = D + i * d.strideC;
    float *auxI = aux ? aux + i * d.strideC : nullptr;
    switch (d.epilogue) {
    case GemmEpilogue::Default:
      break;
    case GemmEpilogue::Bias:
    case GemmEpilogue::ReluBias:
    case GemmEpilogue::GeluBias:
    case GemmEpilogue::GeluAuxBias:
      for (int64_t col = 0; col < d.n; ++col)
        for (int64_t row = 0; row < d.m; ++row) {
          float &x = Di[row + col * d.ldc];
          x += bias[row];
          if (d.epilogue == GemmEpilogue::ReluBias)
            x = x > 0.0f ? x : 0.0f;
          else if (d.epilogue == GemmEpilogue::GeluBias)
            x = geluTanh(x);
          else if (d.epilogue == GemmEpilogue::GeluAuxBias) {
            auxI[row + col * d.ldc] = x;
            x = geluTanh(x);
          }
        }
      break;
    case GemmEpilogue::DGeluBGrad: {
      // Fixed order: per row, a double sum over the columns in order.
      std::vector<double> sums(d.m, 0.0);
      for (int64_t col = 0; col < d.n; ++col)
        for (int64_t row = 0; row < d.m; ++row) {
          float &x = Di[row + col * d.ldc];
          x *= geluTanhGrad(auxI[row + col * d.ldc]);
          sums[row] += x;
        }
      for (int64_t row = 0; row < d.m; ++row)
        bias[row] = float(sums[row]);
      break;
    }
    }
  }
}

} // namespace

} // namespace xlnetc::rt::dev
