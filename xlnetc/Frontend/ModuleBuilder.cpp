//===- ModuleBuilder.cpp - model spec to an xlnet module ------------------===//
//
// One pretraining step's forward (semantics.md §1-§6) at the level of the
// official code: embeddings, positional encoding, masks, one
// xlnet.two_stream_layer per layer, LM head and loss.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Frontend/ModuleBuilder.h"

#include "dialect/XLNet/XLNetOps.h"
#include "runtime/PermMask.h"
#include "runtime/train/StateNames.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include <string>

using namespace mlir;
using namespace mlir::xlnet;

namespace xlnetc {

static xlnet::Activation toActivation(Activation a) {
  switch (a) {
  case Activation::Relu:
    return xlnet::Activation::relu;
  case Activation::GeluTanh:
    return xlnet::Activation::gelu_tanh;
  case Activation::GeluErf:
    return xlnet::Activation::gelu_erf;
  }
  return xlnet::Activation::none;
}

namespace {

/// Collects the function signature while the body is being built: every
/// argument and result carries its interchange name.
class Signature {
public:
  explicit Signature(MLIRContext &ctx) : b(&ctx) {}

  /// Declares an argument; returns its index.
  unsigned add(StringRef role, StringRef name, ArrayRef<int64_t> shape, Type elt) {
    types.push_back(RankedTensorType::get(shape, elt));
    attrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(("xlnet." + role).str(), b.getStringAttr(name))));
    return types.size() - 1;
  }

  SmallVector<Type> types;
  SmallVector<DictionaryAttr> attrs;

private:
  Builder b;
};

} // namespace

namespace {

/// A layer's parameters: their argument indices.
struct LayerParams {
  unsigned q, k, v, o, r, rw, rr, rs, seg, alnW, alnB, w1, b1, w2, b2, flnW, flnB;
};

/// The forward function's arguments: the signature and each argument's
/// index.
struct ForwardArgs {
  explicit ForwardArgs(MLIRContext &ctx) : sig(ctx) {}
  Signature sig;
  unsigned inputK, segId, permMask, targetMapping, target, targetMask, wordEmb, maskEmb,
      lmBias;
  SmallVector<unsigned> mems; // per layer, when M > 0
  SmallVector<LayerParams> layers;
};

} // namespace

/// 1. The signature: batch inputs, then parameters (HuggingFace names).
static void declareArguments(const ModelSpec &spec, const StepShape &shape, Type f32, Type i64,
                             ForwardArgs &a) {
  const int64_t B = shape.batch, S = shape.seqLen, NP = shape.numPredict, M = shape.mlen,
                D = spec.dModel, N = spec.nHead, H = spec.dHead, I = spec.dInner,
                V = spec.nToken;
  a.inputK = a.sig.add("input", "input_k", {B, S}, i64);
  a.segId = a.sig.add("input", "seg_id", {B, S}, i64);
  // The permutation mask in its compact form (docs/DataPipeline.md): query
  // and key ranks per batch row, or the packed bits of a perm_mask without
  // ranks (runtime/PermMask.h); a dense perm_mask is converted by the
  // runtime before the step.
  a.permMask =
      shape.permBits
          ? a.sig.add("input", "perm_bits", {B, S, xlnetc::rt::permBitsWords(S)}, i64)
          : a.sig.add("input", "perm_rank", {B, 2, S}, i64);
  a.targetMapping = a.sig.add("input", "target_mapping", {B, NP, S}, f32);
  a.target = a.sig.add("input", "target", {B, NP}, i64);
  a.targetMask = a.sig.add("input", "target_mask", {B, NP}, f32);
  if (M > 0)
    for (int64_t l = 0; l < spec.nLayer; ++l)
      a.mems.push_back(a.sig.add("input", rt::train::names::mems(l), {M, B, D}, f32));
  a.wordEmb = a.sig.add("param", "transformer.word_embedding.weight", {V, D}, f32);
  a.maskEmb = a.sig.add("param", "transformer.mask_emb", {1, 1, D}, f32);
  for (int64_t l = 0; l < spec.nLayer; ++l) {
    std::string p = "transformer.layer." + std::to_string(l) + ".";
    auto attn = [&](StringRef n, ArrayRef<int64_t> s) {
      return a.sig.add("param", p + "rel_attn." + n.str(), s, f32);
    };
    auto ff = [&](StringRef n, ArrayRef<int64_t> s) {
      return a.sig.add("param", p + "ff." + n.str(), s, f32);
    };
    LayerParams lp;
    lp.q = attn("q", {D, N, H});
    lp.k = attn("k", {D, N, H});
    lp.v = attn("v", {D, N, H});
    lp.o = attn("o", {D, N, H});
    lp.r = attn("r", {D, N, H});
    lp.rw = attn("r_w_bias", {N, H});
    lp.rr = attn("r_r_bias", {N, H});
    lp.rs = attn("r_s_bias", {N, H});
    lp.seg = attn("seg_embed", {2, N, H});
    lp.alnW = attn("layer_norm.weight", {D});
    lp.alnB = attn("layer_norm.bias", {D});
    lp.w1 = ff("layer_1.weight", {I, D});
    lp.b1 = ff("layer_1.bias", {I});
    lp.w2 = ff("layer_2.weight", {D, I});
    lp.b2 = ff("layer_2.bias", {D});
    lp.flnW = ff("layer_norm.weight", {D});
    lp.flnB = ff("layer_norm.bias", {D});
    a.layers.push_back(lp);
  }
  a.lmBias = a.sig.add("param", "lm_loss.bias", {V}, f32);
}

