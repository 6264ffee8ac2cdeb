//===- NvrtcTest.cpp - NVRTC to CUBIN, the kernel cache, ptxas reports ----===//
//
// Needs the CUDA toolkit (NVRTC), not a GPU; skipped when NVRTC cannot be
// loaded and /usr/local/cuda is absent.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/Nvrtc.h"

#include "runtime/device/CudaApi.h"
#include "runtime/device/KernelCache.h"
#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace xlnetc::rt;
namespace fs = std::filesystem;

namespace {

/// A block reduction through shared memory, with a helper from an in-memory
/// header: 256 floats of static shared memory, one barrier.
NvrtcSource reduceKernel() {
  NvrtcSource src;
  src.name = "xl_reduce.cu";
  src.headers = {{"xl_test_prelude.cuh", R"(
#pragma once
template <int N> __device__ float xl_scale(float x) { return x * float(N); }
)"}};
  src.text = R"(#include "xl_test_prelude.cuh"

extern "C" __global__ void xl_reduce(float *out, const float *in, int n) {
  __shared__ float partial[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? xl_scale<2>(in[i]) : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride)
      partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = partial[0];
}
)";
  return src;
}

/// e_machine of an ELF file (little-endian), 190 = EM_CUDA.
int elfMachine(const std::string &elf) {
  return elf.size() > 19 ? (unsigned char)elf[18] | (unsigned char)elf[19] << 8
                         : -1;
}

class NvrtcTest : public ::testing::Test {
protected:
  void SetUp() override {
    const cuda::Nvrtc *nvrtc = nullptr;
    Status s = cuda::loadNvrtc(nvrtc);
    if (!s && !fs::exists("/usr/local/cuda"))
      GTEST_SKIP() << s.message();
    ASSERT_TRUE(s) << s.message();
    dir_ = fs::temp_directory_path() /
           ("xlnetc-nvrtc-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override {
    if (!dir_.empty())
      fs::remove_all(dir_);
  }

  fs::path dir_;
};

TEST_F(NvrtcTest, CompilesToSm90CubinAndCaches) {
  KernelCache cache(dir_.string());
  NvrtcOptions opts; // sm_90, c++17
  CompiledCubin cold;
  Status s = compileCubin(reduceKernel(), opts, &cache, cold);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(isElf(cold.cubin));
  EXPECT_EQ(elfMachine(cold.cubin), 190) << "EM_CUDA";
  EXPECT_FALSE(cold.fromCache);
  EXPECT_EQ(cold.cacheError, "");
  EXPECT_EQ(cold.cachePath, cache.path(cold.key, "cubin"));
  EXPECT_TRUE(fs::exists(cold.cachePath));

  CompiledCubin warm;
  s = compileCubin(reduceKernel(), opts, &cache, warm);
  ASSERT_TRUE(s) << s.message();
  EXPECT_TRUE(warm.fromCache);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.log, cold.log);
  EXPECT_EQ(warm.key, cold.key);
  EXPECT_LT(warm.compileMs * 5, cold.compileMs);
  std::printf("xl_reduce.cu -> sm_90: %zu bytes; cold %.1f ms, warm %.2f ms\n",
              cold.cubin.size(), cold.compileMs, warm.compileMs);

