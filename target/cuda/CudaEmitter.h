//===- CudaEmitter.h - A plan as CUDA C++ and launches ----------*- C++ -*-===//
//
// The last stage of the compiler for `--device emu|cuda`: turns a verified
// plan (runtime/plan/Plan.h) into its device program (runtime/plan/DeviceProgram.h):
//
//  - one CUDA C++ translation unit with a kernel per launch, each a thin
//    wrapper that instantiates a hand-written template of
//    runtime/device/kernels/xlnetc_k_*.cuh with the step's shapes and
//    attributes as compile-time constants; above each kernel a comment names
//    the plan step, its MLIR location and the launch geometry;
//  - for every step, its launches: the kernels (grid, block, dynamic shared
//    memory, workspace, parameters) and the GEMMs (a GemmDesc with
//    cuBLASLt's semantics, from GemmLowering.h), plus the tables of the
//    multi-tensor ops (global_norm over every gradient, one adam_update
//    launch for each run of adam_update steps that share their scalars).
//
// The emitter does not link MLIR (it reads the plan only), so the driver
// runs it right after the plan stage; `xlnetc compile --emit=cuda` prints
// the source. docs/Devices.md "The device program".
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_TARGET_CUDA_CUDAEMITTER_H
#define XLNETC_TARGET_CUDA_CUDAEMITTER_H

#include "runtime/plan/DeviceProgram.h"
#include "runtime/plan/Plan.h"
#include "runtime/device/GpuTarget.h"

#include <string>

namespace xlnetc::cuda {

struct CudaEmitOptions {
  /// The module's name (messages, the kernel cache's log).
  std::string moduleName = "xlnet-step.cu";
  /// Where the plan came from, for the header ("xlnet-tiny.toml, step train").
  std::string origin;
  /// The GPU the launches are made for: the tensor-core attention's tiles
  /// fit its shared memory per block (the default: sm_90's).
  rt::dev::GpuTarget target;
};

/// Emits the device program of `plan` (already verified by parsePlan or
/// verifyStepTypes). Errors name the step.
rt::Status emitDeviceProgram(const rt::Plan &plan,
                             const CudaEmitOptions &options,
                             rt::DeviceProgram &out);

} // namespace xlnetc::cuda

#endif // XLNETC_TARGET_CUDA_CUDAEMITTER_H