/// 6. The function's results, each with its output name: the loss, the
///    per-token loss, the logits, the hidden state, then each layer's new
///    memory.
static void setResults(OpBuilder &b, Location loc, func::FuncOp func, const Signature &sig,
                       ArrayRef<std::pair<StringRef, Value>> named,
                       ArrayRef<Value> newMems) {
  SmallVector<Value> outs;
  SmallVector<std::string> names;
  for (auto [name, value] : named) {
    outs.push_back(value);
    names.push_back(name.str());
  }
  for (auto [l, m] : llvm::enumerate(newMems)) {
    outs.push_back(m);
    names.push_back(rt::train::names::newMems(l));
  }
  b.create<func::ReturnOp>(loc, outs);
  SmallVector<Type> resultTypes;
  for (Value v : outs)
    resultTypes.push_back(v.getType());
  func.setFunctionType(b.getFunctionType(sig.types, resultTypes));
  for (auto [i, name] : llvm::enumerate(names))
    func.setResultAttr(i, "xlnet.output", b.getStringAttr(name));
}

namespace {

/// Builds ops at the end of the forward function's entry block.
struct ForwardEmitter {
  OpBuilder &b;
  Location loc;
  Block *entry;
  Type f32;

  Value arg(unsigned i) const { return entry->getArgument(i); }
  RankedTensorType tensor(ArrayRef<int64_t> s, Type t = Type()) const {
    return RankedTensorType::get(s, t ? t : f32);
  }
  /// `x` through dropout at `rate` (none at 0); `batchShared`: x has no
  /// batch dimension.
  Value dropout(Value x, double rate, bool batchShared = false) const {
    if (rate == 0.0)
      return x;
    return b.create<DropoutOp>(loc, x.getType(), x, b.getF64FloatAttr(rate),
                               /*site=*/IntegerAttr(),
                               batchShared ? b.getUnitAttr() : UnitAttr());
  }
};

/// What the layers read besides the parameters.
struct LayerInputs {
  Value h, g, pos, segMat, maskH, maskG, rows;
};

} // namespace

/// 3. Embeddings, positions, masks (semantics.md §1, §3).
static LayerInputs buildLayerInputs(const ForwardEmitter &e, const ModelSpec &spec,
                                    const StepShape &shape, const ForwardArgs &a) {
  OpBuilder &b = e.b;
  const Location loc = e.loc;
  MLIRContext *ctx = b.getContext();
  const int64_t B = shape.batch, S = shape.seqLen, NP = shape.numPredict, M = shape.mlen,
                K = M + S, D = spec.dModel;
  Type i64 = b.getI64Type(), i1 = b.getI1Type();
  LayerInputs in;
  in.h = e.dropout(
      b.create<EmbeddingOp>(loc, e.tensor({B, S, D}), e.arg(a.inputK), e.arg(a.wordEmb)),
      spec.dropout);
  in.g = e.dropout(b.create<MaskEmbeddingOp>(loc, e.tensor({B, NP, D}), e.arg(a.maskEmb)),
                   spec.dropout);
  int64_t copies = spec.biData ? 2 : 1;
  Value pos = b.create<RelPosEncodingOp>(
      loc, e.tensor({copies, K + S, D}), b.getI64IntegerAttr(K), b.getI64IntegerAttr(S),
      b.getI64IntegerAttr(spec.clampLen), spec.biData ? b.getUnitAttr() : UnitAttr());
  in.pos = e.dropout(pos, spec.dropout, /*batchShared=*/true);
  in.segMat = b.create<RelSegmentOp>(loc, e.tensor({B, S, K}, i1), e.arg(a.segId),
                                     b.getI64IntegerAttr(M));
  auto mask = [&](Stream stream) -> Value {
    if (shape.permBits)
      return b.create<PackedMaskOp>(loc, e.tensor({B, S, K}, i1), StreamAttr::get(ctx, stream),
                                    e.arg(a.permMask), b.getI64IntegerAttr(M));
    return b.create<RankMaskOp>(loc, e.tensor({B, S, K}, i1), StreamAttr::get(ctx, stream),
                                e.arg(a.permMask), b.getI64IntegerAttr(M));
  };
  in.maskH = mask(Stream::content);
  in.maskG = mask(Stream::query);
  in.rows = b.create<TargetPositionsOp>(loc, e.tensor({B, NP}, i64), e.arg(a.targetMapping));
  return in;
}

