//===- Gemm.cpp - The reference GEMM with cuBLASLt's semantics -----------===//

#include "runtime/device/Gemm.h"

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
                     gemmEpilogueName(d.epilogue));
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
  if (d.epilogue == GemmEpilogue::DGeluBGrad && d.batch != 1)
    return bad("dgelu_bgrad is not batched");
  return Status::ok();
}

Status gemmReference(const GemmDesc &d, const GemmPointers &p) {
  XLNETC_RETURN_IF_ERROR(validateGemm(d, p));
  const float *A = static_cast<const float *>(p.a);
  const float *B = static_cast<const float *>(p.b);
  const float *C = static_cast<const float *>(p.c);
  float *D = static_cast<float *>(p.d);
  float *bias = static_cast<float *>(p.bias);
  float *aux = static_cast<float *>(p.aux);
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
  return Status::ok();
}

} // namespace xlnetc::rt::dev
