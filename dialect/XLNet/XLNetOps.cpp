//===- XLNetOps.cpp - xlnet op verifiers ----------------------------------===//
//
// Every verifier states the op's shape rules with symbolic dimensions (B, S,
// K, ...) through DimBinder: the first operand that fixes a symbol binds it,
// and any later operand that disagrees gets an error naming both dimensions.
// Dynamic dimensions (`?`) are accepted and skipped.
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "runtime/PermMask.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <optional>

using namespace mlir;
using namespace mlir::xlnet;

namespace {

/// Binds symbolic dimension names to sizes while checking an op's operands.
class DimBinder {
public:
  explicit DimBinder(Operation *op) : op(op) {}

  /// Checks that `value` (called `name` in messages) is ranked with one dim
  /// per symbol and binds each static dim. A symbol that is a number must
  /// match exactly; "_" matches anything.
  LogicalResult bind(Value value, StringRef name, ArrayRef<StringRef> syms) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type)
      return op->emitOpError() << "'" << name << "' must be a ranked tensor";
    if (type.getRank() != static_cast<int64_t>(syms.size()))
      return op->emitOpError()
             << "'" << name << "' must have rank " << syms.size() << " ["
             << llvm::join(syms, ", ") << "], got " << type;
    for (auto [dim, sym] : llvm::enumerate(syms)) {
      int64_t size = type.getDimSize(dim);
      if (ShapedType::isDynamic(size) || sym == "_")
        continue;
      int64_t literal;
      if (!sym.getAsInteger(10, literal)) {
        if (size != literal)
          return op->emitOpError() << "'" << name << "' dim " << dim
                                   << " must be " << literal << ", got " << size;
        continue;
      }
      auto it = bound.find(sym);
      if (it == bound.end()) {
        bound[sym] = {size, llvm::formatv("'{0}' dim {1}", name, dim).str()};
        continue;
      }
      if (it->second.size != size)
        return op->emitOpError()
               << sym << " mismatch: '" << name << "' dim " << dim << " is "
               << size << " but " << it->second.origin << " is "
               << it->second.size;
    }
    return success();
  }

  /// The bound size of `sym`, if any operand fixed it.
  std::optional<int64_t> get(StringRef sym) const {
    auto it = bound.find(sym);
    if (it == bound.end())
      return std::nullopt;
    return it->second.size;
  }

  /// Checks `sym == expected` when `sym` is bound; `rule` explains `expected`.
  LogicalResult expect(StringRef sym, std::optional<int64_t> expected,
                       StringRef rule) {
    auto size = get(sym);
    if (!size || !expected || *size == *expected)
      return success();
    return op->emitOpError() << sym << " mismatch: "
                             << bound.find(sym)->second.origin << " is "
                             << *size << " but " << rule << " is " << *expected;
  }

private:
  struct Binding {
    int64_t size;
    std::string origin;
  };
  Operation *op;
  llvm::StringMap<Binding> bound;
};

/// Adds two optional sizes.
std::optional<int64_t> add(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a || !b)
    return std::nullopt;
  return *a + *b;
}

LogicalResult checkRate(Operation *op, StringRef name, double rate) {
  if (!(rate >= 0.0 && rate < 1.0)) // also rejects NaN
    return op->emitOpError() << name << " must be in [0, 1), got " << rate;
  return success();
}

LogicalResult checkEps(Operation *op, double eps) {
  if (!(eps > 0.0)) // also rejects NaN
    return op->emitOpError() << "eps must be > 0, got " << eps;
  return success();
}

/// P (the positional-encoding copies of `name`, 2 with bi_data) must be 1
/// or 2 and divide the batch: copy p serves batch rows [p*B/P, (p+1)*B/P).
LogicalResult checkPositionalCopies(Operation *op, StringRef name,
                                    const DimBinder &d) {
  auto b = d.get("B"), p = d.get("P");
  if (b && p && (*p < 1 || *p > 2 || *b % *p != 0))
    return op->emitOpError() << "'" << name << "' dim 0 (" << *p
                             << " positional copies) must be 1 or 2 and "
                                "divide the batch size B ("
                             << *b << ")";
  return success();
}

LogicalResult checkNonNegative(Operation *op, StringRef name, int64_t value) {
  if (value < 0)
    return op->emitOpError() << name << " must be >= 0, got " << value;
  return success();
}

} // namespace

#define GET_OP_CLASSES
#include "dialect/XLNet/XLNetOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  DimBinder d(*this);
  return success(succeeded(d.bind(getIds(), "ids", {"B", "S"})) &&
                 succeeded(d.bind(getTable(), "table", {"V", "D"})) &&
                 succeeded(d.bind(getResult(), "result", {"B", "S", "D"})));
}

LogicalResult MaskEmbeddingOp::verify() {
  DimBinder d(*this);
  return success(succeeded(d.bind(getMaskEmb(), "mask_emb", {"1", "1", "D"})) &&
                 succeeded(d.bind(getResult(), "result", {"B", "NP", "D"})));
}

//===----------------------------------------------------------------------===//
// Positions and masks
//===----------------------------------------------------------------------===//

