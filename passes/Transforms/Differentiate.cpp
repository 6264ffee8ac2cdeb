//===- Differentiate.cpp - reverse-mode gradient of the step's loss -------===//
//
// Appends to a kernel-level step function the backward of its `loss` result
// with respect to every parameter, built from one gradient rule per op (the
// `*_grad` ops of the dialect), and returns each gradient as `grad.<param>`.
//
// The sweep is the textbook one: mark the values that depend on a parameter
// (active), walk the ops backwards from `lm_loss`, and for every op with an
// incoming gradient emit its rule for its active operands; contributions to
// one value are summed with `xlnet.add`. Memory is stop-gradient (mem_concat
// passes gradient to h only; mem_cache results are never differentiated),
// so the gradient of a parameter used twice (the tied embedding, the weights
// shared by both streams) is the sum of its uses.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/XLNet/XLNetOps.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_DIFFERENTIATEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

int64_t mlir::xlnet::firstFreeSite(Operation *root) {
  int64_t next = 0;
  root->walk([&](Operation *op) {
    // A dropout fused into LayerNorm keeps its site under these names.
    for (StringRef name : {"site", "x_dropout_site", "dsum_dropout_site"})
      if (auto site = op->getAttrOfType<IntegerAttr>(name))
        next = std::max(next, site.getInt() + 1);
  });
  return next;
}

void mlir::xlnet::assignSites(func::FuncOp func) {
  int64_t next = firstFreeSite(func);
  Builder b(func.getContext());
  func.walk([&](Operation *op) {
    if (isa<DropoutOp, RelAttentionOp, RelAttentionGradOp>(op) && !op->hasAttr("site"))
      op->setAttr("site", b.getI64IntegerAttr(next++));
  });
}

namespace {

/// Ops that carry no gradient: their float results depend on no parameter
/// (positions, masks) or are stop-gradient (the memory cache).
bool isNonDifferentiable(Operation *op) {
  return isa<RelPosEncodingOp, RelSegmentOp, AttnMaskOp, RankMaskOp, PackedMaskOp,
             TargetPositionsOp, MemCacheOp>(op);
}


/// Splits `gemm {activation = act}` into `gemm` + `activation` so the
/// pre-activation is a value the backward can read.
void splitActivations(func::FuncOp func) {
  func.walk([](GemmOp gemm) {
    if (gemm.getActivation() == Activation::none)
      return;
    OpBuilder b(gemm);
    b.setInsertionPointAfter(gemm);
    Activation act = gemm.getActivation();
    gemm.setActivation(Activation::none);
    auto apply = b.create<ActivationOp>(gemm.getLoc(), gemm.getResult().getType(),
                                        gemm.getResult(), act);
    gemm.getResult().replaceAllUsesExcept(apply.getResult(), apply);
  });
}

class Differentiator {
public:
  Differentiator(func::FuncOp func, func::ReturnOp ret)
      : func(func), b(ret) {}

  /// Builds the backward; `loss` is the value of the `loss` result.
  LogicalResult run(Value loss) {
    markActive();
    auto lossOp = loss.getDefiningOp<LMLossOp>();
    if (!lossOp || lossOp.getLoss() != loss)
      return func.emitOpError()
             << "the 'loss' result must be the loss of an xlnet.lm_loss";
    if (!active.contains(loss))
      return func.emitOpError() << "the loss does not depend on any parameter";

    // The forward ops, latest first (the backward is appended as we go).
    SmallVector<Operation *> forward;
    for (Operation &op : func.getBody().front().without_terminator())
      forward.push_back(&op);
    for (Operation *op : llvm::reverse(forward)) {
      if (op == lossOp.getOperation()) {
        seedLoss(lossOp);
        continue;
      }
      if (llvm::none_of(op->getResults(), [&](Value r) { return grads.count(r); }))
        continue;
      if (failed(backward(op)))
        return failure();
    }
    return success();
  }