OwningOpRef<ModuleOp> buildForwardModule(MLIRContext &ctx, const ModelSpec &spec,
                                         const StepShape &shape) {
  ctx.loadDialect<XLNetDialect, func::FuncDialect>();
  OpBuilder b(&ctx);
  Location loc = FileLineColLoc::get(&ctx, spec.sourcePath, 1, 1);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);

  const int64_t B = shape.batch, S = shape.seqLen, NP = shape.numPredict,
                M = shape.mlen, D = spec.dModel, V = spec.nToken;
  const int64_t reuseLen = shape.reuseLen > 0 ? shape.reuseLen : S;
  Type f32 = b.getF32Type(), i64 = b.getI64Type();

  // 1. The signature: batch inputs, then parameters (HuggingFace names).
  ForwardArgs a(ctx);
  declareArguments(spec, shape, f32, i64, a);
  const Signature &sig = a.sig;
  const SmallVector<LayerParams> &layers = a.layers;
  const SmallVector<unsigned> &mems = a.mems;

  // 2. The function and its entry block.
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<func::FuncOp>(loc, "forward",
                                     b.getFunctionType(sig.types, {}));
  func.setAllArgAttrs(sig.attrs);
  Block *entry = func.addEntryBlock();
  b.setInsertionPointToStart(entry);
  const ForwardEmitter e{b, loc, entry, f32};
  auto arg = [&](unsigned i) { return e.arg(i); };
  auto tensor = [&](ArrayRef<int64_t> s) { return e.tensor(s); };

  // 3. Embeddings, positions, masks.
  LayerInputs in = buildLayerInputs(e, spec, shape, a);
  Value h = in.h, g = in.g;

  // 4. The layers (semantics.md §4, §5).
  SmallVector<Value> newMems;
  int64_t memRows = std::min<int64_t>(spec.memLen, M + reuseLen);
  for (int64_t l = 0; l < spec.nLayer; ++l) {
    const LayerParams &lp = layers[l];
    Location layerLoc = NameLoc::get(b.getStringAttr("layer." + std::to_string(l)), loc);
    SmallVector<Type> results = {h.getType(), g.getType()};
    if (spec.memLen > 0)
      results.push_back(tensor({memRows, B, D}));
    auto layer = b.create<TwoStreamLayerOp>(
        layerLoc, results, h, g, M > 0 ? arg(mems[l]) : Value(), in.pos, in.segMat,
        in.maskH, in.maskG, in.rows, arg(lp.q), arg(lp.k), arg(lp.v), arg(lp.o),
        arg(lp.r), arg(lp.rw), arg(lp.rr), arg(lp.rs), arg(lp.seg),
        arg(lp.alnW), arg(lp.alnB), arg(lp.w1), arg(lp.b1), arg(lp.w2),
        arg(lp.b2), arg(lp.flnW), arg(lp.flnB),
        ActivationAttr::get(&ctx, toActivation(spec.ffActivation)),
        b.getI64IntegerAttr(reuseLen), b.getI64IntegerAttr(spec.memLen),
        b.getF64FloatAttr(spec.layerNormEps), b.getF64FloatAttr(spec.dropout),
        b.getF64FloatAttr(spec.dropatt));
    h = layer.getHOut();
    g = layer.getGOut();
    if (layer.getNewMems())
      newMems.push_back(layer.getNewMems());
  }

  // 5. LM head and loss (semantics.md §6).
  Value hidden = e.dropout(g, spec.dropout);
  Value logits = b.create<LMHeadOp>(loc, tensor({B, NP, V}), hidden, arg(a.wordEmb),
                                    arg(a.lmBias));
  auto loss = b.create<LMLossOp>(loc, tensor({}), tensor({B, NP}), logits,
                                 arg(a.target), arg(a.targetMask));

  // 6. Results, each with its output name.
  setResults(b, loc, func, sig,
             {{"loss", loss.getLoss()},
              {"per_token_loss", loss.getPerTokenLoss()},
              {"logits", logits},
              {"hidden", hidden}},
             newMems);
  return module;
}

} // namespace xlnetc
