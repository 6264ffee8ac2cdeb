//===- MemoryPlan.h - One arena for a step's temporaries ---------*- C++ -*-===//
//
// The memory-plan pass (docs/Devices.md "Memory plan"): every temporary
// buffer of a plan gets an offset in one arena from its liveness, so that
// buffers whose lifetimes do not overlap share memory; and the step's device
// bytes are counted by category (parameters, optimizer state, the batch and
// the memory, activations kept for the backward, workspace). The lifetimes
// come from what each step touches in the device program (a fused GEMM
// epilogue writes a buffer at an earlier step than the plan's own step
// does), and the plan's steps.
//
// Placement: greedy by size (largest first, each at the lowest offset where
// it fits beside the already placed buffers whose lifetimes overlap its
// own), 256-byte aligned; a program's group of temps is placed as one
// buffer. Inputs and parameters get one block of their own. No MLIR: the compiler prints it
// (`xlnetc compile --emit=memory`) and the device executor allocates it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_MEMORYPLAN_H
#define XLNETC_RUNTIME_PLAN_MEMORYPLAN_H

#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc::rt {

struct Buffer;
struct Plan;
struct DeviceProgram;

struct MemoryPlan {
  static constexpr int64_t kAlign = 256;

  /// Per buffer id: the arena offset of a temp (-1 for inputs and params).
  std::vector<int64_t> offset;
  /// Per buffer id: the offset of an input or parameter in the input block
  /// (-1 for temps): one allocation holding the parameters, then the
  /// optimizer state, then the other inputs, each part in buffer order,
  /// 256-byte aligned (planInputBlock) — the contiguous parameter block.
  std::vector<int64_t> inputOffset;
  int64_t inputBlockBytes = 0;
  /// Per step: the temps whose lifetime starts there (the first step that
  /// touches them, which writes them; the executor zeroes them just before
  /// the step, as the host executor hands kernels zeroed temps).
  std::vector<std::vector<int>> firstTouched;
  int64_t arenaBytes = 0;

  // The step's device bytes by category.
  int64_t parameterBytes = 0; ///< role param (the model's weights)
  int64_t optimizerBytes = 0; ///< inputs adam_m.* and adam_v.*
  int64_t inputBytes = 0;     ///< the other inputs: batch, mems, step
  /// Temps written before the backward starts (the first lm_loss_grad
  /// step) and read at or after it: the activations kept for the
  /// backward (0 in a forward step).
  int64_t keptForBackwardBytes = 0;
  /// Temps returned to the caller (new mems, the loss...; not the new
  /// parameters and moments a program writes over the old ones): live until
  /// the step's end.
  int64_t outputBytes = 0;
  /// The largest sum of live temps over the steps: no arena is smaller.
  int64_t peakLiveBytes = 0;
  /// Scratch of the device program: the largest step workspace, the status
  /// words and the multi-tensor tables.
  int64_t workspaceBytes = 0;

  /// Everything the step holds on the device at once.
  int64_t totalBytes() const {
    return parameterBytes + optimizerBytes + inputBytes + arenaBytes + workspaceBytes;
  }
};

/// The bytes buffer `b` takes in the arena or the input block: its size (at
/// least 1), rounded up to MemoryPlan::kAlign. Members of a group lie this
/// far apart, which is the stride a batched GEMM over them uses.
int64_t memorySlotBytes(const Buffer &b);

/// The input block's layout alone (MemoryPlan::inputOffset): what the
/// emitter reads to batch GEMMs over parameters side by side. Returns its
/// size.
int64_t planInputBlock(const Plan &plan, std::vector<int64_t> &offset);

/// Plans the arena of `plan`'s temps; `program` (may be null: the plan's
/// steps alone) adds the buffers its launches touch, its groups and its
/// scratch.
MemoryPlan planMemory(const Plan &plan, const DeviceProgram *program);

/// The table `xlnetc compile --emit=memory` prints: bytes (and MiB) per
/// category, the arena against its lower bound, and per sequence (the
/// batch's rows) where `batchRows` > 0.
std::string formatMemoryPlan(const MemoryPlan &m, int64_t batchRows);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PLAN_MEMORYPLAN_H
