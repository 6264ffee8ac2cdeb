//===- DeviceTest.cpp - The device interface on emu (and cuda) ------------===//
//
// Device::loadModule/getKernel/launch and the memory primitives, through the
// same kernel source (kernels/device_smoke.cu) on the emulated device, on a
// GPU when one answers (skipped otherwise), and compiled by NVRTC for sm_90
// without a GPU (registers and spills from ptxas's report).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaApi.h"
#include "runtime/device/CudaDevice.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"

#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dev;
using xlnetc::rt::testing::compileForSm90;
namespace fs = std::filesystem;

namespace {

std::string smokeSource() {
  for (const SourceFile &f : embeddedTestKernels())
    if (f.name == "device_smoke.cu")
      return f.text;
  ADD_FAILURE() << "device_smoke.cu is not among the embedded test kernels";
  return {};
}

ModuleSource smokeModule() {
  ModuleSource m;
  m.name = "device_smoke.cu";
  m.text = smokeSource();
  return m;
}

/// A fresh, private kernel cache directory for one test.
class ScopedCacheDir {
public:
  ScopedCacheDir()
      : dir_(fs::temp_directory_path() /
             ("xlnetc-device-test-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name())),
        env_("XLNETC_KERNEL_CACHE", dir_.c_str()) {
    fs::remove_all(dir_);
  }
  ~ScopedCacheDir() { fs::remove_all(dir_); }
  size_t entries() const {
    size_t n = 0;
    if (fs::exists(dir_))
      for (auto &e : fs::directory_iterator(dir_))
        n += e.path().extension() == ".so" || e.path().extension() == ".cubin";
    return n;
  }

private:
  fs::path dir_;
  xlnetc::rt::testing::ScopedEnv env_;
};

/// saxpy and block_sum on `dev`, checked against the host.
void runSmokeKernels(Device &dev) {
  std::unique_ptr<Module> mod;
  ASSERT_TRUE(dev.loadModule(smokeModule(), mod).isOk());

  // saxpy over 1000 elements: 4 blocks of 256 with a tail of 24 idle threads.
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f - i;
  }
  DevPtr dx, dy;
  ASSERT_TRUE(dev.alloc(n * 4, dx).isOk());
  ASSERT_TRUE(dev.alloc(n * 4, dy).isOk());
  ASSERT_TRUE(dev.upload(dx, x.data(), n * 4).isOk());
  ASSERT_TRUE(dev.upload(dy, y.data(), n * 4).isOk());
  Kernel saxpy;
  ASSERT_TRUE(dev.getKernel(*mod, "saxpy", saxpy).isOk());
  float a = 3.0f;
  int count = n;
  void *params[] = {&a, &dx, &dy, &count};
  LaunchDims dims;
  dims.grid[0] = 4;
  dims.block[0] = 256;
  Status st = dev.launch(saxpy, dims, params, "saxpy test");
  ASSERT_TRUE(st.isOk()) << st.message();
  ASSERT_TRUE(dev.synchronize("saxpy test").isOk());
  std::vector<float> got(n);
  ASSERT_TRUE(dev.download(got.data(), dy, n * 4).isOk());
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(got[i], 3.0f * x[i] + y[i]) << "at " << i;

  // block_sum: 4 blocks of 128 threads, dynamic shared memory of 128 floats.
  Kernel sum;
  ASSERT_TRUE(dev.getKernel(*mod, "block_sum", sum).isOk());
  // Its static shared memory (warpSums) as the driver reports it; the
  // emulator's __shared__ arrays are host memory.
  EXPECT_EQ(sum.staticSmem, dev.kind() == DeviceKind::Cuda ? 32 * sizeof(float) : 0u);
  // Every GPU xlnetc runs on (sm_80 and newer) opts into 99 KiB or more.
  EXPECT_GE(dev.maxSharedMemoryPerBlock(), size_t(99 * 1024));
  DevPtr dout;
  ASSERT_TRUE(dev.alloc(4 * 4, dout).isOk());
  int m = 500;
  void *sumParams[] = {&dx, &dout, &m};
  LaunchDims sd;
  sd.grid[0] = 4;
  sd.block[0] = 128;
  sd.dynSmem = 128 * sizeof(float);
  st = dev.launch(sum, sd, sumParams, "block_sum test");
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<float> sums(4);
  ASSERT_TRUE(dev.download(sums.data(), dout, 16).isOk());
  for (int b = 0; b < 4; ++b) {
    double ref = 0;
    for (int i = b * 128; i < std::min(m, b * 128 + 128); ++i)
      ref += x[i];
    EXPECT_NEAR(sums[b], ref, 1e-3 * std::max(1.0, std::fabs(ref))) << "block " << b;
  }
  dev.free(dx);
  dev.free(dy);
  dev.free(dout);
}

TEST(EmuDevice, RunsTheSmokeKernels) {
  ScopedCacheDir cache;
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  EXPECT_EQ(dev->arch(), "emu");
  EXPECT_NE(dev->description().find("emulated device"), std::string::npos);
  runSmokeKernels(*dev);
  EXPECT_EQ(cache.entries(), 1u) << "the compiled module is cached";
  // A second device finds it in the cache (and still works).
  std::unique_ptr<Device> again;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, again).isOk());
  runSmokeKernels(*again);
  EXPECT_EQ(cache.entries(), 1u);
}

