//===- XLNetOps.cpp - xlnet op verifiers ----------------------------------===//
//
// Every verifier states the op's shape rules with symbolic dimensions (B, S,
// K, ...) through DimBinder: the first operand that fixes a symbol binds it,
// and any later operand that disagrees gets an error naming both dimensions.
// Dynamic dimensions (`?`) are accepted and skipped.
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
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

LogicalResult RelAttentionOp::verify() {
  DimBinder d(*this);
  if (failed(d.bind(getQ(), "q", {"B", "T", "N", "H"})) ||
      failed(d.bind(getK(), "k", {"B", "K", "N", "H"})) ||
      failed(d.bind(getV(), "v", {"B", "K", "N", "H"})) ||
      failed(d.bind(getKR(), "k_r", {"P", "R", "N", "H"})) ||
      failed(d.bind(getSegEmbed(), "seg_embed", {"2", "N", "H"})) ||
      failed(d.bind(getRWBias(), "r_w_bias", {"N", "H"})) ||
      failed(d.bind(getRRBias(), "r_r_bias", {"N", "H"})) ||
      failed(d.bind(getRSBias(), "r_s_bias", {"N", "H"})) ||
      failed(d.bind(getSegMat(), "seg_mat", {"B", "S", "K"})) ||
      failed(d.bind(getMask(), "mask", {"B", "S", "K"})) ||
      (getRows() && failed(d.bind(getRows(), "rows", {"B", "T"}))) ||
      failed(d.bind(getResult(), "result", {"B", "T", "N", "H"})))
    return failure();
  if (failed(d.expect("R", add(d.get("K"), d.get("S")), "K + S")))
    return failure();
  if (!getRows() && failed(d.expect("T", d.get("S"), "S (no rows given)")))
    return failure();
  if (failed(checkPositionalCopies(*this, "k_r", d)))
    return failure();
  if (auto k = d.get("K"), s = d.get("S"); k && s && *k < *s)
    return emitOpError() << "K (klen, 'k' dim 1) is " << *k
                         << " but must be >= S (qlen, 'mask' dim 1) = " << *s;
  if (double scale = getScale().convertToDouble(); !(scale > 0.0))
    return emitOpError() << "scale must be > 0, got " << scale;
  return checkRate(*this, "dropatt", getDropatt().convertToDouble());
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

LogicalResult GemmOp::verify() {
  auto x = getX().getType(), w = getW().getType(), y = getResult().getType();
  int64_t kRank = getKRankAttr().getInt();
  if (kRank < 1 || kRank >= x.getRank() || kRank >= w.getRank())
    return emitOpError() << "k_rank (" << kRank
                         << ") must be >= 1 and below the ranks of x ("
                         << x.getRank() << ") and w (" << w.getRank() << ")";
  int64_t xLead = x.getRank() - kRank, wN = w.getRank() - kRank;
  int64_t wK0 = getTransposeW() ? wN : 0;
  for (int64_t i = 0; i < kRank; ++i) {
    int64_t a = x.getDimSize(xLead + i), b = w.getDimSize(wK0 + i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitOpError() << "contraction mismatch: 'x' dim " << xLead + i
                           << " is " << a << " but 'w' dim " << wK0 + i
                           << " is " << b;
  }
  if (y.getRank() != xLead + wN)
    return emitOpError() << "result must have rank " << xLead + wN
                         << " (x's leading dims then w's N dims), got " << y;
  int64_t wN0 = getTransposeW() ? 0 : kRank;
  for (int64_t i = 0; i < y.getRank(); ++i) {
    bool fromX = i < xLead;
    int64_t want = fromX ? x.getDimSize(i) : w.getDimSize(wN0 + i - xLead);
    int64_t got = y.getDimSize(i);
    if (!ShapedType::isDynamic(want) && !ShapedType::isDynamic(got) && want != got)
      return emitOpError() << "result dim " << i << " is " << got << " but "
                           << (fromX ? "'x' dim " : "'w' dim ")
                           << (fromX ? i : wN0 + i - xLead) << " is " << want;
  }
  if (getBias()) {
    auto bias = getBias().getType();
    if (bias.getRank() != 1)
      return emitOpError() << "bias must have rank 1 [N], got " << bias;
    int64_t n = 1;
    for (int64_t i = 0; i < wN; ++i)
      n = ShapedType::isDynamic(w.getDimSize(wN0 + i)) || ShapedType::isDynamic(n)
              ? ShapedType::kDynamic
              : n * w.getDimSize(wN0 + i);
    if (bias.hasStaticShape() && !ShapedType::isDynamic(n) &&
        bias.getNumElements() != n)
      return emitOpError() << "bias has " << bias.getNumElements()
                           << " elements but the output width N is " << n;
  }
  return success();
}

LogicalResult AddLayerNormOp::verify() {
  auto x = getX().getType();
  if (x.getRank() < 1)
    return emitOpError() << "'x' must have rank >= 1, got " << x;
  if (getResidual().getType() != x || getResult().getType() != x)
    return emitOpError() << "'residual' (" << getResidual().getType()
                         << ") and result (" << getResult().getType()
                         << ") must have the type of 'x' (" << x << ")";
  int64_t dm = x.getDimSize(x.getRank() - 1);
  for (auto [value, name] : {std::pair{getGamma(), "gamma"}, {getBeta(), "beta"}}) {
    auto t = cast<RankedTensorType>(value.getType());
    if (t.getRank() != 1 || (!ShapedType::isDynamic(dm) &&
                             !ShapedType::isDynamic(t.getDimSize(0)) &&
                             t.getDimSize(0) != dm))
      return emitOpError() << "'" << name << "' must be [D] with D = 'x' dim "
                           << x.getRank() - 1 << " (" << dm << "), got " << t;
  }
  return checkEps(*this, getEps().convertToDouble());
}

LogicalResult DropoutOp::verify() {
  return checkRate(*this, "rate", getRate().convertToDouble());
}
