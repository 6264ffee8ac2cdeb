//===- MixedPrecision.cpp - bf16 activations, fp32 everything else -------===//
//
// Assumes: kernel-level ops only (after --xlnet-lower-to-kernels, and after
// --xlnet-differentiate and --xlnet-apply-optimizer when they run).
// Guarantees: activations and their gradients are bf16; GEMM operands and
// biases are bf16 (casts of the f32 parameters are inserted once per
// parameter);
// parameters, their gradients, the optimizer state, losses, the learning
// rate and norms stay f32; the function's signature does not change (a bf16
// value that is returned is cast back to f32).
//
// The kernels accumulate in f32 whatever they store (softmax, LayerNorm
// statistics, losses, norms; cuBLASLt computes in f32), so bf16 changes only
// what is stored between steps of the plan.
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_MIXEDPRECISIONPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

namespace {

bool isBf16(Value v) {
  return cast<ShapedType>(v.getType()).getElementType().isBF16();
}

/// `v`'s tensor type with element type `element`.
RankedTensorType withElement(Value v, Type element) {
  return cast<RankedTensorType>(v.getType()).clone(element);
}

class Rewriter {
public:
  explicit Rewriter(func::FuncOp func)
      : func_(func), builder_(func.getContext()),
        bf16_(builder_.getBF16Type()), f32_(builder_.getF32Type()) {}

  void run() {
    Block &body = func_.getBody().front();
    for (Operation &op : llvm::make_early_inc_range(body))
      retype(&op);
    // The signature does not change: a result that became bf16 is cast
    // back to the type the function declares.
    Operation *ret = body.getTerminator();
    builder_.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      Type want = func_.getFunctionType().getResult(operand.getOperandNumber());
      if (operand.get().getType() != want && isa<RankedTensorType>(want))
        operand.set(builder_.create<CastOp>(ret->getLoc(), want, operand.get()));
    }
  }

private:
  /// `v` as `element` (itself when it already is): one cast per value,
  /// placed right after its definition.
  Value as(Value v, Type element) {
    if (cast<ShapedType>(v.getType()).getElementType() == element)
      return v;
    auto key = std::make_pair(v.getAsOpaquePointer(), element.getAsOpaquePointer());
    if (auto it = casts_.find(key); it != casts_.end())
      return it->second;
    if (Operation *def = v.getDefiningOp())
      builder_.setInsertionPointAfter(def);
    else
      builder_.setInsertionPointToStart(v.getParentBlock());
    Value c = builder_.create<CastOp>(v.getLoc(), withElement(v, element), v);
    casts_[key] = c;
    return c;
  }

  /// Makes operand `operand` of `op` have `element`.
  void castOperand(OpOperand &operand, Type element) {
    operand.set(as(operand.get(), element));
  }

  void setResult(Value r, Type element) { r.setType(withElement(r, element)); }

  void retype(Operation *op) {
    // Activations: stored bf16 whatever they read.
    if (isa<EmbeddingOp, MaskEmbeddingOp, RelPosEncodingOp, MemConcatOp,
            RelAttentionOp, MemConcatGradOp, LMLossGradOp>(op)) {
      for (Value r : op->getResults())
        setResult(r, bf16_);
      return;
    }
    // GEMMs: bf16 operands (cuBLASLt's A and B), f32 accumulation; the data
    // GEMMs store bf16, the weight gradients f32.
    if (auto g = dyn_cast<GemmOp>(op)) {
      castOperand(g.getXMutable(), bf16_);
      castOperand(g.getWMutable(), bf16_);
      if (g.getBias()) // the bias has the result's type (cuBLASLt's rule)
        castOperand(g.getBiasMutable()[0], bf16_);
      setResult(g.getResult(), bf16_);
      return;
    }
    if (auto g = dyn_cast<GemmWGradOp>(op)) {
      castOperand(g.getXMutable(), bf16_);
      castOperand(g.getDyMutable(), bf16_);
      return;
    }
    // x, residual and the result share one type: bf16 (LayerNorm's
    // statistics are f32 inside the kernel).
    if (auto ln = dyn_cast<AddLayerNormOp>(op)) {
      castOperand(ln.getXMutable(), bf16_);
      castOperand(ln.getResidualMutable(), bf16_);
      setResult(ln.getResult(), bf16_);
      return;
    }
    if (auto ln = dyn_cast<AddLayerNormGradOp>(op)) {
      Type x = cast<ShapedType>(ln.getX().getType()).getElementType();
      castOperand(ln.getDoutMutable(), x);
      castOperand(ln.getResidualMutable(), x);
      setResult(ln.getDsum(), x); // dgamma, dbeta: parameter gradients, f32
      return;
    }
    // The activations' gradients have their operands' types; the
    // parameters' gradients (results 4 to 7) stay f32.
    if (auto a = dyn_cast<RelAttentionGradOp>(op)) {
      Value operands[] = {a.getQ(), a.getK(), a.getV(), a.getKR()};
      for (int i = 0; i < 4; ++i)
        setResult(op->getResult(i),
                  cast<ShapedType>(operands[i].getType()).getElementType());
      castOperand(a.getDoutMutable(),
                  cast<ShapedType>(a.getQ().getType()).getElementType());
      return;
    }
    // One type for operands and result: the operand's (dropout,
    // activation); bf16 if either operand is (activation_grad); f32 if
    // either is (add: the parameters' gradients are summed in f32).
    if (isa<DropoutOp, ActivationOp>(op)) {
      setResult(op->getResult(0),
                cast<ShapedType>(op->getOperand(0).getType()).getElementType());
      return;
    }
    if (isa<ActivationGradOp, AddOp>(op)) {
      bool anyBf16 = isBf16(op->getOperand(0)) || isBf16(op->getOperand(1));
      bool allBf16 = isBf16(op->getOperand(0)) && isBf16(op->getOperand(1));
      Type t = (isa<AddOp>(op) ? allBf16 : anyBf16) ? bf16_ : f32_;
      for (OpOperand &operand : op->getOpOperands())
        castOperand(operand, t);
      setResult(op->getResult(0), t);
      return;
    }
    // Everything else keeps its types: mem_cache (the carried memory is
    // f32), lm_loss, the masks, the parameters' gradients (embedding_grad,
    // mask_embedding_grad, bias_grad) and the optimizer.
  }

  func::FuncOp func_;
  OpBuilder builder_;
  Type bf16_, f32_;
  llvm::DenseMap<std::pair<const void *, const void *>, Value> casts_;
};

struct MixedPrecisionPass
    : public xlnet::impl::MixedPrecisionPassBase<MixedPrecisionPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    WalkResult walk = func.walk([](Operation *op) {
      if (isa<TwoStreamLayerOp, HeadProjOp, PostAttentionOp, FFNOp, LMHeadOp>(op)) {
        op->emitOpError() << "is a model-level op: --xlnet-mixed-precision "
                             "runs on kernel-level ops (run "
                             "--xlnet-lower-to-kernels first)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    if (!func.getBody().hasOneBlock()) {
      func.emitOpError() << "has " << func.getBody().getBlocks().size()
                         << " blocks; --xlnet-mixed-precision expects one";
      return signalPassFailure();
    }
    Rewriter(func).run();
  }
};

} // namespace
