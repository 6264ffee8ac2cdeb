//===- MemoryCheck.h - Will a step fit? ------------------------*- C++ -*-===//
//
// What one step of a plan holds at once, from its memory plan (MemoryPlan.h),
// and what the machine has: the host's available RAM or the GPU's free
// memory. Commands compare the two before they allocate anything large, so
// a step that cannot fit is refused with one line rather than an abort or a
// machine-wide out-of-memory (docs/Devices.md "Will it fit?").
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_EXEC_MEMORYCHECK_H
#define XLNETC_RUNTIME_EXEC_MEMORYCHECK_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>

namespace xlnetc::rt {

struct Plan;
class Executor;

/// The bytes one step holds at once, split into what the model's size
/// drives and what the batch drives.
struct StepMemoryNeed {
  /// Parameters and Adam's moments (n_token, d_model, d_inner, n_layer).
  int64_t stateBytes = 0;
  /// Everything else: the batch, the memory, activations, gradients,
  /// outputs and scratch.
  int64_t stepBytes = 0;
  int64_t total() const { return stateBytes + stepBytes; }
};

/// Which memory a step's need is counted in.
enum class StepMemory {
  /// Host RAM, for the host executor: its inputs, its arena (planned from
  /// the plan's steps) and the outputs it returns in tensors of their own.
  HostExecutor,
  /// Host RAM, for the emulated device: the device program's memory plan
  /// (the plan must carry the program) and the outputs' copies back.
  EmulatedDevice,
  /// GPU memory: the device program's memory plan alone.
  Gpu,
};

/// The need of one step of `plan` in `where`. `keepsCopy`: the caller also
/// holds one more copy of the parameters and moments at times, in host RAM
/// (train's checkpoint snapshot); it does not count on a GPU.
StepMemoryNeed stepMemoryNeed(const Plan &plan, StepMemory where, bool keepsCopy);

/// What the machine has for the step of `executor`: the host's available
/// RAM (MemAvailable, lowered to the cgroup's limit less its use in a
/// container) for the host executor and the emulated device, the GPU's free
/// memory for cuda. `what` completes "<bytes> ..." in a message ("of RAM is
/// available", "is free on the GPU").
Status memoryAvailable(Executor &executor, int64_t &bytes, std::string &what);

/// The host's available RAM, as above.
Status hostMemoryAvailable(int64_t &bytes);

/// "512 B", "1.5 KiB", "2.81 TiB".
std::string formatBytes(int64_t bytes);

/// Parses a size such as "16G", "512M", "1.5GiB" or "1000000" (bytes; K, M,
/// G, T are powers of 1024, with or without "iB" or "B").
Status parseByteSize(const std::string &text, int64_t &bytes);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_EXEC_MEMORYCHECK_H
