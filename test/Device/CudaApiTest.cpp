//===- CudaApiTest.cpp - Loading the CUDA driver, NVRTC and cuBLASLt ------===//
//
// Runs everywhere: without a driver it checks the exact "no CUDA driver"
// message; the driver loader and openDevice are exercised against a fake
// cuGetProcAddress; NVRTC and cuBLASLt load from the toolkit (skipped when
// /usr/local/cuda is absent). With -DXLNETC_HAVE_CUDA_HEADERS and the CUDA
// include directory, every declaration of CudaApi.h is checked against the
// real headers at compile time (bottom of this file).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaApi.h"

#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>
#include <map>
#include <optional>

// A named namespace: its using-directives must not reach <cuda.h> below.
namespace cuda_api_test {

using namespace xlnetc::rt;
using namespace xlnetc::rt::cuda;

//===----------------------------------------------------------------------===//
// The real loader on this machine
//===----------------------------------------------------------------------===//

bool driverInstalled() {
  void *handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle)
    ::dlclose(handle);
  return handle != nullptr;
}

TEST(CudaDriverTest, NoDriverGivesOneClearLine) {
  if (driverInstalled())
    GTEST_SKIP() << "a CUDA driver is installed here";
  const Driver *drv = reinterpret_cast<const Driver *>(&drv); // not null
  Status s = loadDriver(drv);
  ASSERT_FALSE(s);
  EXPECT_EQ(drv, nullptr);
  EXPECT_EQ(s.message(),
            "no CUDA driver: dlopen(\"libcuda.so.1\") failed: libcuda.so.1: "
            "cannot open shared object file: No such file or directory");
  // Cached: the same answer again, and from openDevice.
  EXPECT_EQ(loadDriver(drv).message(), s.message());
  DeviceInfo info;
  EXPECT_EQ(openDevice(0, info).message(), s.message());
}

TEST(CudaDriverTest, OpensTheFirstGpuWhenThereIsOne) {
  if (!driverInstalled())
    GTEST_SKIP() << "no CUDA driver here";
  const Driver *drv = nullptr;
  Status s = loadDriver(drv);
  ASSERT_TRUE(s) << s.message();
  EXPECT_GE(drv->version, kMinDriverVersion);
  DeviceInfo info;
  s = openDevice(*drv, 0, info);
  if (!s)
    GTEST_SKIP() << s.message(); // a driver without a GPU
  EXPECT_EQ(info.arch, "sm_" + std::to_string(info.ccMajor) +
                           std::to_string(info.ccMinor));
  EXPECT_GT(info.smCount, 0);
  EXPECT_GT(info.totalMemory, 0u);
  EXPECT_NE(info.context, nullptr);
  std::printf("GPU 0: %s, %s, %d SMs, %.1f GiB, driver %s\n", info.name.c_str(),
              info.arch.c_str(), info.smCount,
              double(info.totalMemory) / (1 << 30),
              versionString(drv->version).c_str());
  // A real call through a resolved pointer.
  size_t free = 0, total = 0;
  EXPECT_TRUE(XLNETC_CU_CHECK(*drv, "test", cuMemGetInfo(&free, &total)));
  EXPECT_GT(total, 0u);
  EXPECT_TRUE(closeDevice(*drv, info));
}

//===----------------------------------------------------------------------===//
// The driver loader against a fake cuGetProcAddress
//===----------------------------------------------------------------------===//

