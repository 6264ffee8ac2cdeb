//===- StepShape.h - The shapes of one compiled step -------------*- C++ -*-===//
//
// What a step is compiled for besides the model: batch, sequence and memory
// lengths, prediction slots, the form of the permutation mask and the
// precision. No MLIR:
// the compiler, the runtime-only runner and bundles share it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_SPEC_STEPSHAPE_H
#define XLNETC_XLNETC_SPEC_STEPSHAPE_H

#include "xlnetc/Spec/Spec.h"

#include <cstdint>
#include <optional>
#include <string>

namespace xlnetc {

/// The storage of activations (--precision, [train] precision): fp32, or bf16
/// mixed precision (--xlnet-mixed-precision; parameters, gradients,
/// optimizer state and losses stay f32).
enum class Precision { FP32, BF16 };

/// "fp32" or "bf16".
inline const char *precisionName(Precision p) {
  return p == Precision::BF16 ? "bf16" : "fp32";
}

/// Parses "fp32" or "bf16".
inline std::optional<Precision> parsePrecision(const std::string &name) {
  if (name == "fp32")
    return Precision::FP32;
  if (name == "bf16")
    return Precision::BF16;
  return std::nullopt;
}

/// The shapes of one step: they come from the spec ([data], [train]) or
/// from a batch file.
struct StepShape {
  int64_t batch = 0;      ///< B
  int64_t seqLen = 0;     ///< S (qlen)
  int64_t numPredict = 0; ///< NP
  int64_t mlen = 0;       ///< incoming memory length M (0: no memory)
  int64_t reuseLen = 0;   ///< cached prefix of the segment (0: all of it)
  /// The step reads perm_bits (a perm_mask without ranks) instead of
  /// perm_rank (runtime/PermMask.h).
  bool permBits = false;
  /// What the plan stores activations in (not part of specFingerprint: the
  /// parameters and checkpoints are f32 whatever the precision).
  Precision precision = Precision::FP32;
  /// grads and train steps: one micro-batch of gradient accumulation
  /// (--xlnet-accumulate-gradients: inputs loss_count and grad_acc.<param>,
  /// the accumulated grad.<param> returned; docs/Training.md "Gradient
  /// accumulation").
  bool accumulate = false;
};

/// Which step the plan computes.
enum class StepKind {
  Forward, ///< loss, logits, hidden, new_mems
  Grads,   ///< + grad.<param> for every parameter
  Train,   ///< + the Adam update: new.<param>, new.adam_{m,v}.<param>, lr, grad_norm
};

/// The plan spelling of a step kind: "forward", "grads", "train".
inline const char *stepKindName(StepKind k) {
  return k == StepKind::Train ? "train" : k == StepKind::Grads ? "grads" : "forward";
}

/// Parses a step kind's spelling (a `--step=` value, a bundle's step).
inline std::optional<StepKind> parseStepKind(const std::string &name) {
  if (name == "forward")
    return StepKind::Forward;
  if (name == "grads")
    return StepKind::Grads;
  if (name == "train")
    return StepKind::Train;
  return std::nullopt;
}

/// The step shape a spec implies: batch train_batch_size, mlen = mem_len
/// (the steady state: training starts from zero mems of length mem_len).
inline StepShape stepShapeFromSpec(const ModelSpec &spec) {
  StepShape s;
  s.batch = spec.trainBatchSize;
  s.seqLen = spec.seqLen;
  s.numPredict = spec.numPredict;
  s.mlen = spec.memLen;
  s.reuseLen = spec.reuseLen;
  s.precision = parsePrecision(spec.precision).value_or(Precision::FP32);
  return s;
}

/// Bytes of the Transformer-XL memory of `rows` rows (mem_len × rows ×
/// d_model × n_layer, f32): what gradient accumulation sets aside between
/// the micro-batches' runs.
inline int64_t memoryBytesOfRows(const ModelSpec &spec, int64_t rows) {
  return spec.memLen * rows * spec.dModel * spec.nLayer * int64_t(sizeof(float));
}

/// What a checkpoint or a bundle must match: the model and the step shapes
/// (the compiled plan's buffers depend on exactly these), as one line.
std::string specFingerprint(const ModelSpec &spec, const StepShape &shape);

} // namespace xlnetc

#endif // XLNETC_XLNETC_SPEC_STEPSHAPE_H
