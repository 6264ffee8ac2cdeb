//===- HostExecutor.h - Runs a plan on the CPU in fp32 ---------*- C++ -*-===//
//
// The reference executor: binds inputs and parameters by name, runs the steps
// in order with the kernels of runtime/host/Kernels.h and returns the buffers
// marked as outputs. The CUDA executor is checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_EXEC_HOSTEXECUTOR_H
#define XLNETC_RUNTIME_EXEC_HOSTEXECUTOR_H

#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/host/DropoutHash.h"
#include "runtime/host/HostFusion.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt {

struct Step;
class StepObserver;

/// Options of one execution.
struct ExecOptions {
  /// Step seed for dropout and dropatt (docs/Plan.md "Step seed").
  uint64_t seed = 0;
  /// Which rows of the global batch the step's rows are, for the masks'
  /// element index (host/DropoutHash.h); the default: the whole batch.
  host::DropoutRows rows;
  /// OpenMP / OpenBLAS threads; 0 = all cores.
  int threads = 0;
  /// emu and cuda: run the step as one recorded graph (a CUDA graph on a
  /// GPU), recorded at the second step of a program (the first runs piece by
  /// piece) and replayed after;
  /// false launches every piece of work one by one.
  bool deviceGraph = true;
  /// host: fill every temp with 0xff bytes (NaN, -1, true) before the step
  /// that writes it, to prove that the kernels write all of their outputs
  /// (the arena is never zeroed). For tests.
  bool poisonTemps = false;
  /// host: a GEMM or scatter sums its init itself (beta 1) and the
  /// attention backward reads the probabilities its forward kept
  /// (host/HostFusion.h); false: every init is added after its kernel and
  /// every kernel computes all it needs.
  bool fuse = true;
  /// The outputs the caller reads (e.g. loss, grad_norm, lr for a training
  /// step); empty: all. The device executors copy back only these and skip
  /// the work that only the others need (a bf16 step's casts of logits and
  /// hidden to f32, the update of a micro-batch that only accumulates);
  /// carried outputs are always computed. The host executor skips the
  /// steps they do not need too, and returns the wanted and carried
  /// outputs.
  std::vector<std::string> wanted;
  /// Executor::start with a carry: inputs that, bound for this step and
  /// not carried by it, stay kept after it (unless the step overwrote them
  /// in place): the parameters a micro-batch of gradient accumulation
  /// reads and does not update.
  std::vector<std::string> keep;
  /// Told about the steps (the data-parallel gradient all-reduce,
  /// dist/GradReducer.h); null: none. The host executor calls beforeStep and
  /// afterStep around every step; the device executors call
  /// beforeDeviceStep at the steps it wants, and run the step piece by
  /// piece (no graph), the observer's work on their side stream.
  StepObserver *observer = nullptr;
};

/// Watches the host executor's steps; an error stops the step.
class StepObserver {
public:
  virtual ~StepObserver() = default;
  /// Before step `index` runs, its inputs bound.
  virtual Status beforeStep(size_t index, const Step &step) = 0;
  /// After step `index` wrote `out` (which the observer may change in
  /// place before any later step reads them).
  virtual Status afterStep(size_t index, const Step &step, const std::vector<Tensor *> &out) = 0;

  /// A device executor's buffers, by plan buffer id, and its side stream
  /// (dev::Device): the observer's work overlaps the step's.
  struct DeviceBuffers {
    /// Host copies of buffer `id`: only from host work on the side stream
    /// (they are valid until the step ends, unlike this struct).
    std::function<Status(int id, Tensor &out)> read;
    std::function<Status(int id, const Tensor &in)> write;
    /// The device address of buffer `id`, and the CUstreams of the step's
    /// work and of the side stream (null on emu), for libraries (NCCL).
    std::function<uint64_t(int id)> address;
    void *stream = nullptr, *sideStream = nullptr;
    /// The side stream's next work follows the step's work so far.
    std::function<Status()> sideWaitsForMain;
    /// Host work in order on the side stream (emu: Device::hostWorkOnSide).
    std::function<Status(std::function<Status()> work)> onSide;
    /// The step's next work follows the side stream's work so far.
    std::function<Status()> mainWaitsForSide;
  };
  /// Whether beforeDeviceStep wants step `index`.
  virtual bool wantsDeviceStep(size_t index) const = 0;
  /// On emu and cuda: when step `index`'s work is about to be enqueued,
  /// the work before it enqueued (not finished: the observer orders its own
  /// work through the side stream). The executor ends the step's stream
  /// with mainWaitsForSide.
  virtual Status beforeDeviceStep(size_t index, const Step &step,
                                  const DeviceBuffers &buffers) = 0;
};

