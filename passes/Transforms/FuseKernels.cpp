//===- FuseKernels.cpp - the fusions both executors run, decided once -----===//
//
// Assumes: kernel-level ops (after --xlnet-lower-to-kernels, and after
// --xlnet-differentiate, --xlnet-apply-optimizer and --xlnet-mixed-precision
// where the step has them); one block.
// Guarantees: the fused forms of docs/Plan.md ("Fused forms") wherever
// their conditions hold, and nothing else changed. The CUDA emitter and the
// host executor read these forms; neither searches the plan for fusions.
//
// Each rewrite with its algebra:
//
//   GELU forward    gemm(x, w, b) -> P; A = gelu(P)
//                   => gemm(x, w, b) {activation = gelu_tanh} -> (A, aux P)
//   GELU backward   dA = gemm(x, w); dP = dA · gelu'(P); db = Σrows dP
//                   => gemm(x, w) pre P {activation_grad = gelu_tanh} -> (dP, aux db)
//   accumulate      Y = gemm(...); Z = X + Y   => Z = gemm(...) init X
//   add into        Y = op(...)[o]; Z = X + Y  => op(...) with init X for result o
//   LN dropout      y = dropout(h); LN(y + r), LN'(.., y, ..)
//                   => LN(dropout(h) + r), LN'(.., h, ..) {x_dropout}: y never stored
//                   (dS, ..) = LN'(...); g = dropout(dS)
//                   => (dS, .., g) = LN'(...) {dsum_dropout}
//
// Random ops without a site get theirs first (assignSites: the numbers the
// plan emitter would give them), so a dropout taken into LayerNorm keeps
// its mask and the others theirs.
//
// The rewrites run in that order, each over the whole function (as the
// emitter's searches did, so the fusion set is the same): an add whose Y
// comes from a GEMM is taken by `accumulate` even when its X comes from a
// bias_grad. "X is there before Y's producer" is read on the IR as the
// earlier rewrites left it: an X a GELU epilogue or an accumulate now makes
// earlier than its op used to qualifies (the emitter, reading the plan's
// original writers, left such adds alone; the pipeline's adds follow their
// operands' ops directly, so compiled specs have none: every device program
// is the one the emitter made).
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "passes/Passes.h"

#include "target/cuda/AttentionTc.h"

#include "mlir/IR/Builders.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_FUSEKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

namespace {

/// The GEMM's output width N: the product of the result's trailing dims
/// that come from `w` (its leading dims are x's).
int64_t outputWidth(GemmOp g) {
  auto x = cast<RankedTensorType>(g.getX().getType());
  auto y = cast<RankedTensorType>(g.getResult().getType());
  int64_t lead = x.getRank() - g.getKRankAttr().getInt(), n = 1;
  for (int64_t d = lead; d < y.getRank(); ++d)
    n *= y.getDimSize(d);
  return n;
}

/// Whether `v` is there when `op` runs: a function argument, or made by an
/// op before it.
bool definedBefore(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || def->isBeforeInBlock(op);
}

/// The first user of `v` (in block order) that is an `Op` satisfying `pred`,
/// or a null op.
template <class Op, class Pred> Op firstUser(Value v, Pred pred) {
  Op first;
  for (Operation *user : v.getUsers())
    if (auto op = dyn_cast<Op>(user); op && pred(op) &&
                                      (!first || op->isBeforeInBlock(first)))
      first = op;
  return first;
}

/// A plain GEMM: no bias, no epilogue, no init.
bool isPlainGemm(GemmOp g) {
  return !g.getBias() && !g.getInit() && !g.getAux() &&
         g.getActivation() == Activation::none &&
         g.getActivationGrad() == Activation::none;
}

class FuseKernels : public xlnet::impl::FuseKernelsPassBase<FuseKernels> {
public:
  using FuseKernelsPassBase::FuseKernelsPassBase;

