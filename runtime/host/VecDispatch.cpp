//===- VecDispatch.cpp - Picks the VecKernels level for this CPU ----------===//

#include "runtime/host/VecKernels.h"

#include <fmt/format.h>

#include <cstdlib>
#if XLNETC_VEC_X86
#include <cpuid.h>
#endif
#include <string>

namespace xlnetc::rt::host {

// One per level this build compiled (runtime/CMakeLists.txt).
const VecKernels &vecKernels_baseline();
#if XLNETC_VEC_X86
const VecKernels &vecKernels_avx2();
const VecKernels &vecKernels_avx512();
#endif

namespace {

#if XLNETC_VEC_X86
/// Whether CPUID leaf 1 sets `bit` of ECX.
bool cpuid1Ecx(unsigned bit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit) != 0;
}
#endif

struct Level {
  const char *name;
  const VecKernels &(*table)();
  bool (*supported)();
};

const std::vector<Level> &levels() {
  // Best first.
  static const std::vector<Level> all = {
#if XLNETC_VEC_X86
      {"avx512", vecKernels_avx512,
       [] {
         // x86-64-v4: AVX-512 F, BW, CD, DQ, VL (and the v3 features).
         return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx2") &&
                __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
       }},
      {"avx2", vecKernels_avx2,
       [] {
         // x86-64-v3: AVX2, FMA, BMI1/2, F16C, MOVBE, LZCNT.
         // F16C and MOVBE through CPUID: clang's __builtin_cpu_supports
         // does not know them.
         return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") &&
                cpuid1Ecx(bit_F16C) && cpuid1Ecx(bit_MOVBE);
       }},
#endif
      {"baseline", vecKernels_baseline, [] { return true; }},
  };
  return all;
}

struct Selection {
  const VecKernels *table = nullptr;
  Status status = Status::ok();
};

Selection select() {
  Selection s;
  const char *forced = std::getenv("XLNETC_HOST_ISA");
  std::string names;
  for (const Level &l : levels()) {
    names += names.empty() ? l.name : std::string(", ") + l.name;
    if (forced && *forced && std::string(forced) != l.name)
      continue;
    if (!l.supported()) {
      if (forced && *forced) {
        s.status = Status::error(fmt::format(
            "XLNETC_HOST_ISA={}: this CPU does not support {}", forced, l.name));
        return s;
      }
      continue;
    }
    s.table = &l.table();
    return s;
  }
  s.status = Status::error(fmt::format(
      "XLNETC_HOST_ISA={}: unknown level (this build has {})", forced ? forced : "", names));
  return s;
}

const Selection &selection() {
  static const Selection s = select();
  return s;
}

} // namespace

Status selectVecKernels(const VecKernels *&out) {
  out = selection().table;
  return selection().status;
}

const VecKernels &vecKernels() {
  const VecKernels *t = selection().table;
  return t ? *t : vecKernels_baseline();
}

std::vector<const VecKernels *> runnableVecKernels() {
  std::vector<const VecKernels *> out;
  for (const Level &l : levels())
    if (l.supported())
      out.push_back(&l.table());
  return out;
}

} // namespace xlnetc::rt::host
