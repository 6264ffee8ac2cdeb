//===- GemmFallback.h - A fused GEMM epilogue, unfused ---------*- C++ -*-===//
//
// Where cuBLASLt cannot run a GEMM's fused epilogue as one call (no
// algorithm from its heuristic for that epilogue on this GPU, type or
// alignment: Device::gemmSupported), the executor runs the GEMM with the
// default epilogue and then an epilogue kernel of
// kernels/xlnetc_k_epilogue.cuh, decided once when it prepares the program
// (docs/Devices.md "GEMMs"):
//
//   f32 D   the GEMM writes D itself (alpha, beta and C as given), and the
//           kernel applies the epilogue to D in place;
//   bf16 D  the GEMM writes an f32 scratch matrix of D's layout, and the
//           kernel reads it and stores D (and aux, and the bias gradient),
//           rounding once, as the fused call does. beta must be 0 (C has
//           D's type, which an f32 scratch GEMM cannot read; the emitter
//           accumulates only into GEMMs without an epilogue).
//
// The kernels compute what gemmReference computes, in the same order, so
// on the emulated device the unfused form gives bitwise the fused call's
// results; on a GPU they are within the fused call's tolerances.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_GEMMFALLBACK_H
#define XLNETC_RUNTIME_DEVICE_GEMMFALLBACK_H

#include "runtime/device/Device.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc::rt::dev {

/// The module of the epilogue kernels (kernels/xlnetc_k_epilogue.cuh), for
/// Device::loadModule.
ModuleSource gemmEpilogueModule();

/// Bytes of f32 scratch the unfused form of `desc` needs: D's extent in
/// f32 for a bf16 D, 0 for an f32 D (the GEMM writes D itself).
int64_t gemmFallbackScratchBytes(const GemmDesc &desc);

/// The unfused form of one GEMM call: `gemm` on `ops`, then `kernel` of
/// gemmEpilogueModule() launched with `dims` and `args`.
struct GemmFallback {
  GemmDesc gemm; ///< the default epilogue; f32 C/D when it writes the scratch
  GemmOperands ops;
  std::string kernel; ///< xl_gemm_epilogue_<epilogue>_<f32|bf16>
  LaunchDims dims;
  /// The kernel's arguments, one 8-byte slot each (launch's params[i]
  /// points at args[i]): acc, bias, aux, d, m, n, ldc, batch, strideC.
  std::vector<uint64_t> args;
};

/// The unfused form of `desc` (an epilogue other than the default) on
/// `ops`; `scratch` holds gemmFallbackScratchBytes(desc) bytes (0 when it
/// needs none). Errors: the default epilogue (nothing to unfuse), a bf16 D
/// with beta != 0.
Status gemmFallback(const GemmDesc &desc, const GemmOperands &ops, DevPtr scratch,
                    GemmFallback &out);

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_GEMMFALLBACK_H