  void runOnOperation() override {
    if (attentionGradInit != "tensor-core" && attentionGradInit != "all" &&
        attentionGradInit != "none") {
      getOperation().emitError() << "--xlnet-fuse-kernels: attention-grad-init must be "
                                    "tensor-core, all or none, got '"
                                 << attentionGradInit << "'";
      return signalPassFailure();
    }
    if (auxLdMultiple < 1) {
      getOperation().emitError() << "--xlnet-fuse-kernels: aux-ld-multiple must be >= 1, got "
                                 << int64_t(auxLdMultiple);
      return signalPassFailure();
    }
    assignSites(getOperation());
    Block &body = getOperation().getBody().front();
    fuseGeluForward(body);
    fuseGeluBackward(body);
    forEachAddOfAResult(body, [&](AddOp add, Operation *producer, unsigned o, Value x) {
      return accumulate(add, producer, o, x);
    });
    forEachAddOfAResult(body, [&](AddOp add, Operation *producer, unsigned o, Value x) {
      return addInto(add, producer, o, x);
    });
    fuseLayerNormInputDropout(body);
    fuseLayerNormGradDropout(body);
  }

private:
  /// GELU forward: gemm(x, w, b) -> P; activation gelu_tanh(P) -> A
  /// => gemm(x, w, b) {activation = gelu_tanh} -> (A, aux P).
  void fuseGeluForward(Block &body) {
    for (GemmOp g : llvm::make_early_inc_range(body.getOps<GemmOp>())) {
      if (!g.getBias() || g.getInit() || g.getAux() ||
          g.getActivation() != Activation::none ||
          g.getActivationGrad() != Activation::none ||
          outputWidth(g) % auxLdMultiple != 0)
        continue;
      // The first GELU of P (in block order).
      auto gelu = firstUser<ActivationOp>(g.getResult(), [](ActivationOp a) {
        return a.getActivation() == Activation::gelu_tanh;
      });
      if (!gelu)
        continue;
      Type p = g.getResult().getType();
      GemmOp fused = rebuild(g, /*result=*/p, /*aux=*/p, g.getBias(), /*pre=*/Value(),
                             Activation::gelu_tanh, Activation::none);
      gelu.getResult().replaceAllUsesWith(fused.getResult());
      g.getResult().replaceAllUsesWith(fused.getAux());
      gelu.erase();
      g.erase();
    }
  }

  /// GELU backward: gemm(x, w) -> dA read only by activation_grad
  /// gelu_tanh(dA, P) -> dP, and bias_grad(dP) -> db
  /// => gemm(x, w) pre P {activation_grad = gelu_tanh} -> (dP, aux db).
  void fuseGeluBackward(Block &body) {
    for (GemmOp g : llvm::make_early_inc_range(body.getOps<GemmOp>())) {
      if (!isPlainGemm(g) || !g.getResult().hasOneUse() ||
          outputWidth(g) % auxLdMultiple != 0)
        continue;
      auto grad = dyn_cast<ActivationGradOp>(*g.getResult().getUsers().begin());
      if (!grad || grad.getActivation() != Activation::gelu_tanh ||
          grad.getDy() != g.getResult() || grad.getX() == g.getResult() ||
          !definedBefore(grad.getX(), g))
        continue;
      // The first bias gradient of dP (in block order) that is N wide and
      // of dP's type (cuBLASLt's rule: D, aux and the bias gradient in one
      // type; bf16 activations have f32 bias gradients).
      Type element = cast<ShapedType>(grad.getType()).getElementType();
      auto biasGrad = firstUser<BiasGradOp>(grad.getResult(), [&](BiasGradOp bg) {
        return !bg.getInit() && bg.getType().getNumElements() == outputWidth(g) &&
               bg.getType().getElementType() == element;
      });
      if (!biasGrad)
        continue;
      GemmOp fused = rebuild(g, grad.getType(), biasGrad.getType(), /*bias=*/Value(),
                             /*pre=*/grad.getX(), Activation::none, Activation::gelu_tanh);
      grad.getResult().replaceAllUsesWith(fused.getResult());
      biasGrad.getResult().replaceAllUsesWith(fused.getAux());
      biasGrad.erase();
      grad.erase();
      g.erase();
    }
  }