namespace fake {

struct Request {
  int version;
  uint64_t flags;
};
std::map<std::string, Request> requests;
int driverVersion = 13000;
int deviceCount = 1;
CUresult initResult = CUDA_SUCCESS;
std::string missingSymbol;
int released = 0;
CUcontext const kContext = reinterpret_cast<CUcontext>(0x1234);

CUresult getErrorName(CUresult error, const char **str) {
  switch (error) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    *str = "CUDA_ERROR_OUT_OF_MEMORY";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *str = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *str = "CUDA_ERROR_INVALID_VALUE";
    return CUDA_SUCCESS;
  default:
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult getErrorString(CUresult error, const char **str) {
  switch (error) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    *str = "out of memory";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *str = "no CUDA-capable device is detected";
    return CUDA_SUCCESS;
  default:
    *str = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}
CUresult driverGetVersion(int *v) {
  *v = driverVersion;
  return CUDA_SUCCESS;
}
CUresult init(unsigned) { return initResult; }
CUresult deviceGetCount(int *count) {
  *count = deviceCount;
  return CUDA_SUCCESS;
}
CUresult deviceGet(CUdevice *dev, int ordinal) {
  *dev = 100 + ordinal;
  return CUDA_SUCCESS;
}
CUresult deviceGetName(char *name, int len, CUdevice) {
  std::snprintf(name, size_t(len), "NVIDIA H100 80GB HBM3");
  return CUDA_SUCCESS;
}
CUresult deviceGetAttribute(int *value, CUdevice_attribute attr, CUdevice) {
  switch (attr) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = 9;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = 132;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *value = 48 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = 227 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    *value = 228 * 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
    *value = 0;
    break;
  case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
    *value = 0x1b;
    break;
  case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
    *value = 0;
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult deviceTotalMem(size_t *bytes, CUdevice) {
  *bytes = size_t(80) << 30;
  return CUDA_SUCCESS;
}
CUresult primaryCtxRetain(CUcontext *ctx, CUdevice) {
  *ctx = kContext;
  return CUDA_SUCCESS;
}
CUresult primaryCtxRelease(CUdevice) {
  ++released;
  return CUDA_SUCCESS;
}
CUresult ctxSetCurrent(CUcontext ctx) {
  return ctx == kContext ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult memAlloc(CUdeviceptr *, size_t) { return CUDA_ERROR_OUT_OF_MEMORY; }
CUresult neverCalled() { return CUDA_ERROR_UNKNOWN; }

template <typename F> void *erase(F *fn) {
  return reinterpret_cast<void *>(fn);
}

const std::map<std::string, void *> &implemented() {
  static const std::map<std::string, void *> table = {
      {"cuGetErrorName", erase(getErrorName)},
      {"cuGetErrorString", erase(getErrorString)},
      {"cuDriverGetVersion", erase(driverGetVersion)},
      {"cuInit", erase(init)},
      {"cuDeviceGetCount", erase(deviceGetCount)},
      {"cuDeviceGet", erase(deviceGet)},
      {"cuDeviceGetName", erase(deviceGetName)},
      {"cuDeviceGetAttribute", erase(deviceGetAttribute)},
      {"cuDeviceTotalMem", erase(deviceTotalMem)},
      {"cuDevicePrimaryCtxRetain", erase(primaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease", erase(primaryCtxRelease)},
      {"cuCtxSetCurrent", erase(ctxSetCurrent)},
      {"cuMemAlloc", erase(memAlloc)},
  };
  return table;
}

/// Behaves like the real cuGetProcAddress_v2 as far as the loader can tell.
CUresult getProcV2(const char *symbol, void **pfn, int version, uint64_t flags,
                   CUdriverProcAddressQueryResult *status) {
  requests[symbol] = {version, flags};
  *pfn = nullptr;
  if (version > driverVersion)
    return CUDA_ERROR_INVALID_VALUE; // as documented
  if (symbol == missingSymbol) {
    *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_SUCCESS;
  }
  auto it = implemented().find(symbol);
  *pfn = it != implemented().end() ? it->second : erase(neverCalled);
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

CUresult getProcV1(const char *symbol, void **pfn, int version,
                   uint64_t flags) {
  CUdriverProcAddressQueryResult status;
  CUresult r = getProcV2(symbol, pfn, version, flags, &status);
  if (r == CUDA_SUCCESS && status != CU_GET_PROC_ADDRESS_SUCCESS)
    *pfn = nullptr;
  return r;
}

/// Resets the fake to a healthy one-GPU CUDA 13.0 driver.
void reset() {
  requests.clear();
  driverVersion = 13000;
  deviceCount = 1;
  initResult = CUDA_SUCCESS;
  missingSymbol.clear();
  released = 0;
}

} // namespace fake

class FakeDriverTest : public ::testing::Test {
protected:
  void SetUp() override { fake::reset(); }
};

TEST_F(FakeDriverTest, ResolvesEverySymbolAtItsAbiVersion) {
  Driver drv;
  Status s = resolveDriver(fake::getProcV2, nullptr, drv);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(drv.version, 13000);
  // Every entry point is set and was asked for at the version of its ABI
  // with the default (legacy stream) flags.
#define CHECK_RESOLVED(name, abi, ...)                                         \
  EXPECT_NE(reinterpret_cast<void *>(drv.name), nullptr) << #name;             \
  ASSERT_EQ(fake::requests.count(#name), 1u) << #name;                         \
  EXPECT_EQ(fake::requests[#name].version, abi) << #name;                      \
  EXPECT_EQ(fake::requests[#name].flags, CU_GET_PROC_ADDRESS_DEFAULT)          \
      << #name;                                                                \
  EXPECT_LE(abi, kMinDriverVersion) << #name;
  XLNETC_CUDA_DRIVER_FUNCTIONS(CHECK_RESOLVED)
#undef CHECK_RESOLVED
  // The ones whose newest ABI differs from ours.
  EXPECT_EQ(fake::requests["cuMemAlloc"].version, 3020);       // _v2
  EXPECT_EQ(fake::requests["cuCtxSynchronize"].version, 2000); // not 13.0's
  EXPECT_EQ(fake::requests["cuStreamBeginCapture"].version, 10010);
  // The original cuGetProcAddress works as well.
  Driver v1;
  s = resolveDriver(nullptr, fake::getProcV1, v1);
  ASSERT_TRUE(s) << s.message();
  EXPECT_NE(v1.cuLaunchKernel, nullptr);
}

TEST_F(FakeDriverTest, OldDriverIsRefusedWithItsVersion) {
  fake::driverVersion = 11080;
  Driver drv;
  Status s = resolveDriver(fake::getProcV2, nullptr, drv);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "CUDA driver 11.8 is older than 12.0 needed by "
                         "xlnetc; update the NVIDIA driver (525 or newer for "
                         "CUDA 12, 580 or newer for CUDA 13)");
  EXPECT_FALSE(resolveDriver(nullptr, nullptr, drv));
}

TEST_F(FakeDriverTest, MissingSymbolIsNamed) {
  fake::missingSymbol = "cuGraphInstantiateWithFlags";
  Driver drv;
  Status s = resolveDriver(fake::getProcV2, nullptr, drv);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "CUDA driver 13.0 lacks cuGraphInstantiateWithFlags "
                         "(ABI of CUDA 11.4): symbol not found");
}

TEST_F(FakeDriverTest, OpenDeviceReadsTheDevice) {
  Driver drv;
  ASSERT_TRUE(resolveDriver(fake::getProcV2, nullptr, drv));
  DeviceInfo info;
  Status s = openDevice(drv, 0, info);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(info.ordinal, 0);
  EXPECT_EQ(info.device, 100);
  EXPECT_EQ(info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(info.arch, "sm_90");
  EXPECT_EQ(info.smCount, 132);
  EXPECT_EQ(info.totalMemory, size_t(80) << 30);
  EXPECT_EQ(info.maxSharedPerBlockOptin, 227 * 1024);
  EXPECT_EQ(info.driverVersion, 13000);
  EXPECT_EQ(info.pciAddress, "0000:1b:00");
  EXPECT_EQ(info.context, fake::kContext);
  EXPECT_TRUE(closeDevice(drv, info));
  EXPECT_EQ(fake::released, 1);
  EXPECT_TRUE(closeDevice(drv, info)); // once only
  EXPECT_EQ(fake::released, 1);

  EXPECT_EQ(openDevice(drv, 1, info).message(),
            "CUDA device 1 requested but the driver sees 1 GPU");
}

TEST_F(FakeDriverTest, ProcessGpuByLocalRankOrTheOneBound) {
  Driver drv;
  ASSERT_TRUE(resolveDriver(fake::getProcV2, nullptr, drv));
  int ordinal = -1;
  // One GPU in sight (bound to the process by the launcher): that one.
  ASSERT_TRUE(processGpu(drv, 3, ordinal));
  EXPECT_EQ(ordinal, 0);
  // Several: the process's index on its node.
  fake::deviceCount = 8;
  ASSERT_TRUE(processGpu(drv, 0, ordinal));
  EXPECT_EQ(ordinal, 0);
  ASSERT_TRUE(processGpu(drv, 7, ordinal));
  EXPECT_EQ(ordinal, 7);
  EXPECT_EQ(processGpu(drv, 8, ordinal).message(),
            "this process is local rank 8 (counting from 0) on its node but the driver sees 8 "
            "GPUs: run at most 8 processes per node, or bind one GPU to each (srun "
            "--gpus-per-task=1, CUDA_VISIBLE_DEVICES)");
  // None: openDevice says what is missing.
  fake::deviceCount = 0;
  ASSERT_TRUE(processGpu(drv, 2, ordinal));
  EXPECT_EQ(ordinal, 2);
  DeviceInfo info;
  EXPECT_EQ(openDevice(drv, ordinal, info).message(),
            "CUDA driver found but no GPU: cuDeviceGetCount returned 0");
}

TEST_F(FakeDriverTest, DriverWithoutGpu) {
  Driver drv;
  ASSERT_TRUE(resolveDriver(fake::getProcV2, nullptr, drv));
  int count = -1;
  ASSERT_TRUE(deviceCount(drv, count));
  EXPECT_EQ(count, 1);
  DeviceInfo info;
  fake::deviceCount = 0;
  ASSERT_TRUE(deviceCount(drv, count));
  EXPECT_EQ(count, 0);
  EXPECT_EQ(openDevice(drv, 0, info).message(),
            "CUDA driver found but no GPU: cuDeviceGetCount returned 0");
  fake::initResult = CUDA_ERROR_NO_DEVICE;
  EXPECT_EQ(openDevice(drv, 0, info).message(),
            "CUDA driver found but no GPU: cuInit failed: CUDA_ERROR_NO_DEVICE "
            "(no CUDA-capable device is detected)");
  count = -1;
  ASSERT_TRUE(deviceCount(drv, count));
  EXPECT_EQ(count, 0);
  fake::initResult = CUDA_ERROR_OUT_OF_MEMORY;
  EXPECT_EQ(deviceCount(drv, count).message(),
            "CUDA driver found but not usable: cuInit failed: "
            "CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST_F(FakeDriverTest, ErrorsNameTheCallTheResultAndTheSite) {
  Driver drv;
  ASSERT_TRUE(resolveDriver(fake::getProcV2, nullptr, drv));
  EXPECT_TRUE(checkCu(drv, CUDA_SUCCESS, "cuMemAlloc", "x"));
  EXPECT_EQ(checkCu(drv, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc",
                    "step 7 'ffn1' at tiny.mlir:12:5")
                .message(),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) "
            "[step 7 'ffn1' at tiny.mlir:12:5]");
  // An unknown code, and no `where`.
  EXPECT_EQ(checkCu(drv, 12345, "cuLaunchKernel", "").message(),
            "cuLaunchKernel failed: CUresult 12345");
  // A driver that was never loaded still formats.
  EXPECT_EQ(checkCu(Driver(), 100, "cuInit", "").message(),
            "cuInit failed: CUresult 100");

  // The macro: the call's name and this file:line.
  CUdeviceptr ptr = 0;
  int line = __LINE__ + 1;
  Status s = XLNETC_CU_CHECK(drv, "step 3", cuMemAlloc(&ptr, 1 << 20));
  EXPECT_EQ(s.message(),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) "
            "[step 3] (CudaApiTest.cpp:" +
                std::to_string(line) + ")");
  auto returning = [&]() -> Status {
    XLNETC_CU_RETURN_IF_ERROR(drv, "", cuMemAlloc(&ptr, 16));
    return Status::error("not reached");
  };
  EXPECT_EQ(returning().message().rfind("cuMemAlloc failed", 0), 0u);
}

TEST(CudaVersionTest, VersionStrings) {
  EXPECT_EQ(versionString(13000), "13.0");
  EXPECT_EQ(versionString(12080), "12.8");
  EXPECT_EQ(versionString(11040), "11.4");
}

//===----------------------------------------------------------------------===//
// NVRTC and cuBLASLt from the toolkit
//===----------------------------------------------------------------------===//

bool toolkitPresent() { return std::filesystem::exists("/usr/local/cuda"); }

using xlnetc::rt::testing::ScopedEnv;

TEST(NvrtcLoadTest, LoadsFromTheToolkit) {
  const Nvrtc *nvrtc = nullptr;
  Status s = loadNvrtc(nvrtc);
  if (!s && !toolkitPresent())
    GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  EXPECT_GE(nvrtc->major, 12);
  EXPECT_NE(nvrtc->library, "");
  EXPECT_GT(nvrtc->librarySize, 0u);
  EXPECT_EQ(nvrtc->fingerprint(),
            nvrtc->version() + "/" + std::to_string(nvrtc->librarySize));
  const Nvrtc *again = nullptr;
  EXPECT_TRUE(loadNvrtc(again));
  EXPECT_EQ(again, nvrtc);
  int count = 0;
  EXPECT_TRUE(
      XLNETC_NVRTC_CHECK(*nvrtc, "", nvrtcGetNumSupportedArchs(&count)));
  EXPECT_GT(count, 0);
  // Error text.
  EXPECT_EQ(
      checkNvrtc(*nvrtc, NVRTC_ERROR_COMPILATION, "nvrtcCompileProgram", "k.cu")
          .message(),
      "nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION [k.cu]");
}

TEST(NvrtcLoadTest, CandidatesFollowTheRule) {
  {
    ScopedEnv home("XLNETC_CUDA_HOME", "/opt/cuda-13.0");
    EXPECT_EQ(nvrtcCandidates(), (std::vector<std::string>{
                                     "/opt/cuda-13.0/lib64/libnvrtc.so.13",
                                     "/opt/cuda-13.0/lib64/libnvrtc.so.12"}));
    EXPECT_EQ(
        cublasLtCandidates(),
        (std::vector<std::string>{"/opt/cuda-13.0/lib64/libcublasLt.so.13"}));
  }
  ScopedEnv home("XLNETC_CUDA_HOME", nullptr);
  // NVIDIA's pip wheels under the Python package folders named.
  namespace fs = std::filesystem;
  fs::path site = fs::temp_directory_path() / ("xlnetc-site-" + std::to_string(::getpid()));
  fs::create_directories(site / "nvidia/cu13/lib");
  fs::create_directories(site / "nvidia/nccl/lib");
  std::ofstream(site / "nvidia/cu13/lib/libnvrtc.so.13") << "";
  std::ofstream(site / "nvidia/cu13/lib/libcublasLt.so.13") << "";
  std::ofstream(site / "nvidia/nccl/lib/libnccl.so.2") << "";
  ScopedEnv sites("XLNETC_PYTHON_SITE", ("/nonexistent:" + site.string()).c_str());
  EXPECT_EQ(pythonSiteDirs(), (std::vector<std::string>{"/nonexistent", site.string()}));
  const std::string wheels = site.string() + "/nvidia/";
  EXPECT_EQ(nvrtcCandidates(),
            (std::vector<std::string>{
                "libnvrtc.so.13", "/usr/local/cuda/lib64/libnvrtc.so.13",
                wheels + "cu13/lib/libnvrtc.so.13", "libnvrtc.so.12",
                "/usr/local/cuda/lib64/libnvrtc.so.12"}));
  EXPECT_EQ(cublasLtCandidates(),
            (std::vector<std::string>{"libcublasLt.so.13",
                                      "/usr/local/cuda/lib64/libcublasLt.so.13",
                                      wheels + "cu13/lib/libcublasLt.so.13"}));
  EXPECT_EQ(ncclCandidates(),
            (std::vector<std::string>{"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                      wheels + "nccl/lib/libnccl.so.2"}));
  fs::remove_all(site);
}

TEST(NvrtcLoadTest, FailureListsWhatWasTried) {
  Nvrtc nvrtc;
  Status s = loadNvrtcFrom(
      {"/nonexistent/lib64/libnvrtc.so.13", "libxlnetc-no-such-nvrtc.so.12"},
      nvrtc);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "no NVRTC: tried /nonexistent/lib64/libnvrtc.so.13 "
            "(/nonexistent/lib64/libnvrtc.so.13: cannot open shared object "
            "file: No such file or directory); libxlnetc-no-such-nvrtc.so.12 "
            "(libxlnetc-no-such-nvrtc.so.12: cannot open shared object file: "
            "No such file or directory)");
  // A library without NVRTC's symbols.
  s = loadNvrtcFrom({"libm.so.6"}, nvrtc);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("has no nvrtcGetErrorString"), std::string::npos)
      << s.message();
}

TEST(CublasLtLoadTest, LoadsWithoutADriver) {
  const CublasLt *lt = nullptr;
  Status s = loadCublasLt(lt);
  if (!s && !toolkitPresent())
    GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  EXPECT_GE(lt->version, 130000u);
  EXPECT_NE(lt->library, "");
  cublasLtHandle_t handle = nullptr;
  Status created = XLNETC_CUBLAS_CHECK(*lt, "", cublasLtCreate(&handle));
  if (driverInstalled()) {
    // With a GPU this works; without one it fails like below.
    if (created) {
      EXPECT_TRUE(XLNETC_CUBLAS_CHECK(*lt, "", cublasLtDestroy(handle)));
    }
    return;
  }
  ASSERT_FALSE(created);
  EXPECT_EQ(created.message().rfind(
                "cublasLtCreate failed: CUBLAS_STATUS_NOT_INITIALIZED (", 0),
            0u)
      << created.message();
  // cuBLASLt's own words in the parentheses.
  EXPECT_EQ(
      checkCublas(*lt, CUBLAS_STATUS_NOT_SUPPORTED, "cublasLtMatmul", "step 4")
          .message(),
      std::string("cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED (") +
          lt->cublasLtGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED) +
          ") [step 4]");
}

TEST(NcclLoadTest, LoadsAndMakesAnIdWithoutAGpu) {
  const Nccl *nccl = nullptr;
  Status s = loadNccl(nccl);
  if (!s && !toolkitPresent())
    GTEST_SKIP() << s.message();
  ASSERT_TRUE(s) << s.message();
  EXPECT_GE(nccl->version, 21100) << "ncclRedOpCreatePreMulSum needs NCCL 2.11";
  EXPECT_NE(nccl->library, "");
  // The bootstrap id rank 0 broadcasts needs no GPU.
  ncclUniqueId id{};
  ASSERT_TRUE(checkNccl(*nccl, nccl->ncclGetUniqueId(&id), "ncclGetUniqueId", ""));
  bool nonZero = false;
  for (char c : id.internal)
    nonZero |= c != 0;
  EXPECT_TRUE(nonZero);
  // An error names the call, NCCL's words and where.
  Status e = checkNccl(*nccl, 2, "ncclAllReduce", "bucket 3");
  EXPECT_EQ(e.message().rfind("ncclAllReduce failed: ", 0), 0u) << e.message();
  EXPECT_NE(e.message().find("(ncclResult_t 2) [bucket 3]"), std::string::npos) << e.message();
}

TEST(NcclLoadTest, FailureListsWhatWasTried) {
  Nccl nccl;
  Status s = loadNcclFrom({"/nonexistent/libnccl.so.2"}, nccl);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("/nonexistent/libnccl.so.2"), std::string::npos) << s.message();
}

} // namespace cuda_api_test

//===----------------------------------------------------------------------===//
// Declarations against the real headers
//===----------------------------------------------------------------------===//
//
// <cuda.h> renames entry points with macros (cuMemAlloc -> cuMemAlloc_v2), so
// our function types are captured under other names first, and after the
// include every macro below uses an entry point's name only with # and ##,
// which suppress macro expansion.

namespace ours {
#define XLNETC_CAPTURE_DRIVER(name, version, ...)                              \
  using name##_t = decltype(::xlnetc::rt::cuda::Driver::name);
XLNETC_CUDA_DRIVER_FUNCTIONS(XLNETC_CAPTURE_DRIVER)
#undef XLNETC_CAPTURE_DRIVER
#define XLNETC_CAPTURE_NVRTC(name, ...)                                        \
  using name##_t = decltype(::xlnetc::rt::cuda::Nvrtc::name);
XLNETC_NVRTC_FUNCTIONS(XLNETC_CAPTURE_NVRTC)
#undef XLNETC_CAPTURE_NVRTC
#define XLNETC_CAPTURE_CUBLASLT(name, ...)                                     \
  using name##_t = decltype(::xlnetc::rt::cuda::CublasLt::name);
XLNETC_CUBLASLT_FUNCTIONS(XLNETC_CAPTURE_CUBLASLT)
#undef XLNETC_CAPTURE_CUBLASLT
#define XLNETC_CAPTURE_NCCL(name, ...)                                         \
  using name##_t = decltype(::xlnetc::rt::cuda::Nccl::name);
XLNETC_NCCL_FUNCTIONS(XLNETC_CAPTURE_NCCL)
#undef XLNETC_CAPTURE_NCCL
} // namespace ours

#ifdef XLNETC_HAVE_CUDA_HEADERS
#include <cublasLt.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <nccl.h>
#include <nvrtc.h>

#include <cstddef>
#include <type_traits>

namespace {

namespace cu = ::xlnetc::rt::cuda;

/// A real-header type rewritten into the terms of CudaApi.h: enums become
/// int, the cuBLASLt descriptor structs become ours, through pointers, const
/// and function types.
template <typename T> struct Canon {
  using type = std::conditional_t<std::is_enum_v<T>, int, T>;
};
template <typename T> struct Canon<const T> {
  using type = const typename Canon<T>::type;
};
template <typename T> struct Canon<T *> {
  using type = typename Canon<T>::type *;
};
template <typename R, typename... A> struct Canon<R(A...)> {
  using type = typename Canon<R>::type(typename Canon<A>::type...);
};
template <> struct Canon<::cublasLtMatmulAlgo_t> {
  using type = cu::cublasLtMatmulAlgo_t;
};
template <> struct Canon<::cublasLtMatmulHeuristicResult_t> {
  using type = cu::cublasLtMatmulHeuristicResult_t;
};
template <> struct Canon<::cublasLtMatrixLayoutOpaque_t> {
  using type = cu::cublasLtMatrixLayoutOpaque_t;
};
template <> struct Canon<::cublasLtMatmulDescOpaque_t> {
  using type = cu::cublasLtMatmulDescOpaque_t;
};
template <> struct Canon<::cublasLtMatmulPreferenceOpaque_t> {
  using type = cu::cublasLtMatmulPreferenceOpaque_t;
};
template <typename T> using canon_t = typename Canon<T>::type;

// Handles are the very same types.
static_assert(std::is_same_v<cu::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<cu::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<cu::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<cu::CUstream, ::CUstream>);
static_assert(std::is_same_v<cu::CUevent, ::CUevent>);
static_assert(std::is_same_v<cu::CUgraph, ::CUgraph>);
static_assert(std::is_same_v<cu::CUgraphExec, ::CUgraphExec>);
static_assert(std::is_same_v<cu::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<cu::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<cu::nvrtcProgram, ::nvrtcProgram>);
static_assert(std::is_same_v<cu::cublasLtHandle_t, ::cublasLtHandle_t>);
static_assert(std::is_same_v<cu::cudaStream_t, ::cudaStream_t>);

// Enums passed as int: same size.
static_assert(sizeof(::CUresult) == sizeof(int));
static_assert(sizeof(::CUdevice_attribute) == sizeof(int));
static_assert(sizeof(::CUfunction_attribute) == sizeof(int));
static_assert(sizeof(::CUstreamCaptureMode) == sizeof(int));
static_assert(sizeof(::CUdriverProcAddressQueryResult) == sizeof(int));
static_assert(sizeof(::nvrtcResult) == sizeof(int));
static_assert(sizeof(::cublasStatus_t) == sizeof(int));
static_assert(sizeof(::cublasComputeType_t) == sizeof(int));
static_assert(sizeof(::cublasOperation_t) == sizeof(int));
static_assert(sizeof(::cudaDataType_t) == sizeof(int));
static_assert(sizeof(::cublasLtMatmulDescAttributes_t) == sizeof(int));
static_assert(sizeof(::cublasLtMatrixLayoutAttribute_t) == sizeof(int));
static_assert(sizeof(::cublasLtMatmulPreferenceAttributes_t) == sizeof(int));
static_assert(sizeof(::cublasLtEpilogue_t) == sizeof(int));
static_assert(sizeof(::cublasLtOrder_t) == sizeof(int));

// Struct layouts.
static_assert(sizeof(cu::cublasLtMatmulAlgo_t) ==
              sizeof(::cublasLtMatmulAlgo_t));
static_assert(sizeof(cu::cublasLtMatrixLayoutOpaque_t) ==
              sizeof(::cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(cu::cublasLtMatmulDescOpaque_t) ==
              sizeof(::cublasLtMatmulDescOpaque_t));
static_assert(sizeof(cu::cublasLtMatmulPreferenceOpaque_t) ==
              sizeof(::cublasLtMatmulPreferenceOpaque_t));
static_assert(sizeof(cu::cublasLtMatmulHeuristicResult_t) ==
              sizeof(::cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(cu::cublasLtMatmulHeuristicResult_t, workspaceSize) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(cu::cublasLtMatmulHeuristicResult_t, state) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(cu::cublasLtMatmulHeuristicResult_t, wavesCount) ==
              offsetof(::cublasLtMatmulHeuristicResult_t, wavesCount));

// Every constant.
#define CHECK_CONSTANT(type, name, value)                                      \
  static_assert((long long)cu::name == (long long)::name, #name);
XLNETC_CUDA_DRIVER_CONSTANTS(CHECK_CONSTANT)
XLNETC_NVRTC_CONSTANTS(CHECK_CONSTANT)
XLNETC_CUBLASLT_CONSTANTS(CHECK_CONSTANT)
#undef CHECK_CONSTANT

// Every driver entry point against PFN_<name>_v<version> of cudaTypedefs.h:
// the typedef exists only if <version> is a version where the ABI changed,
// and its type must be ours.
#define CHECK_DRIVER(name, version, ...)                                       \
  static_assert(                                                               \
      std::is_same_v<canon_t<PFN_##name##_v##version>, ours::name##_t>,        \
      #name " at " #version);
XLNETC_CUDA_DRIVER_FUNCTIONS(CHECK_DRIVER)
#undef CHECK_DRIVER
static_assert(std::is_same_v<canon_t<PFN_cuGetProcAddress_v12000>,
                             cu::cuGetProcAddress_v2_t *>);
static_assert(std::is_same_v<canon_t<PFN_cuGetProcAddress_v11030>,
                             cu::cuGetProcAddress_v1_t *>);

// NVRTC and cuBLASLt against the declarations themselves.
#define CHECK_LIBRARY(name, ...)                                               \
  static_assert(std::is_same_v<canon_t<decltype(&::name)>, ours::name##_t>,    \
                #name);
XLNETC_NVRTC_FUNCTIONS(CHECK_LIBRARY)
XLNETC_CUBLASLT_FUNCTIONS(CHECK_LIBRARY)
// NCCL: ncclGetUniqueId and ncclCommInitRank take nccl.h's anonymous
// ncclUniqueId struct, which no declaration of ours can name; its size and
// alignment are checked instead, every other function's type in full.
CHECK_LIBRARY(ncclGetVersion)
CHECK_LIBRARY(ncclGetErrorString)
CHECK_LIBRARY(ncclCommDestroy)
CHECK_LIBRARY(ncclCommAbort)
CHECK_LIBRARY(ncclGroupStart)
CHECK_LIBRARY(ncclGroupEnd)
CHECK_LIBRARY(ncclAllReduce)
CHECK_LIBRARY(ncclRedOpCreatePreMulSum)
CHECK_LIBRARY(ncclRedOpDestroy)
#undef CHECK_LIBRARY
static_assert(sizeof(::ncclUniqueId) == sizeof(cu::ncclUniqueId) &&
              alignof(::ncclUniqueId) == alignof(cu::ncclUniqueId));
static_assert(NCCL_UNIQUE_ID_BYTES == cu::kNcclUniqueIdBytes);
static_assert(int(::ncclSuccess) == cu::ncclSuccess && int(::ncclFloat32) == cu::ncclFloat32 &&
              int(::ncclSum) == cu::ncclSum &&
              int(::ncclScalarHostImmediate) == cu::ncclScalarHostImmediate);

TEST(CudaHeadersTest, DeclarationsMatchTheRealHeaders) {
  // The static_asserts above did the work at compile time.
  SUCCEED() << "checked against CUDA " << CUDA_VERSION;
}

} // namespace
#endif // XLNETC_HAVE_CUDA_HEADERS