  // Without a cache: compiled again, same bytes.
  CompiledCubin uncached;
  ASSERT_TRUE(compileCubin(reduceKernel(), opts, nullptr, uncached));
  EXPECT_FALSE(uncached.fromCache);
  EXPECT_EQ(uncached.cachePath, "");
  EXPECT_EQ(uncached.cubin, cold.cubin);
}

TEST_F(NvrtcTest, AnotherArchIsAnotherEntry) {
  KernelCache cache(dir_.string());
  NvrtcOptions sm90, sm80;
  sm80.arch = "sm_80";
  CompiledCubin a, b;
  ASSERT_TRUE(compileCubin(reduceKernel(), sm90, &cache, a));
  Status s = compileCubin(reduceKernel(), sm80, &cache, b);
  ASSERT_TRUE(s) << s.message();
  EXPECT_FALSE(b.fromCache);
  EXPECT_NE(a.key, b.key);
  EXPECT_NE(a.cubin, b.cubin);
  EXPECT_TRUE(fs::exists(cache.path(a.key, "cubin")));
  EXPECT_TRUE(fs::exists(cache.path(b.key, "cubin")));
}

TEST_F(NvrtcTest, KeyCoversSourceHeadersOptionsAndNvrtc) {
  NvrtcSource src = reduceKernel();
  NvrtcOptions opts;
  std::string base = cubinCacheKey(src, opts, "13.0/1");
  EXPECT_EQ(base, cubinCacheKey(reduceKernel(), NvrtcOptions(), "13.0/1"));

  NvrtcSource otherText = src;
  otherText.text += "\n";
  EXPECT_NE(base, cubinCacheKey(otherText, opts, "13.0/1"));
  NvrtcSource otherHeader = src;
  otherHeader.headers[0].text += "// changed\n";
  EXPECT_NE(base, cubinCacheKey(otherHeader, opts, "13.0/1"));
  NvrtcSource otherHeaderName = src;
  otherHeaderName.headers[0].name = "other.cuh";
  EXPECT_NE(base, cubinCacheKey(otherHeaderName, opts, "13.0/1"));
  NvrtcSource otherName = src;
  otherName.name = "renamed.cu";
  EXPECT_NE(base, cubinCacheKey(otherName, opts, "13.0/1"));

  NvrtcOptions verbose = opts, lineinfo = opts, extra = opts, std20 = opts;
  verbose.ptxasVerbose = true;
  lineinfo.lineinfo = true;
  extra.extra = {"-DXL_TILE=64"};
  std20.std = "c++20";
  for (const NvrtcOptions &o : {verbose, lineinfo, extra, std20})
    EXPECT_NE(base, cubinCacheKey(src, o, "13.0/1"));
  EXPECT_NE(base, cubinCacheKey(src, opts, "13.0/2")); // another NVRTC build
  EXPECT_NE(base, cubinCacheKey(src, opts, "13.1/1"));

  EXPECT_EQ(nvrtcCommandLine(verbose),
            (std::vector<std::string>{"-arch=sm_90", "-std=c++17",
                                      "--ptxas-options=-v"}));
}

TEST_F(NvrtcTest, CompileErrorCarriesTheLog) {
  KernelCache cache(dir_.string());
  NvrtcSource bad;
  bad.name = "bad.cu";
  bad.text = "extern \"C\" __global__ void k(float *p) {\n"
             "  p[0] = 1.0f\n" // missing ';'
             "}\n";
  CompiledCubin out;
  Status s = compileCubin(bad, NvrtcOptions(), &cache, out);
  ASSERT_FALSE(s);
  const std::string &m = s.message();
  EXPECT_EQ(m.rfind("NVRTC failed to compile bad.cu for sm_90: "
                    "NVRTC_ERROR_COMPILATION\n",
                    0),
            0u)
      << m;
  EXPECT_NE(m.find("bad.cu(3): error: expected a \";\""), std::string::npos)
      << m;
  EXPECT_TRUE(!fs::exists(dir_) || fs::is_empty(dir_)) << "nothing cached";

  // An unknown option is an error with NVRTC's words too.
  NvrtcOptions badOption;
  badOption.extra = {"--no-such-option"};
  s = compileCubin(reduceKernel(), badOption, nullptr, out);
  ASSERT_FALSE(s);
  EXPECT_EQ(
      s.message().rfind("NVRTC failed to compile xl_reduce.cu for sm_90: ", 0),
      0u)
      << s.message();
  EXPECT_NE(s.message().find("--no-such-option"), std::string::npos)
      << s.message();

  // PTX-only targets are refused up front.
  NvrtcOptions ptx;
  ptx.arch = "compute_90";
  s = compileCubin(reduceKernel(), ptx, nullptr, out);
  EXPECT_EQ(s.message(),
            "NVRTC failed to compile xl_reduce.cu for compute_90: "
            "'compute_90' is not a GPU architecture of the form sm_XY (a "
            "CUBIN is compiled for a real GPU, not PTX)");
}

TEST_F(NvrtcTest, PtxasReportOfARealKernelSurvivesTheCache) {
  KernelCache cache(dir_.string());
  NvrtcOptions opts;
  opts.ptxasVerbose = true;
  CompiledCubin cold, warm;
  Status s = compileCubin(reduceKernel(), opts, &cache, cold);
  ASSERT_TRUE(s) << s.message();
  ASSERT_NE(cold.log.find("ptxas info"), std::string::npos) << cold.log;

  std::vector<KernelResourceUsage> usage = parsePtxasLog(cold.log);
  ASSERT_EQ(usage.size(), 1u) << cold.log;
  EXPECT_EQ(usage[0].kernel, "xl_reduce");
  EXPECT_TRUE(usage[0].entry);
  EXPECT_EQ(usage[0].arch, "sm_90");
  EXPECT_GT(usage[0].registers, 0);
  EXPECT_LE(usage[0].registers, 64);
  EXPECT_GE(usage[0].barriers, 1);
  EXPECT_EQ(usage[0].smemBytes, 256 * 4);
  EXPECT_EQ(usage[0].spillStores, 0);
  EXPECT_EQ(usage[0].spillLoads, 0);
  EXPECT_EQ(usage[0].stackBytes, 0);

  // Warm: the log, and so the report, come back from the cache.
  ASSERT_TRUE(compileCubin(reduceKernel(), opts, &cache, warm));
  EXPECT_TRUE(warm.fromCache);
  EXPECT_EQ(warm.log, cold.log);
  std::vector<KernelResourceUsage> again = parsePtxasLog(warm.log);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].registers, usage[0].registers);
}