TEST(EmuDevice, NoKernelCacheWritesNothing) {
  ScopedCacheDir cache;
  DeviceOptions options;
  options.kernelCache = false;
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, options, dev).isOk());
  runSmokeKernels(*dev);
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(EmuDevice, MemoryOutsideAnAllocationIsAnError) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  DevPtr p;
  ASSERT_TRUE(dev->alloc(64, p).isOk());
  std::vector<char> buf(128);
  Status st = dev->upload(p, buf.data(), 128);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("upload destination"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("is not inside one allocation"), std::string::npos);
  st = dev->download(buf.data(), p + 32, 64);
  EXPECT_FALSE(st.isOk());
  EXPECT_TRUE(dev->download(buf.data(), p + 32, 32).isOk());
  dev->free(p);
  EXPECT_FALSE(dev->memset(p, 0, 4).isOk()) << "freed memory";
}

// A capture records memsets (and launches, GEMMs) instead of running them;
// a copy to or from the host is refused while it lasts; the graph replays
// the work, every time it is launched.
TEST(EmuDevice, CaptureRecordsAndGraphsReplay) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  DevPtr p;
  ASSERT_TRUE(dev->alloc(16, p).isOk());
  std::vector<unsigned char> bytes(16, 7), back(16);
  ASSERT_TRUE(dev->upload(p, bytes.data(), 16).isOk());
  ASSERT_TRUE(dev->beginCapture("test").isOk());
  EXPECT_FALSE(dev->beginCapture("test").isOk()) << "nested capture";
  ASSERT_TRUE(dev->memset(p, 3, 8).isOk());
  Status st = dev->upload(p, bytes.data(), 16);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("upload during a graph capture"), std::string::npos)
      << st.message();
  std::unique_ptr<Graph> graph;
  ASSERT_TRUE(dev->endCapture(graph, "test").isOk());
  ASSERT_TRUE(graph);
  ASSERT_TRUE(dev->download(back.data(), p, 16).isOk());
  EXPECT_EQ(back[0], 7) << "recorded, not run";
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(dev->upload(p, bytes.data(), 16).isOk());
    ASSERT_TRUE(dev->launchGraph(*graph, "test").isOk());
    ASSERT_TRUE(dev->download(back.data(), p, 16).isOk());
    EXPECT_EQ(back[0], 3);
    EXPECT_EQ(back[7], 3);
    EXPECT_EQ(back[8], 7);
  }
  EXPECT_FALSE(dev->endCapture(graph, "test").isOk()) << "no capture under way";
  dev->free(p);
}

// The side stream's host work: by default as late as the events allow (at
// the next join or synchronize), with XLNETC_EMU_SIDE_STREAM=early at once;
// dropped by abandonSide; refused during a capture.
TEST(EmuDevice, SideStreamHostWorkRunsAtTheJoinOrAtOnce) {
  for (const char *mode : {"late", "early"}) {
    xlnetc::rt::testing::ScopedEnv env("XLNETC_EMU_SIDE_STREAM", mode);
    const bool early = std::string(mode) == "early";
    std::unique_ptr<Device> dev;
    ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
    std::vector<int> ran;
    const auto work = [&](int id) {
      return [&ran, id] {
        ran.push_back(id);
        return Status::ok();
      };
    };
    ASSERT_TRUE(dev->sideWaitsForMain("test").isOk());
    ASSERT_TRUE(dev->hostWorkOnSide(work(1), "test").isOk());
    ASSERT_TRUE(dev->hostWorkOnSide(work(2), "test").isOk());
    EXPECT_EQ(ran, early ? std::vector<int>({1, 2}) : std::vector<int>()) << mode;
    ASSERT_TRUE(dev->mainWaitsForSide("test").isOk());
    EXPECT_EQ(ran, (std::vector<int>{1, 2})) << mode;
    ASSERT_TRUE(dev->hostWorkOnSide(work(3), "test").isOk());
    ASSERT_TRUE(dev->synchronize("test").isOk());
    EXPECT_EQ(ran, (std::vector<int>{1, 2, 3})) << mode;
    // An error names where the work was enqueued.
    Status st = dev->hostWorkOnSide([] { return Status::error("boom"); }, "step 7");
    if (!early)
      st = dev->mainWaitsForSide("the norm");
    ASSERT_FALSE(st.isOk()) << mode;
    EXPECT_EQ(st.message(), "step 7: boom");
    if (!early) { // abandoned work never runs
      ASSERT_TRUE(dev->hostWorkOnSide(work(4), "test").isOk());
      dev->abandonSide();
      ASSERT_TRUE(dev->synchronize("test").isOk());
      EXPECT_EQ(ran, (std::vector<int>{1, 2, 3})) << mode;
    }
    ASSERT_TRUE(dev->beginCapture("test").isOk());
    EXPECT_FALSE(dev->hostWorkOnSide(work(5), "test").isOk()) << "during a capture";
    std::unique_ptr<Graph> graph;
    ASSERT_TRUE(dev->endCapture(graph, "test").isOk());
    EXPECT_EQ(dev->description().find("side stream early") != std::string::npos, early);
  }
  // Any other mode is refused when the side stream is first used.
  xlnetc::rt::testing::ScopedEnv env("XLNETC_EMU_SIDE_STREAM", "Early");
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  Status st = dev->hostWorkOnSide([] { return Status::ok(); }, "test");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "emulated device: XLNETC_EMU_SIDE_STREAM is 'Early'; it takes early "
                          "or late");
}

