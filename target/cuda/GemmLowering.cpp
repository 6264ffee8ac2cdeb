//===- GemmLowering.cpp - A plan's gemm steps as GEMM calls ---------------===//

#include "target/cuda/GemmLowering.h"

#include <fmt/format.h>

namespace xlnetc::rt::dev {

namespace {

/// The [M, K] view of x (its last k_rank dims are K) and N from y.
void matrixView(const std::vector<int64_t> &x, int kRank,
                const std::vector<int64_t> &y, int64_t &M, int64_t &K,
                int64_t &N) {
  size_t lead = x.size() - size_t(kRank);
  M = K = N = 1;
  for (size_t d = 0; d < lead; ++d)
    M *= x[d];
  for (size_t d = lead; d < x.size(); ++d)
    K *= x[d];
  for (size_t d = lead; d < y.size(); ++d)
    N *= y[d];
}

} // namespace

/// A `gemm` step: y = x·op(w) [+ bias], with its fused epilogue.
static void lowerForwardGemm(const Plan &plan, const Step &step, GemmStepCall &out) {
  const StepAttrs &at = step.attrs;
  auto shape = [&](int id) -> const std::vector<int64_t> & {
    return plan.buffers[size_t(id)].shape;
  };
  // in: x, w, [bias]; out: y.
  int64_t M, K, N;
  matrixView(shape(step.in[0]), at.kRank, shape(step.out[0]), M, K, N);
  GemmDesc &d = out.desc;
  d.transA = at.transposeW;
  d.transB = false;
  d.m = N;
  d.n = M;
  d.k = K;
  d.lda = at.transposeW ? K : N;
  d.ldb = K;
  d.ldc = N;
  out.a = step.in[1];
  out.b = step.in[0];
  out.out = step.out[0];
  out.c = step.initOf(0);
  // The fused epilogues (docs/Plan.md "Fused forms"): DGELU_BGRAD reads
  // the pre-activation (input 2) and writes the bias gradient (output 1);
  // GELU_AUX_BIAS also writes the pre-activation (output 1).
  const bool dgelu = at.activationGrad == Activation::GeluTanh;
  const bool hasBias = step.in.size() == 3 && !dgelu;
  if (hasBias)
    out.bias = step.in[2];
  if (dgelu) {
    d.epilogue = GemmEpilogue::DGeluBGrad;
    out.aux = step.in[2];
    out.bias = step.out[1];
  } else if (step.out.size() == 2) {
    d.epilogue = GemmEpilogue::GeluAuxBias;
    out.aux = step.out[1];
  } else {
    switch (at.activation) {
    case Activation::None:
      d.epilogue = hasBias ? GemmEpilogue::Bias : GemmEpilogue::Default;
      break;
    case Activation::Relu:
      d.epilogue = hasBias ? GemmEpilogue::ReluBias : GemmEpilogue::Default;
      out.followUp = hasBias ? Activation::None : Activation::Relu;
      break;
    case Activation::GeluTanh:
      d.epilogue = hasBias ? GemmEpilogue::GeluBias : GemmEpilogue::Default;
      out.followUp = hasBias ? Activation::None : Activation::GeluTanh;
      break;
    case Activation::GeluErf:
      // cuBLASLt's GELU is the tanh form: add the bias, apply erf-GELU after.
      d.epilogue = hasBias ? GemmEpilogue::Bias : GemmEpilogue::Default;
      out.followUp = Activation::GeluErf;
      break;
    }
  }
  if (out.c >= 0)
    d.beta = 1.0f;
}

/// A `gemm_wgrad` step: the weight gradient of the gemm with its attrs.
static void lowerWeightGradGemm(const Plan &plan, const Step &step, GemmStepCall &out) {
  const StepAttrs &at = step.attrs;
  auto shape = [&](int id) -> const std::vector<int64_t> & {
    return plan.buffers[size_t(id)].shape;
  };
  // in: x, dy; out: dw ([K, N], or [N, K] with transpose_w).
  int64_t M, K, N;
  matrixView(shape(step.in[0]), at.kRank, shape(step.in[1]), M, K, N);
  GemmDesc &d = out.desc;
  d.transA = false;
  d.transB = true;
  d.k = M;
  out.out = step.out[0];
  out.c = step.initOf(0);
  if (out.c >= 0)
    d.beta = 1.0f;
  if (!at.transposeW) {
    d.m = N;
    d.n = K;
    d.lda = N;
    d.ldb = K;
    d.ldc = N;
    out.a = step.in[1];
    out.b = step.in[0];
  } else {
    d.m = K;
    d.n = N;
    d.lda = K;
    d.ldb = N;
    d.ldc = K;
    out.a = step.in[0];
    out.b = step.in[1];
  }
}

Status lowerGemmStep(const Plan &plan, const Step &step, GemmStepCall &out) {
  out = GemmStepCall();
  if (step.kind == OpKind::Gemm)
    lowerForwardGemm(plan, step, out);
  else if (step.kind == OpKind::GemmWgrad)
    lowerWeightGradGemm(plan, step, out);
  else
    return Status::error(fmt::format("{}: not a gemm or gemm_wgrad step", step.op));
  auto type = [&](int id) {
    return plan.buffers[size_t(id)].dtype == DType::BF16 ? GemmType::BF16 : GemmType::F32;
  };
  out.desc.ab = type(out.a);
  out.desc.cd = type(out.out);
  if (out.bias >= 0 && type(out.bias) != out.desc.cd)
    return Status::error(fmt::format("{}: a GEMM's bias has its output's type ({}), got {}",
                                     step.op, gemmTypeName(out.desc.cd),
                                     gemmTypeName(type(out.bias))));
  if (type(out.b) != out.desc.ab)
    return Status::error(fmt::format("{}: A and B of a GEMM need one type, got {} and {}",
                                     step.op, gemmTypeName(out.desc.ab),
                                     gemmTypeName(type(out.b))));
  if (out.desc.m <= 0 || out.desc.n <= 0 || out.desc.k <= 0)
    return Status::error(fmt::format(
        "{} ({}): an empty matrix product (m={} n={} k={}) has no device "
        "lowering",
        step.op, step.loc, out.desc.m, out.desc.n, out.desc.k));
  return Status::ok();
}

} // namespace xlnetc::rt::dev