  /// LN dropout, forward: y = dropout(h) read only as the x of
  /// add_layer_norm (at least one) and add_layer_norm_grad (y in no other
  /// operand of theirs, not returned) => those ops read h with x_dropout:
  /// they recompute y from the hash, so y is never stored.
  void fuseLayerNormInputDropout(Block &body) {
    for (DropoutOp drop : llvm::make_early_inc_range(body.getOps<DropoutOp>())) {
      Value y = drop.getResult();
      // A LayerNorm's x has the batch as its outer dimension.
      bool forward = false, ok = !y.use_empty() && !drop.getBatchShared();
      for (OpOperand &use : y.getUses()) {
        Operation *user = use.getOwner();
        if (auto ln = dyn_cast<AddLayerNormOp>(user);
            ln && &use == &ln.getXMutable() && ln.getResidual() != y && !ln.getXDropoutAttr())
          forward = true;
        else if (auto grad = dyn_cast<AddLayerNormGradOp>(user);
                 !(grad && &use == &grad.getXMutable() && grad.getResidual() != y &&
                   grad.getDout() != y && !grad.getXDropoutAttr()))
          ok = false;
      }
      if (!ok || !forward)
        continue;
      for (OpOperand &use : llvm::make_early_inc_range(y.getUses())) {
        use.getOwner()->setAttr("x_dropout", drop.getRateAttr());
        use.getOwner()->setAttr("x_dropout_site", drop.getSiteAttr());
        use.set(drop.getX());
      }
      drop.erase();
    }
  }

  /// LN dropout, backward: (dS, dg, db) = add_layer_norm_grad(...);
  /// g = dropout(dS) (the first such dropout) => the LayerNorm gradient
  /// also returns g, with dsum_dropout.
  void fuseLayerNormGradDropout(Block &body) {
    for (auto grad : llvm::make_early_inc_range(body.getOps<AddLayerNormGradOp>())) {
      if (grad.getDsumDropped())
        continue;
      // The fused dropout's index counts batch rows: not a batch_shared one.
      auto drop = firstUser<DropoutOp>(grad.getDsum(),
                                       [](DropoutOp d) { return !d.getBatchShared(); });
      if (!drop)
        continue;
      OpBuilder b(grad);
      SmallVector<Type> types(grad->getResultTypes());
      types.push_back(drop.getType());
      auto fused = b.create<AddLayerNormGradOp>(grad.getLoc(), types, grad->getOperands(),
                                                grad->getAttrs());
      fused.setDsumDropoutAttr(drop.getRateAttr());
      fused.setDsumDropoutSiteAttr(drop.getSiteAttr());
      for (unsigned r = 0; r < grad->getNumResults(); ++r)
        grad->getResult(r).replaceAllUsesWith(fused->getResult(r));
      drop.getResult().replaceAllUsesWith(fused.getDsumDropped());
      drop.erase();
      grad.erase();
    }
  }

  /// A gemm of `g`'s x, w and shape attributes at `g`, with these results
  /// (aux: the second), bias, pre-activation and epilogue.
  static GemmOp rebuild(GemmOp g, Type result, Type aux, Value bias, Value pre,
                        Activation activation, Activation activationGrad) {
    OpBuilder b(g);
    MLIRContext *ctx = g.getContext();
    return b.create<GemmOp>(g.getLoc(), result, aux, g.getX(), g.getW(), bias, pre,
                            /*init=*/Value(), g.getKRankAttr(), g.getTransposeWAttr(),
                            ActivationAttr::get(ctx, activation),
                            ActivationAttr::get(ctx, activationGrad));
  }