TEST_F(NvrtcTest, CorruptCacheEntryIsRecompiled) {
  KernelCache cache(dir_.string());
  CompiledCubin first, second, third;
  ASSERT_TRUE(compileCubin(reduceKernel(), NvrtcOptions(), &cache, first));
  {
    std::fstream f(first.cachePath,
                   std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64);
    f.put('\x00');
    f.put('\x13');
  }
  fs::resize_file(first.cachePath, fs::file_size(first.cachePath) - 7);
  ASSERT_TRUE(compileCubin(reduceKernel(), NvrtcOptions(), &cache, second));
  EXPECT_FALSE(second.fromCache);
  EXPECT_EQ(second.cubin, first.cubin);
  ASSERT_TRUE(compileCubin(reduceKernel(), NvrtcOptions(), &cache, third));
  EXPECT_TRUE(third.fromCache);
}

TEST_F(NvrtcTest, VersionAndArchitectures) {
  std::string version;
  ASSERT_TRUE(nvrtcVersionString(version));
  EXPECT_EQ(version.find('.') != std::string::npos, true) << version;
  std::vector<int> archs;
  ASSERT_TRUE(supportedArchs(archs));
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
}

TEST(NvrtcDriverTest, DriverMustBeAsNewAsNvrtc) {
  EXPECT_TRUE(checkDriverForNvrtc(13000, 13, 0));
  EXPECT_TRUE(checkDriverForNvrtc(13020, 13, 0));
  EXPECT_TRUE(checkDriverForNvrtc(13000, 12, 8));
  EXPECT_EQ(checkDriverForNvrtc(12080, 13, 0).message(),
            "CUDA driver 12.8 cannot load CUBINs from NVRTC 13.0: install a "
            "driver for CUDA 13.0 or newer (NVIDIA 580+), or set "
            "XLNETC_CUDA_HOME to a CUDA 12 toolkit");
}

//===----------------------------------------------------------------------===//
// parsePtxasLog on canned logs
//===----------------------------------------------------------------------===//

TEST(PtxasLogTest, SpillsAndCalleesOfTheCuda13Format) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function '_Z9attn_fwdILi64EEvPf' for "
      "'sm_90'\n"
      "ptxas info    : Function properties for _Z9attn_fwdILi64EEvPf\n"
      "ptxas         .     40 bytes stack frame, 24 bytes spill stores, 32 "
      "bytes spill loads\n"
      "ptxas info    : Used 255 registers, used 1 barriers, 40 bytes "
      "cumulative stack size, 49152 bytes smem\n"
      "ptxas info    : Compile time = 20.606 ms\n"
      "ptxas info    : Compiling entry function 'ln_fwd' for 'sm_90'\n"
      "ptxas info    : Function properties for ln_fwd\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes "
      "spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers\n"
      "ptxas info    : Function properties for _Z6helperPfi\n"
      "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 8 "
      "bytes spill loads\n"
      "ptxas warning : Registers are spilled to local memory in function "
      "'_Z9attn_fwdILi64EEvPf', 24 bytes spill stores, 32 bytes spill loads\n";
  std::vector<KernelResourceUsage> u = parsePtxasLog(log);
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].kernel, "_Z9attn_fwdILi64EEvPf");
  EXPECT_TRUE(u[0].entry);
  EXPECT_EQ(u[0].arch, "sm_90");
  EXPECT_EQ(u[0].registers, 255);
  EXPECT_EQ(u[0].barriers, 1);
  EXPECT_EQ(u[0].stackBytes, 40);
  EXPECT_EQ(u[0].spillStores, 24);
  EXPECT_EQ(u[0].spillLoads, 32);
  EXPECT_EQ(u[0].smemBytes, 49152);

  EXPECT_EQ(u[1].kernel, "ln_fwd");
  EXPECT_EQ(u[1].registers, 32);
  EXPECT_EQ(u[1].barriers, 0);
  EXPECT_EQ(u[1].smemBytes, 0);
  EXPECT_EQ(u[1].spillStores, 0);

  EXPECT_EQ(u[2].kernel, "_Z6helperPfi");
  EXPECT_FALSE(u[2].entry);
  EXPECT_EQ(u[2].stackBytes, 16);
  EXPECT_EQ(u[2].spillStores, 8);
  EXPECT_EQ(u[2].spillLoads, 8);
  EXPECT_EQ(u[2].registers, 0);
}

