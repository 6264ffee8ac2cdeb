//===- GemmKernels.cpp - OpenBLAS's kernels against the CPU's features ----===//

#include "runtime/host/GemmKernels.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace xlnetc::rt::host {

namespace {

bool sameName(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string envOr(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

std::string modelWords(const CpuFeatures &cpu) {
  return fmt::format("{} family {} model {}", cpu.vendor, cpu.family, cpu.model);
}

} // namespace

const char *isaTierName(IsaTier tier) {
  switch (tier) {
  case IsaTier::Sse:
    return "SSE";
  case IsaTier::Avx:
    return "AVX";
  case IsaTier::Avx2:
    return "AVX2+FMA";
  case IsaTier::Avx512:
    return "AVX-512";
  }
  return "?";
}

IsaTier cpuTier(const CpuFeatures &cpu) {
  if (cpu.avx512Core() && cpu.avx2 && cpu.fma)
    return IsaTier::Avx512;
  if (cpu.avx2 && cpu.fma)
    return IsaTier::Avx2;
  if (cpu.avx)
    return IsaTier::Avx;
  return IsaTier::Sse;
}

std::optional<IsaTier> openBlasCoreTier(std::string_view core) {
  // OpenBLAS's x86-64 cores (driver/others/dynamic.c corename[]), by the
  // widest instructions of their sgemm kernels. Steamroller and Excavator
  // share the AVX kernels of the Bulldozer line.
  static const std::pair<const char *, IsaTier> table[] = {
      {"Katmai", IsaTier::Sse},       {"Coppermine", IsaTier::Sse},
      {"Northwood", IsaTier::Sse},    {"Prescott", IsaTier::Sse},
      {"Banias", IsaTier::Sse},       {"Atom", IsaTier::Sse},
      {"Core2", IsaTier::Sse},        {"Penryn", IsaTier::Sse},
      {"Dunnington", IsaTier::Sse},   {"Nehalem", IsaTier::Sse},
      {"Athlon", IsaTier::Sse},       {"Opteron", IsaTier::Sse},
      {"Opteron_SSE3", IsaTier::Sse}, {"Barcelona", IsaTier::Sse},
      {"Nano", IsaTier::Sse},         {"Bobcat", IsaTier::Sse},
      {"Sandybridge", IsaTier::Avx},  {"Bulldozer", IsaTier::Avx},
      {"Piledriver", IsaTier::Avx},   {"Steamroller", IsaTier::Avx},
      {"Excavator", IsaTier::Avx},    {"Haswell", IsaTier::Avx2},
      {"Zen", IsaTier::Avx2},         {"SkylakeX", IsaTier::Avx512},
      {"Cooperlake", IsaTier::Avx512}, {"SapphireRapids", IsaTier::Avx512},
  };
  for (const auto &[name, tier] : table)
    if (sameName(core, name))
      return tier;
  return std::nullopt;
}

const char *openBlasCoreFor(IsaTier tier) {
  switch (tier) {
  case IsaTier::Avx512:
    return "SkylakeX";
  case IsaTier::Avx2:
    return "Haswell";
  case IsaTier::Avx:
    return "Sandybridge";
  case IsaTier::Sse:
    return nullptr;
  }
  return nullptr;
}

std::vector<std::string> openBlasCoresFor(const CpuFeatures &cpu) {
  std::vector<std::string> cores;
  for (int t = static_cast<int>(cpuTier(cpu)); t > static_cast<int>(IsaTier::Sse); --t)
    cores.push_back(openBlasCoreFor(static_cast<IsaTier>(t)));
  return cores;
}

const BlasLibrary &blasLibrary() {
  static const BlasLibrary lib = [] {
    BlasLibrary b;
    // "OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY Cooperlake MAX_THREADS=64"
    std::istringstream config(openblas_get_config());
    std::string word, version;
    config >> word >> version;
    b.name = word + (version.empty() ? "" : " " + version);
    while (config >> word)
      b.dynamicArch = b.dynamicArch || word == "DYNAMIC_ARCH";
    const char *core = openblas_get_corename();
    b.core = core && *core ? core : "unknown";
    return b;
  }();
  return lib;
}

CoreEnvironment coreEnvironment() {
  CoreEnvironment env{envOr("OPENBLAS_CORETYPE"), envOr("XLNETC_OPENBLAS_PICKED")};
  if (env.coretype.empty()) // a marker left without the setting it explains
    env.picked.clear();
  return env;
}

std::optional<std::string> coreToSet(const CpuFeatures &cpu, const BlasLibrary &blas,
                                     const CoreEnvironment &env) {
  if (!blas.dynamicArch || !env.coretype.empty())
    return std::nullopt;
  const char *target = openBlasCoreFor(cpuTier(cpu));
  std::optional<IsaTier> now = openBlasCoreTier(blas.core);
  // A core this table lacks may be newer and better: left as it is.
  if (!target || !now || *now >= cpuTier(cpu))
    return std::nullopt;
  return std::string(target);
}

KernelReport explainKernels(const CpuFeatures &cpu, const BlasLibrary &blas,
                            const CoreEnvironment &env) {
  KernelReport r;
  IsaTier tier = cpuTier(cpu);
  const char *best = openBlasCoreFor(tier);
  r.best = best ? best : "";
  std::optional<IsaTier> now = openBlasCoreTier(blas.core);
  bool weaker = now && *now < tier;
  std::string cpuWords = fmt::format("this CPU's {}", isaTierName(tier));
  // Who chose the kernels, first match wins: xlnetc's rerun (the marker is
  // set; did the library take the core?), the user's OPENBLAS_CORETYPE
  // (ignored by a single-target build, unknown to this one, or taken), a
  // single-target build, then OpenBLAS's own pick.
  if (!env.picked.empty() && sameName(env.coretype, blas.core))
    r.why = fmt::format("OpenBLAS picked {} for this CPU ({}); xlnetc set "
                        "OPENBLAS_CORETYPE={} from its features ({})",
                        env.picked, modelWords(cpu), env.coretype, isaTierName(tier));
  else if (!env.picked.empty())
    r.why = fmt::format("OpenBLAS picked {}; xlnetc set OPENBLAS_CORETYPE={}, which this "
                        "OpenBLAS did not take",
                        env.picked, env.coretype);
  else if (!env.coretype.empty() && !blas.dynamicArch)
    r.why = fmt::format("OPENBLAS_CORETYPE={} has no effect: this OpenBLAS is built for {} "
                        "only (no DYNAMIC_ARCH)",
                        env.coretype, blas.core);
  else if (!env.coretype.empty() && !sameName(env.coretype, blas.core))
    r.why = fmt::format("OPENBLAS_CORETYPE={} is not a core this OpenBLAS has; it runs {}",
                        env.coretype, blas.core);
  else if (!env.coretype.empty())
    r.why = fmt::format("OPENBLAS_CORETYPE={}, set in the environment", env.coretype);
  else if (!blas.dynamicArch)
    r.why = fmt::format("this OpenBLAS is built for {} only (no DYNAMIC_ARCH)", blas.core);
  else if (!now)
    r.why = "chosen by OpenBLAS (kernels xlnetc has no table entry for)";
  else if (weaker)
    r.why = "chosen by OpenBLAS";
  else
    r.why = fmt::format("chosen by OpenBLAS, {} kernels: the best for {}", isaTierName(*now),
                        cpuWords);
  if (weaker)
    r.weakerThan = fmt::format("weaker than {} ({} kernels)", cpuWords, r.best);
  return r;
}

KernelReport currentKernels() {
  return explainKernels(cpuFeatures(), blasLibrary(), coreEnvironment());
}

std::string gemmKernelsText() {
  const BlasLibrary &b = blasLibrary();
  return fmt::format("{}, {} kernels", b.name, b.core);
}

std::string weakerKernelsNote() {
  const BlasLibrary &b = blasLibrary();
  KernelReport r = currentKernels();
  if (r.weakerThan.empty())
    return "";
  CoreEnvironment env = coreEnvironment();
  bool userChose = !env.coretype.empty() && env.picked.empty() && b.dynamicArch;
  return fmt::format("the GEMMs run OpenBLAS's {} kernels, {}: {}{}", b.core, r.weakerThan,
                     r.why, userChose ? " (unset it to let xlnetc choose)" : "");
}

} // namespace xlnetc::rt::host