TEST(EmuDevice, MissingKernelIsNamed) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  std::unique_ptr<Module> mod;
  ASSERT_TRUE(dev->loadModule(smokeModule(), mod).isOk());
  Kernel k;
  Status st = dev->getKernel(*mod, "no_such_kernel", k);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("no kernel 'no_such_kernel'"), std::string::npos)
      << st.message();
}

TEST(EmuDevice, CompileErrorCarriesTheCompilerLog) {
  ScopedCacheDir cache;
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  ModuleSource bad;
  bad.name = "broken.cu";
  bad.text = "#include \"xlnetc_prelude.cuh\"\n"
             "XL_KERNEL void k(float *p) { p[0] = undeclared_name; }\n"
             "XL_EXPORT(k)\n";
  std::unique_ptr<Module> mod;
  Status st = dev->loadModule(bad, mod);
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("failed to compile broken.cu"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("undeclared_name"), std::string::npos)
      << st.message();
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(EmuDevice, DeadlockedBarrierIsALaunchErrorNamingTheStep) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  std::unique_ptr<Module> mod;
  ASSERT_TRUE(dev->loadModule(smokeModule(), mod).isOk());
  Kernel k;
  ASSERT_TRUE(dev->getKernel(*mod, "divergent_barrier", k).isOk());
  DevPtr out;
  ASSERT_TRUE(dev->alloc(64 * 4, out).isOk());
  void *params[] = {&out};
  LaunchDims dims;
  dims.grid[0] = 2;
  dims.block[0] = 64;
  Status st = dev->launch(k, dims, params, "step 7 (test, loc 'here')");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message().rfind("step 7 (test, loc 'here'): ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find("divergent_barrier"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("block (0,0,0)"), std::string::npos) << st.message();
  // The barriers are quoted at their lines of the module's source.
  EXPECT_NE(st.message().find("device_smoke.cu:"), std::string::npos) << st.message();
  // The device is still usable after a failed launch.
  dev->free(out);
  runSmokeKernels(*dev);
}

/// The emulated device's shared memory per block: sm_90's, or
/// $XLNETC_EMU_SMEM_PER_BLOCK's; a launch over it is refused as a GPU
/// refuses one, and a bad value fails the open.
TEST(EmuDevice, SharedMemoryPerBlockIsSm90sOrTheEnvironments) {
  std::unique_ptr<Device> dev;
  ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  EXPECT_EQ(dev->maxSharedMemoryPerBlock(), size_t(227 * 1024));
  EXPECT_EQ(gpuTargetOf(*dev).smemPerBlock, 227 * 1024);
  EXPECT_EQ(gpuTargetOf(*dev).arch, "emu");
  {
    xlnetc::rt::testing::ScopedEnv env("XLNETC_EMU_SMEM_PER_BLOCK", "511");
    ASSERT_TRUE(openDevice(DeviceKind::Emu, {}, dev).isOk());
  }
  EXPECT_EQ(dev->maxSharedMemoryPerBlock(), 511u);
  EXPECT_NE(dev->description().find("511 bytes of shared memory per block"), std::string::npos)
      << dev->description();
  std::unique_ptr<Module> mod;
  ASSERT_TRUE(dev->loadModule(smokeModule(), mod).isOk());
  Kernel sum;
  ASSERT_TRUE(dev->getKernel(*mod, "block_sum", sum).isOk());
  DevPtr x, out;
  ASSERT_TRUE(dev->alloc(128 * 4, x).isOk());
  ASSERT_TRUE(dev->alloc(4, out).isOk());
  int n = 128;
  void *params[] = {&x, &out, &n};
  LaunchDims dims;
  dims.block[0] = 128;
  dims.dynSmem = 512; // one byte too many
  Status st = dev->launch(sum, dims, params, "step 3 (test, loc 'here')");
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "step 3 (test, loc 'here'): kernel 'block_sum': 512 bytes of dynamic "
                          "shared memory exceed the emulated device's 511 bytes per block "
                          "(XLNETC_EMU_SMEM_PER_BLOCK)");
  dims.block[0] = 64; // 64 floats staged: within the limit
  dims.dynSmem = 64 * sizeof(float);
  st = dev->launch(sum, dims, params, "");
  EXPECT_TRUE(st.isOk()) << st.message();
  dev->free(x);
  dev->free(out);
  for (const char *bad : {"0", "abc", "99K", "-1", "232449"}) {
    xlnetc::rt::testing::ScopedEnv env("XLNETC_EMU_SMEM_PER_BLOCK", bad);
    st = openDevice(DeviceKind::Emu, {}, dev);
    ASSERT_FALSE(st.isOk()) << bad;
    EXPECT_EQ(st.message(), std::string("emulated device: XLNETC_EMU_SMEM_PER_BLOCK is '") + bad +
                                "'; it takes the bytes of shared memory a block may have, 1 to "
                                "232448 (sm_90's, the emulator's most)");
  }
}