TEST(PtxasLogTest, OlderFormatAndNoise) {
  // CUDA 11/12 print cmem and no barrier count; compile errors and warnings
  // from the front end are not ptxas lines.
  const std::string log =
      "k.cu(3): warning #177-D: variable \"x\" was declared but never "
      "referenced\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Function properties for k\n"
      "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 8 registers, 1024 bytes smem, 360 bytes cmem[0]\n";
  std::vector<KernelResourceUsage> u = parsePtxasLog(log);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].kernel, "k");
  EXPECT_EQ(u[0].arch, "sm_80");
  EXPECT_EQ(u[0].registers, 8);
  EXPECT_EQ(u[0].smemBytes, 1024);
  // Older ptxas indents the stack line without the "ptxas" prefix.
  EXPECT_EQ(u[0].stackBytes, 8);
  EXPECT_EQ(u[0].spillStores, 4);
  EXPECT_EQ(u[0].spillLoads, 4);
  EXPECT_TRUE(parsePtxasLog("").empty());
  EXPECT_TRUE(parsePtxasLog("no ptxas here\n").empty());
}

} // namespace

namespace {

/// Kernels compiled one NVRTC program each on several threads are the
/// bytes one thread makes, in the kernels' order; the error is the first
/// failing kernel's in that order, whichever thread met it first.
TEST(NvrtcConcurrent, ThreadsMakeTheSameCubinsAndTheFirstErrorInOrder) {
  const cuda::Nvrtc *nvrtc = nullptr;
  if (Status s = cuda::loadNvrtc(nvrtc); !s)
    GTEST_SKIP() << s.message();
  const std::string head = "#include \"xlnetc_prelude.cuh\"\n";
  std::vector<std::pair<std::string, std::string>> kernels;
  for (int i = 0; i < 5; ++i)
    kernels.emplace_back(
        "k" + std::to_string(i),
        "XL_KERNEL void k" + std::to_string(i) + "(float *x) { x[threadIdx.x] *= " +
            std::to_string(i + 2) + ".0f; }\nXL_EXPORT(k" + std::to_string(i) + ")\n");
  NvrtcOptions opts;
  opts.arch = "sm_90";
  std::vector<CompiledCubin> one, many;
  {
    xlnetc::rt::testing::ScopedEnv threads("XLNETC_COMPILE_THREADS", "1");
    EXPECT_EQ(compileThreads(), 1u);
    ASSERT_TRUE(compileKernelsConcurrently(head, kernels, opts, nullptr, one));
  }
  xlnetc::rt::testing::ScopedEnv threads("XLNETC_COMPILE_THREADS", "3");
  EXPECT_EQ(compileThreads(), 3u);
  ASSERT_TRUE(compileKernelsConcurrently(head, kernels, opts, nullptr, many));
  ASSERT_EQ(one.size(), kernels.size());
  ASSERT_EQ(many.size(), kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    EXPECT_FALSE(one[i].cubin.empty());
    EXPECT_EQ(one[i].cubin, many[i].cubin) << kernels[i].first;
  }
  kernels[1].second = "this is not C++ (k1)\n";
  kernels[3].second = "nor is this (k3)\n";
  std::vector<CompiledCubin> bad;
  Status st = compileKernelsConcurrently(head, kernels, opts, nullptr, bad);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message().rfind("kernel k1 for sm_90: NVRTC failed to compile k1.cu", 0), 0u)
      << st.message();
}

} // namespace
