//===- PlanVerify.cpp - dtype and shape rules of every plan op ------------===//
//
// One rule per op, exactly as in the table of docs/Plan.md. Each rule checks
// the inputs, derives the output types (with -1 for a dim the inputs do not
// determine) and compares them with the declared outputs, so a wrong plan is
// rejected with a message naming the operand and the dimension.
//
//===----------------------------------------------------------------------===//

#include "runtime/PermMask.h"
#include "runtime/plan/Plan.h"

#include <fmt/format.h>

namespace xlnetc::rt {

namespace {

/// A dtype and shape; -1 in `shape` means "any size".
struct TypeSpec {
  DType dtype;
  std::vector<int64_t> shape;
};

std::string specStr(const TypeSpec &t) {
  std::vector<std::string> dims;
  for (int64_t d : t.shape)
    dims.push_back(d < 0 ? "?" : std::to_string(d));
  return fmt::format("{}[{}]", dtypeName(t.dtype), fmt::join(dims, ", "));
}

std::string bufStr(const Buffer &b) {
  return std::string(dtypeName(b.dtype)) + shapeStr(b.shape);
}

/// Checks for one step: operand access and messages naming the operand.
class Rule {
public:
  Rule(const Plan &plan, const Step &step,
       std::vector<const char *> inNames)
      : plan_(plan), step_(step), inNames_(std::move(inNames)) {}

  size_t numIn() const { return step_.in.size(); }
  size_t numOut() const { return step_.out.size(); }
  const Step &step() const { return step_; }
  const Buffer &in(size_t k) const { return plan_.buffers[step_.in[k]]; }
  const Buffer &out(size_t k) const { return plan_.buffers[step_.out[k]]; }
  const std::vector<int64_t> &shape(size_t k) const { return in(k).shape; }
  int64_t dim(size_t k, size_t d) const { return in(k).shape[d]; }

  std::string name(size_t k) const {
    return fmt::format("input {} ({}, buffer {})", k,
                       k < inNames_.size() ? inNames_[k] : "?", in(k).id);
  }

  /// From here on, an f32 slot takes f32 only (the optimizer's and the
  /// losses' operands); by default it also takes bf16 (docs/Plan.md
  /// "Mixed precision").
  Rule &f32Only() {
    f32Only_ = true;
    return *this;
  }

  /// Whether a buffer of `have` fits a slot of `want`.
  bool fits(DType have, DType want) const {
    return have == want || (want == DType::F32 && have == DType::BF16 && !f32Only_);
  }

  /// Input k has `dtype` and `rank` dims (rank < 0: at least -rank dims).
  Status operand(size_t k, DType dtype, int rank) const {
    const Buffer &b = in(k);
    if (!fits(b.dtype, dtype))
      return Status::error(fmt::format("{} must be {}, got {}", name(k),
                                       dtypeName(dtype), bufStr(b)));
    if (rank >= 0 && int(b.shape.size()) != rank)
      return Status::error(fmt::format("{} must have rank {}, got {}", name(k),
                                       rank, bufStr(b)));
    if (rank < 0 && int(b.shape.size()) < -rank)
      return Status::error(fmt::format("{} must have rank >= {}, got {}",
                                       name(k), -rank, bufStr(b)));
    return Status::ok();
  }

  /// Input k has `dtype`, any rank.
  Status operandDType(size_t k, DType dtype) const {
    if (!fits(in(k).dtype, dtype))
      return Status::error(fmt::format("{} must be {}, got {}", name(k),
                                       dtypeName(dtype), bufStr(in(k))));
    return Status::ok();
  }

  /// Inputs j and k have one dtype (a GEMM's operands).
  Status sameDType(size_t j, size_t k) const {
    if (in(j).dtype != in(k).dtype)
      return Status::error(fmt::format("{} and {} must have one dtype, got {} "
                                       "and {}",
                                       name(j), name(k), bufStr(in(j)),
                                       bufStr(in(k))));
    return Status::ok();
  }

  /// Input k has exactly `spec` (-1 dims match anything).
  Status operandType(size_t k, const TypeSpec &spec) const {
    const Buffer &b = in(k);
    if (!matches(b, spec))
      return Status::error(fmt::format("{} must be {}, got {}", name(k),
                                       specStr(spec), bufStr(b)));
    return Status::ok();
  }

