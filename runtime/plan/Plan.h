//===- Plan.h - The xlnetc execution plan (docs/Plan.md) -------*- C++ -*-===//
//
// In-memory form of the plan the compiler hands to the runtime: buffers and a
// sequence of steps, each one kernel or library call. parsePlan() reads the
// JSON text and checks everything docs/Plan.md states (format, version, ids,
// known ops, arities, attributes, dtype and shape rules, write-once temps), so
// an executor can trust a parsed plan. This header does not expose the JSON
// library: attributes are parsed into the typed StepAttrs.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_PLAN_H
#define XLNETC_RUNTIME_PLAN_PLAN_H

#include "runtime/plan/DeviceProgram.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt {

/// One buffer of the plan.
struct Buffer {
  enum Role { Input, Param, Temp };
  int id = 0;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Role role = Temp;
  /// Binding name for inputs and params (empty for temps).
  std::string name;
  /// Names under which the buffer is returned to the caller.
  std::vector<std::string> outputs;
};

/// The ops of docs/Plan.md, from the one table runtime/plan/PlanOps.def.
enum class OpKind {
#define XLNETC_PLAN_OP(Kind, name, minIn, maxIn, minOut, maxOut, initOutputs) Kind,
#include "runtime/plan/PlanOps.def"
};

/// The plan version this runtime reads (and the only one it accepts).
constexpr int kSupportedPlanVersion = 4;

/// Activation applied by a gemm step.
enum class Activation { None, Relu, GeluTanh, GeluErf };

/// Stream of an attn_mask step.
enum class MaskStream { Query, Content };

/// Decay of an lr_schedule step after warmup.
enum class LrDecay { Poly, Cos };

/// Attributes of a step; only the fields of the step's op are meaningful.
struct StepAttrs {
  // rel_pos_encoding
  int64_t klen = 0;
  int64_t qlen = 0;
  int64_t clampLen = 0;
  bool biData = false;
  // rel_segment, attn_mask
  int64_t mlen = 0;
  MaskStream stream = MaskStream::Query;
  // mem_cache
  int64_t reuseLen = 0;
  int64_t memLen = 0;
  // gemm, gemm_wgrad (k_rank, transpose_w); gemm, activation,
  // activation_grad (activation)
  int kRank = 1;
  bool transposeW = false;
  Activation activation = Activation::None;
  // gemm: the backward epilogue (docs/Plan.md "Fused forms"): gelu_tanh
  // reads the pre-activation as input 2 and returns the bias gradient as
  // output 1.
  Activation activationGrad = Activation::None;
  // rel_attention, rel_attention_grad
  double scale = 1.0;
  double dropatt = 0.0;
  // dropout
  double rate = 0.0;
  // dropout: x has no batch dimension (the relative positions): one mask
  // for every row; otherwise its outer dimension is the batch and the
  // mask's index counts global rows (docs/Plan.md "Step seed").
  bool batchShared = false;
  // dropout, rel_attention, rel_attention_grad
  int64_t dropoutSite = 0;
  // add_layer_norm, add_layer_norm_grad
  double eps = 1e-12;
  // add_layer_norm(_grad): x is dropped first (docs/Plan.md "Fused forms");
  // add_layer_norm_grad: output 3 is the dropout of output 0 (dsum).
  bool xDropout = false, dsumDropout = false;
  double xDropoutRate = 0.0, dsumDropoutRate = 0.0;
  int64_t xDropoutSite = 0, dsumDropoutSite = 0;
  // lr_schedule
  double learningRate = 0.0;
  int64_t warmupSteps = 0;
  int64_t trainSteps = 0;
  double minLrRatio = 0.0;
  LrDecay decay = LrDecay::Poly;
  // adam_update
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double clip = 0.0;
  double weightDecay = 0.0;
  bool biasCorrection = true;
};

/// One step of the plan.
struct Step {
  /// The op name as written in the plan ("gemm").
  std::string op;
  OpKind kind = OpKind::Gemm;
  std::vector<int> in;
  std::vector<int> out;
  /// Empty, or one entry per output: the buffer output k starts from
  /// (out[k] = init[k] + what the op computes), or -1 (docs/Plan.md "Fused
  /// forms"). A step reads its inits as it reads `in`.
  std::vector<int> init;
  StepAttrs attrs;

  /// The init of output `k`, or -1.
  int initOf(size_t k) const { return k < init.size() ? init[k] : -1; }
  /// Every buffer the step reads: `in`, then the inits.
  std::vector<int> reads() const;
  /// Free-form location (the MLIR location) for messages.
  std::string loc;
};

/// A parsed, verified plan.
struct Plan {
  int version = kSupportedPlanVersion;
  std::string function;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  /// The device program emitted for this plan (target/cuda), which
  /// the CUDA executor runs; null for a plan only the host executes.
  std::shared_ptr<const DeviceProgram> device;
};

/// Parses and verifies `jsonText`. Errors name the buffer or the step, e.g.
/// "step 12 (gemm, loc 'layer 0 q-proj'): input 1 (w) ...".
Status parsePlan(const std::string &jsonText, Plan &out);

/// The plan spelling of an op kind ("rel_attention").
const char *opName(OpKind kind);
/// The plan spelling of an activation ("gelu_tanh").
const char *activationName(Activation act);
/// The plan spelling of an lr_schedule decay ("poly", "cos").
const char *lrDecayName(LrDecay decay);
/// Whether output `out` of an op of `kind` may start from an init
/// (docs/Plan.md "Fused forms"; runtime/plan/PlanOps.def).
bool outputTakesInit(OpKind kind, size_t out);
/// The input that output `out` of `step` may be written over, or -1: where
/// the op reads each element before writing the same element (adam_update:
/// param, m and v become outputs 0, 1 and 2). The executors decide whether
/// to (nothing else may read the input afterwards); this is the op's rule.
int inPlaceInput(const Step &step, size_t out);
/// "step 12 (gemm, loc 'layer 0 q-proj'): ", the prefix of step messages.
std::string stepPrefix(size_t index, const Step &step);

/// Checks the dtype and shape rules of `step` against `plan.buffers` (called
/// by parsePlan; exposed for plans built in memory).
Status verifyStepTypes(const Plan &plan, const Step &step);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PLAN_PLAN_H
