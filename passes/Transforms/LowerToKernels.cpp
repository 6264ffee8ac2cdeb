//===- LowerToKernels.cpp - model-level xlnet ops to kernel-level ops -----===//
//
// Assumes: layers are decomposed (no xlnet.two_stream_layer).
// Guarantees: head_proj, post_attention, ffn and lm_head are replaced by
// gemm / dropout / add_layer_norm, so every op left in the function is
// kernel-level: one op = one plan step (docs/Plan.md).
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_LOWERTOKERNELSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

/// `x · op(w) [+ bias]`, contracting the last `kRank` dims of x.
static Value gemm(OpBuilder &b, Location loc, Type type, Value x, Value w,
                  Value bias, int64_t kRank, bool transposeW,
                  Activation act = Activation::none) {
  auto op = b.create<GemmOp>(loc, type, x, w, bias);
  op.setKRank(kRank);
  op.setTransposeW(transposeW);
  op.setActivation(act);
  return op.getResult();
}

/// Inserts a dropout unless the rate is 0.
static Value maybeDropout(OpBuilder &b, Location loc, Value x, FloatAttr rate) {
  if (rate.getValueAsDouble() == 0.0)
    return x;
  return b.create<DropoutOp>(loc, x.getType(), x, rate, /*site=*/IntegerAttr(),
                             /*batch_shared=*/UnitAttr());
}

static void lower(HeadProjOp op) {
  OpBuilder b(op);
  op.replaceAllUsesWith(gemm(b, op.getLoc(), op.getType(), op.getX(),
                             op.getWeight(), Value(), /*kRank=*/1,
                             /*transposeW=*/false));
  op.erase();
}

static void lower(LMHeadOp op) {
  OpBuilder b(op);
  op.replaceAllUsesWith(gemm(b, op.getLoc(), op.getType(), op.getG(),
                             op.getEmbedding(), op.getBias(), /*kRank=*/1,
                             /*transposeW=*/true));
  op.erase();
}

static void lower(PostAttentionOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // [B,T,N,H] x [D,N,H]^T over (N,H) -> [B,T,D].
  Value y = gemm(b, loc, op.getType(), op.getAttn(), op.getOWeight(), Value(),
                 /*kRank=*/2, /*transposeW=*/true);
  y = maybeDropout(b, loc, y, op.getDropoutAttr());
  op.replaceAllUsesWith(b.create<AddLayerNormOp>(loc, op.getType(), y,
                                                 op.getResidual(), op.getLnWeight(),
                                                 op.getLnBias(), op.getEpsAttr(),
                                                 /*x_dropout=*/FloatAttr(),
                                                 /*x_dropout_site=*/IntegerAttr())
                            .getResult());
  op.erase();
}

static void lower(FFNOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto xType = op.getType();
  SmallVector<int64_t> inner(xType.getShape().drop_back());
  inner.push_back(op.getB1().getType().getDimSize(0));
  auto innerType = RankedTensorType::get(inner, xType.getElementType());
  // 1. act(x · W1ᵀ + b1), one GEMM with a bias+activation epilogue.
  Value a = gemm(b, loc, innerType, op.getX(), op.getW1(), op.getB1(),
                 /*kRank=*/1, /*transposeW=*/true, op.getActivation());
  a = maybeDropout(b, loc, a, op.getDropoutAttr());
  // 2. · W2ᵀ + b2, dropout, residual + LayerNorm.
  Value y = gemm(b, loc, xType, a, op.getW2(), op.getB2(), /*kRank=*/1,
                 /*transposeW=*/true);
  y = maybeDropout(b, loc, y, op.getDropoutAttr());
  op.replaceAllUsesWith(b.create<AddLayerNormOp>(loc, xType, y, op.getX(),
                                                 op.getLnWeight(), op.getLnBias(),
                                                 op.getEpsAttr(), /*x_dropout=*/FloatAttr(),
                                                 /*x_dropout_site=*/IntegerAttr())
                            .getResult());
  op.erase();
}

namespace {
struct LowerToKernelsPass
    : public xlnet::impl::LowerToKernelsPassBase<LowerToKernelsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    TwoStreamLayerOp layer;
    func.walk([&](TwoStreamLayerOp op) {
      layer = op;
      return WalkResult::interrupt();
    });
    if (layer) {
      layer.emitOpError()
          << "must be decomposed before lowering to kernels (run "
             "--xlnet-decompose-layers first)";
      return signalPassFailure();
    }
    SmallVector<Operation *> ops;
    func.walk([&](Operation *op) {
      if (isa<HeadProjOp, LMHeadOp, PostAttentionOp, FFNOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops)
      llvm::TypeSwitch<Operation *>(op)
          .Case<HeadProjOp, LMHeadOp, PostAttentionOp, FFNOp>(
              [](auto concrete) { lower(concrete); });
  }
};
} // namespace