  /// Dim `d` of input k equals `want`, described as `what`.
  Status sameDim(size_t k, size_t d, int64_t want, const std::string &what)
      const {
    if (dim(k, d) != want)
      return Status::error(fmt::format("{} dim {} is {} but {} is {} ({})",
                                       name(k), d, dim(k, d), what, want,
                                       bufStr(in(k))));
    return Status::ok();
  }

  /// The declared outputs match `expected`.
  Status outputs(const std::vector<TypeSpec> &expected,
                 const std::string &why = "") const {
    for (size_t k = 0; k < expected.size(); ++k) {
      const Buffer &b = plan_.buffers[step_.out[k]];
      if (!matches(b, expected[k]))
        return Status::error(fmt::format(
            "output {} (buffer {}) is {} but must be {}{}", k, b.id,
            bufStr(b), specStr(expected[k]), why.empty() ? "" : " " + why));
    }
    return Status::ok();
  }

  const StepAttrs &attrs() const { return step_.attrs; }

  bool matches(const Buffer &b, const TypeSpec &spec) const {
    if (!fits(b.dtype, spec.dtype) || b.shape.size() != spec.shape.size())
      return false;
    for (size_t d = 0; d < b.shape.size(); ++d)
      if (spec.shape[d] >= 0 && spec.shape[d] != b.shape[d])
        return false;
    return true;
  }

private:
  const Plan &plan_;
  const Step &step_;
  std::vector<const char *> inNames_;
  bool f32Only_ = false;
};

constexpr DType F32 = DType::F32, I64 = DType::I64, Bool = DType::Bool;

/// The fused forms of gemm (docs/Plan.md "Fused forms"): an init (no bias,
/// no epilogue), the forward GELU's aux output (the pre-activation) and the
/// backward's activation_grad (input 2 the pre-activation, output 1 the
/// bias gradient, N elements). All in the output's type, as cuBLASLt's
/// epilogues want them.
Status verifyGemmEpilogue(const Rule &r, int64_t n) {
  const StepAttrs &a = r.attrs();
  const Buffer &out = r.out(0);
  auto sameAsOut = [&](const Buffer &b, const std::string &what) {
    if (b.dtype != out.dtype || b.shape != out.shape)
      return Status::error(fmt::format("{} is {} but must have output 0's type {}", what,
                                       bufStr(b), bufStr(out)));
    return Status::ok();
  };
  if (r.step().initOf(0) >= 0 &&
      (r.numIn() != 2 || a.activation != Activation::None ||
       a.activationGrad != Activation::None || r.numOut() != 1))
    return Status::error("a gemm with an init (y = init + x·op(w)) takes no bias, no "
                         "activation or activation_grad and has one output");
  if (a.activationGrad != Activation::None) {
    if (r.numIn() != 3 || r.numOut() != 2 || a.activation != Activation::None)
      return Status::error("a gemm with activation_grad takes x, w and the pre-activation "
                           "and writes the gradient and the bias gradient (no activation)");
    XLNETC_RETURN_IF_ERROR(sameAsOut(r.in(2), r.name(2) + " (the pre-activation)"));
    const Buffer &db = r.out(1);
    if (db.dtype != out.dtype || db.shape.size() != 1 || db.shape[0] != n)
      return Status::error(fmt::format("output 1 (buffer {}, the bias gradient) is {} but "
                                       "must be {}[{}]",
                                       db.id, bufStr(db), dtypeName(out.dtype), n));
    return Status::ok();
  }
  if (r.numOut() == 2) {
    if (a.activation != Activation::GeluTanh || r.numIn() != 3)
      return Status::error("a gemm's output 1 (the pre-activation) needs activation "
                           "gelu_tanh and a bias (cuBLASLt's GELU_AUX_BIAS)");
    return sameAsOut(r.out(1), fmt::format("output 1 (buffer {}, the pre-activation)",
                                           r.out(1).id));
  }
  return Status::ok();
}

Status verifyGemm(const Rule &r) {
  int kRank = r.attrs().kRank;
  XLNETC_RETURN_IF_ERROR(r.operand(0, F32, -kRank));
  XLNETC_RETURN_IF_ERROR(r.operand(1, F32, -kRank));
  XLNETC_RETURN_IF_ERROR(r.sameDType(0, 1));
  const auto &x = r.shape(0), &w = r.shape(1);
  std::vector<int64_t> xK(x.end() - kRank, x.end());
  std::vector<int64_t> wK, wN;
  if (r.attrs().transposeW) {
    wN.assign(w.begin(), w.end() - kRank);
    wK.assign(w.end() - kRank, w.end());
  } else {
    wK.assign(w.begin(), w.begin() + kRank);
    wN.assign(w.begin() + kRank, w.end());
  }
  if (xK != wK)
    return Status::error(fmt::format(
        "contraction dims disagree: the last {} dims of {} are {} but the {} "
        "{} dims of {} are {} (transpose_w {})",
        kRank, r.name(0), shapeStr(xK), r.attrs().transposeW ? "last" : "first",
        kRank, r.name(1), shapeStr(wK), r.attrs().transposeW));
  // Input 2 is the bias, or with activation_grad the pre-activation.
  const bool grad = r.attrs().activationGrad != Activation::None;
  const bool hasBias = r.numIn() == 3 && !grad;
  if (hasBias) {
    XLNETC_RETURN_IF_ERROR(r.operandDType(2, F32));
    if (numelOf(r.shape(2)) != numelOf(wN))
      return Status::error(fmt::format(
          "{} has {} elements {} but w's N dims {} have {}", r.name(2),
          numelOf(r.shape(2)), shapeStr(r.shape(2)), shapeStr(wN),
          numelOf(wN)));
  }
  std::vector<int64_t> y(x.begin(), x.end() - kRank);
  y.insert(y.end(), wN.begin(), wN.end());
  XLNETC_RETURN_IF_ERROR(r.outputs({{F32, y}}, "(x's leading dims followed by w's N dims)"));
  // The bias has the output's type (cuBLASLt's rule).
  const Buffer &out = r.out(0);
  if (hasBias && r.in(2).dtype != out.dtype)
    return Status::error(fmt::format("{} is {} but the output (buffer {}) is {}: a bias has "
                                     "its output's type",
                                     r.name(2), bufStr(r.in(2)), out.id, bufStr(out)));
  return verifyGemmEpilogue(r, numelOf(wN));
}

/// The operands of rel_attention starting at input `o` (0 for rel_attention,
/// 1 for rel_attention_grad, whose input 0 is dout). Returns B, T, N, H, K, P
/// and S through `dims` for the caller's output rule.
struct AttnDims {
  int64_t B, T, N, H, K, P, S;
};

Status verifyRelAttentionOperands(const Rule &r, size_t o, AttnDims &dims) {
  XLNETC_RETURN_IF_ERROR(r.operand(o + 0, F32, 4));
  int64_t B = r.dim(o, 0), T = r.dim(o, 1), N = r.dim(o, 2), H = r.dim(o, 3);
  XLNETC_RETURN_IF_ERROR(r.operand(o + 1, F32, 4));
  int64_t K = r.dim(o + 1, 1);
  XLNETC_RETURN_IF_ERROR(r.operandType(o + 1, {F32, {B, K, N, H}}));
  XLNETC_RETURN_IF_ERROR(r.operandType(o + 2, {F32, {B, K, N, H}}));
  // The masks: dense (seg_mat, mask bool [B,S,K]) or compact (seg_id i64
  // [B,S], perm_rank i64 [B,2,S] or perm_bits i64 [B,S,W]; docs/Plan.md
  // "Compact masks", runtime/PermMask.h).
  const bool compact = r.in(o + 8).dtype == I64;
  XLNETC_RETURN_IF_ERROR(r.operand(o + 8, compact ? I64 : Bool, compact ? 2 : 3));
  int64_t S = r.dim(o + 8, 1);
  if (S > K)
    return Status::error(fmt::format(
        "{} has S = {} query rows but k has only K = {} keys", r.name(o + 8),
        S, K));
  if (compact) {
    XLNETC_RETURN_IF_ERROR(r.operandType(o + 8, {I64, {B, S}}));
    const TypeSpec ranks{I64, {B, 2, S}}, bits{I64, {B, S, permBitsWords(S)}};
    if (!r.matches(r.in(o + 9), ranks) && !r.matches(r.in(o + 9), bits))
      return Status::error(fmt::format("{} must be {} (perm_rank) or {} (perm_bits), got {}",
                                       r.name(o + 9), specStr(ranks), specStr(bits),
                                       bufStr(r.in(o + 9))));
  } else {
    XLNETC_RETURN_IF_ERROR(r.operandType(o + 8, {Bool, {B, S, K}}));
    XLNETC_RETURN_IF_ERROR(r.operandType(o + 9, {Bool, {B, S, K}}));
  }
  XLNETC_RETURN_IF_ERROR(r.operand(o + 3, F32, 4));
  int64_t P = r.dim(o + 3, 0);
  if (P != 1 && P != 2)
    return Status::error(fmt::format("{} dim 0 (P) must be 1 or 2, got {}",
                                     r.name(o + 3), P));
  if (B % P != 0)
    return Status::error(fmt::format(
        "batch B = {} is not divisible by the bi_data copies P = {}", B, P));
  XLNETC_RETURN_IF_ERROR(r.operandType(o + 3, {F32, {P, K + S, N, H}}));
  XLNETC_RETURN_IF_ERROR(r.operandType(o + 4, {F32, {2, N, H}}));
  for (size_t k = 5; k <= 7; ++k)
    XLNETC_RETURN_IF_ERROR(r.operandType(o + k, {F32, {N, H}}));
  if (r.numIn() == o + 11)
    XLNETC_RETURN_IF_ERROR(r.operandType(o + 10, {I64, {B, T}}));
  else if (T != S)
    return Status::error(fmt::format(
        "q has T = {} rows but the masks have S = {}; T != S needs the rows "
        "input",
        T, S));
  dims = {B, T, N, H, K, P, S};
  return Status::ok();
}

Status verifyRelAttention(const Rule &r) {
  AttnDims d;
  XLNETC_RETURN_IF_ERROR(verifyRelAttentionOperands(r, 0, d));
  return r.outputs({{F32, {d.B, d.T, d.N, d.H}}});
}

Status verifyRelAttentionGrad(const Rule &r) {
  AttnDims d;
  XLNETC_RETURN_IF_ERROR(verifyRelAttentionOperands(r, 1, d));
  XLNETC_RETURN_IF_ERROR(r.operandType(0, {F32, {d.B, d.T, d.N, d.H}}));
  // The gradients, in the order of the differentiable operands.
  return r.outputs({{F32, {d.B, d.T, d.N, d.H}},
                    {F32, {d.B, d.K, d.N, d.H}},
                    {F32, {d.B, d.K, d.N, d.H}},
                    {F32, {d.P, d.K + d.S, d.N, d.H}},
                    {F32, {2, d.N, d.H}},
                    {F32, {d.N, d.H}},
                    {F32, {d.N, d.H}},
                    {F32, {d.N, d.H}}},
                   "(the type of the matching rel_attention operand)");
}

/// gemm_wgrad: x [lead..., Kx...], dy [lead..., Nw...] -> the type of the
/// forward gemm's w.
Status verifyGemmWgrad(const Rule &r) {
  int kRank = r.attrs().kRank;
  XLNETC_RETURN_IF_ERROR(r.operand(0, F32, -kRank));
  const auto &x = r.shape(0);
  size_t lead = x.size() - size_t(kRank);
  // dy has x's leading dims, then the N dims (possibly none).
  XLNETC_RETURN_IF_ERROR(lead == 0 ? r.operandDType(1, F32)
                                   : r.operand(1, F32, -int(lead)));
  XLNETC_RETURN_IF_ERROR(r.sameDType(0, 1));
  const auto &dy = r.shape(1);
  for (size_t d = 0; d < lead; ++d)
    XLNETC_RETURN_IF_ERROR(
        r.sameDim(1, d, x[d], fmt::format("dim {} of x (a leading dim)", d)));
  std::vector<int64_t> xK(x.begin() + lead, x.end());
  std::vector<int64_t> dyN(dy.begin() + lead, dy.end());
  std::vector<int64_t> w = r.attrs().transposeW ? dyN : xK;
  w.insert(w.end(), r.attrs().transposeW ? xK.begin() : dyN.begin(),
           r.attrs().transposeW ? xK.end() : dyN.end());
  return r.outputs({{F32, w}}, r.attrs().transposeW
                                   ? "(dy's trailing dims, then x's last "
                                     "k_rank dims: the forward's w)"
                                   : "(x's last k_rank dims, then dy's "
                                     "trailing dims: the forward's w)");
}

/// bias_grad: out has n elements, n the product of a suffix of dy's dims.
Status verifyBiasGrad(const Rule &r, const Buffer &out) {
  XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
  if (out.dtype != F32)
    return Status::error(fmt::format("output 0 (buffer {}) is {} but must be "
                                     "f32",
                                     out.id, bufStr(out)));
  // The table's "dy's trailing dims", read as in the gemm bias rule: any
  // shape with as many elements as some trailing dims of dy, so that summing
  // over the leading dims is exactly the [numel/n, n] view.
  const auto &dy = r.shape(0);
  int64_t n = numelOf(out.shape), suffix = 1;
  if (n == 1)
    return Status::ok();
  for (size_t d = dy.size(); d-- > 0;) {
    suffix *= dy[d];
    if (suffix == n)
      return Status::ok();
  }
  return Status::error(fmt::format(
      "output 0 (buffer {}) is {} with {} elements, but no trailing dims of "
      "{} have {} elements",
      out.id, bufStr(out), n, r.name(0), n));
}

/// The op's own rule (docs/Plan.md's table).
Status verifyOpTypes(const Plan &plan, const Step &step);

} // namespace

Status verifyStepTypes(const Plan &plan, const Step &step) {
  // An output that starts from an init has the init's type and shape.
  for (size_t k = 0; k < step.init.size() && k < step.out.size(); ++k) {
    const int id = step.initOf(k);
    if (id < 0)
      continue;
    // parsePlan checks this too; plans built in memory come here only.
    if (!outputTakesInit(step.kind, k))
      return Status::error(fmt::format("output {} of {} cannot start from an init", k,
                                       opName(step.kind)));
    const Buffer &init = plan.buffers[size_t(id)], &out = plan.buffers[size_t(step.out[k])];
    if (init.dtype != out.dtype || init.shape != out.shape)
      return Status::error(fmt::format("the init of output {} (buffer {}) is {} but the "
                                       "output (buffer {}) is {}",
                                       k, id, bufStr(init), out.id, bufStr(out)));
  }
  return verifyOpTypes(plan, step);
}

namespace {

/// mem_cache: the next segment's memory, the last min(mem_len, M +
/// reuse_len) positions of [mems; h[:reuse_len]].
static Status verifyMemCache(const Plan &plan, const Step &step) {
  const StepAttrs &a = step.attrs;
  bool hasMems = step.in.size() == 2;
  Rule r(plan, step,
         hasMems ? std::vector<const char *>{"mems", "h"} : std::vector<const char *>{"h"});
  size_t h = hasMems ? 1 : 0;
  XLNETC_RETURN_IF_ERROR(r.operand(h, F32, 3));
  int64_t B = r.dim(h, 0), S = r.dim(h, 1), D = r.dim(h, 2), M = 0;
  if (hasMems) {
    XLNETC_RETURN_IF_ERROR(r.operandType(0, {F32, {-1, B, D}}));
    M = r.dim(0, 0);
  }
  if (a.reuseLen > S)
    return Status::error(
        fmt::format("reuse_len {} exceeds the segment length S = {}", a.reuseLen, S));
  int64_t L = std::min(a.memLen, M + a.reuseLen);
  return r.outputs({{F32, {L, B, D}}}, "(L = min(mem_len, M + reuse_len))");
}

/// add_layer_norm: x, a residual of x's shape, gamma and beta over the last
/// dimension.
static Status verifyAddLayerNorm(Rule r) {
  XLNETC_RETURN_IF_ERROR(r.operand(0, F32, -1));
  std::vector<int64_t> x = r.shape(0);
  int64_t D = x.back();
  XLNETC_RETURN_IF_ERROR(r.operandType(1, {F32, x}));
  XLNETC_RETURN_IF_ERROR(r.operandType(2, {F32, {D}}));
  XLNETC_RETURN_IF_ERROR(r.operandType(3, {F32, {D}}));
  return r.outputs({{F32, x}});
}

/// The forward ops (docs/Plan.md "Ops").
static Status verifyForwardOp(const Plan &plan, const Step &step) {
  const StepAttrs &a = step.attrs;
  switch (step.kind) {
  case OpKind::Embedding: {
    Rule r(plan, step, {"ids", "table"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, I64, 2));
    XLNETC_RETURN_IF_ERROR(r.operand(1, F32, 2));
    return r.outputs({{F32, {r.dim(0, 0), r.dim(0, 1), r.dim(1, 1)}}});
  }
  case OpKind::MaskEmbedding: {
    Rule r(plan, step, {"mask_emb"});
    XLNETC_RETURN_IF_ERROR(r.operandType(0, {F32, {1, 1, -1}}));
    return r.outputs({{F32, {-1, -1, r.dim(0, 2)}}});
  }
  case OpKind::RelPosEncoding: {
    Rule r(plan, step, {});
    XLNETC_RETURN_IF_ERROR(
        r.outputs({{F32, {a.biData ? 2 : 1, a.klen + a.qlen, -1}}},
                  "(P = 2 if bi_data else 1, R = klen + qlen)"));
    int64_t D = plan.buffers[step.out[0]].shape[2];
    if (D % 2 != 0)
      return Status::error(fmt::format("d_model D = {} must be even", D));
    return Status::ok();
  }
  case OpKind::RelSegment: {
    Rule r(plan, step, {"seg_id"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, I64, 2));
    int64_t B = r.dim(0, 0), S = r.dim(0, 1);
    return r.outputs({{Bool, {B, S, a.mlen + S}}}, "(K = mlen + S)");
  }
  case OpKind::AttnMask: {
    Rule r(plan, step, {"perm_mask"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    int64_t B = r.dim(0, 0), S = r.dim(0, 1);
    XLNETC_RETURN_IF_ERROR(r.sameDim(0, 2, S, "dim 1 (S)"));
    return r.outputs({{Bool, {B, S, a.mlen + S}}}, "(K = mlen + S)");
  }
  case OpKind::TargetPositions: {
    Rule r(plan, step, {"target_mapping"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    return r.outputs({{I64, {r.dim(0, 0), r.dim(0, 1)}}});
  }
  case OpKind::MemConcat: {
    Rule r(plan, step, {"mems", "h"});
    XLNETC_RETURN_IF_ERROR(r.operand(1, F32, 3));
    int64_t B = r.dim(1, 0), S = r.dim(1, 1), D = r.dim(1, 2);
    XLNETC_RETURN_IF_ERROR(r.operandType(0, {F32, {-1, B, D}}));
    return r.outputs({{F32, {B, r.dim(0, 0) + S, D}}}, "(K = M + S)");
  }
  case OpKind::MemCache:
    return verifyMemCache(plan, step);
  case OpKind::Gemm:
    return verifyGemm(Rule(plan, step, {"x", "w", "bias"}));
  case OpKind::RelAttention:
    return verifyRelAttention(
        Rule(plan, step,
             {"q", "k", "v", "k_r", "seg_embed", "r_w_bias", "r_r_bias",
              "r_s_bias", "seg_mat", "mask", "rows"}));
  case OpKind::AddLayerNorm:
    return verifyAddLayerNorm(Rule(plan, step, {"x", "residual", "gamma", "beta"}));
  case OpKind::Dropout: {
    Rule r(plan, step, {"x"});
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    return r.outputs({{F32, r.shape(0)}});
  }
  case OpKind::LmLoss: {
    Rule r(plan, step, {"logits", "target", "target_mask"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    int64_t B = r.dim(0, 0), NP = r.dim(0, 1);
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {I64, {B, NP}}));
    XLNETC_RETURN_IF_ERROR(r.operandType(2, {F32, {B, NP}}));
    return r.f32Only().outputs({{F32, {}}, {F32, {B, NP}}},
                               "(losses are f32)");
  }
  default:
    break;
  }
  return Status::error("internal error: not a forward op");
}

/// The backward ops (docs/Plan.md "Backward ops").
static Status verifyBackwardOp(const Plan &plan, const Step &step) {
  const StepAttrs &a = step.attrs;
  switch (step.kind) {
  case OpKind::EmbeddingGrad: {
    Rule r(plan, step, {"ids", "dout"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, I64, 2));
    int64_t B = r.dim(0, 0), S = r.dim(0, 1);
    XLNETC_RETURN_IF_ERROR(r.operand(1, F32, 3));
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {F32, {B, S, -1}}));
    return r.outputs({{F32, {-1, r.dim(1, 2)}}}, "(the table [V, D])");
  }
  case OpKind::MaskEmbeddingGrad: {
    Rule r(plan, step, {"dout"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    return r.outputs({{F32, {1, 1, r.dim(0, 2)}}}, "(mask_emb [1, 1, D])");
  }
  case OpKind::MemConcatGrad: {
    Rule r(plan, step, {"dout"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    int64_t B = r.dim(0, 0), K = r.dim(0, 1), D = r.dim(0, 2);
    XLNETC_RETURN_IF_ERROR(r.outputs({{F32, {B, -1, D}}}, "(h [B, S, D])"));
    int64_t S = plan.buffers[step.out[0]].shape[1];
    if (S > K)
      return Status::error(fmt::format(
          "output 0 (buffer {}) has S = {} rows but {} has only K = {}",
          step.out[0], S, r.name(0), K));
    return Status::ok();
  }
  case OpKind::ActivationOp: {
    Rule r(plan, step, {"x"});
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    return r.outputs({{F32, r.shape(0)}});
  }
  case OpKind::ActivationGrad: {
    Rule r(plan, step, {"dy", "x"});
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {F32, r.shape(0)}));
    return r.outputs({{F32, r.shape(0)}});
  }
  case OpKind::GemmWgrad:
    return verifyGemmWgrad(Rule(plan, step, {"x", "dy"}));
  case OpKind::BiasGrad:
    return verifyBiasGrad(Rule(plan, step, {"dy"}),
                          plan.buffers[step.out[0]]);
  case OpKind::RelAttentionGrad:
    return verifyRelAttentionGrad(
        Rule(plan, step,
             {"dout", "q", "k", "v", "k_r", "seg_embed", "r_w_bias",
              "r_r_bias", "r_s_bias", "seg_mat", "mask", "rows"}));
  case OpKind::AddLayerNormGrad: {
    Rule r(plan, step, {"dout", "x", "residual", "gamma"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, -1));
    std::vector<int64_t> x = r.shape(0);
    int64_t D = x.back();
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {F32, x}));
    XLNETC_RETURN_IF_ERROR(r.operandType(2, {F32, x}));
    XLNETC_RETURN_IF_ERROR(r.operandType(3, {F32, {D}}));
    XLNETC_RETURN_IF_ERROR(r.outputs({{F32, x}, {F32, {D}}, {F32, {D}}},
                                     "(dsum like x, dgamma and dbeta like gamma)"));
    // The fused dsum dropout: output 3 exactly with its attributes, dsum's type.
    if ((r.numOut() == 4) != a.dsumDropout)
      return Status::error(fmt::format(
          "has {} outputs but {} 'dsum_dropout_rate': output 3 is the fused dropout of dsum",
          r.numOut(), a.dsumDropout ? "has" : "no"));
    if (r.numOut() == 4 && (r.out(3).dtype != r.out(0).dtype || r.out(3).shape != x))
      return Status::error(fmt::format("output 3 (buffer {}, the dropped dsum) is {} but must "
                                       "have dsum's type {}",
                                       r.out(3).id, bufStr(r.out(3)), bufStr(r.out(0))));
    return Status::ok();
  }
  case OpKind::LmLossGrad: {
    Rule r(plan, step, {"logits", "target", "target_mask", "count"});
    XLNETC_RETURN_IF_ERROR(r.operand(0, F32, 3));
    int64_t B = r.dim(0, 0), NP = r.dim(0, 1);
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {I64, {B, NP}}));
    XLNETC_RETURN_IF_ERROR(r.operandType(2, {F32, {B, NP}}));
    if (r.numIn() == 4)
      XLNETC_RETURN_IF_ERROR(r.operandType(3, {F32, {}}));
    return r.outputs({{F32, r.shape(0)}});
  }
  case OpKind::Add: {
    Rule r(plan, step, {"a", "b"});
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    XLNETC_RETURN_IF_ERROR(r.operandType(1, {F32, r.shape(0)}));
    return r.outputs({{F32, r.shape(0)}});
  }
  default:
    break;
  }
  return Status::error("internal error: not a backward op");
}

/// The cast and the optimizer ops (docs/Plan.md "Mixed precision", "Optimizer ops").
static Status verifyOptimizerOp(const Plan &plan, const Step &step) {
  switch (step.kind) {
  case OpKind::Cast: {
    Rule r(plan, step, {"x"});
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    XLNETC_RETURN_IF_ERROR(r.outputs({{F32, r.shape(0)}}, "(x's shape)"));
    const Buffer &out = plan.buffers[step.out[0]];
    if (out.dtype == r.in(0).dtype)
      return Status::error(fmt::format(
          "output 0 (buffer {}) is {} like its input: a cast must change the "
          "dtype (f32 to bf16 or bf16 to f32)",
          out.id, bufStr(out)));
    return Status::ok();
  }
  case OpKind::LrSchedule: {
    Rule r(plan, step, {"step"});
    r.f32Only();
    XLNETC_RETURN_IF_ERROR(r.operandType(0, {I64, {}}));
    return r.outputs({{F32, {}}});
  }
  case OpKind::GlobalNorm: {
    std::vector<const char *> names(step.in.size(), "g");
    Rule r(plan, step, names);
    r.f32Only();
    for (size_t k = 0; k < step.in.size(); ++k)
      XLNETC_RETURN_IF_ERROR(r.operandDType(k, F32));
    return r.outputs({{F32, {}}});
  }
  case OpKind::AdamUpdate: {
    Rule r(plan, step,
           {"param", "grad", "m", "v", "lr", "grad_norm", "step"});
    r.f32Only();
    XLNETC_RETURN_IF_ERROR(r.operandDType(0, F32));
    TypeSpec param{F32, r.shape(0)};
    for (size_t k = 1; k <= 3; ++k)
      XLNETC_RETURN_IF_ERROR(r.operandType(k, param));
    XLNETC_RETURN_IF_ERROR(r.operandType(4, {F32, {}}));
    XLNETC_RETURN_IF_ERROR(r.operandType(5, {F32, {}}));
    XLNETC_RETURN_IF_ERROR(r.operandType(6, {I64, {}}));
    return r.outputs({param, param, param}, "(param', m', v' like param)");
  }
  default:
    break;
  }
  return Status::error("internal error: not a cast or optimizer op");
}

Status verifyOpTypes(const Plan &plan, const Step &step) {
  // By family; the switch names every kind (-Werror=switch).
  switch (step.kind) {
  case OpKind::Embedding:
  case OpKind::MaskEmbedding:
  case OpKind::RelPosEncoding:
  case OpKind::RelSegment:
  case OpKind::AttnMask:
  case OpKind::TargetPositions:
  case OpKind::MemConcat:
  case OpKind::MemCache:
  case OpKind::Gemm:
  case OpKind::RelAttention:
  case OpKind::AddLayerNorm:
  case OpKind::Dropout:
  case OpKind::LmLoss:
    return verifyForwardOp(plan, step);
  case OpKind::EmbeddingGrad:
  case OpKind::MaskEmbeddingGrad:
  case OpKind::MemConcatGrad:
  case OpKind::ActivationOp:
  case OpKind::ActivationGrad:
  case OpKind::GemmWgrad:
  case OpKind::BiasGrad:
  case OpKind::RelAttentionGrad:
  case OpKind::AddLayerNormGrad:
  case OpKind::LmLossGrad:
  case OpKind::Add:
    return verifyBackwardOp(plan, step);
  case OpKind::Cast:
  case OpKind::LrSchedule:
  case OpKind::GlobalNorm:
  case OpKind::AdamUpdate:
    return verifyOptimizerOp(plan, step);
  }
  return Status::error("unhandled op");
}

} // namespace

} // namespace xlnetc::rt