  /// Calls take(add, producer, o, X) for each way round of every `add(X, Y)`
  /// whose Y is result o of `producer`, read by the add alone (so not
  /// returned), with X defined before the producer; `take` says whether it
  /// rewrote the add away.
  template <class Take> void forEachAddOfAResult(Block &body, Take take) {
    for (AddOp add : llvm::make_early_inc_range(body.getOps<AddOp>()))
      for (unsigned u = 0; u < 2; ++u) {
        Value y = add->getOperand(u), x = add->getOperand(1 - u);
        auto result = dyn_cast<OpResult>(y);
        if (!result || x == y || !y.hasOneUse() || !definedBefore(x, result.getOwner()))
          continue;
        if (take(add, result.getOwner(), result.getResultNumber(), x))
          break;
      }
  }

  /// Accumulate: Y = gemm or gemm_wgrad(...); Z = X + Y
  /// => Z = the GEMM with init X (beta 1).
  bool accumulate(AddOp add, Operation *producer, unsigned, Value x) {
    if (auto g = dyn_cast<GemmOp>(producer); g && isPlainGemm(g)) {
      g.getInitMutable().assign(x);
      replaceAdd(add, g.getResult());
      return true;
    }
    if (auto g = dyn_cast<GemmWGradOp>(producer); g && !g.getInit()) {
      g.getInitMutable().assign(x);
      replaceAdd(add, g.getResult());
      return true;
    }
    return false;
  }

  /// Add into: Y = op(...)[o]; Z = X + Y => op(...) with init X for result o.
  bool addInto(AddOp add, Operation *producer, unsigned o, Value x) {
    auto single = [&](auto op) {
      if (op.getInit())
        return false;
      op.getInitMutable().assign(x);
      replaceAdd(add, op.getResult());
      return true;
    };
    if (auto op = dyn_cast<BiasGradOp>(producer))
      return single(op);
    if (auto op = dyn_cast<EmbeddingGradOp>(producer))
      return single(op);
    if (auto op = dyn_cast<MemConcatGradOp>(producer))
      return single(op);
    if (auto op = dyn_cast<AddLayerNormGradOp>(producer); op && (o == 1 || o == 2))
      return addInit(op, o, x, add);
    if (auto op = dyn_cast<RelAttentionGradOp>(producer);
        op && o >= 1 && attentionTakesInits(op))
      return addInit(op, o, x, add);
    return false;
  }

  /// Whether a rel_attention_grad may take inits (the option
  /// attention-grad-init): on the CUDA backend only the tensor-core kernels
  /// (bf16 operands, compact masks, d_head a multiple of 16 up to 128) sum
  /// into them.
  bool attentionTakesInits(RelAttentionGradOp op) const {
    if (attentionGradInit == "all")
      return true;
    if (attentionGradInit == "none")
      return false;
    auto q = cast<RankedTensorType>(op.getQ().getType());
    auto mask = cast<RankedTensorType>(op.getMask().getType());
    return q.getElementType().isBF16() && mask.getElementType().isInteger(64) &&
           q.getRank() == 4 && xlnetc::rt::dev::attnTcSupports(q.getDimSize(3));
  }

  /// Adds `x` as the init of result `o` of a multi-result op (inits in
  /// increasing result order), unless that result has one.
  template <class Op> static bool addInit(Op op, unsigned o, Value x, AddOp add) {
    SmallVector<int64_t> results(op.getInitResults());
    SmallVector<Value> inits(op.getInits());
    if (llvm::is_contained(results, int64_t(o)))
      return false;
    auto at = llvm::lower_bound(results, int64_t(o));
    size_t index = size_t(at - results.begin());
    results.insert(at, int64_t(o));
    inits.insert(inits.begin() + index, x);
    op.getInitsMutable().assign(inits);
    op.setInitResults(results);
    replaceAdd(add, op->getResult(o));
    return true;
  }

  /// The add's result is now `sum` (its producer writes X + Y): uses move
  /// there, Y's only use goes with the add.
  static void replaceAdd(AddOp add, Value sum) {
    add.getResult().replaceAllUsesWith(sum);
    add.erase();
  }
};

} // namespace
