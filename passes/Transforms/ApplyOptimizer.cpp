//===- ApplyOptimizer.cpp - the official Adam update inside the step ------===//
//
// Turns a differentiated step (results `grad.<param>`) into a training step:
// the function takes the update count `step` and the Adam moments
// `adam_m.<param>`, `adam_v.<param>` as extra inputs, computes the learning
// rate of the official schedule, the global gradient norm, and one
// `adam_update` per parameter, and returns `new.<param>`,
// `new.adam_m.<param>`, `new.adam_v.<param>`, `lr` and `grad_norm` instead of
// the gradients (semantics.md §8, model_utils.get_train_op).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialect/XLNet/XLNetOps.h"
#include "runtime/train/StateNames.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/BitVector.h"

namespace mlir::xlnet {
#define GEN_PASS_DEF_APPLYOPTIMIZERPASS
#include "passes/Passes.h.inc"
} // namespace mlir::xlnet

using namespace mlir;
using namespace mlir::xlnet;
namespace names = xlnetc::rt::train::names;

bool mlir::xlnet::isExcludedFromWeightDecay(StringRef name) {
  // The official exclusions are "LayerNorm", "layer_norm" and "bias"; the
  // relative attention biases (r_w_bias, r_r_bias, r_s_bias) still decay.
  return name.contains("layer_norm") || name.contains("LayerNorm") ||
         name.ends_with(".bias");
}

namespace {

/// A parameter's update: its name, argument and gradient.
struct Update {
  std::string name;
  BlockArgument param;
  Value grad;
};

/// The parameters, by name, and the results holding their gradients
/// (`gradResults`): one update per parameter, or an error.
static LogicalResult collectUpdates(func::FuncOp func, SmallVector<Update> &updates,
                                    llvm::BitVector &gradResults) {
  llvm::StringMap<BlockArgument> params;
  for (BlockArgument arg : func.getArguments())
    if (auto n = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "xlnet.param"))
      params[n.getValue()] = arg;
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  gradResults.resize(func.getNumResults());
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto out = func.getResultAttrOfType<StringAttr>(i, "xlnet.output");
    if (!out || !out.getValue().starts_with("grad."))
      continue;
    std::string name = out.getValue().drop_front(5).str();
    auto it = params.find(name);
    if (it == params.end()) {
      func.emitOpError() << "result #" << i << " (" << out
                         << ") is the gradient of no parameter";
      return failure();
    }
    updates.push_back({name, it->second, ret.getOperand(i)});
    gradResults.set(i);
  }
  if (updates.empty()) {
    func.emitOpError() << "has no gradient results (grad.<param>); run "
                          "--xlnet-differentiate first";
    return failure();
  }
  if (updates.size() != params.size()) {
    func.emitOpError() << "has gradients for " << updates.size() << " of "
                       << params.size() << " parameters";
    return failure();
  }
  return success();
}

struct ApplyOptimizerPass
    : public xlnet::impl::ApplyOptimizerPassBase<ApplyOptimizerPass> {
  using ApplyOptimizerPassBase::ApplyOptimizerPassBase;

  LogicalResult checkOptions(func::FuncOp func) {
    auto bad = [&](StringRef what) {
      return func.emitOpError() << "invalid optimizer option: " << what;
    };
    if (decay != "poly" && decay != "cos")
      return bad("decay must be 'poly' or 'cos', got '" + decay + "'");
    if (!(learningRate >= 0.0))
      return bad("learning-rate must be >= 0");
    if (trainSteps < 1 || warmupSteps < 0)
      return bad("train-steps must be >= 1 and warmup-steps >= 0");
    if (!(minLrRatio >= 0.0 && minLrRatio <= 1.0))
      return bad("min-lr-ratio must be in [0, 1]");
    if (!(adamEpsilon > 0.0))
      return bad("adam-epsilon must be > 0");
    if (!(weightDecay >= 0.0))
      return bad("weight-decay must be >= 0");
    return success();
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    if (failed(checkOptions(func)))
      return signalPassFailure();
    MLIRContext *ctx = &getContext();
    Builder attrs(ctx);
    auto named = [&](StringRef role, const std::string &name) {
      return attrs.getDictionaryAttr(
          attrs.getNamedAttr(("xlnet." + role).str(), attrs.getStringAttr(name)));
    };

    // The parameters, by name, and the results holding their gradients.
    SmallVector<Update> updates;
    llvm::BitVector gradResults;
    if (failed(collectUpdates(func, updates, gradResults)))
      return signalPassFailure();
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());

    // New inputs: step, then the moments of each parameter.
    Location loc = func.getLoc();
    auto i64Scalar = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
    unsigned next = func.getNumArguments();
    func.insertArgument(next, i64Scalar, named("input", "step"), loc);
    Value step = func.getArgument(next++);
    SmallVector<std::pair<Value, Value>> moments;
    for (const Update &u : updates) {
      func.insertArgument(next, u.param.getType(), named("input", names::adamM(u.name)), loc);
      Value m = func.getArgument(next++);
      func.insertArgument(next, u.param.getType(), named("input", names::adamV(u.name)), loc);
      Value v = func.getArgument(next++);
      moments.push_back({m, v});
    }

    // lr, global norm, one update per parameter.
    OpBuilder b(ret);
    auto decayKind = decay == "cos" ? LRDecay::cos : LRDecay::poly;
    Value lr = b.create<LRScheduleOp>(
        loc, f32Scalar, step, LRDecayAttr::get(ctx, decayKind),
        b.getF64FloatAttr(learningRate), b.getI64IntegerAttr(warmupSteps),
        b.getI64IntegerAttr(trainSteps), b.getF64FloatAttr(minLrRatio));
    SmallVector<Value> allGrads;
    for (const Update &u : updates)
      allGrads.push_back(u.grad);
    Value norm = b.create<GlobalNormOp>(loc, f32Scalar, allGrads);
    // The official code uses Adam with bias correction without weight decay
    // and AdamWeightDecayOptimizer (no bias correction) with it.
    bool decoupled = weightDecay > 0.0;
    SmallVector<Value> newResults;
    SmallVector<std::string> newNames;
    for (auto [u, mv] : llvm::zip(updates, moments)) {
      double wd = decoupled && !isExcludedFromWeightDecay(u.name) ? double(weightDecay) : 0.0;
      Type t = u.param.getType();
      auto up = b.create<AdamUpdateOp>(
          loc, TypeRange{t, t, t}, u.param, u.grad, mv.first, mv.second, lr,
          norm, step, b.getF64FloatAttr(0.9), b.getF64FloatAttr(0.999),
          b.getF64FloatAttr(adamEpsilon), b.getF64FloatAttr(clip),
          b.getF64FloatAttr(wd), decoupled ? UnitAttr() : b.getUnitAttr());
      newResults.append({up.getNewParam(), up.getNewM(), up.getNewV()});
      newNames.append({names::updated(u.name), names::updated(names::adamM(u.name)),
                        names::updated(names::adamV(u.name))});
    }
    newResults.append({lr, norm});
    newNames.append({"lr", "grad_norm"});

    // Replace the gradient results by the updated state (add it beside
    // them with keep-gradients).
    if (keepGradients)
      gradResults.reset();
    SmallVector<Value> results;
    for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
      if (!gradResults.test(i))
        results.push_back(ret.getOperand(i));
    func.eraseResults(gradResults);
    for (auto [value, name] : llvm::zip(newResults, newNames)) {
      func.insertResult(func.getNumResults(), value.getType(), named("output", name));
      results.push_back(value);
    }
    ret->setOperands(results);
  }
};

} // namespace