TEST(DeviceKind, ParseAndResolve) {
  DeviceKind k;
  EXPECT_TRUE(parseDeviceKind("emu", k).isOk());
  EXPECT_EQ(k, DeviceKind::Emu);
  Status st = parseDeviceKind("gpu", k);
  ASSERT_FALSE(st.isOk());
  EXPECT_EQ(st.message(), "unknown device 'gpu' (expected host, emu, cuda or auto)");
  std::string why;
  DeviceKind resolved = resolveDeviceKind(DeviceKind::Auto, &why);
  EXPECT_EQ(resolved == DeviceKind::Cuda, cudaDeviceAvailable(nullptr));
  if (resolved == DeviceKind::Host)
    EXPECT_FALSE(why.empty());
  EXPECT_EQ(resolveDeviceKind(DeviceKind::Emu), DeviceKind::Emu);
}

/// The same source through NVRTC for sm_90: it compiles with the embedded
/// prelude, and ptxas reports no spills.
TEST(Sm90, SmokeKernelsCompileWithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  CompiledCubin out;
  Status st = compileForSm90("device_smoke.cu", smokeSource(), out);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(isElf(out.cubin));
  auto usage = parsePtxasLog(out.log);
  int entries = 0;
  for (const KernelResourceUsage &u : usage) {
    entries += u.entry;
    EXPECT_EQ(u.spillStores, 0) << u.kernel;
    EXPECT_EQ(u.spillLoads, 0) << u.kernel;
  }
  EXPECT_EQ(entries, 3) << out.log;
}

/// Every same-source test kernel (the emulator's too) compiles with NVRTC
/// for sm_90 against the embedded prelude alone, without spills.
TEST(Sm90, EveryTestKernelCompilesWithoutSpills) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (!cuda::loadNvrtc(nvrtc).isOk())
    GTEST_SKIP() << "no NVRTC on this machine";
  int files = 0, entries = 0;
  for (const SourceFile &f : embeddedTestKernels()) {
    ++files;
    const std::string &name = f.name;
    CompiledCubin out;
    Status st = compileForSm90(name, f.text, out);
    ASSERT_TRUE(st.isOk()) << st.message();
    for (const KernelResourceUsage &u : parsePtxasLog(out.log)) {
      entries += u.entry;
      EXPECT_EQ(u.spillStores + u.spillLoads, 0) << name << ": " << u.kernel;
      EXPECT_LE(u.smemBytes, 48 * 1024) << name << ": " << u.kernel;
    }
  }
  EXPECT_GE(files, 6);
  EXPECT_GE(entries, 27);
}

TEST(CudaDevice, RunsTheSmokeKernelsOrSaysWhyNot) {
  std::unique_ptr<Device> dev;
  Status st = openDevice(DeviceKind::Cuda, {}, dev);
  if (!st.isOk()) {
    // One line that says what is missing.
    EXPECT_EQ(st.message().find('\n'), std::string::npos) << st.message();
    GTEST_SKIP() << "no GPU: " << st.message();
  }
  runSmokeKernels(*dev);
}

} // namespace
