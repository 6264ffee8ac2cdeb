//===- PlanEmitter.cpp - kernel-level xlnet IR to a plan ------------------===//

#include "passes/Target/Plan/PlanEmitter.h"

#include "passes/Passes.h"

#include "dialect/XLNet/XLNetOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <string_view>

using namespace mlir;
using namespace mlir::xlnet;
namespace json = llvm::json;

namespace {

//===----------------------------------------------------------------------===//
// The reader's tables. runtime/plan/PlanOps.def and runtime/plan/PlanAttrs.def are
// header-only X-macros: the writer checks itself against them, at compile
// time for the op names and the attribute keys (PLAN_KEY), and again at
// emission for every step.
//===----------------------------------------------------------------------===//

enum class PlanOp {
#define XLNETC_PLAN_OP(Kind, name, minIn, maxIn, minOut, maxOut, initOutputs) Kind,
#include "runtime/plan/PlanOps.def"
};
constexpr std::string_view kPlanOpNames[] = {
#define XLNETC_PLAN_OP(Kind, name, minIn, maxIn, minOut, maxOut, initOutputs) name,
#include "runtime/plan/PlanOps.def"
};
struct PlanAttrRow {
  PlanOp op;
  std::string_view key;
};
constexpr PlanAttrRow kPlanAttrs[] = {
#define XLNETC_PLAN_ATTR(Kind, key, field, Type, Presence) {PlanOp::Kind, key},
#include "runtime/plan/PlanAttrs.def"
};

/// The dialect's ops (TableGen's list), asked by plan name ("gemm").
template <typename... Ops> struct DialectOps {
  static constexpr bool has(std::string_view planName) {
    return (is(Ops::getOperationName().data(), Ops::getOperationName().size(), planName) ||
            ...);
  }
  static constexpr bool is(const char *data, size_t size, std::string_view planName) {
    std::string_view name(data, size);
    return name.substr(0, 6) == "xlnet." && name.substr(6) == planName;
  }
};
using XLNetDialectOps = DialectOps<
#define GET_OP_LIST
#include "dialect/XLNet/XLNetOps.cpp.inc"
    >;

/// A plan op without a kernel-level op of the same name cannot be written:
/// a compile error here, naming the row.
#define XLNETC_PLAN_OP(Kind, name, minIn, maxIn, minOut, maxOut, initOutputs)          \
  static_assert(XLNetDialectOps::has(name),                                              \
                "runtime/plan/PlanOps.def row '" name "' has no op xlnet." name);
#include "runtime/plan/PlanOps.def"

/// Whether the reader's table lists attribute `key` for `op`.
constexpr bool tableLists(PlanOp op, std::string_view key) {
  for (const PlanAttrRow &row : kPlanAttrs)
    if (row.op == op && row.key == key)
      return true;
  return false;
}

/// The attribute key `key` of plan op `Kind`, checked against
/// runtime/plan/PlanAttrs.def when this file compiles: a key the reader
/// does not take for that op is a compile error naming both.
#define PLAN_KEY(Kind, key)                                                                \
  ([] {                                                                                    \
    static_assert(tableLists(PlanOp::Kind, key),                                           \
                  "runtime/plan/PlanAttrs.def lists no attribute '" key "' for " #Kind);  \
    return key;                                                                            \
  }())

/// Whether `key` is an attribute the plan reader takes for op `name`.
bool readerTakes(StringRef name, StringRef key) {
  for (auto [i, opName] : llvm::enumerate(kPlanOpNames))
    if (opName == std::string_view(name))
      return llvm::any_of(kPlanAttrs, [&](const PlanAttrRow &row) {
        return row.op == PlanOp(i) && row.key == std::string_view(key);
      });
  return false;
}

/// Whether the plan reader knows op `name`.
bool isPlanOp(StringRef name) {
  return llvm::is_contained(kPlanOpNames, std::string_view(name));
}

/// Plan dtype name of a tensor element type, or "" if unsupported.
StringRef dtypeName(Type type) {
  if (type.isF32())
    return "f32";
  if (type.isBF16())
    return "bf16";
  if (type.isInteger(64))
    return "i64";
  if (type.isInteger(1))
    return "bool";
  return "";
}

/// The dropout site of an op that draws random numbers: its `site`
/// attribute (set by --xlnet-differentiate, shared by a forward op and its
/// backward) or else the next number of `counter`.
int64_t siteOf(IntegerAttr site, int64_t &counter) {
  return site ? site.getInt() : counter++;
}

/// Kernel-specific attributes of a step, or std::nullopt if `op` is not a
/// kernel-level op. `site` numbers the random ops without a site attribute.
std::optional<json::Object> stepAttrs(Operation *op, int64_t &site) {
  using Result = std::optional<json::Object>;
  auto relAttention = [&](auto o) {
    return json::Object{{PLAN_KEY(RelAttention, "scale"), o.getScale().convertToDouble()},
                        {PLAN_KEY(RelAttention, "dropatt"), o.getDropatt().convertToDouble()},
                        {PLAN_KEY(RelAttention, "dropout_site"), siteOf(o.getSiteAttr(), site)}};
  };
  auto gemmShape = [](auto o) {
    return json::Object{{PLAN_KEY(Gemm, "k_rank"), o.getKRankAttr().getInt()},
                        {PLAN_KEY(Gemm, "transpose_w"), o.getTransposeW()}};
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case<EmbeddingOp, MaskEmbeddingOp, TargetPositionsOp, MemConcatOp,
            LMLossOp, EmbeddingGradOp, MaskEmbeddingGradOp, MemConcatGradOp,
            BiasGradOp, LMLossGradOp, AddOp, CastOp, GlobalNormOp>(
          [](auto) { return json::Object{}; })
      .Case([](RelPosEncodingOp o) {
        return json::Object{{PLAN_KEY(RelPosEncoding, "klen"), o.getKlenAttr().getInt()},
                            {PLAN_KEY(RelPosEncoding, "qlen"), o.getQlenAttr().getInt()},
                            {PLAN_KEY(RelPosEncoding, "clamp_len"), o.getClampLenAttr().getInt()},
                            {PLAN_KEY(RelPosEncoding, "bi_data"), o.getBiData()}};
      })
      .Case([](RelSegmentOp o) { return json::Object{{PLAN_KEY(RelSegment, "mlen"), o.getMlenAttr().getInt()}}; })
      .Case([](AttnMaskOp o) {
        return json::Object{{PLAN_KEY(AttnMask, "mlen"), o.getMlenAttr().getInt()},
                            {PLAN_KEY(AttnMask, "stream"), stringifyStream(o.getStream()).str()}};
      })
      .Case([](MemCacheOp o) {
        return json::Object{{PLAN_KEY(MemCache, "reuse_len"), o.getReuseLenAttr().getInt()},
                            {PLAN_KEY(MemCache, "mem_len"), o.getMemLenAttr().getInt()}};
      })
      .Case([&](GemmOp o) {
        json::Object attrs = gemmShape(o);
        attrs[PLAN_KEY(Gemm, "activation")] = stringifyActivation(o.getActivation()).str();
        if (o.getActivationGrad() != Activation::none)
          attrs[PLAN_KEY(Gemm, "activation_grad")] = stringifyActivation(o.getActivationGrad()).str();
        return attrs;
      })
      .Case([&](GemmWGradOp o) { return gemmShape(o); })
      .Case<ActivationOp, ActivationGradOp>([](auto o) {
        return json::Object{
            {PLAN_KEY(ActivationOp, "activation"), stringifyActivation(o.getActivation()).str()}};
      })
      .Case<RelAttentionOp, RelAttentionGradOp>(relAttention)
      .Case<AddLayerNormOp, AddLayerNormGradOp>([](auto o) {
        json::Object attrs{{PLAN_KEY(AddLayerNormGrad, "eps"), o.getEps().convertToDouble()}};
        // The fused dropouts (docs/Plan.md "Fused forms").
        if (o.getXDropoutAttr()) {
          attrs[PLAN_KEY(AddLayerNormGrad, "x_dropout_rate")] = o.getXDropoutAttr().getValueAsDouble();
          attrs[PLAN_KEY(AddLayerNormGrad, "x_dropout_site")] = o.getXDropoutSiteAttr().getInt();
        }
        if constexpr (std::is_same_v<decltype(o), AddLayerNormGradOp>)
          if (o.getDsumDropoutAttr()) {
            attrs[PLAN_KEY(AddLayerNormGrad, "dsum_dropout_rate")] = o.getDsumDropoutAttr().getValueAsDouble();
            attrs[PLAN_KEY(AddLayerNormGrad, "dsum_dropout_site")] = o.getDsumDropoutSiteAttr().getInt();
          }
        return attrs;
      })
      .Case([&](DropoutOp o) {
        json::Object attrs{{PLAN_KEY(Dropout, "rate"), o.getRate().convertToDouble()},
                           {PLAN_KEY(Dropout, "dropout_site"), siteOf(o.getSiteAttr(), site)}};
        if (o.getBatchShared())
          attrs[PLAN_KEY(Dropout, "batch_shared")] = true;
        return attrs;
      })
      .Case([](LRScheduleOp o) {
        return json::Object{
            {PLAN_KEY(LrSchedule, "decay"), stringifyLRDecay(o.getDecay()).str()},
            {PLAN_KEY(LrSchedule, "learning_rate"), o.getLearningRate().convertToDouble()},
            {PLAN_KEY(LrSchedule, "warmup_steps"), o.getWarmupStepsAttr().getInt()},
            {PLAN_KEY(LrSchedule, "train_steps"), o.getTrainStepsAttr().getInt()},
            {PLAN_KEY(LrSchedule, "min_lr_ratio"), o.getMinLrRatio().convertToDouble()}};
      })
      .Case([](AdamUpdateOp o) {
        return json::Object{{PLAN_KEY(AdamUpdate, "beta1"), o.getBeta1().convertToDouble()},
                            {PLAN_KEY(AdamUpdate, "beta2"), o.getBeta2().convertToDouble()},
                            {PLAN_KEY(AdamUpdate, "epsilon"), o.getEpsilon().convertToDouble()},
                            {PLAN_KEY(AdamUpdate, "clip"), o.getClip().convertToDouble()},
                            {PLAN_KEY(AdamUpdate, "weight_decay"), o.getWeightDecay().convertToDouble()},
                            {PLAN_KEY(AdamUpdate, "bias_correction"), o.getBiasCorrection()}};
      })
      .Default([](Operation *) { return Result(); });
}

/// The init operands of a fused op (--xlnet-fuse-kernels) by the result
/// they start: a plan step's `init` (docs/Plan.md "Fused forms").
SmallVector<std::pair<unsigned, OpOperand *>> initsOf(Operation *op) {
  SmallVector<std::pair<unsigned, OpOperand *>> inits;
  auto single = [&](auto o) {
    if (o.getInit())
      inits.push_back({0, &o.getInitMutable()[0]});
  };
  auto multi = [&](auto o) {
    for (auto [r, operand] : llvm::zip(o.getInitResults(), o.getInitsMutable()))
      inits.push_back({unsigned(r), &operand});
  };
  llvm::TypeSwitch<Operation *>(op)
      .Case<GemmOp, GemmWGradOp, BiasGradOp, EmbeddingGradOp, MemConcatGradOp>(single)
      .Case<AddLayerNormGradOp, RelAttentionGradOp>(multi);
  return inits;
}

/// "layer.3" for ops of a layer, "file:line:col" for the rest.
std::string locString(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}", file.getFilename(), file.getLine(),
                         file.getColumn())
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// Assigns buffer ids and collects the JSON of buffers and steps.
class PlanBuilder {
public:
  explicit PlanBuilder(int64_t firstFreeSite) : dropoutSite(firstFreeSite) {}

  LogicalResult addArgument(func::FuncOp func, BlockArgument arg) {
    unsigned i = arg.getArgNumber();
    for (StringRef role : {"input", "param"})
      if (auto name = func.getArgAttrOfType<StringAttr>(i, ("xlnet." + role).str()))
        return addBuffer(arg, role, name.getValue(), func);
    return func.emitOpError() << "argument #" << i
                              << " has neither an xlnet.input nor an "
                                 "xlnet.param name";
  }

  LogicalResult addStep(Operation *op) {
    std::optional<json::Object> attrs = stepAttrs(op, dropoutSite);
    if (!attrs)
      return op->emitOpError()
             << "is not a kernel-level op; run the lowering pipeline "
                "(--xlnet-lower) before emitting a plan";
    // The writer and the reader agree on names (the reader's tables).
    StringRef name = op->getName().stripDialect();
    if (!isPlanOp(name))
      return op->emitOpError() << "has no row in runtime/plan/PlanOps.def; the runtime "
                                  "cannot read it (docs/AddingAnOp.md)";
    for (const auto &[key, value] : *attrs)
      if (!readerTakes(name, key))
        return op->emitOpError() << "writes attribute '" << key.str()
                                 << "' that runtime/plan/PlanAttrs.def does not list for "
                                 << name << " (docs/AddingAnOp.md)";
    // JSON has no inf or NaN (a plan with them would not parse), and no
    // step means them: refuse, naming the attribute.
    for (const auto &[key, value] : *attrs)
      if (std::optional<double> v = value.getAsNumber(); v && !std::isfinite(*v))
        return op->emitOpError() << "attribute '" << key.str() << "' is " << *v
                                 << "; a plan holds finite numbers only";
    // Inits are their own list, one entry per result (-1: none).
    SmallVector<std::pair<unsigned, OpOperand *>> inits = initsOf(op);
    json::Array in, out, init;
    for (OpOperand &operand : op->getOpOperands())
      if (llvm::none_of(inits, [&](auto &i) { return i.second == &operand; }))
        in.push_back(ids.lookup(operand.get()));
    for (Value result : op->getResults()) {
      if (failed(addBuffer(result, "temp", "", op)))
        return failure();
      out.push_back(ids.lookup(result));
      init.push_back(int64_t(-1));
    }
    for (auto [result, operand] : inits)
      init[result] = ids.lookup(operand->get());
    json::Object step{{"op", name.str()},
                      {"in", std::move(in)},
                      {"out", std::move(out)},
                      {"attrs", std::move(*attrs)},
                      {"loc", locString(op->getLoc())}};
    if (!inits.empty())
      step["init"] = std::move(init);
    steps.push_back(std::move(step));
    return success();
  }

  void addOutput(Value value, StringRef name) { outputs[ids.lookup(value)].push_back(name.str()); }

  json::Value finish(StringRef function) {
    json::Array bufferArray;
    for (auto [id, buffer] : llvm::enumerate(buffers)) {
      if (auto it = outputs.find(id); it != outputs.end())
        buffer["outputs"] = json::Array(it->second);
      bufferArray.push_back(std::move(buffer));
    }
    return json::Object{{"format", "xlnetc-plan"},
                        {"version", kPlanVersion},
                        {"function", function.str()},
                        {"buffers", std::move(bufferArray)},
                        {"steps", std::move(steps)}};
  }

private:
  LogicalResult addBuffer(Value value, StringRef role, StringRef name,
                          Operation *where) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape() || dtypeName(type.getElementType()).empty())
      return where->emitOpError()
             << "plan buffers must be static tensors of f32, bf16, i64 or i1, got "
             << value.getType();
    int64_t id = buffers.size();
    ids[value] = id;
    json::Object buffer{{"id", id},
                        {"dtype", dtypeName(type.getElementType()).str()},
                        {"shape", json::Array(type.getShape())},
                        {"role", role.str()}};
    if (!name.empty())
      buffer["name"] = name.str();
    buffers.push_back(std::move(buffer));
    return success();
  }

  llvm::DenseMap<Value, int64_t> ids;
  std::vector<json::Object> buffers;
  llvm::DenseMap<int64_t, std::vector<std::string>> outputs;
  json::Array steps;
  int64_t dropoutSite;
};

} // namespace

LogicalResult mlir::xlnet::emitPlan(func::FuncOp func, llvm::raw_ostream &os) {
  // Random ops without a site are numbered after the largest explicit one.
  PlanBuilder plan(firstFreeSite(func));
  for (BlockArgument arg : func.getArguments())
    if (failed(plan.addArgument(func, arg)))
      return failure();
  for (Operation &op : func.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
        auto name = func.getResultAttrOfType<StringAttr>(i, "xlnet.output");
        if (!name)
          return func.emitOpError() << "result #" << i << " has no xlnet.output name";
        plan.addOutput(value, name.getValue());
      }
      continue;
    }
    if (failed(plan.addStep(&op)))
      return failure();
  }
  os << llvm::formatv("{0:2}", plan.finish(func.getSymName())) << "\n";
  return success();
}