LogicalResult RelPosEncodingOp::verify() {
  if (getQlenAttr().getInt() <= 0)
    return emitOpError() << "qlen must be > 0, got " << getQlenAttr().getInt();
  if (getKlenAttr().getInt() < getQlenAttr().getInt())
    return emitOpError() << "klen (" << getKlenAttr().getInt()
                         << ") must be >= qlen (" << getQlenAttr().getInt() << ")";
  DimBinder d(*this);
  if (failed(d.bind(getResult(), "result", {"P", "R", "D"})))
    return failure();
  if (failed(d.expect("P", getBiData() ? 2 : 1,
                      getBiData() ? "the copy count with bi_data"
                                  : "the copy count without bi_data")) ||
      failed(d.expect("R", getKlenAttr().getInt() + getQlenAttr().getInt(), "klen + qlen")))
    return failure();
  if (auto dm = d.get("D"); dm && *dm % 2 != 0)
    return emitOpError() << "d_model (result dim 2) must be even for "
                            "sin/cos halves, got "
                         << *dm;
  return success();
}

LogicalResult RelSegmentOp::verify() {
  DimBinder d(*this);
  if (failed(checkNonNegative(*this, "mlen", getMlenAttr().getInt())) ||
      failed(d.bind(getSegId(), "seg_id", {"B", "S"})) ||
      failed(d.bind(getResult(), "result", {"B", "S", "K"})))
    return failure();
  return d.expect("K", add(d.get("S"), getMlenAttr().getInt()), "mlen + S");
}

LogicalResult AttnMaskOp::verify() {
  DimBinder d(*this);
  if (failed(checkNonNegative(*this, "mlen", getMlenAttr().getInt())) ||
      failed(d.bind(getPermMask(), "perm_mask", {"B", "S", "S"})) ||
      failed(d.bind(getResult(), "result", {"B", "S", "K"})))
    return failure();
  return d.expect("K", add(d.get("S"), getMlenAttr().getInt()), "mlen + S");
}

LogicalResult RankMaskOp::verify() {
  DimBinder d(*this);
  if (failed(checkNonNegative(*this, "mlen", getMlenAttr().getInt())) ||
      failed(d.bind(getPermRank(), "perm_rank", {"B", "2", "S"})) ||
      failed(d.bind(getResult(), "result", {"B", "S", "K"})))
    return failure();
  return d.expect("K", add(d.get("S"), getMlenAttr().getInt()), "mlen + S");
}

LogicalResult PackedMaskOp::verify() {
  DimBinder d(*this);
  if (failed(checkNonNegative(*this, "mlen", getMlenAttr().getInt())) ||
      failed(d.bind(getPermBits(), "perm_bits", {"B", "S", "W"})) ||
      failed(d.bind(getResult(), "result", {"B", "S", "K"})))
    return failure();
  if (auto s = d.get("S"); s && failed(d.expect("W", xlnetc::rt::permBitsWords(*s),
                                                "ceil(S / 64)")))
    return failure();
  return d.expect("K", add(d.get("S"), getMlenAttr().getInt()), "mlen + S");
}

