//===- CpuFeatures.h - What the running x86-64 CPU can execute -*- C++ -*-===//
//
// The CPU's identity and the vector features that decide which GEMM kernels
// (GemmKernels.h) and which inner loops (VecKernels.h) it can run, read once
// from CPUID. A feature counts only when the operating system also saves its
// registers (XGETBV's XCR0), so a CPU with AVX-512 under a kernel or
// hypervisor that does not enable it reports no AVX-512. On other
// architectures every flag is false and `brand` says so.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_HOST_CPUFEATURES_H
#define XLNETC_RUNTIME_HOST_CPUFEATURES_H

#include <string>

namespace xlnetc::rt::host {

struct CpuFeatures {
  std::string vendor; ///< "GenuineIntel", "AuthenticAMD", ...
  std::string brand;  ///< "Intel(R) Xeon(R) Platinum 8581C CPU @ 2.10GHz"
  unsigned family = 0, model = 0; ///< display family and model (Intel's rule)
  bool sse42 = false;
  bool avx = false, avx2 = false, fma = false;
  bool bmi1 = false, bmi2 = false, f16c = false, movbe = false; ///< x86-64-v3's rest
  bool avx512f = false, avx512bw = false, avx512cd = false, avx512dq = false,
       avx512vl = false;
  bool avx512bf16 = false;
  bool amxTile = false, amxBf16 = false;

  /// AVX-512 F, BW, CD, DQ and VL: what Skylake-SP and later have and what
  /// OpenBLAS's SkylakeX kernels (and x86-64-v4) need.
  bool avx512Core() const { return avx512f && avx512bw && avx512cd && avx512dq && avx512vl; }
  /// x86-64-v3: AVX2, FMA, BMI1/2, F16C, MOVBE (LZCNT and the rest come
  /// with them on every CPU that has these).
  bool x86_64_v3() const { return avx2 && fma && bmi1 && bmi2 && f16c && movbe; }
  /// x86-64-v4: v3 and the AVX-512 core.
  bool x86_64_v4() const { return x86_64_v3() && avx512Core(); }
  /// "SSE4.2 AVX AVX2 FMA AVX-512 (F BW CD DQ VL) AVX512-BF16", or "none".
  std::string list() const;
  /// "Intel Xeon ... (GenuineIntel family 6 model 207)".
  std::string identity() const;
};

/// The running CPU's, read once.
const CpuFeatures &cpuFeatures();

/// How many CPUs this process may run on (its affinity mask), at least 1.
int availableCpus();

} // namespace xlnetc::rt::host

#endif // XLNETC_RUNTIME_HOST_CPUFEATURES_H
