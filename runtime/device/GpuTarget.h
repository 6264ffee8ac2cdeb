//===- GpuTarget.h - The GPU a device program is made for ------*- C++ -*-===//
//
// The emitter chooses launch geometry that depends on the GPU — today the
// tensor-core attention's tiles, which must fit the shared memory one block
// may have (AttentionTc.h: attnTcWarps) — so a device program is made for a
// target: an architecture and that limit. It comes from `--arch` (`xlnetc
// compile`, `xlnetc kernels`: the table below) or from the device a step is
// compiled for (Device::arch, Device::maxSharedMemoryPerBlock). The device
// executor checks every launch against the device before the first step,
// whatever target the program was made for (docs/Devices.md "GPUs").
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_GPUTARGET_H
#define XLNETC_RUNTIME_DEVICE_GPUTARGET_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>

namespace xlnetc::rt::dev {

struct GpuTarget {
  /// "sm_86"; "emu" for the emulated device.
  std::string arch = "sm_90";
  /// Bytes of shared memory one block may have there, static + dynamic,
  /// with the opt-in beyond 48 KiB (cudaDevAttrMaxSharedMemoryPerBlockOptin).
  int64_t smemPerBlock = 227 * 1024;
};

/// The target of `--arch ARCH`: "sm_XY" (a suffix "a" or "f" allowed, as
/// NVRTC takes it) for an architecture of the table (sm_80 and newer, whose
/// tensor cores take bf16): its shared memory per block from the CUDA C++
/// Programming Guide's table of compute capabilities. Another name is an
/// error listing the ones known.
Status gpuTargetForArch(const std::string &arch, GpuTarget &out);

/// The architectures of the table, for messages: "sm_80, sm_86, ...".
std::string knownGpuArchs();

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_GPUTARGET_H
