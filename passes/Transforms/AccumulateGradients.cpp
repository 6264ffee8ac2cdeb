//===- AccumulateGradients.cpp - one micro-batch of gradient accumulation -===//
//
// Makes a differentiated step (results `grad.<param>`) a micro-batch of
// gradient accumulation (Passes.td): the loss's gradient is divided by the
// input `loss_count` (the predicted tokens of all the step's micro-batches)
// and each gradient result is the input `grad_acc.<param>` plus this
// micro-batch's gradient. The fusion pass folds each add into the op that
// writes the gradient where it can.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/XLNet/XLNetOps.h"
#include "runtime/train/StateNames.h"

#include "mlir/IR/Builders.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_ACCUMULATEGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;
namespace names = xlnetc::rt::train::names;

namespace {

struct AccumulateGradientsPass
    : public xlnet::impl::AccumulateGradientsPassBase<AccumulateGradientsPass> {
  using AccumulateGradientsPassBase::AccumulateGradientsPassBase;

  /// The one lm_loss_grad of `func` (without a count yet), or an error.
  static FailureOr<LMLossGradOp> lossGradient(func::FuncOp func) {
    SmallVector<LMLossGradOp> found;
    func.walk([&](LMLossGradOp op) { found.push_back(op); });
    if (found.size() != 1) {
      func.emitOpError() << "has " << found.size()
                         << " xlnet.lm_loss_grad ops: gradient accumulation needs exactly one "
                            "(run --xlnet-differentiate first)";
      return failure();
    }
    return found.front();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    auto input = [&](StringRef name) {
      return attrs.getDictionaryAttr(
          attrs.getNamedAttr("xlnet.input", attrs.getStringAttr(name)));
    };
    for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
      if (auto n = func.getArgAttrOfType<StringAttr>(i, "xlnet.input");
          n && n.getValue() == StringRef(names::kLossCount)) {
        func.emitOpError() << "already accumulates gradients (it has a '"
                           << names::kLossCount << "' input)";
        return signalPassFailure();
      }
    FailureOr<LMLossGradOp> seed = lossGradient(func);
    if (failed(seed))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    SmallVector<unsigned> gradResults;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (auto out = func.getResultAttrOfType<StringAttr>(i, "xlnet.output");
          out && out.getValue().starts_with(StringRef(names::kGrad)))
        gradResults.push_back(i);
    if (gradResults.empty()) {
      func.emitOpError() << "has no gradient results (grad.<param>); run "
                            "--xlnet-differentiate first";
      return signalPassFailure();
    }

    // The count every micro-batch's loss gradient divides by.
    Location loc = func.getLoc();
    unsigned next = func.getNumArguments();
    func.insertArgument(next, RankedTensorType::get({}, Float32Type::get(ctx)),
                        input(StringRef(names::kLossCount)), loc);
    seed->getCountMutable().assign(func.getArgument(next++));

    // grad.<param> = grad_acc.<param> + this micro-batch's gradient. A
    // gradient summed from several contributions (the differentiation's
    // chain add(add(c1, c2), c3)) takes the accumulator as its first term,
    // add(add(add(acc, c1), c2), c3), so that each add has an op result
    // as its second operand, which the fusion can fold into that op.
    for (unsigned i : gradResults) {
      StringRef param =
          func.getResultAttrOfType<StringAttr>(i, "xlnet.output").getValue().drop_front(
              names::kGrad.size());
      Value g = ret.getOperand(i);
      func.insertArgument(next, g.getType(), input(names::gradAcc(param.str())), loc);
      Value acc = func.getArgument(next++);
      OpOperand *first = &ret->getOpOperand(i);
      while (auto add = first->get().getDefiningOp<AddOp>()) {
        if (!add->hasOneUse())
          break;
        first = &add.getLhsMutable();
      }
      Value term = first->get();
      OpBuilder b(first->getOwner());
      first->set(b.create<AddOp>(term.getLoc(), acc, term));
    }
  }
};

} // namespace