LogicalResult TargetPositionsOp::verify() {
  DimBinder d(*this);
  return success(
      succeeded(d.bind(getTargetMapping(), "target_mapping", {"B", "NP", "S"})) &&
      succeeded(d.bind(getResult(), "result", {"B", "NP"})));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

LogicalResult MemConcatOp::verify() {
  DimBinder d(*this);
  if (failed(d.bind(getMems(), "mems", {"M", "B", "D"})) ||
      failed(d.bind(getH(), "h", {"B", "S", "D"})) ||
      failed(d.bind(getResult(), "result", {"B", "K", "D"})))
    return failure();
  return d.expect("K", add(d.get("M"), d.get("S")), "M + S");
}

LogicalResult MemCacheOp::verify() {
  if (getReuseLenAttr().getInt() <= 0 || getMemLenAttr().getInt() <= 0)
    return emitOpError() << "reuse_len and mem_len must be > 0, got "
                         << getReuseLenAttr().getInt() << " and " << getMemLenAttr().getInt();
  DimBinder d(*this);
  if (failed(d.bind(getH(), "h", {"B", "S", "D"})) ||
      (getMems() && failed(d.bind(getMems(), "mems", {"M", "B", "D"}))) ||
      failed(d.bind(getResult(), "result", {"L", "B", "D"})))
    return failure();
  if (auto s = d.get("S"); s && getReuseLenAttr().getInt() > *s)
    return emitOpError() << "reuse_len (" << getReuseLenAttr().getInt()
                         << ") exceeds the segment length S (" << *s << ")";
  std::optional<int64_t> mlen = getMems() ? d.get("M") : std::optional<int64_t>(0);
  std::optional<int64_t> expected;
  if (mlen)
    expected = std::min<int64_t>(getMemLenAttr().getInt(), *mlen + getReuseLenAttr().getInt());
  return d.expect("L", expected, "min(mem_len, M + reuse_len)");
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

LogicalResult HeadProjOp::verify() {
  DimBinder d(*this);
  return success(succeeded(d.bind(getX(), "x", {"A", "T", "D"})) &&
                 succeeded(d.bind(getWeight(), "weight", {"D", "N", "H"})) &&
                 succeeded(d.bind(getResult(), "result", {"A", "T", "N", "H"})));
}

/// The operand rules shared by rel_attention and rel_attention_grad: binds
/// B, T, N, H, K, P, R, S and checks the attributes.
template <typename OpT>
static LogicalResult verifyRelAttentionOperands(OpT op, DimBinder &d) {
  if (failed(d.bind(op.getQ(), "q", {"B", "T", "N", "H"})) ||
      failed(d.bind(op.getK(), "k", {"B", "K", "N", "H"})) ||
      failed(d.bind(op.getV(), "v", {"B", "K", "N", "H"})) ||
      failed(d.bind(op.getKR(), "k_r", {"P", "R", "N", "H"})) ||
      failed(d.bind(op.getSegEmbed(), "seg_embed", {"2", "N", "H"})) ||
      failed(d.bind(op.getRWBias(), "r_w_bias", {"N", "H"})) ||
      failed(d.bind(op.getRRBias(), "r_r_bias", {"N", "H"})) ||
      failed(d.bind(op.getRSBias(), "r_s_bias", {"N", "H"})) ||
      (op.getRows() && failed(d.bind(op.getRows(), "rows", {"B", "T"}))))
    return failure();
  // The masks: both dense (i1 [B,S,K]) or both compact (seg_id i64 [B,S],
  // perm_rank i64 [B,2,S] or perm_bits i64 [B,S,W]; runtime/PermMask.h).
  auto elementType = [](Value v) {
    return cast<ShapedType>(v.getType()).getElementType();
  };
  bool compact = elementType(op.getSegMat()).isInteger(64);
  if (compact != elementType(op.getMask()).isInteger(64))
    return op.emitOpError()
           << "'seg_mat' and 'mask' must both be dense (i1) or both compact "
              "(i64 segment ids and a perm_rank or perm_bits mask)";
  if (compact) {
    if (failed(d.bind(op.getSegMat(), "seg_mat", {"B", "S"})))
      return failure();
    // perm_rank unless the shape is not [B, 2, S]: then perm_bits (a
    // dynamic dim 1 or an unknown S reads as perm_rank).
    auto m = cast<ShapedType>(op.getMask().getType());
    std::optional<int64_t> s = d.get("S");
    bool bits = m.hasRank() && m.getRank() == 3 && !ShapedType::isDynamic(m.getDimSize(1)) &&
                !(m.getDimSize(1) == 2 &&
                  (!s || ShapedType::isDynamic(m.getDimSize(2)) ||
                   m.getDimSize(2) == *s));
    if (failed(d.bind(op.getMask(), "mask",
                      bits ? ArrayRef<StringRef>{"B", "S", "W"}
                           : ArrayRef<StringRef>{"B", "2", "S"})))
      return failure();
    if (bits && (s = d.get("S")) &&
        failed(d.expect("W", xlnetc::rt::permBitsWords(*s),
                        "ceil(S / 64) (a perm_bits mask's words per row)")))
      return failure();
  } else if (failed(d.bind(op.getSegMat(), "seg_mat", {"B", "S", "K"})) ||
             failed(d.bind(op.getMask(), "mask", {"B", "S", "K"}))) {
    return failure();
  }
  if (failed(d.expect("R", add(d.get("K"), d.get("S")), "K + S")))
    return failure();
  if (!op.getRows() && failed(d.expect("T", d.get("S"), "S (no rows given)")))
    return failure();
  if (failed(checkPositionalCopies(op, "k_r", d)))
    return failure();
  if (auto k = d.get("K"), s = d.get("S"); k && s && *k < *s)
    return op.emitOpError() << "K (klen, 'k' dim 1) is " << *k
                            << " but must be >= S (qlen, 'mask' dim 1) = " << *s;
  if (double scale = op.getScale().convertToDouble(); !(scale > 0.0))
    return op.emitOpError() << "scale must be > 0, got " << scale;
  if (auto site = op.getSiteAttr(); site && failed(checkNonNegative(op, "site", site.getInt())))
    return failure();
  return checkRate(op, "dropatt", op.getDropatt().convertToDouble());
}

LogicalResult RelAttentionOp::verify() {
  DimBinder d(*this);
  if (failed(verifyRelAttentionOperands(*this, d)))
    return failure();
  return d.bind(getResult(), "result", {"B", "T", "N", "H"});
}

LogicalResult PostAttentionOp::verify() {
  DimBinder d(*this);
  if (failed(d.bind(getAttn(), "attn", {"B", "T", "N", "H"})) ||
      failed(d.bind(getResidual(), "residual", {"B", "T", "D"})) ||
      failed(d.bind(getOWeight(), "o_weight", {"D", "N", "H"})) ||
      failed(d.bind(getLnWeight(), "ln_weight", {"D"})) ||
      failed(d.bind(getLnBias(), "ln_bias", {"D"})) ||
      failed(d.bind(getResult(), "result", {"B", "T", "D"})) ||
      failed(checkEps(*this, getEps().convertToDouble())))
    return failure();
  return checkRate(*this, "dropout", getDropout().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Feed-forward and head
//===----------------------------------------------------------------------===//

LogicalResult FFNOp::verify() {
  DimBinder d(*this);
  if (failed(d.bind(getX(), "x", {"B", "T", "D"})) ||
      failed(d.bind(getW1(), "w1", {"I", "D"})) ||
      failed(d.bind(getB1(), "b1", {"I"})) ||
      failed(d.bind(getW2(), "w2", {"D", "I"})) ||
      failed(d.bind(getB2(), "b2", {"D"})) ||
      failed(d.bind(getLnWeight(), "ln_weight", {"D"})) ||
      failed(d.bind(getLnBias(), "ln_bias", {"D"})) ||
      failed(d.bind(getResult(), "result", {"B", "T", "D"})))
    return failure();
  if (getActivation() == Activation::none)
    return emitOpError() << "activation must be relu, gelu_tanh or gelu_erf";
  if (failed(checkEps(*this, getEps().convertToDouble())))
    return failure();
  return checkRate(*this, "dropout", getDropout().convertToDouble());
}

LogicalResult LMHeadOp::verify() {
  DimBinder d(*this);
  return success(succeeded(d.bind(getG(), "g", {"B", "NP", "D"})) &&
                 succeeded(d.bind(getEmbedding(), "embedding", {"V", "D"})) &&
                 succeeded(d.bind(getBias(), "bias", {"V"})) &&
                 succeeded(d.bind(getResult(), "result", {"B", "NP", "V"})));
}

LogicalResult LMLossOp::verify() {
  DimBinder d(*this);
  return success(
      succeeded(d.bind(getLogits(), "logits", {"B", "NP", "V"})) &&
      succeeded(d.bind(getTarget(), "target", {"B", "NP"})) &&
      succeeded(d.bind(getTargetMask(), "target_mask", {"B", "NP"})) &&
      succeeded(d.bind(getPerTokenLoss(), "per_token_loss", {"B", "NP"})));
}

//===----------------------------------------------------------------------===//
// Layer level
//===----------------------------------------------------------------------===//

LogicalResult TwoStreamLayerOp::verify() {
  DimBinder d(*this);
  if (failed(d.bind(getH(), "h", {"B", "S", "D"})) ||
      failed(d.bind(getG(), "g", {"B", "NP", "D"})) ||
      (getMems() && failed(d.bind(getMems(), "mems", {"M", "B", "D"}))) ||
      failed(d.bind(getPosEmb(), "pos_emb", {"P", "R", "D"})) ||
      failed(d.bind(getSegMat(), "seg_mat", {"B", "S", "K"})) ||
      failed(d.bind(getMaskH(), "mask_h", {"B", "S", "K"})) ||
      failed(d.bind(getMaskG(), "mask_g", {"B", "S", "K"})) ||
      failed(d.bind(getRows(), "rows", {"B", "NP"})))
    return failure();
  for (auto [value, name] :
       {std::pair{getQWeight(), "q_weight"}, {getKWeight(), "k_weight"},
        {getVWeight(), "v_weight"}, {getOWeight(), "o_weight"},
        {getRWeight(), "r_weight"}})
    if (failed(d.bind(value, name, {"D", "N", "H"})))
      return failure();
  if (failed(d.bind(getRWBias(), "r_w_bias", {"N", "H"})) ||
      failed(d.bind(getRRBias(), "r_r_bias", {"N", "H"})) ||
      failed(d.bind(getRSBias(), "r_s_bias", {"N", "H"})) ||
      failed(d.bind(getSegEmbed(), "seg_embed", {"2", "N", "H"})) ||
      failed(d.bind(getAttnLnWeight(), "attn_ln_weight", {"D"})) ||
      failed(d.bind(getAttnLnBias(), "attn_ln_bias", {"D"})) ||
      failed(d.bind(getFfW1(), "ff_w1", {"I", "D"})) ||
      failed(d.bind(getFfB1(), "ff_b1", {"I"})) ||
      failed(d.bind(getFfW2(), "ff_w2", {"D", "I"})) ||
      failed(d.bind(getFfB2(), "ff_b2", {"D"})) ||
      failed(d.bind(getFfLnWeight(), "ff_ln_weight", {"D"})) ||
      failed(d.bind(getFfLnBias(), "ff_ln_bias", {"D"})) ||
      failed(d.bind(getHOut(), "h_out", {"B", "S", "D"})) ||
      failed(d.bind(getGOut(), "g_out", {"B", "NP", "D"})))
    return failure();
  std::optional<int64_t> mlen = getMems() ? d.get("M") : std::optional<int64_t>(0);
  if (failed(d.expect("K", add(mlen, d.get("S")), "M + S")) ||
      failed(d.expect("R", add(d.get("K"), d.get("S")), "K + S")))
    return failure();
  if (getActivation() == Activation::none)
    return emitOpError() << "activation must be relu, gelu_tanh or gelu_erf";
  if (failed(checkRate(*this, "dropout", getDropout().convertToDouble())) ||
      failed(checkRate(*this, "dropatt", getDropatt().convertToDouble())) ||
      failed(checkEps(*this, getEps().convertToDouble())))
    return failure();
  if (failed(checkPositionalCopies(*this, "pos_emb", d)))
    return failure();
  int64_t memLen = getMemLenAttr().getInt(), reuseLen = getReuseLenAttr().getInt();
  if (memLen < 0)
    return emitOpError() << "mem_len must be >= 0, got " << memLen;
  if (auto s = d.get("S"); s && reuseLen > *s)
    return emitOpError() << "reuse_len (" << reuseLen
                         << ") exceeds the segment length S (" << *s << ")";
  bool wantsMems = memLen > 0;
  if (wantsMems != static_cast<bool>(getNewMems()))
    return emitOpError() << (wantsMems ? "mem_len > 0 requires a new_mems result"
                                       : "mem_len = 0 forbids a new_mems result");
  if (getNewMems()) {
    if (getReuseLenAttr().getInt() <= 0)
      return emitOpError() << "reuse_len must be > 0 when mem_len > 0";
    if (failed(d.bind(getNewMems(), "new_mems", {"L", "B", "D"})))
      return failure();
    std::optional<int64_t> expected;
    if (mlen)
      expected = std::min<int64_t>(getMemLenAttr().getInt(), *mlen + getReuseLenAttr().getInt());
    return d.expect("L", expected, "min(mem_len, M + reuse_len)");
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel level
//===----------------------------------------------------------------------===//

/// The shape rules of `y = x · op(w) (+ bias)`, shared by gemm and
/// gemm_wgrad (which produces w from x and y). `wName` and `yName` are the
/// names used in messages.
static LogicalResult verifyGemmShapes(Operation *op, RankedTensorType x,
                                      RankedTensorType w, RankedTensorType y,
                                      int64_t kRank, bool transposeW,
                                      StringRef wName, StringRef yName) {
  auto emitOpError = [&]() { return op->emitOpError(); };
  if (kRank < 1 || kRank >= x.getRank() || kRank >= w.getRank())
    return emitOpError() << "k_rank (" << kRank
                         << ") must be >= 1 and below the ranks of x ("
                         << x.getRank() << ") and " << wName << " ("
                         << w.getRank() << ")";
  int64_t xLead = x.getRank() - kRank, wN = w.getRank() - kRank;
  int64_t wK0 = transposeW ? wN : 0;
  for (int64_t i = 0; i < kRank; ++i) {
    int64_t a = x.getDimSize(xLead + i), b = w.getDimSize(wK0 + i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitOpError() << "contraction mismatch: 'x' dim " << xLead + i
                           << " is " << a << " but '" << wName << "' dim "
                           << wK0 + i << " is " << b;
  }
  if (y.getRank() != xLead + wN)
    return emitOpError() << yName << " must have rank " << xLead + wN
                         << " (x's leading dims then " << wName
                         << "'s N dims), got " << y;
  int64_t wN0 = transposeW ? 0 : kRank;
  for (int64_t i = 0; i < y.getRank(); ++i) {
    bool fromX = i < xLead;
    int64_t want = fromX ? x.getDimSize(i) : w.getDimSize(wN0 + i - xLead);
    int64_t got = y.getDimSize(i);
    if (!ShapedType::isDynamic(want) && !ShapedType::isDynamic(got) && want != got)
      return emitOpError() << yName << " dim " << i << " is " << got << " but '"
                           << (fromX ? StringRef("x") : wName) << "' dim "
                           << (fromX ? i : wN0 + i - xLead) << " is " << want;
  }
  return success();
}

/// A GEMM's two operands have one element type (cuBLASLt's A and B; f32, or
/// bf16 after --xlnet-mixed-precision).
static LogicalResult verifySameOperandElements(Operation *op, Value a,
                                               StringRef aName, Value b,
                                               StringRef bName) {
  Type ea = cast<ShapedType>(a.getType()).getElementType();
  Type eb = cast<ShapedType>(b.getType()).getElementType();
  if (ea != eb)
    return op->emitOpError() << "'" << aName << "' (" << ea << ") and '" << bName
                             << "' (" << eb << ") must have one element type";
  return success();
}

/// `init` (an operand of a fused form, --xlnet-fuse-kernels) has the type
/// of the result it starts: the op writes `result = init + its own value`.
static LogicalResult verifyInit(Operation *op, Value init, Value result,
                                StringRef resultName) {
  if (init && init.getType() != result.getType())
    return op->emitOpError() << "'init' (" << init.getType() << ") must have the type of "
                             << resultName << " (" << result.getType() << ")";
  return success();
}

/// The inits of a multi-result op: `init_results` names, in increasing
/// order, the results in [first, last] that start from `inits` (one each).
static LogicalResult verifyInits(Operation *op, OperandRange inits,
                                 ArrayRef<int64_t> initResults, int64_t first,
                                 int64_t last) {
  if (inits.size() != initResults.size())
    return op->emitOpError() << "has " << inits.size() << " inits but 'init_results' names "
                             << initResults.size() << " results";
  for (auto [i, r] : llvm::enumerate(initResults)) {
    if (r < first || r > last)
      return op->emitOpError() << "'init_results' entry " << i << " is " << r
                               << "; only results " << first << " to " << last
                               << " may start from an init";
    if (i > 0 && r <= initResults[i - 1])
      return op->emitOpError() << "'init_results' must be increasing, got " << r
                               << " after " << initResults[i - 1];
    if (failed(verifyInit(op, inits[i], op->getResult(unsigned(r)),
                          ("result " + Twine(r)).str())))
      return failure();
  }
  return success();
}

/// The fused forms of gemm (--xlnet-fuse-kernels): `init`, the forward
/// GELU's `aux` (the pre-activation) and the backward's DGELU_BGRAD.
static LogicalResult verifyGemmEpilogue(GemmOp op) {
  Type resultType = op.getResult().getType();
  if (op.getInit()) {
    if (op.getBias() || op.getActivation() != Activation::none ||
        op.getActivationGrad() != Activation::none || op.getAux())
      return op.emitOpError() << "with 'init' (y = init + x·op(w)) takes no bias, "
                                 "activation, activation_grad or aux";
    if (failed(verifyInit(op, op.getInit(), op.getResult(), "the result")))
      return failure();
  }
  if (op.getActivationGrad() != Activation::none) {
    if (op.getActivationGrad() != Activation::gelu_tanh)
      return op.emitOpError() << "activation_grad must be gelu_tanh (cuBLASLt's DGELU_BGRAD), "
                                 "got "
                              << stringifyActivation(op.getActivationGrad());
    if (!op.getPre() || !op.getAux() || op.getBias() ||
        op.getActivation() != Activation::none)
      return op.emitOpError() << "with activation_grad takes 'pre' (the pre-activation) and "
                                 "returns 'aux' (the bias gradient), with no bias and no "
                                 "activation";
    if (op.getPre().getType() != resultType)
      return op.emitOpError() << "'pre' (" << op.getPre().getType()
                              << ") must have the result's type (" << resultType << ")";
    auto aux = cast<RankedTensorType>(op.getAux().getType());
    auto result = cast<RankedTensorType>(resultType);
    if (aux.getRank() != 1 || aux.getElementType() != result.getElementType())
      return op.emitOpError() << "'aux' (the bias gradient) must be rank 1 of the result's "
                                 "element type, got "
                              << aux;
    return success();
  }
  if (op.getPre())
    return op.emitOpError() << "'pre' is read only with activation_grad";
  if (op.getAux()) {
    if (op.getActivation() != Activation::gelu_tanh || !op.getBias())
      return op.emitOpError() << "'aux' (the pre-activation) needs activation gelu_tanh and "
                                 "a bias (cuBLASLt's GELU_AUX_BIAS)";
    if (op.getAux().getType() != resultType)
      return op.emitOpError() << "'aux' (" << op.getAux().getType()
                              << ") must have the result's type (" << resultType << ")";
  }
  return success();
}

LogicalResult GemmOp::verify() {
  auto w = getW().getType();
  int64_t kRank = getKRankAttr().getInt();
  if (failed(verifySameOperandElements(*this, getX(), "x", getW(), "w")) ||
      failed(verifyGemmEpilogue(*this)))
    return failure();
  if (failed(verifyGemmShapes(*this, getX().getType(), w, getResult().getType(),
                              kRank, getTransposeW(), "w", "result")))
    return failure();
  int64_t wN = w.getRank() - kRank, wN0 = getTransposeW() ? 0 : kRank;
  int64_t n = 1; // the output width N
  for (int64_t i = 0; i < wN; ++i)
    n = ShapedType::isDynamic(w.getDimSize(wN0 + i)) || ShapedType::isDynamic(n)
            ? ShapedType::kDynamic
            : n * w.getDimSize(wN0 + i);
  if (getActivationGrad() != Activation::none) {
    auto db = cast<RankedTensorType>(getAux().getType());
    if (db.hasStaticShape() && !ShapedType::isDynamic(n) && db.getNumElements() != n)
      return emitOpError() << "'aux' (the bias gradient) has " << db.getNumElements()
                           << " elements but the output width N is " << n;
  }
  if (getBias()) {
    auto bias = getBias().getType();
    if (bias.getElementType() != getResult().getType().getElementType())
      return emitOpError() << "bias (" << bias << ") must have the result's element type ("
                           << getResult().getType().getElementType()
                           << "), as cuBLASLt's bias epilogues read it";
    if (bias.getRank() != 1)
      return emitOpError() << "bias must have rank 1 [N], got " << bias;
    if (bias.hasStaticShape() && !ShapedType::isDynamic(n) &&
        bias.getNumElements() != n)
      return emitOpError() << "bias has " << bias.getNumElements()
                           << " elements but the output width N is " << n;
  }
  return success();
}

/// The LayerNorm rules shared by add_layer_norm and its gradient: every
/// named vector is [D] with D the last dim of `x`, and eps > 0.
static LogicalResult
verifyLayerNormVectors(Operation *op, RankedTensorType x,
                       std::initializer_list<std::pair<Value, const char *>> vectors,
                       double eps) {
  int64_t dm = x.getDimSize(x.getRank() - 1);
  for (auto [value, name] : vectors) {
    auto t = cast<RankedTensorType>(value.getType());
    if (t.getRank() != 1 || (!ShapedType::isDynamic(dm) &&
                             !ShapedType::isDynamic(t.getDimSize(0)) &&
                             t.getDimSize(0) != dm))
      return op->emitOpError() << "'" << name << "' must be [D] with D = 'x' dim "
                               << x.getRank() - 1 << " (" << dm << "), got " << t;
  }
  return checkEps(op, eps);
}

/// A fused dropout (--xlnet-fuse-kernels): its rate and site attributes
/// come together, the rate in [0, 1), the site >= 0.
static LogicalResult verifyFusedDropout(Operation *op, FloatAttr rate, IntegerAttr site,
                                        StringRef name) {
  if (!rate && !site)
    return success();
  if (!rate || !site)
    return op->emitOpError() << "'" << name << "' and '" << name
                             << "_site' come together (a fused dropout's rate and site)";
  if (failed(checkRate(op, name, rate.getValueAsDouble())))
    return failure();
  return checkNonNegative(op, (name + "_site").str(), site.getInt());
}

LogicalResult AddLayerNormOp::verify() {
  if (failed(verifyFusedDropout(*this, getXDropoutAttr(), getXDropoutSiteAttr(), "x_dropout")))
    return failure();
  auto x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError() << "'x' must have rank >= 1, got " << x;
  if (getResidual().getType() != x || getResult().getType() != x)
    return emitOpError() << "'residual' (" << getResidual().getType()
                         << ") and result (" << getResult().getType()
                         << ") must have the type of 'x' (" << x << ")";
  return verifyLayerNormVectors(*this, x, {{getGamma(), "gamma"}, {getBeta(), "beta"}},
                                getEps().convertToDouble());
}

LogicalResult DropoutOp::verify() {
  if (auto site = getSiteAttr(); site && failed(checkNonNegative(*this, "site", site.getInt())))
    return failure();
  return checkRate(*this, "rate", getRate().convertToDouble());
}

//===----------------------------------------------------------------------===//
// Backward
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingGradOp::verify() {
  DimBinder d(*this);
  return success(succeeded(verifyInit(*this, getInit(), getResult(), "the result")) &&succeeded(d.bind(getIds(), "ids", {"B", "S"})) &&
                 succeeded(d.bind(getDout(), "dout", {"B", "S", "D"})) &&
                 succeeded(d.bind(getResult(), "result", {"V", "D"})));
}

LogicalResult MaskEmbeddingGradOp::verify() {
  DimBinder d(*this);
  return success(succeeded(d.bind(getDout(), "dout", {"B", "NP", "D"})) &&
                 succeeded(d.bind(getResult(), "result", {"1", "1", "D"})));
}

LogicalResult MemConcatGradOp::verify() {
  DimBinder d(*this);
  if (failed(verifyInit(*this, getInit(), getResult(), "the result")) || failed(d.bind(getDout(), "dout", {"B", "K", "D"})) ||
      failed(d.bind(getResult(), "result", {"B", "S", "D"})))
    return failure();
  if (auto k = d.get("K"), s = d.get("S"); k && s && *k < *s)
    return emitOpError() << "K ('dout' dim 1) is " << *k
                         << " but must be >= S ('result' dim 1) = " << *s;
  return success();
}

LogicalResult ActivationGradOp::verify() {
  if (getActivation() == Activation::none)
    return emitOpError() << "activation 'none' has no gradient op (the "
                            "gradient is dy itself)";
  return success();
}

LogicalResult GemmWGradOp::verify() {
  if (failed(verifySameOperandElements(*this, getX(), "x", getDy(), "dy")) ||
      failed(verifyInit(*this, getInit(), getResult(), "the result")))
    return failure();
  return verifyGemmShapes(*this, getX().getType(), getResult().getType(),
                          getDy().getType(), getKRankAttr().getInt(),
                          getTransposeW(), "result", "'dy'");
}

LogicalResult BiasGradOp::verify() {
  auto dy = getDy().getType(), out = getResult().getType();
  if (failed(verifyInit(*this, getInit(), getResult(), "the result")))
    return failure();
  if (out.getRank() != 1)
    return emitOpError() << "result must have rank 1 [N], got " << out;
  if (dy.getRank() < 1)
    return emitOpError() << "'dy' must have rank >= 1, got " << dy;
  if (!dy.hasStaticShape() || !out.hasStaticShape())
    return success();
  // N must be the product of a non-empty suffix of dy's dims.
  bool matches = false;
  int64_t n = 1;
  for (int64_t i = dy.getRank() - 1; i >= 0 && !matches; --i) {
    n *= dy.getDimSize(i);
    matches = n == out.getNumElements();
  }
  if (!matches)
    return emitOpError() << "result has " << out.getNumElements()
                         << " elements, which is not the product of trailing "
                            "dims of 'dy' "
                         << dy;
  return success();
}

LogicalResult RelAttentionGradOp::verify() {
  DimBinder d(*this);
  if (failed(verifyRelAttentionOperands(*this, d)) ||
      failed(d.bind(getDout(), "dout", {"B", "T", "N", "H"})))
    return failure();
  // Each gradient has the type of its operand.
  std::pair<Value, Value> pairs[] = {
      {getDq(), getQ()},           {getDk(), getK()},
      {getDv(), getV()},           {getDkR(), getKR()},
      {getDsegEmbed(), getSegEmbed()}, {getDrWBias(), getRWBias()},
      {getDrRBias(), getRRBias()}, {getDrSBias(), getRSBias()}};
  for (auto [index, pair] : llvm::enumerate(pairs))
    if (pair.first.getType() != pair.second.getType())
      return emitOpError() << "result " << index << " (" << pair.first.getType()
                           << ") must have the type of its operand ("
                           << pair.second.getType() << ")";
  return verifyInits(*this, getInits(), getInitResults(), 1, 7);
}

LogicalResult AddLayerNormGradOp::verify() {
  auto x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError() << "'x' must have rank >= 1, got " << x;
  if (getDout().getType() != x || getResidual().getType() != x ||
      getDsum().getType() != x)
    return emitOpError() << "'dout' (" << getDout().getType() << "), 'residual' ("
                         << getResidual().getType() << ") and 'dsum' ("
                         << getDsum().getType()
                         << ") must have the type of 'x' (" << x << ")";
  if (failed(verifyInits(*this, getInits(), getInitResults(), 1, 2)) ||
      failed(verifyFusedDropout(*this, getXDropoutAttr(), getXDropoutSiteAttr(), "x_dropout")) ||
      failed(verifyFusedDropout(*this, getDsumDropoutAttr(), getDsumDropoutSiteAttr(),
                                "dsum_dropout")))
    return failure();
  if (bool(getDsumDropped()) != bool(getDsumDropoutAttr()))
    return emitOpError() << "returns 'dsum_dropped' exactly when it has 'dsum_dropout'";
  if (getDsumDropped() && getDsumDropped().getType() != getDsum().getType())
    return emitOpError() << "'dsum_dropped' (" << getDsumDropped().getType()
                         << ") must have the type of 'dsum' (" << getDsum().getType() << ")";
  return verifyLayerNormVectors(
      *this, x, {{getGamma(), "gamma"}, {getDgamma(), "dgamma"}, {getDbeta(), "dbeta"}},
      getEps().convertToDouble());
}

LogicalResult LMLossGradOp::verify() {
  DimBinder d(*this);
  return success(
      succeeded(d.bind(getLogits(), "logits", {"B", "NP", "V"})) &&
      succeeded(d.bind(getTarget(), "target", {"B", "NP"})) &&
      succeeded(d.bind(getTargetMask(), "target_mask", {"B", "NP"})) &&
      succeeded(d.bind(getResult(), "result", {"B", "NP", "V"})) &&
      (!getCount() || succeeded(d.bind(getCount(), "count", {}))));
}

//===----------------------------------------------------------------------===//
// Mixed precision
//===----------------------------------------------------------------------===//

LogicalResult CastOp::verify() {
  auto x = cast<RankedTensorType>(getX().getType());
  auto result = cast<RankedTensorType>(getResult().getType());
  if (x.getShape() != result.getShape())
    return emitOpError() << "result shape (" << result
                         << ") must be the shape of 'x' (" << x << ")";
  if (x.getElementType() == result.getElementType())
    return emitOpError() << "converts " << x.getElementType()
                         << " to itself: a cast must change the element type";
  return success();
}

//===----------------------------------------------------------------------===//
// Optimizer
//===----------------------------------------------------------------------===//

LogicalResult LRScheduleOp::verify() {
  double lr = getLearningRate().convertToDouble(),
         ratio = getMinLrRatio().convertToDouble();
  int64_t warmup = getWarmupStepsAttr().getInt(),
          steps = getTrainStepsAttr().getInt();
  if (!(lr >= 0.0) || std::isinf(lr))
    return emitOpError() << "learning_rate must be finite and >= 0, got " << lr;
  if (!(ratio >= 0.0 && ratio <= 1.0))
    return emitOpError() << "min_lr_ratio must be in [0, 1], got " << ratio;
  if (warmup < 0 || steps < 1)
    return emitOpError() << "warmup_steps must be >= 0 and train_steps >= 1, got "
                         << warmup << " and " << steps;
  return success();
}

LogicalResult GlobalNormOp::verify() {
  if (getGrads().empty())
    return emitOpError() << "needs at least one operand";
  return success();
}

LogicalResult AdamUpdateOp::verify() {
  auto type = getParam().getType();
  for (auto [value, name] :
       {std::pair{getGrad(), "grad"}, {getM(), "m"}, {getV(), "v"},
        {getNewParam(), "new_param"}, {getNewM(), "new_m"}, {getNewV(), "new_v"}})
    if (value.getType() != type)
      return emitOpError() << "'" << name << "' (" << value.getType()
                           << ") must have the type of 'param' (" << type << ")";
  for (auto [value, name] : {std::pair{getBeta1(), "beta1"}, {getBeta2(), "beta2"}})
    if (double b = value.convertToDouble(); !(b >= 0.0 && b < 1.0))
      return emitOpError() << name << " must be in [0, 1), got " << b;
  if (double eps = getEpsilon().convertToDouble(); !(eps > 0.0) || std::isinf(eps))
    return emitOpError() << "epsilon must be finite and > 0, got " << eps;
  if (double wd = getWeightDecay().convertToDouble(); !(wd >= 0.0) || std::isinf(wd))
    return emitOpError() << "weight_decay must be finite and >= 0, got " << wd;
  if (getBiasCorrection() && getWeightDecay().convertToDouble() != 0.0)
    return emitOpError() << "bias_correction (tf.train.AdamOptimizer) is only "
                            "used with weight_decay 0";
  if (std::isnan(getClip().convertToDouble()))
    return emitOpError() << "clip must be a number (<= 0 disables clipping)";
  return success();
}