  /// The accumulated gradient of `value` (null if none reached it).
  Value gradOf(Value value) const { return grads.lookup(value); }

private:
  void markActive() {
    for (BlockArgument arg : func.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "xlnet.param"))
        active.insert(arg);
    for (Operation &op : func.getBody().front()) {
      if (isNonDifferentiable(&op))
        continue;
      if (llvm::any_of(op.getOperands(), [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          active.insert(r);
    }
  }

  /// Adds `g` to the gradient of `value` if `value` is active.
  void accumulate(Value value, Value g) {
    if (!active.contains(value))
      return;
    Value &slot = grads[value];
    slot = slot ? b.create<AddOp>(g.getLoc(), slot, g).getResult() : g;
  }

  bool needs(Value value) const { return active.contains(value); }

  void seedLoss(LMLossOp op) {
    auto d = b.create<LMLossGradOp>(op.getLoc(), op.getLogits().getType(),
                                    op.getLogits(), op.getTarget(),
                                    op.getTargetMask(), Value());
    accumulate(op.getLogits(), d);
  }

  LogicalResult backward(Operation *op) {
    Location loc = op->getLoc();
    return llvm::TypeSwitch<Operation *, LogicalResult>(op)
        .Case([&](GemmOp o) {
          Value dy = grads.lookup(o.getResult());
          auto w = o.getW().getType();
          int64_t k = o.getKRankAttr().getInt();
          if (needs(o.getX())) {
            auto dx = b.create<GemmOp>(loc, o.getX().getType(), dy, o.getW(),
                                       /*bias=*/Value());
            dx.setKRank(w.getRank() - k);
            dx.setTransposeW(!o.getTransposeW());
            accumulate(o.getX(), dx.getResult());
          }
          if (needs(o.getW()))
            accumulate(o.getW(), b.create<GemmWGradOp>(
                                     loc, w, o.getX(), dy, /*init=*/Value(),
                                     o.getKRankAttr(), o.getTransposeWAttr()));
          if (o.getBias() && needs(o.getBias()))
            accumulate(o.getBias(),
                       b.create<BiasGradOp>(loc, o.getBias().getType(), dy,
                                            /*init=*/Value()));
          return success();
        })
        .Case([&](ActivationOp o) {
          accumulate(o.getX(), b.create<ActivationGradOp>(
                                   loc, o.getType(), grads.lookup(o.getResult()),
                                   o.getX(), o.getActivation()));
          return success();
        })
        .Case([&](DropoutOp o) {
          accumulate(o.getX(), b.create<DropoutOp>(loc, o.getType(),
                                                   grads.lookup(o.getResult()),
                                                   o.getRateAttr(), o.getSiteAttr(),
                                                   o.getBatchSharedAttr()));
          return success();
        })
        .Case([&](AddLayerNormOp o) {
          auto d = b.create<AddLayerNormGradOp>(
              loc, o.getX().getType(), o.getGamma().getType(), o.getBeta().getType(),
              /*dsum_dropped=*/Type(), grads.lookup(o.getResult()), o.getX(),
              o.getResidual(), o.getGamma(), /*inits=*/ValueRange(), o.getEpsAttr(),
              /*init_results=*/DenseI64ArrayAttr(), /*x_dropout=*/FloatAttr(),
              /*x_dropout_site=*/IntegerAttr(), /*dsum_dropout=*/FloatAttr(),
              /*dsum_dropout_site=*/IntegerAttr());
          accumulate(o.getX(), d.getDsum());
          accumulate(o.getResidual(), d.getDsum());
          accumulate(o.getGamma(), d.getDgamma());
          accumulate(o.getBeta(), d.getDbeta());
          return success();
        })
        .Case([&](RelAttentionOp o) {
          SmallVector<Value> operands = {o.getQ(),        o.getK(),
                                         o.getV(),        o.getKR(),
                                         o.getSegEmbed(), o.getRWBias(),
                                         o.getRRBias(),   o.getRSBias()};
          SmallVector<Type> types;
          for (Value v : operands)
            types.push_back(v.getType());
          auto d = b.create<RelAttentionGradOp>(
              loc, types, grads.lookup(o.getResult()), o.getQ(), o.getK(),
              o.getV(), o.getKR(), o.getSegEmbed(), o.getRWBias(),
              o.getRRBias(), o.getRSBias(), o.getSegMat(), o.getMask(),
              o.getRows(), /*inits=*/ValueRange(), o.getScaleAttr(), o.getDropattAttr(),
              o.getSiteAttr(), /*init_results=*/DenseI64ArrayAttr());
          for (auto [operand, g] : llvm::zip(operands, d.getResults()))
            accumulate(operand, g);
          return success();
        })
        .Case([&](MemConcatOp o) {
          accumulate(o.getH(), b.create<MemConcatGradOp>(
                                   loc, o.getH().getType(),
                                   grads.lookup(o.getResult()), /*init=*/Value()));
          return success();
        })
        .Case([&](EmbeddingOp o) {
          accumulate(o.getTable(), b.create<EmbeddingGradOp>(
                                       loc, o.getTable().getType(), o.getIds(),
                                       grads.lookup(o.getResult()), /*init=*/Value()));
          return success();
        })
        .Case([&](MaskEmbeddingOp o) {
          accumulate(o.getMaskEmb(), b.create<MaskEmbeddingGradOp>(
                                         loc, o.getMaskEmb().getType(),
                                         grads.lookup(o.getResult())));
          return success();
        })
        .Default([&](Operation *other) {
          if (isa<TwoStreamLayerOp, HeadProjOp, PostAttentionOp, FFNOp, LMHeadOp>(other))
            return other->emitOpError()
                   << "is not kernel-level; run --xlnet-lower-to-kernels "
                      "before --xlnet-differentiate";
          return other->emitOpError() << "has no gradient rule";
        });
  }

  func::FuncOp func;
  OpBuilder b;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> grads;
};

struct DifferentiatePass
    : public xlnet::impl::DifferentiatePassBase<DifferentiatePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    std::optional<unsigned> lossIndex;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "xlnet.output");
      if (name && name.getValue() == "loss")
        lossIndex = i;
      if (name && name.getValue().starts_with("grad.")) {
        func.emitOpError() << "is already differentiated (result #" << i
                           << " is " << name << ")";
        return signalPassFailure();
      }
    }
    if (!lossIndex) {
      func.emitOpError() << "has no result named 'loss' (xlnet.output = \"loss\") "
                            "to differentiate";
      return signalPassFailure();
    }

    assignSites(func);
    splitActivations(func);
    Differentiator diff(func, ret);
    if (failed(diff.run(ret.getOperand(*lossIndex))))
      return signalPassFailure();

    // One `grad.<name>` result per parameter, in argument order.
    Builder b(func.getContext());
    SmallVector<Value> results(ret.getOperands());
    for (BlockArgument arg : func.getArguments()) {
      auto name = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "xlnet.param");
      if (!name)
        continue;
      Value g = diff.gradOf(arg);
      if (!g) {
        func.emitOpError() << "parameter '" << name.getValue()
                           << "' does not influence the loss, so it has no "
                              "gradient";
        return signalPassFailure();
      }
      unsigned index = func.getNumResults();
      func.insertResult(index, g.getType(),
                        b.getDictionaryAttr(b.getNamedAttr(
                            "xlnet.output",
                            b.getStringAttr("grad." + name.getValue().str()))));
      results.push_back(g);
    }
    ret->setOperands(results);
  }
};

} // namespace
