//===- DecomposeLayers.cpp - expand xlnet.two_stream_layer ----------------===//
//
// Assumes: verified xlnet ops with static shapes.
// Guarantees: no xlnet.two_stream_layer remains; each became the memory,
// projection, attention, post-attention and FFN ops of the official layer
// (semantics.md §4, §5), with the query stream computed only for the
// prediction rows. A stream whose output is unused is not built.
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

namespace mlir::xlnet {
#define GEN_PASS_DEF_DECOMPOSELAYERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

/// Emits an error and returns failure if an operand or result of `op` has a
/// dynamic shape.
static LogicalResult checkStaticShapes(Operation *op) {
  for (OpOperand &operand : op->getOpOperands())
    if (!cast<RankedTensorType>(operand.get().getType()).hasStaticShape())
      return op->emitOpError()
             << "requires static shapes, but operand #"
             << operand.getOperandNumber() << " has type " << operand.get().getType();
  for (OpResult result : op->getResults())
    if (!cast<RankedTensorType>(result.getType()).hasStaticShape())
      return op->emitOpError() << "requires static shapes, but result #"
                               << result.getResultNumber() << " has type "
                               << result.getType();
  return success();
}

/// `[d0, ..., dn-2, D]` x `[D, N, H]` -> `[d0, ..., dn-2, N, H]`.
static Value project(OpBuilder &b, Location loc, Value x, Value weight) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(weight.getType());
  SmallVector<int64_t> shape(xt.getShape().drop_back());
  shape.append({wt.getDimSize(1), wt.getDimSize(2)});
  auto type = RankedTensorType::get(shape, xt.getElementType());
  return b.create<HeadProjOp>(loc, type, x, weight);
}

/// Expands one layer. Operand and result types are static (checked by the
/// caller), so every intermediate type follows from them.
static void decompose(TwoStreamLayerOp layer) {
  OpBuilder b(layer);
  Location loc = layer.getLoc();
  Value h = layer.getH(), g = layer.getG(), mems = layer.getMems();
  auto hType = cast<RankedTensorType>(h.getType());
  auto f32 = hType.getElementType();
  int64_t bsz = hType.getDimSize(0), dModel = hType.getDimSize(2);
  int64_t mlen = mems ? cast<RankedTensorType>(mems.getType()).getDimSize(0) : 0;
  int64_t klen = mlen + hType.getDimSize(1);
  int64_t dHead = cast<RankedTensorType>(layer.getQWeight().getType()).getDimSize(2);

  // 1. Memory for the next step: the layer's input, before it changes.
  Value newMems;
  if (layer.getNewMems())
    newMems = b.create<MemCacheOp>(loc, layer.getNewMems().getType(), mems, h,
                                   layer.getReuseLenAttr(), layer.getMemLenAttr());

  // 2. Keys and values from [mems ; h], shared by both streams.
  Value cat = h;
  if (mems)
    cat = b.create<MemConcatOp>(loc, RankedTensorType::get({bsz, klen, dModel}, f32),
                                mems, h);
  Value k = project(b, loc, cat, layer.getKWeight());
  Value v = project(b, loc, cat, layer.getVWeight());
  Value kR = project(b, loc, layer.getPosEmb(), layer.getRWeight());

  // 3. Both streams: attention core, post-attention, FFN.
  auto scale = b.getF64FloatAttr(1.0 / std::sqrt(static_cast<double>(dHead)));
  auto stream = [&](Value x, Value mask, Value rows) -> Value {
    Value q = project(b, loc, x, layer.getQWeight());
    Value attn = b.create<RelAttentionOp>(
        loc, q.getType(), q, k, v, kR, layer.getSegEmbed(), layer.getRWBias(),
        layer.getRRBias(), layer.getRSBias(), layer.getSegMat(), mask, rows,
        scale, layer.getDropattAttr(), /*site=*/IntegerAttr());
    Value post = b.create<PostAttentionOp>(
        loc, x.getType(), attn, x, layer.getOWeight(), layer.getAttnLnWeight(),
        layer.getAttnLnBias(), layer.getEpsAttr(), layer.getDropoutAttr());
    return b.create<FFNOp>(loc, x.getType(), post, layer.getFfW1(),
                           layer.getFfB1(), layer.getFfW2(), layer.getFfB2(),
                           layer.getFfLnWeight(), layer.getFfLnBias(),
                           layer.getActivationAttr(), layer.getEpsAttr(),
                           layer.getDropoutAttr());
  };
  // A stream whose output nothing reads is not built: in a training step
  // the last layer's content stream (only its input h is cached as memory
  // and the loss reads the query stream). Not left to CSE's dead-code
  // removal: the stream ends in dropouts, which are not Pure.
  if (!layer.getHOut().use_empty())
    layer.getHOut().replaceAllUsesWith(stream(h, layer.getMaskH(), /*rows=*/Value()));
  if (!layer.getGOut().use_empty())
    layer.getGOut().replaceAllUsesWith(stream(g, layer.getMaskG(), layer.getRows()));
  if (newMems)
    layer.getNewMems().replaceAllUsesWith(newMems);
  layer.erase();
}

namespace {
struct DecomposeLayersPass
    : public xlnet::impl::DecomposeLayersPassBase<DecomposeLayersPass> {
  void runOnOperation() override {
    SmallVector<TwoStreamLayerOp> layers;
    getOperation().walk([&](TwoStreamLayerOp op) { layers.push_back(op); });
    for (TwoStreamLayerOp layer : layers) {
      if (failed(checkStaticShapes(layer)))
        return signalPassFailure();
      decompose(layer);
    }
  }
};
} // namespace
