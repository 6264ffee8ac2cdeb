//===- DeviceProgram.h - A plan's kernels and launches ----------*- C++ -*-===//
//
// What the CUDA C++ emitter (target/cuda/CudaEmitter.h) makes of a
// plan and the CUDA executor (DeviceExecutor.h) runs: one translation unit of
// generated kernels plus, for every plan step, the launches that compute it,
// everything resolved at compile time (template shapes, launch geometry,
// workspace, GEMM descriptors). The executor only binds addresses: buffers,
// the step's workspace, its status words, the step seed and the device tables
// of the multi-tensor ops. docs/Devices.md "The device program".
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_DEVICEPROGRAM_H
#define XLNETC_RUNTIME_PLAN_DEVICEPROGRAM_H

#include "runtime/plan/MemoryPlan.h"
#include "runtime/device/Gemm.h"

#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt {

/// One parameter of a generated kernel, in the kernel's parameter order.
struct KernelArg {
  enum Kind {
    Buffer,    ///< the address of plan buffer `index`
    Null,      ///< a null pointer (an absent optional operand)
    Workspace, ///< the step's workspace + `offset` bytes
    Status,    ///< the step's status words (XL_STATUS_WORDS ints)
    Seed,      ///< the address of the step's seed and rows (an XlStepRandom,
               ///< host StepRandomRecord, in device memory, written before
               ///< every step)
    Table,     ///< the device copy of table `index` of the program
    Immediate, ///< the 64-bit integer `value` (a dropout site)
  };
  Kind kind = Buffer;
  int index = -1;
  /// Workspace: the byte offset; Immediate: the value.
  int64_t value = 0;
};

/// XL_STATUS_WORDS of xlnetc_k_common.cuh: the ints of one step's status.
constexpr int kStatusWords = 5;
/// Bytes of one XlNormEntry / XlAdamEntry (xlnetc_k_optim.cuh).
constexpr int64_t kNormEntryBytes = 24, kAdamEntryBytes = 80;

/// A multi-tensor table (xlnetc_k_optim.cuh XlNormEntry / XlAdamEntry): the
/// executor fills in the addresses of each entry's buffers and uploads it.
struct DeviceTable {
  enum Kind {
    Norm, ///< buffers: {data}
    Adam, ///< buffers: {param, grad, m, v, param_out, m_out, v_out}
  };
  /// An Adam entry's first output buffer (param_out; m_out, v_out follow).
  static constexpr size_t kAdamFirstOutput = 4;
  struct Entry {
    std::vector<int> buffers;
    int64_t count = 0;      ///< elements
    int64_t chunkBegin = 0; ///< its first chunk
    bool decay = false;     ///< Adam: apply the weight decay
  };
  Kind kind = Norm;
  std::vector<Entry> entries;
};

/// One launch: a generated kernel, or a GEMM with cuBLASLt's semantics.
struct DeviceLaunch {
  enum Kind { Kernel, Gemm };
  Kind kind = Kernel;
  // Kernel
  std::string kernel; ///< the exported wrapper's name
  uint32_t grid = 1, block = 1;
  uint32_t dynSmem = 0; ///< bytes of dynamic shared memory
  std::vector<KernelArg> args;
  // Gemm: operands are plan buffers (-1: absent). C is read when the
  // descriptor's beta is not 0: buffer `c`, or D itself when c is -1.
  dev::GemmDesc gemm;
  int a = -1, b = -1, bias = -1, d = -1, aux = -1, c = -1;
  /// A GEMM that does the products of several plan steps as one batched
  /// call (the emitter's batched projections): the A and D buffers of batch
  /// entries 1, 2, ... (entry 0 is `a`, `d`). They lie gemm.strideA and
  /// gemm.strideC elements after the previous entry's — parameters side by
  /// side in the input block, temps side by side in a DeviceProgram group —
  /// and B is shared (strideB 0). Empty for a plain GEMM.
  std::vector<std::pair<int, int>> batchMembers;
};

/// The launches of one plan step. A step whose work another step's launch
/// does (the members of a multi-tensor adam_update after the first) has none.
struct DeviceStep {
  std::vector<DeviceLaunch> launches;
  int64_t workspaceBytes = 0; ///< scratch the launches share
  bool status = false;        ///< whether a launch can report a data error
};

/// A fresh, process-wide identity for a device program (never 0).
inline uint64_t newDeviceProgramId() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

/// A plan's device program; `steps` is parallel to the plan's steps.
struct DeviceProgram {
  /// Which program this is (newDeviceProgramId, set by whoever builds it;
  /// 0: unknown): the executor keeps a program's memory and graph for its
  /// next step only while the ids match.
  uint64_t id = 0;
  std::string moduleName; ///< e.g. "xlnet-train.cu" (messages, cache)
  std::string source;     ///< the generated CUDA C++ (includes the prelude)
  /// SHA-256 of `source` (hex), set by the emitter: the executor keys its
  /// loaded modules by it without hashing the source on every step.
  std::string sourceDigest;
  /// The emitter's pieces of `source`: the head (header comment and
  /// #includes) and each kernel's wrapper, so a kernel compiles alone
  /// (sourceHead + its wrapper: a bundle's per-kernel CUBINs). Not stored
  /// in a bundle's program.json.
  std::string sourceHead;
  std::vector<std::pair<std::string, std::string>> kernelSources;
  /// CUBINs compiled ahead of time for `cubinArch`, by kernel name (a
  /// bundle's; docs/Bundles.md): on a device of that architecture the
  /// executor loads them instead of compiling `source`.
  std::string cubinArch;
  std::map<std::string, std::string> cubins;
  std::vector<DeviceStep> steps;
  std::vector<DeviceTable> tables;
  /// Outputs written in place of an input: (output buffer, input buffer)
  /// pairs whose output has the input's memory, not its own — the
  /// optimizer's new parameters and moments over the old ones, when the
  /// update is the last step to read them (docs/Devices.md "In-place
  /// optimizer state"). Such an output takes no arena memory, is not zeroed,
  /// and a carry from it to its input copies nothing.
  std::vector<std::pair<int, int>> inPlace;
  /// Temps the memory plan places side by side, each group in its order
  /// (every member 256-byte aligned, no gap beyond the alignment) and alive
  /// as long as any member: the A or D operands of a batched GEMM.
  std::vector<std::vector<int>> groups;
  /// The arena of the plan's temps (planMemory, run by the emitter).
  MemoryPlan memory;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PLAN_DEVICEPROGRAM_H
