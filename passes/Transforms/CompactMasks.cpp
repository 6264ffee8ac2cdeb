//===- CompactMasks.cpp - segment ids and ranks into the attention ops ----===//
//
// Assumes: the attention ops exist (layers decomposed).
// Guarantees: no rel_attention(_grad) reads a rel_segment, a rank_mask or a
// packed_mask; those ops are gone unless something else uses a rel_segment.
// The folded attention ops read seg_id [B,S] and perm_rank [B,2,S] or
// perm_bits [B,S,W] (the compact forms of docs/Plan.md), with the same
// meaning.
//
//===----------------------------------------------------------------------===//

#include "dialect/XLNet/XLNetOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_COMPACTMASKSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;

namespace {

/// The compact permutation mask a mask op stands for, with its stream and
/// mlen: the ranks of a rank_mask or the bits of a packed_mask.
struct CompactPermMask {
  Operation *op = nullptr;
  Value source;
  Stream stream;
  int64_t mlen;
};

CompactPermMask compactPermMask(Value mask) {
  if (auto r = mask.getDefiningOp<RankMaskOp>())
    return {r, r.getPermRank(), r.getStream(), int64_t(r.getMlen())};
  if (auto p = mask.getDefiningOp<PackedMaskOp>())
    return {p, p.getPermBits(), p.getStream(), int64_t(p.getMlen())};
  return {};
}

/// Folds the masks of one attention op (RelAttentionOp or
/// RelAttentionGradOp); leaves it alone when they are not rel_segment +
/// rank_mask or packed_mask.
template <class AttnOp> LogicalResult fold(AttnOp op) {
  auto seg = op.getSegMat().template getDefiningOp<RelSegmentOp>();
  CompactPermMask mask = compactPermMask(op.getMask());
  if (!seg || !mask.op)
    return success();
  bool queryStream = static_cast<bool>(op.getRows());
  if ((mask.stream == Stream::query) != queryStream)
    return op.emitOpError()
           << "reads a " << mask.op->getName().stripDialect() << " of the "
           << stringifyStream(mask.stream) << " stream but is the "
           << (queryStream ? "query stream (it has rows)"
                           : "content stream (no rows)");
  auto shape = [](Value v) { return cast<ShapedType>(v.getType()).getShape(); };
  int64_t mlen = shape(op.getK())[1] - shape(op.getSegMat())[1];
  if (seg.getMlen() != mlen || mask.mlen != mlen)
    return op.emitOpError() << "masks have mlen " << seg.getMlen() << " and "
                            << mask.mlen << " but K - S is " << mlen;
  op.getSegMatMutable().assign(seg.getSegId());
  op.getMaskMutable().assign(mask.source);
  return success();
}

struct CompactMasksPass
    : public xlnet::impl::CompactMasksPassBase<CompactMasksPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    WalkResult walk = func.walk([](Operation *op) {
      LogicalResult r = success();
      if (auto a = dyn_cast<RelAttentionOp>(op))
        r = fold(a);
      else if (auto g = dyn_cast<RelAttentionGradOp>(op))
        r = fold(g);
      return failed(r) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();
    // Erase the mask ops nothing reads any more; a rank_mask or packed_mask
    // that something else still reads is an error (only the attention reads
    // compact masks).
    SmallVector<Operation *> dead;
    bool bad = false;
    func.walk([&](Operation *op) {
      if (!isa<RelSegmentOp, RankMaskOp, PackedMaskOp>(op))
        return;
      if (op->use_empty())
        dead.push_back(op);
      else if (isa<RankMaskOp, PackedMaskOp>(op)) {
        Operation *user = *op->getUsers().begin();
        if (isa<RelAttentionOp, RelAttentionGradOp>(user))
          op->emitOpError() << "is read by an attention op whose seg_mat is "
                               "not an xlnet.rel_segment (the masks fold "
                               "together or not at all)";
        else
          op->emitOpError() << "is still used by '" << user->getName()
                            << "', which cannot read compact masks";
        bad = true;
      }
    });
    if (bad)
      return signalPassFailure();
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
