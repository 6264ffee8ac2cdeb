//===- HostExecutor.h - Runs a plan on the CPU in fp32 ---------*- C++ -*-===//
//
// The reference executor: binds inputs and parameters by name, runs the steps
// in order with the kernels of runtime/host/Kernels.h and returns the buffers
// marked as outputs. The CUDA executor is checked against it.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOSTEXECUTOR_H
#define XLNETC_RUNTIME_HOSTEXECUTOR_H

#include "runtime/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>

namespace xlnetc::rt {

/// Options of one execution.
struct ExecOptions {
  /// Step seed for dropout and dropatt (docs/Plan.md "Step seed").
  uint64_t seed = 0;
  /// OpenMP / OpenBLAS threads; 0 = all cores.
  int threads = 0;
  /// emu and cuda: run the step as one recorded graph (a CUDA graph on a
  /// GPU), recorded at the second step of a program (the first runs piece by
  /// piece) and replayed after;
  /// false launches every piece of work one by one.
  bool deviceGraph = true;
};

/// Executes `plan`. `bindings` holds every input and param buffer by name with
/// exactly the plan's dtype and shape (extra entries are ignored). On success
/// `outputs` receives each output buffer under each of its output names
/// (existing entries of the same name are replaced). Data errors name the
/// step, its loc and the offending value.
Status executeHost(const Plan &plan, const TensorMap &bindings,
                   TensorMap &outputs, const ExecOptions &opts = {});

/// Checks the binding of input or param buffer `b` (present, same dtype and
/// shape, enough storage) and points `bound` at it; shared by the executors.
Status checkBinding(const Buffer &b, const TensorMap &bindings,
                    const Tensor *&bound);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_HOSTEXECUTOR_H
