//===- GemmKernels.h - Which sgemm kernels the host runs, and why -*- C++ -*-===//
//
// The host executor's (and the emulated device's) GEMMs are OpenBLAS
// sgemms. A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels when it is
// loaded, by CPU model number; a model newer than the library falls back to
// its Prescott (SSE3) kernels, 4-6x slower than the AVX-512 ones on a
// current Xeon. So the kernels are decided here by the CPU's features
// instead, and OPENBLAS_CORETYPE (read only while the library initialises)
// is set before it does: the drivers run themselves again with it set
// (xlnetc/Driver/Options.h prepareHostProcess) when the kernels OpenBLAS
// picked are weaker than the CPU's. A user's own OPENBLAS_CORETYPE is kept.
//
// The targets are one per instruction-set tier, the oldest OpenBLAS core
// with that tier's sgemm (so every DYNAMIC_ARCH build since 0.3.x has it):
// AVX-512 -> SkylakeX (Cooperlake and Sapphire Rapids add only bf16 GEMMs),
// AVX2+FMA -> Haswell, AVX -> Sandybridge. docs/Training.md has the
// measurements behind the choice (OpenBLAS corrected against oneDNN, BLIS
// and a newer OpenBLAS).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_GEMMKERNELS_H
#define XLNETC_RUNTIME_HOST_GEMMKERNELS_H

#include "runtime/host/CpuFeatures.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xlnetc::rt::host {

/// The widest vector instructions an sgemm kernel set uses, or a CPU runs.
enum class IsaTier { Sse = 0, Avx, Avx2, Avx512 };

const char *isaTierName(IsaTier tier); ///< "SSE", "AVX", "AVX2+FMA", "AVX-512"

/// The CPU's tier for sgemm kernels.
IsaTier cpuTier(const CpuFeatures &cpu);

/// The tier of an OpenBLAS x86-64 core by its name (as openblas_get_corename
/// spells it; case-insensitive); nullopt for a name this table lacks.
std::optional<IsaTier> openBlasCoreTier(std::string_view core);

/// The OpenBLAS core xlnetc sets for a tier; null for Sse (every core
/// OpenBLAS would fall back to is at least that).
const char *openBlasCoreFor(IsaTier tier);

/// The cores of openBlasCoreFor for `cpu`'s tier and below, best first:
/// the kernel choices the code can make on this CPU.
std::vector<std::string> openBlasCoresFor(const CpuFeatures &cpu);

/// The loaded BLAS.
struct BlasLibrary {
  std::string name;    ///< "OpenBLAS 0.3.21"
  std::string core;    ///< the kernels in use: "SkylakeX"
  bool dynamicArch = false; ///< OPENBLAS_CORETYPE can choose the kernels
};
const BlasLibrary &blasLibrary();

/// The environment the decision reads: OPENBLAS_CORETYPE as the process
/// found it, and the core OpenBLAS picked before xlnetc corrected it
/// (XLNETC_OPENBLAS_PICKED, set by the drivers' rerun; empty if none).
struct CoreEnvironment {
  std::string coretype;
  std::string picked;
};
CoreEnvironment coreEnvironment();

/// The core to set in OPENBLAS_CORETYPE before running again, or nullopt
/// when the kernels in use are right (or cannot be changed, or the user
/// chose them).
std::optional<std::string> coreToSet(const CpuFeatures &cpu, const BlasLibrary &blas,
                                     const CoreEnvironment &env);

/// The kernels in use and why.
struct KernelReport {
  std::string why;        ///< "chosen by OpenBLAS, AVX-512 kernels: the best for ..."
  std::string weakerThan; ///< "weaker than this CPU's AVX-512 (SkylakeX kernels)", or
                          ///< empty when the kernels are not weaker than the CPU's
  std::string best;       ///< the core this CPU's tier would run ("SkylakeX")
};
KernelReport explainKernels(const CpuFeatures &cpu, const BlasLibrary &blas,
                            const CoreEnvironment &env);

/// explainKernels for this process: the running CPU, the loaded library,
/// the environment.
KernelReport currentKernels();

/// "OpenBLAS 0.3.21, SkylakeX kernels": the device line's words.
std::string gemmKernelsText();

/// One line when the kernels in use are weaker than the CPU runs (a user
/// forced them, or the library cannot do better), else empty: "the GEMMs
/// run OpenBLAS's Haswell kernels, weaker than this CPU's AVX-512 (SkylakeX
/// kernels): OPENBLAS_CORETYPE=Haswell, set in the environment (unset it to
/// let xlnetc choose)".
std::string weakerKernelsNote();

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_GEMMKERNELS_H
