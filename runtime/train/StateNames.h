//===- StateNames.h - The names of a training step's state ------*- C++ -*-===//
//
// A training step (docs/Plan.md "train") reads the parameters, their Adam
// moments and the per-layer memory by name and returns their next values
// under names of their own. These are those names, in one place: the
// compiler's passes that make the step (ApplyOptimizer, the module builder)
// and everything that binds it (the trainer, the benchmarks) spell them from
// here. Header-only, so the compiler includes it without linking the
// runtime.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_STATENAMES_H
#define XLNETC_RUNTIME_TRAIN_STATENAMES_H

#include <cstdint>
#include <string>
#include <string_view>

namespace xlnetc::rt::train::names {

inline constexpr std::string_view kAdamM = "adam_m.";
inline constexpr std::string_view kAdamV = "adam_v.";
inline constexpr std::string_view kUpdated = "new.";
inline constexpr std::string_view kMems = "mems.";
inline constexpr std::string_view kNewMems = "new_mems.";

/// "adam_m.<param>", "adam_v.<param>": the moments of a parameter.
inline std::string adamM(std::string_view param) { return std::string(kAdamM) + std::string(param); }
inline std::string adamV(std::string_view param) { return std::string(kAdamV) + std::string(param); }
/// "new.<name>": the value of state `name` after the step (a parameter or
/// a moment: "new.adam_m.<param>").
inline std::string updated(std::string_view name) {
  return std::string(kUpdated) + std::string(name);
}
/// "mems.<layer>" (an input) and "new_mems.<layer>" (its next value).
inline std::string mems(int64_t layer) { return std::string(kMems) + std::to_string(layer); }
inline std::string newMems(int64_t layer) {
  return std::string(kNewMems) + std::to_string(layer);
}
inline constexpr std::string_view kGrad = "grad.";
inline constexpr std::string_view kGradAcc = "grad_acc.";
/// Gradient accumulation (docs/Training.md): "grad.<param>" (a step's
/// gradient, the accumulated one in a micro-batch step), "grad_acc.<param>"
/// (the sum over the step's earlier micro-batches, an input) and
/// "loss_count" (the predicted tokens of all of them, an input).
inline std::string grad(std::string_view param) { return std::string(kGrad) + std::string(param); }
inline std::string gradAcc(std::string_view param) {
  return std::string(kGradAcc) + std::string(param);
}
inline constexpr std::string_view kLossCount = "loss_count";
/// Whether `name` starts with `prefix`.
inline bool hasPrefix(std::string_view name, std::string_view prefix) {
  return name.substr(0, prefix.size()) == prefix;
}

} // namespace xlnetc::rt::train::names

#endif // XLNETC_RUNTIME_TRAIN_STATENAMES_H