/// What the host executor keeps from one step to the next: the kept
/// attention probabilities (host/HostFusion.h), the memory plan of its
/// temps (planMemory, as the device executor's arena) and one 64-byte
/// aligned arena it places them in, reused by every step of the same plan
/// (a different plan, or the same with the switch changed, re-plans). Not
/// thread-safe; one per Executor.
class HostWorkspace {
public:
  HostWorkspace();
  ~HostWorkspace();
  HostWorkspace(const HostWorkspace &) = delete;
  HostWorkspace &operator=(const HostWorkspace &) = delete;

  /// Plans and allocates for `plan` (keeping probabilities when
  /// `keepProbs`), unless its buffers and steps and the switch are those of
  /// the last call.
  void prepare(const Plan &plan, bool keepProbs);
  /// The memory plan and the kept probabilities.
  const host::HostFusions &fusions() const { return fusions_; }
  /// Kept probabilities `index` (HostFusions::keptProbs).
  float *keptProbs(int index) { return keptProbs_[size_t(index)].data(); }
  const MemoryPlan &memory() const { return fusions_.memory; }
  uint8_t *arena() { return arena_.get(); }
  size_t arenaBytes() const { return arenaBytes_; }

private:
  struct AlignedDelete {
    void operator()(uint8_t *p) const;
  };
  std::vector<int64_t> signature_; ///< the planned plan's buffers and steps
  host::HostFusions fusions_;
  std::vector<std::vector<float>> keptProbs_;
  std::unique_ptr<uint8_t[], AlignedDelete> arena_;
  size_t arenaBytes_ = 0;
};

/// Sets the thread counts for its lifetime: OpenMP gets `threads` (0: its
/// default, all cores), OpenBLAS gets 1. The host kernels parallelise with
/// OpenMP only (GEMMs split rows across OpenMP threads); a multi-threaded
/// OpenBLAS beside it spins against OpenMP's idle threads and, measured on 2
/// cores, made the tiny model's step 10x slower than one thread.
class HostThreadScope {
public:
  /// `threads` must have passed checkHostThreads.
  explicit HostThreadScope(int threads);
  ~HostThreadScope();
  HostThreadScope(const HostThreadScope &) = delete;
  HostThreadScope &operator=(const HostThreadScope &) = delete;

private:
  int savedOmp_, savedBlas_;
};

/// Refuses a thread count above the CPUs this process may use (its affinity
/// mask) and a negative one: more threads than CPUs only oversubscribe them
/// (slower, never faster, for these compute-bound loops), and at counts in
/// the thousands libgomp fails ("Thread creation failed") or crashes.
/// `threads` 0 checks OpenMP's default (all CPUs, or OMP_NUM_THREADS).
/// `what` names the setting in the message ("--threads").
Status checkHostThreads(int threads, const char *what = "--threads");

/// Executes `plan`. `bindings` holds every input and param buffer by name with
/// exactly the plan's dtype and shape (extra entries are ignored). On success
/// `outputs` receives each output buffer under each of its output names
/// (existing entries of the same name are replaced). Data errors name the
/// step, its loc and the offending value.
///
/// `workspace` (may be null: a fresh one for this call) holds the temps'
/// arena across calls. `donated` (may be null) holds more bindings, looked
/// up after `bindings`, that the caller gives away: a step that updates
/// elementwise (adam_update's parameter and moments) writes its returned
/// output over a donated input nothing reads later and the output takes
/// its storage (moved out of `donated`); the rest stay there.
Status executeHost(const Plan &plan, const TensorMap &bindings,
                   TensorMap &outputs, const ExecOptions &opts = {},
                   HostWorkspace *workspace = nullptr,
                   TensorMap *donated = nullptr);

/// Checks the binding of input or param buffer `b` (present, same dtype and
/// shape, enough storage) and points `bound` at it; shared by the executors.
Status checkBinding(const Buffer &b, const TensorMap &bindings,
                    const Tensor *&bound);
/// The same checks of the tensor bound to `b`.
Status checkBound(const Buffer &b, const Tensor &t, const Tensor *&bound);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_EXEC_HOSTEXECUTOR_H
