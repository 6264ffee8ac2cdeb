//===- GemmKernelsTest.cpp - OpenBLAS kernels chosen by CPU features ------===//
//
// The decision (coreToSet) and its explanation (explainKernels) on made-up
// CPUs and libraries: the case (a Xeon model OpenBLAS 0.3.21 does not
// know, given Prescott kernels), an AVX2-only CPU, a user's own
// OPENBLAS_CORETYPE, a library built for one target, names the table lacks.
// The drivers' rerun itself (Options.h prepareHostProcess) is tested end to
// end by test/Tools/gemm-kernels-rerun.test (a preloaded library that picks
// Prescott); test/Numerics/gemm-kernels.test runs the numerics under each
// kernel choice.
//
//===----------------------------------------------------------------------===//

#include "runtime/exec/HostExecutor.h"
#include "runtime/host/GemmKernels.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>

using namespace xlnetc::rt;
using namespace xlnetc::rt::host;

namespace {

CpuFeatures avx2Cpu() {
  CpuFeatures c;
  c.vendor = "GenuineIntel";
  c.family = 6;
  c.model = 63;
  c.sse42 = c.avx = c.avx2 = c.fma = true;
  return c;
}

/// Emerald Rapids: family 6 model 207, AVX-512 with BF16 and AMX.
CpuFeatures xeon207() {
  CpuFeatures c = avx2Cpu();
  c.model = 207;
  c.avx512f = c.avx512bw = c.avx512cd = c.avx512dq = c.avx512vl = true;
  c.avx512bf16 = c.amxTile = c.amxBf16 = true;
  return c;
}

BlasLibrary openBlas(const char *core, bool dynamicArch = true) {
  return {"OpenBLAS 0.3.21", core, dynamicArch};
}

TEST(GemmKernels, TiersFollowTheFeatures) {
  EXPECT_EQ(cpuTier(xeon207()), IsaTier::Avx512);
  EXPECT_EQ(cpuTier(avx2Cpu()), IsaTier::Avx2);
  CpuFeatures knl = avx2Cpu(); // AVX-512 F and CD without BW/DQ/VL: not SkylakeX's
  knl.avx512f = knl.avx512cd = true;
  EXPECT_EQ(cpuTier(knl), IsaTier::Avx2);
  CpuFeatures noFma = avx2Cpu();
  noFma.fma = false;
  EXPECT_EQ(cpuTier(noFma), IsaTier::Avx);
  EXPECT_EQ(cpuTier(CpuFeatures{}), IsaTier::Sse);

  EXPECT_EQ(openBlasCoreTier("Prescott"), IsaTier::Sse);
  EXPECT_EQ(openBlasCoreTier("sandybridge"), IsaTier::Avx);
  EXPECT_EQ(openBlasCoreTier("Zen"), IsaTier::Avx2);
  EXPECT_EQ(openBlasCoreTier("COOPERLAKE"), IsaTier::Avx512);
  EXPECT_EQ(openBlasCoreTier("Neoverse"), std::nullopt);

  EXPECT_EQ(openBlasCoresFor(xeon207()),
            (std::vector<std::string>{"SkylakeX", "Haswell", "Sandybridge"}));
  EXPECT_EQ(openBlasCoresFor(avx2Cpu()), (std::vector<std::string>{"Haswell", "Sandybridge"}));
  EXPECT_TRUE(openBlasCoresFor(CpuFeatures{}).empty());
}

TEST(GemmKernels, APrescottFallbackOnAnAvx512CpuIsCorrected) {
  // The machine: OpenBLAS 0.3.21 does not know model 207.
  EXPECT_EQ(coreToSet(xeon207(), openBlas("Prescott"), {}), "SkylakeX");
  EXPECT_EQ(coreToSet(xeon207(), openBlas("Sandybridge"), {}), "SkylakeX");
  EXPECT_EQ(coreToSet(xeon207(), openBlas("Haswell"), {}), "SkylakeX");
  // After the rerun: the report says what happened, and nothing is weaker.
  KernelReport r = explainKernels(xeon207(), openBlas("SkylakeX"), {"SkylakeX", "Prescott"});
  EXPECT_EQ(r.why, "OpenBLAS picked Prescott for this CPU (GenuineIntel family 6 model 207); "
                   "xlnetc set OPENBLAS_CORETYPE=SkylakeX from its features (AVX-512)");
  EXPECT_EQ(r.weakerThan, "");
  EXPECT_EQ(r.best, "SkylakeX");
  // The rerun is not repeated: the variable is set now.
  EXPECT_EQ(coreToSet(xeon207(), openBlas("SkylakeX"), {"SkylakeX", "Prescott"}), std::nullopt);
}

TEST(GemmKernels, ACorrectionTheLibraryIgnoredIsReported) {
  KernelReport r = explainKernels(xeon207(), openBlas("Prescott"), {"SkylakeX", "Prescott"});
  EXPECT_EQ(r.why, "OpenBLAS picked Prescott; xlnetc set OPENBLAS_CORETYPE=SkylakeX, which "
                   "this OpenBLAS did not take");
  EXPECT_EQ(r.weakerThan, "weaker than this CPU's AVX-512 (SkylakeX kernels)");
}

TEST(GemmKernels, KernelsAtTheCpusTierAreLeftAlone) {
  for (const char *core : {"SkylakeX", "Cooperlake", "SapphireRapids"}) {
    EXPECT_EQ(coreToSet(xeon207(), openBlas(core), {}), std::nullopt) << core;
    KernelReport r = explainKernels(xeon207(), openBlas(core), {});
    EXPECT_EQ(r.why, "chosen by OpenBLAS, AVX-512 kernels: the best for this CPU's AVX-512");
    EXPECT_EQ(r.weakerThan, "");
  }
  EXPECT_EQ(coreToSet(avx2Cpu(), openBlas("Haswell"), {}), std::nullopt);
  EXPECT_EQ(coreToSet(avx2Cpu(), openBlas("Zen"), {}), std::nullopt);
  EXPECT_EQ(coreToSet(avx2Cpu(), openBlas("Prescott"), {}), "Haswell");
  // An SSE-only CPU: nothing to correct to.
  EXPECT_EQ(coreToSet(CpuFeatures{}, openBlas("Prescott"), {}), std::nullopt);
}

TEST(GemmKernels, AUsersChoiceIsKeptAndAWeakerOneSaidSo) {
  EXPECT_EQ(coreToSet(xeon207(), openBlas("Haswell"), {"Haswell", ""}), std::nullopt);
  KernelReport r = explainKernels(xeon207(), openBlas("Haswell"), {"Haswell", ""});
  EXPECT_EQ(r.why, "OPENBLAS_CORETYPE=Haswell, set in the environment");
  EXPECT_EQ(r.weakerThan, "weaker than this CPU's AVX-512 (SkylakeX kernels)");
  // A name the library does not have: it chose itself.
  r = explainKernels(xeon207(), openBlas("SkylakeX"), {"Skylake", ""});
  EXPECT_EQ(r.why, "OPENBLAS_CORETYPE=Skylake is not a core this OpenBLAS has; it runs SkylakeX");
  EXPECT_EQ(r.weakerThan, "");
}

TEST(GemmKernels, FixedAndUnknownBuildsAreNotTouched) {
  EXPECT_EQ(coreToSet(xeon207(), openBlas("Prescott", /*dynamicArch=*/false), {}), std::nullopt);
  KernelReport r = explainKernels(xeon207(), openBlas("Prescott", false), {});
  EXPECT_EQ(r.why, "this OpenBLAS is built for Prescott only (no DYNAMIC_ARCH)");
  EXPECT_EQ(r.weakerThan, "weaker than this CPU's AVX-512 (SkylakeX kernels)");
  r = explainKernels(xeon207(), openBlas("Haswell", false), {"SkylakeX", ""});
  EXPECT_EQ(r.why, "OPENBLAS_CORETYPE=SkylakeX has no effect: this OpenBLAS is built for "
                   "Haswell only (no DYNAMIC_ARCH)");
  // A core newer than the table may be better: left, and not called weaker.
  EXPECT_EQ(coreToSet(xeon207(), openBlas("GraniteRapids"), {}), std::nullopt);
  r = explainKernels(xeon207(), openBlas("GraniteRapids"), {});
  EXPECT_EQ(r.why, "chosen by OpenBLAS (kernels xlnetc has no table entry for)");
  EXPECT_EQ(r.weakerThan, "");
}

TEST(GemmKernels, AMarkerWithoutTheSettingIsIgnored) {
  // XLNETC_OPENBLAS_PICKED explains an OPENBLAS_CORETYPE the rerun set;
  // alone (a user unset the other in a child's environment) it means nothing.
  const char *saved = std::getenv("OPENBLAS_CORETYPE");
  std::string keep = saved ? saved : "";
  unsetenv("OPENBLAS_CORETYPE");
  setenv("XLNETC_OPENBLAS_PICKED", "Prescott", 1);
  CoreEnvironment env = coreEnvironment();
  EXPECT_EQ(env.coretype, "");
  EXPECT_EQ(env.picked, "");
  setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
  EXPECT_EQ(coreEnvironment().picked, "Prescott");
  unsetenv("XLNETC_OPENBLAS_PICKED");
  if (saved)
    setenv("OPENBLAS_CORETYPE", keep.c_str(), 1);
  else
    unsetenv("OPENBLAS_CORETYPE");
}

TEST(GemmKernels, TheRunningProcessIsDescribed) {
  // Whatever this machine is: a library name, a core, and a consistent
  // report (the real decision on the real CPU).
  const BlasLibrary &lib = blasLibrary();
  EXPECT_EQ(lib.name.rfind("OpenBLAS ", 0), 0u) << lib.name;
  EXPECT_FALSE(lib.core.empty());
  EXPECT_NE(gemmKernelsText().find(lib.core + " kernels"), std::string::npos);
  EXPECT_FALSE(currentKernels().why.empty());
  EXPECT_FALSE(cpuFeatures().list().empty());
}

TEST(HostThreads, MoreThanTheCpusIsRefused) {
  int cpus = availableCpus();
  ASSERT_GE(cpus, 1);
  EXPECT_TRUE(checkHostThreads(cpus).isOk());
  EXPECT_TRUE(checkHostThreads(1).isOk());
  Status st = checkHostThreads(cpus + 1);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find(fmt::format("--threads {}: this process can run on {} CPU",
                                          cpus + 1, cpus)),
            std::string::npos)
      << st.message();
  st = checkHostThreads(100000, "--workers");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message().rfind("--workers 100000:", 0), 0u) << st.message();
  EXPECT_FALSE(checkHostThreads(-1).isOk());
}

} // namespace
