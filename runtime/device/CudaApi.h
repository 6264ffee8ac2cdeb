//===- CudaApi.h - CUDA driver, NVRTC, cuBLASLt via dlopen ------*- C++ -*-===//
//
// The runtime never links the CUDA driver, NVRTC or cuBLASLt and never
// includes their headers: the same binary starts on a machine without any of
// them (design/cuda.md §4) and says what is missing. This header declares the
// minimal subset of the three C APIs that xlnetc uses — opaque handle types,
// the enum values as plain ints, and one function pointer per entry point —
// and the loaders that fill them in with dlopen:
//
//   - the driver: dlopen("libcuda.so.1"), dlsym("cuGetProcAddress_v2"), then
//     every entry point through cuGetProcAddress with an explicit CUDA version:
//     the version in which the ABI of our declaration was introduced (the
//     `_vNNNN` suffix of the PFN typedef in cudaTypedefs.h). Asking by base
//     name plus the version pins the ABI: "cuMemAlloc" at 3020 is
//     cuMemAlloc_v2 (size_t sizes), "cuCtxSynchronize" at 2000 is the
//     no-argument version and not CUDA 13's cuCtxSynchronize_v2(CUcontext).
//     All versions are <= kMinDriverVersion, so every driver we accept has
//     them;
//   - NVRTC and cuBLASLt: dlopen of the versioned soname and dlsym.
//
// Where the real headers exist, test/Device/CudaApiTest.cpp checks every
// value, struct layout and function type here against them, and every driver
// version against the PFN_<name>_v<version> typedef of that name.
//
// Names mirror the C APIs (CUDA_SUCCESS, CU_DEVICE_ATTRIBUTE_...) so the
// vendor documentation applies verbatim; they live in xlnetc::rt::cuda and do
// not clash with the real headers.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_CUDAAPI_H
#define XLNETC_RUNTIME_DEVICE_CUDAAPI_H

// cuda.h renames entry points with macros (#define cuMemAlloc cuMemAlloc_v2),
// which would silently rename the members of Driver below in that TU only.
#ifdef __cuda_cuda_h__
#error "include runtime/device/CudaApi.h before <cuda.h>"
#endif

#include "runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

// Opaque handle tags, spelled as in cuda.h / nvrtc.h / cublasLt.h so that the
// handle types below are the very same pointer types as the real ones.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphExec_st;
struct CUgraphNode_st;
struct _nvrtcProgram;
struct cublasLtContext;
struct ncclComm;

namespace xlnetc::rt::cuda {

//===----------------------------------------------------------------------===//
// CUDA driver API
//===----------------------------------------------------------------------===//

// Enums of cuda.h are plain ints here: same size and calling convention.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long; // CUdeviceptr_v2 on LP64
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUstreamCaptureMode = int;
using CUdriverProcAddressQueryResult = int;
using CUcontext = ::CUctx_st *;
using CUmodule = ::CUmod_st *;
using CUfunction = ::CUfunc_st *;
using CUstream = ::CUstream_st *;
using CUevent = ::CUevent_st *;
using CUgraph = ::CUgraph_st *;
using CUgraphExec = ::CUgraphExec_st *;

/// X(type, name, value) for every driver constant we use.
#define XLNETC_CUDA_DRIVER_CONSTANTS(X)                                        \
  X(CUresult, CUDA_SUCCESS, 0)                                                 \
  X(CUresult, CUDA_ERROR_INVALID_VALUE, 1)                                     \
  X(CUresult, CUDA_ERROR_OUT_OF_MEMORY, 2)                                     \
  X(CUresult, CUDA_ERROR_NOT_INITIALIZED, 3)                                   \
  X(CUresult, CUDA_ERROR_DEINITIALIZED, 4)                                     \
  X(CUresult, CUDA_ERROR_STUB_LIBRARY, 34)                                     \
  X(CUresult, CUDA_ERROR_DEVICE_UNAVAILABLE, 46)                               \
  X(CUresult, CUDA_ERROR_NO_DEVICE, 100)                                       \
  X(CUresult, CUDA_ERROR_INVALID_DEVICE, 101)                                  \
  X(CUresult, CUDA_ERROR_INVALID_IMAGE, 200)                                   \
  X(CUresult, CUDA_ERROR_INVALID_CONTEXT, 201)                                 \
  X(CUresult, CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                               \
  X(CUresult, CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)                         \
  X(CUresult, CUDA_ERROR_INVALID_HANDLE, 400)                                  \
  X(CUresult, CUDA_ERROR_NOT_FOUND, 500)                                       \
  X(CUresult, CUDA_ERROR_NOT_READY, 600)                                       \
  X(CUresult, CUDA_ERROR_ILLEGAL_ADDRESS, 700)                                 \
  X(CUresult, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)                         \
  X(CUresult, CUDA_ERROR_LAUNCH_FAILED, 719)                                   \
  X(CUresult, CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)                          \
  X(CUresult, CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804)                  \
  X(CUresult, CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901)                      \
  X(CUresult, CUDA_ERROR_UNKNOWN, 999)                                         \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1)          \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)    \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                     \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, 12)       \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13)                    \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)          \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 33)                    \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 34)                 \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 36)             \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 37)       \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                 \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,    \
    39)                                                                        \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 50)                 \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)      \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)      \
  X(CUdevice_attribute,                                                        \
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, 81)              \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,  \
    82)                                                                        \
  X(CUdevice_attribute, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, \
    97)                                                                        \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 0)          \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, 1)              \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, 2)               \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, 3)               \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_NUM_REGS, 4)                       \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_PTX_VERSION, 5)                    \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_BINARY_VERSION, 6)                 \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)  \
  X(CUfunction_attribute, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,  \
    9)                                                                         \
  X(CUstreamCaptureMode, CU_STREAM_CAPTURE_MODE_GLOBAL, 0)                     \
  X(CUstreamCaptureMode, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, 1)               \
  X(CUstreamCaptureMode, CU_STREAM_CAPTURE_MODE_RELAXED, 2)                    \
  X(unsigned, CU_STREAM_DEFAULT, 0)                                            \
  X(unsigned, CU_STREAM_NON_BLOCKING, 1)                                       \
  X(unsigned, CU_EVENT_DEFAULT, 0)                                             \
  X(unsigned, CU_EVENT_BLOCKING_SYNC, 1)                                       \
  X(unsigned, CU_EVENT_DISABLE_TIMING, 2)                                      \
  X(unsigned long long, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH, 1)    \
  X(unsigned long long, CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD, 2)                 \
  X(unsigned long long, CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, 8)      \
  X(uint64_t, CU_GET_PROC_ADDRESS_DEFAULT, 0)                                  \
  X(CUdriverProcAddressQueryResult, CU_GET_PROC_ADDRESS_SUCCESS, 0)            \
  X(CUdriverProcAddressQueryResult, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND, 1)   \
  X(CUdriverProcAddressQueryResult,                                            \
    CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT, 2)

#define XLNETC_DECLARE_CONSTANT(type, name, value) constexpr type name = value;
XLNETC_CUDA_DRIVER_CONSTANTS(XLNETC_DECLARE_CONSTANT)

/// X(name, version, function type): every driver entry point xlnetc calls,
/// with the CUDA version passed to cuGetProcAddress for it. The version is
/// the one in which the ABI declared here appeared (cudaTypedefs.h names it
/// PFN_<name>_v<version>); a later version of the same name may have another
/// signature (cuCtxSynchronize at 13000 takes a CUcontext).
#define XLNETC_CUDA_DRIVER_FUNCTIONS(X)                                        \
  X(cuGetErrorName, 6000, CUresult(CUresult error, const char **pStr))         \
  X(cuGetErrorString, 6000, CUresult(CUresult error, const char **pStr))       \
  X(cuInit, 2000, CUresult(unsigned int flags))                                \
  X(cuDriverGetVersion, 2020, CUresult(int *driverVersion))                    \
  X(cuDeviceGetCount, 2000, CUresult(int *count))                              \
  X(cuDeviceGet, 2000, CUresult(CUdevice *device, int ordinal))                \
  X(cuDeviceGetName, 2000, CUresult(char *name, int len, CUdevice dev))        \
  X(cuDeviceGetAttribute, 2000,                                                \
    CUresult(int *pi, CUdevice_attribute attrib, CUdevice dev))                \
  X(cuDeviceTotalMem, 3020, CUresult(size_t *bytes, CUdevice dev))             \
  X(cuDevicePrimaryCtxRetain, 7000, CUresult(CUcontext *pctx, CUdevice dev))   \
  X(cuDevicePrimaryCtxRelease, 11000, CUresult(CUdevice dev))                  \
  X(cuCtxSetCurrent, 4000, CUresult(CUcontext ctx))                            \
  X(cuCtxSynchronize, 2000, CUresult())                                        \
  X(cuMemGetInfo, 3020, CUresult(size_t *free, size_t *total))                 \
  X(cuMemAlloc, 3020, CUresult(CUdeviceptr *dptr, size_t bytesize))            \
  X(cuMemFree, 3020, CUresult(CUdeviceptr dptr))                               \
  X(cuMemAllocHost, 3020, CUresult(void **pp, size_t bytesize))                \
  X(cuMemFreeHost, 2000, CUresult(void *p))                                    \
  X(cuMemcpyHtoD, 3020,                                                        \
    CUresult(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount))    \
  X(cuMemcpyDtoH, 3020,                                                        \
    CUresult(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount))          \
  X(cuMemcpyDtoD, 3020,                                                        \
    CUresult(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount))  \
  X(cuMemcpyHtoDAsync, 3020,                                                   \
    CUresult(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount,     \
             CUstream hStream))                                                \
  X(cuMemcpyDtoDAsync, 3020,                                                   \
    CUresult(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount,   \
             CUstream hStream))                                                \
  X(cuMemcpyDtoHAsync, 3020,                                                   \
    CUresult(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount,           \
             CUstream hStream))                                                \
  X(cuMemsetD8, 3020,                                                          \
    CUresult(CUdeviceptr dstDevice, unsigned char uc, size_t N))               \
  X(cuMemsetD8Async, 3020,                                                     \
    CUresult(CUdeviceptr dstDevice, unsigned char uc, size_t N,                \
             CUstream hStream))                                                \
  X(cuModuleLoadData, 2000, CUresult(CUmodule *module, const void *image))     \
  X(cuModuleUnload, 2000, CUresult(CUmodule hmod))                             \
  X(cuModuleGetFunction, 2000,                                                 \
    CUresult(CUfunction *hfunc, CUmodule hmod, const char *name))              \
  X(cuFuncSetAttribute, 9000,                                                  \
    CUresult(CUfunction hfunc, CUfunction_attribute attrib, int value))        \
  X(cuFuncGetAttribute, 2020,                                                  \
    CUresult(int *pi, CUfunction_attribute attrib, CUfunction hfunc))          \
  X(cuLaunchKernel, 4000,                                                      \
    CUresult(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,       \
             unsigned int gridDimZ, unsigned int blockDimX,                    \
             unsigned int blockDimY, unsigned int blockDimZ,                   \
             unsigned int sharedMemBytes, CUstream hStream,                    \
             void **kernelParams, void **extra))                               \
  X(cuStreamCreate, 2000, CUresult(CUstream *phStream, unsigned int Flags))    \
  X(cuStreamDestroy, 4000, CUresult(CUstream hStream))                         \
  X(cuStreamSynchronize, 2000, CUresult(CUstream hStream))                     \
  X(cuStreamBeginCapture, 10010,                                               \
    CUresult(CUstream hStream, CUstreamCaptureMode mode))                      \
  X(cuStreamEndCapture, 10000, CUresult(CUstream hStream, CUgraph *phGraph))   \
  X(cuGraphInstantiateWithFlags, 11040,                                        \
    CUresult(CUgraphExec *phGraphExec, CUgraph hGraph,                         \
             unsigned long long flags))                                        \
  X(cuGraphLaunch, 10000, CUresult(CUgraphExec hGraphExec, CUstream hStream))  \
  X(cuGraphExecDestroy, 10000, CUresult(CUgraphExec hGraphExec))               \
  X(cuGraphDestroy, 10000, CUresult(CUgraph hGraph))                           \
  X(cuEventCreate, 2000, CUresult(CUevent *phEvent, unsigned int Flags))       \
  X(cuEventRecord, 2000, CUresult(CUevent hEvent, CUstream hStream))           \
  X(cuEventSynchronize, 2000, CUresult(CUevent hEvent))                        \
  X(cuEventElapsedTime, 2000,                                                  \
    CUresult(float *pMilliseconds, CUevent hStart, CUevent hEnd))              \
  X(cuEventDestroy, 4000, CUresult(CUevent hEvent))                           \
  X(cuStreamWaitEvent, 3020,                                                   \
    CUresult(CUstream hStream, CUevent hEvent, unsigned int Flags))

/// cuGetProcAddress_v2 (CUDA 12.0) and the CUDA 11.3 original.
using cuGetProcAddress_v2_t =
    CUresult(const char *symbol, void **pfn, int cudaVersion, uint64_t flags,
             CUdriverProcAddressQueryResult *symbolStatus);
using cuGetProcAddress_v1_t = CUresult(const char *symbol, void **pfn,
                                       int cudaVersion, uint64_t flags);

/// The oldest driver accepted: 12.0. It has cuGetProcAddress_v2 (which tells
/// "no such symbol" from "too old"), every ABI in the list above, and it is
/// what the libnvrtc.so.12 fallback needs anyway. CUBINs of NVRTC 13 need a
/// 13.x driver in addition (see checkDriverForNvrtc in Nvrtc.h).
constexpr int kMinDriverVersion = 12000;

/// The driver's entry points. Filled in completely by loadDriver, or not at
/// all.
struct Driver {
#define XLNETC_DECLARE_FUNCTION(name, version, ...)                            \
  std::add_pointer_t<__VA_ARGS__> name = nullptr;
  XLNETC_CUDA_DRIVER_FUNCTIONS(XLNETC_DECLARE_FUNCTION)
#undef XLNETC_DECLARE_FUNCTION

  /// cuDriverGetVersion, e.g. 13000.
  int version = 0;
  /// Where libcuda.so.1 was found.
  std::string library;
};

/// "13.0" for 13000, "12.2" for 12020.
std::string versionString(int cudaVersion);

/// Loads the driver once per process (thread-safe) and returns it in `out`,
/// or the cached reason it is unusable, e.g.
///   no CUDA driver: dlopen("libcuda.so.1") failed: libcuda.so.1: cannot open
///   shared object file: No such file or directory
///   CUDA driver 11.8 is older than 12.0 needed by xlnetc ...
/// The library stays loaded for the life of the process.
Status loadDriver(const Driver *&out);

/// Resolves every entry point of `out` through `getProcV2` (or, when that is
/// null, `getProcV1`) and checks the driver version. loadDriver's work after
/// dlopen; split out so a test can drive it with a fake cuGetProcAddress.
Status resolveDriver(cuGetProcAddress_v2_t *getProcV2,
                     cuGetProcAddress_v1_t *getProcV1, Driver &out);

/// What the runtime needs to know about one GPU.
struct DeviceInfo {
  int ordinal = -1;
  CUdevice device = 0;
  std::string name; // "NVIDIA H100 80GB HBM3"
  int ccMajor = 0, ccMinor = 0;
  /// "sm_<major><minor>", what NVRTC compiles for ("sm_90" on H100/H200;
  /// kernels needing the arch-specific sm_90a features must ask for them).
  std::string arch;
  int smCount = 0;
  size_t totalMemory = 0;    // bytes
  int maxSharedPerBlock = 0; // bytes without opt-in
  int maxSharedPerBlockOptin = 0;
  int maxSharedPerSm = 0;
  int driverVersion = 0;
  /// Its PCI address, "0000:1b:00": which GPU of the node it is, whatever
  /// CUDA_VISIBLE_DEVICES renumbered.
  std::string pciAddress;
  /// The device's primary context, retained and made current on the thread
  /// that called openDevice. Released by closeDevice.
  CUcontext context = nullptr;
};

/// cuInit + cuDeviceGetCount: how many GPUs the driver sees, 0 when cuInit
/// answers CUDA_ERROR_NO_DEVICE (a driver without a GPU). For `--device auto`.
Status deviceCount(const Driver &drv, int &count);

/// A data-parallel process's GPU (docs/Distributed.md): with several GPUs
/// in sight, the one of its index among the processes on its node
/// (`localRank`); with one, that one (the launcher bound a GPU to each
/// process: srun --gpus-per-task=1, CUDA_VISIBLE_DEVICES). A local rank
/// past the GPUs is an error saying how many there are. Without a GPU,
/// `ordinal` is `localRank` and openDevice says what is missing.
Status processGpu(const Driver &drv, int localRank, int &ordinal);

/// Initializes the driver and opens GPU `ordinal`: cuInit, the device's
/// properties, its primary context retained and set current. Errors name the
/// situation, e.g. "CUDA driver found but no GPU: cuDeviceGetCount returned 0".
Status openDevice(const Driver &drv, int ordinal, DeviceInfo &out);
/// loadDriver + openDevice.
Status openDevice(int ordinal, DeviceInfo &out);
/// Releases the primary context retained by openDevice.
Status closeDevice(const Driver &drv, DeviceInfo &info);

/// Ok when `result` is CUDA_SUCCESS; otherwise
///   cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory) [where]
/// `call` may be a whole call expression ("cuMemAlloc(&p, n)"): only the name
/// before '(' is shown. `where` (the plan step and its MLIR location, say) is
/// left out when empty; `file`:`line` is appended when given.
Status checkCu(const Driver &drv, CUresult result, const char *call,
               const std::string &where, const char *file = nullptr,
               int line = 0);

/// Calls `drv.call` and checks it with the call site's file:line:
///   XLNETC_CU_CHECK(drv, where, cuMemAlloc(&ptr, bytes))
#define XLNETC_CU_CHECK(drv, where, call)                                      \
  ::xlnetc::rt::cuda::checkCu((drv), (drv).call, #call, (where), __FILE__,     \
                              __LINE__)
/// XLNETC_CU_CHECK that returns the error from the enclosing function.
#define XLNETC_CU_RETURN_IF_ERROR(drv, where, call)                            \
  XLNETC_RETURN_IF_ERROR(XLNETC_CU_CHECK(drv, where, call))

//===----------------------------------------------------------------------===//
// NVRTC
//===----------------------------------------------------------------------===//

using nvrtcResult = int;
using nvrtcProgram = ::_nvrtcProgram *;

#define XLNETC_NVRTC_CONSTANTS(X)                                              \
  X(nvrtcResult, NVRTC_SUCCESS, 0)                                             \
  X(nvrtcResult, NVRTC_ERROR_OUT_OF_MEMORY, 1)                                 \
  X(nvrtcResult, NVRTC_ERROR_INVALID_INPUT, 3)                                 \
  X(nvrtcResult, NVRTC_ERROR_INVALID_PROGRAM, 4)                               \
  X(nvrtcResult, NVRTC_ERROR_INVALID_OPTION, 5)                                \
  X(nvrtcResult, NVRTC_ERROR_COMPILATION, 6)
XLNETC_NVRTC_CONSTANTS(XLNETC_DECLARE_CONSTANT)

/// X(name, function type) for every NVRTC function xlnetc calls.
#define XLNETC_NVRTC_FUNCTIONS(X)                                              \
  X(nvrtcGetErrorString, const char *(nvrtcResult result))                     \
  X(nvrtcVersion, nvrtcResult(int *major, int *minor))                         \
  X(nvrtcGetNumSupportedArchs, nvrtcResult(int *numArchs))                     \
  X(nvrtcGetSupportedArchs, nvrtcResult(int *supportedArchs))                  \
  X(nvrtcCreateProgram,                                                        \
    nvrtcResult(nvrtcProgram *prog, const char *src, const char *name,         \
                int numHeaders, const char *const *headers,                    \
                const char *const *includeNames))                              \
  X(nvrtcDestroyProgram, nvrtcResult(nvrtcProgram *prog))                      \
  X(nvrtcCompileProgram, nvrtcResult(nvrtcProgram prog, int numOptions,        \
                                     const char *const *options))              \
  X(nvrtcGetPTXSize, nvrtcResult(nvrtcProgram prog, size_t *ptxSizeRet))       \
  X(nvrtcGetPTX, nvrtcResult(nvrtcProgram prog, char *ptx))                    \
  X(nvrtcGetCUBINSize, nvrtcResult(nvrtcProgram prog, size_t *cubinSizeRet))   \
  X(nvrtcGetCUBIN, nvrtcResult(nvrtcProgram prog, char *cubin))                \
  X(nvrtcGetProgramLogSize,                                                    \
    nvrtcResult(nvrtcProgram prog, size_t *logSizeRet))                        \
  X(nvrtcGetProgramLog, nvrtcResult(nvrtcProgram prog, char *log))             \
  X(nvrtcAddNameExpression,                                                    \
    nvrtcResult(nvrtcProgram prog, const char *const name_expression))         \
  X(nvrtcGetLoweredName,                                                       \
    nvrtcResult(nvrtcProgram prog, const char *const name_expression,          \
                const char **lowered_name))

/// NVRTC's entry points and identity.
struct Nvrtc {
#define XLNETC_DECLARE_FUNCTION(name, ...)                                     \
  std::add_pointer_t<__VA_ARGS__> name = nullptr;
  XLNETC_NVRTC_FUNCTIONS(XLNETC_DECLARE_FUNCTION)
#undef XLNETC_DECLARE_FUNCTION

  int major = 0, minor = 0; // nvrtcVersion
  std::string library;      // the file that was loaded
  uint64_t librarySize = 0; // its size: tells builds of one version apart

  /// "13.0".
  std::string version() const;
  /// Identifies this NVRTC build for cache keys: "13.0/<library size>", so a
  /// patch release (same major.minor, different code generator) misses.
  std::string fingerprint() const;
};

/// The files loadNvrtc tries, in order:
///   - when $XLNETC_CUDA_HOME is set, only $XLNETC_CUDA_HOME/lib64/
///     libnvrtc.so.13 then .../libnvrtc.so.12: a toolkit named explicitly is
///     never silently replaced by another one;
///   - otherwise libraryCandidates({"libnvrtc.so.13", "libnvrtc.so.12"}):
///     13 before 12, each on the loader's search path, in
///     /usr/local/cuda/lib64 and in NVIDIA's pip wheels.
std::vector<std::string> nvrtcCandidates();

/// The Python package folders searched for NVIDIA's pip wheels: the
/// ':'-separated $XLNETC_PYTHON_SITE alone when set, else those of
/// $VIRTUAL_ENV and $CONDA_PREFIX, the system's dist- and site-packages,
/// /opt/*/.venv (GPU images put PyTorch there) and ~/.local.
std::vector<std::string> pythonSiteDirs();

/// For each soname in turn: the soname itself (the loader's search path,
/// LD_LIBRARY_PATH included), /usr/local/cuda/lib64/SONAME, then every
/// SITE/nvidia/*/lib/SONAME that exists (the wheels' layout: nvidia/cu13/lib
/// holds CUDA 13's NVRTC and cuBLASLt, nvidia/nccl/lib NCCL) for SITE in
/// pythonSiteDirs().
std::vector<std::string> libraryCandidates(const std::vector<std::string> &sonames);

/// Loads NVRTC once per process (thread-safe) from nvrtcCandidates(); the
/// failure lists every file tried and why it failed.
Status loadNvrtc(const Nvrtc *&out);
/// Loads NVRTC from the first of `candidates` that works (not cached).
Status loadNvrtcFrom(const std::vector<std::string> &candidates, Nvrtc &out);

/// Ok when `result` is NVRTC_SUCCESS; otherwise
///   nvrtcCompileProgram failed: NVRTC_ERROR_COMPILATION [where] (file:line)
Status checkNvrtc(const Nvrtc &nvrtc, nvrtcResult result, const char *call,
                  const std::string &where, const char *file = nullptr,
                  int line = 0);

#define XLNETC_NVRTC_CHECK(nvrtc, where, call)                                 \
  ::xlnetc::rt::cuda::checkNvrtc((nvrtc), (nvrtc).call, #call, (where),        \
                                 __FILE__, __LINE__)
#define XLNETC_NVRTC_RETURN_IF_ERROR(nvrtc, where, call)                       \
  XLNETC_RETURN_IF_ERROR(XLNETC_NVRTC_CHECK(nvrtc, where, call))

//===----------------------------------------------------------------------===//
// cuBLASLt
//===----------------------------------------------------------------------===//

using cublasStatus_t = int;
using cublasComputeType_t = int;
using cublasOperation_t = int;
using cudaDataType_t = int;
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatrixLayoutAttribute_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;
using cublasLtEpilogue_t = int;
using cublasLtOrder_t = int;
using cudaStream_t = CUstream; // the same struct CUstream_st *

/// Semi-opaque descriptors: layouts as in cublasLt.h.
struct cublasLtMatrixLayoutOpaque_t {
  uint64_t data[8];
};
struct cublasLtMatmulDescOpaque_t {
  uint64_t data[32];
};
struct cublasLtMatmulPreferenceOpaque_t {
  uint64_t data[8];
};
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
using cublasLtHandle_t = ::cublasLtContext *;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t *;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t *;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t *;

#define XLNETC_CUBLASLT_CONSTANTS(X)                                           \
  X(cublasStatus_t, CUBLAS_STATUS_SUCCESS, 0)                                  \
  X(cublasStatus_t, CUBLAS_STATUS_NOT_INITIALIZED, 1)                          \
  X(cublasStatus_t, CUBLAS_STATUS_ALLOC_FAILED, 3)                             \
  X(cublasStatus_t, CUBLAS_STATUS_INVALID_VALUE, 7)                            \
  X(cublasStatus_t, CUBLAS_STATUS_ARCH_MISMATCH, 8)                            \
  X(cublasStatus_t, CUBLAS_STATUS_EXECUTION_FAILED, 13)                        \
  X(cublasStatus_t, CUBLAS_STATUS_INTERNAL_ERROR, 14)                          \
  X(cublasStatus_t, CUBLAS_STATUS_NOT_SUPPORTED, 15)                           \
  X(cublasOperation_t, CUBLAS_OP_N, 0)                                         \
  X(cublasOperation_t, CUBLAS_OP_T, 1)                                         \
  X(cublasComputeType_t, CUBLAS_COMPUTE_32F, 68)                               \
  X(cublasComputeType_t, CUBLAS_COMPUTE_32F_PEDANTIC, 69)                      \
  X(cublasComputeType_t, CUBLAS_COMPUTE_32F_FAST_16BF, 75)                     \
  X(cublasComputeType_t, CUBLAS_COMPUTE_32F_FAST_TF32, 77)                     \
  X(cudaDataType_t, CUDA_R_32F, 0)                                             \
  X(cudaDataType_t, CUDA_R_16F, 2)                                             \
  X(cudaDataType_t, CUDA_R_16BF, 14)                                           \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, 0)      \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_SCALE_TYPE, 1)        \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_POINTER_MODE, 2)      \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_TRANSA, 3)            \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_TRANSB, 4)            \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_EPILOGUE, 7)          \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_BIAS_POINTER, 8)      \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE,    \
    10)                                                                        \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, \
    11)                                                                        \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, 12)  \
  X(cublasLtMatmulDescAttributes_t,                                            \
    CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, 13)                        \
  X(cublasLtMatmulDescAttributes_t, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, 26)   \
  X(cublasLtMatmulDescAttributes_t,                                            \
    CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, 22)                           \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_DEFAULT, 1)                          \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_RELU, 2)                             \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_BIAS, 4)                             \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_GELU, 32)                            \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_GELU_AUX, 32 | 128)                  \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_GELU_BIAS, 32 | 4)                   \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_GELU_AUX_BIAS, 32 | 128 | 4)         \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_DGELU, 64 | 128)                     \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_DGELU_BGRAD, 64 | 128 | 16)          \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_BGRADA, 256)                         \
  X(cublasLtEpilogue_t, CUBLASLT_EPILOGUE_BGRADB, 512)                         \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_TYPE, 0)           \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_ORDER, 1)          \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_ROWS, 2)           \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_COLS, 3)           \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_LD, 4)             \
  X(cublasLtMatrixLayoutAttribute_t, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, 5)    \
  X(cublasLtMatrixLayoutAttribute_t,                                           \
    CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, 6)                            \
  X(cublasLtOrder_t, CUBLASLT_ORDER_COL, 0)                                    \
  X(cublasLtOrder_t, CUBLASLT_ORDER_ROW, 1)                                    \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, 1)                               \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, 3)                             \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, 5)                             \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, 6)                             \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, 7)                             \
  X(cublasLtMatmulPreferenceAttributes_t,                                      \
    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, 8)
XLNETC_CUBLASLT_CONSTANTS(XLNETC_DECLARE_CONSTANT)

/// X(name, function type) for every cuBLASLt function xlnetc calls.
#define XLNETC_CUBLASLT_FUNCTIONS(X)                                           \
  X(cublasLtCreate, cublasStatus_t(cublasLtHandle_t *lightHandle))             \
  X(cublasLtDestroy, cublasStatus_t(cublasLtHandle_t lightHandle))             \
  X(cublasLtGetVersion, size_t())                                              \
  X(cublasLtGetCudartVersion, size_t())                                        \
  X(cublasLtGetStatusName, const char *(cublasStatus_t status))                \
  X(cublasLtGetStatusString, const char *(cublasStatus_t status))              \
  X(cublasLtMatmulDescCreate,                                                  \
    cublasStatus_t(cublasLtMatmulDesc_t *matmulDesc,                           \
                   cublasComputeType_t computeType, cudaDataType_t scaleType)) \
  X(cublasLtMatmulDescDestroy,                                                 \
    cublasStatus_t(cublasLtMatmulDesc_t matmulDesc))                           \
  X(cublasLtMatmulDescSetAttribute,                                            \
    cublasStatus_t(cublasLtMatmulDesc_t matmulDesc,                            \
                   cublasLtMatmulDescAttributes_t attr, const void *buf,       \
                   size_t sizeInBytes))                                        \
  X(cublasLtMatrixLayoutCreate,                                                \
    cublasStatus_t(cublasLtMatrixLayout_t *matLayout, cudaDataType_t type,     \
                   uint64_t rows, uint64_t cols, int64_t ld))                  \
  X(cublasLtMatrixLayoutDestroy,                                               \
    cublasStatus_t(cublasLtMatrixLayout_t matLayout))                          \
  X(cublasLtMatrixLayoutSetAttribute,                                          \
    cublasStatus_t(cublasLtMatrixLayout_t matLayout,                           \
                   cublasLtMatrixLayoutAttribute_t attr, const void *buf,      \
                   size_t sizeInBytes))                                        \
  X(cublasLtMatmulPreferenceCreate,                                            \
    cublasStatus_t(cublasLtMatmulPreference_t *pref))                          \
  X(cublasLtMatmulPreferenceDestroy,                                           \
    cublasStatus_t(cublasLtMatmulPreference_t pref))                           \
  X(cublasLtMatmulPreferenceSetAttribute,                                      \
    cublasStatus_t(cublasLtMatmulPreference_t pref,                            \
                   cublasLtMatmulPreferenceAttributes_t attr, const void *buf, \
                   size_t sizeInBytes))                                        \
  X(cublasLtMatmulAlgoGetHeuristic,                                            \
    cublasStatus_t(                                                            \
        cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc,      \
        cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,            \
        cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,            \
        cublasLtMatmulPreference_t preference, int requestedAlgoCount,         \
        cublasLtMatmulHeuristicResult_t *heuristicResultsArray,                \
        int *returnAlgoCount))                                                 \
  X(cublasLtMatmul,                                                            \
    cublasStatus_t(                                                            \
        cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,        \
        const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,        \
        const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,         \
        const void *C, cublasLtMatrixLayout_t Cdesc, void *D,                  \
        cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,        \
        void *workspace, size_t workspaceSizeInBytes, cudaStream_t stream))

/// cuBLASLt's entry points and identity. Loading needs no driver; without
/// one cublasLtCreate fails (CUBLAS_STATUS_NOT_INITIALIZED).
struct CublasLt {
#define XLNETC_DECLARE_FUNCTION(name, ...)                                     \
  std::add_pointer_t<__VA_ARGS__> name = nullptr;
  XLNETC_CUBLASLT_FUNCTIONS(XLNETC_DECLARE_FUNCTION)
#undef XLNETC_DECLARE_FUNCTION

  size_t version = 0;  // cublasLtGetVersion, e.g. 130100 for 13.1.0
  std::string library; // the file that was loaded
};

/// The files loadCublasLt tries: $XLNETC_CUDA_HOME/lib64/libcublasLt.so.13
/// alone when that variable is set, else libraryCandidates({"libcublasLt.so.13"}).
std::vector<std::string> cublasLtCandidates();

/// Loads cuBLASLt once per process (thread-safe), like loadNvrtc.
Status loadCublasLt(const CublasLt *&out);
/// Loads cuBLASLt from the first of `candidates` that works (not cached).
Status loadCublasLtFrom(const std::vector<std::string> &candidates,
                        CublasLt &out);

/// Ok when `status` is CUBLAS_STATUS_SUCCESS; otherwise
///   cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED (the requested
///   functionality is not supported) [where] (file:line)
Status checkCublas(const CublasLt &lt, cublasStatus_t status, const char *call,
                   const std::string &where, const char *file = nullptr,
                   int line = 0);

#define XLNETC_CUBLAS_CHECK(lt, where, call)                                   \
  ::xlnetc::rt::cuda::checkCublas((lt), (lt).call, #call, (where), __FILE__,   \
                                  __LINE__)
#define XLNETC_CUBLAS_RETURN_IF_ERROR(lt, where, call)                         \
  XLNETC_RETURN_IF_ERROR(XLNETC_CUBLAS_CHECK(lt, where, call))

//===----------------------------------------------------------------------===//
// NCCL (the data-parallel all-reduce on GPUs, docs/Distributed.md)
//===----------------------------------------------------------------------===//

using ncclComm_t = ::ncclComm *;
using ncclResult_t = int;
using ncclDataType_t = int;
using ncclRedOp_t = int;
using ncclScalarResidence_t = int;
constexpr int kNcclUniqueIdBytes = 128; // NCCL_UNIQUE_ID_BYTES
struct ncclUniqueId {
  char internal[kNcclUniqueIdBytes];
};
constexpr ncclResult_t ncclSuccess = 0;
constexpr ncclDataType_t ncclFloat32 = 7;
constexpr ncclRedOp_t ncclSum = 0;
constexpr ncclScalarResidence_t ncclScalarHostImmediate = 1;

#define XLNETC_NCCL_FUNCTIONS(X)                                               \
  X(ncclGetVersion, ncclResult_t(int *version))                                \
  X(ncclGetErrorString, const char *(ncclResult_t result))                     \
  X(ncclGetUniqueId, ncclResult_t(ncclUniqueId * uniqueId))                    \
  X(ncclCommInitRank,                                                          \
    ncclResult_t(ncclComm_t * comm, int nranks, ncclUniqueId commId, int rank)) \
  X(ncclCommDestroy, ncclResult_t(ncclComm_t comm))                            \
  X(ncclCommAbort, ncclResult_t(ncclComm_t comm))                              \
  X(ncclGroupStart, ncclResult_t())                                            \
  X(ncclGroupEnd, ncclResult_t())                                              \
  X(ncclAllReduce,                                                             \
    ncclResult_t(const void *sendbuff, void *recvbuff, size_t count,          \
                 ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,     \
                 cudaStream_t stream))                                         \
  X(ncclRedOpCreatePreMulSum,                                                  \
    ncclResult_t(ncclRedOp_t * op, void *scalar, ncclDataType_t datatype,     \
                 ncclScalarResidence_t residence, ncclComm_t comm))            \
  X(ncclRedOpDestroy, ncclResult_t(ncclRedOp_t op, ncclComm_t comm))

/// NCCL's entry points. Loading needs no GPU (ncclGetVersion and
/// ncclGetUniqueId work without one); ncclCommInitRank needs one.
struct Nccl {
#define XLNETC_DECLARE_FUNCTION(name, ...)                                     \
  std::add_pointer_t<__VA_ARGS__> name = nullptr;
  XLNETC_NCCL_FUNCTIONS(XLNETC_DECLARE_FUNCTION)
#undef XLNETC_DECLARE_FUNCTION

  int version = 0;     // ncclGetVersion, e.g. 22809 for 2.28.9
  std::string library; // the file that was loaded
};

/// The files loadNccl tries: $XLNETC_CUDA_HOME/lib64/libnccl.so.2 alone when
/// that variable is set, else libraryCandidates({"libnccl.so.2"}).
std::vector<std::string> ncclCandidates();
/// Loads NCCL once per process (thread-safe), like loadNvrtc.
Status loadNccl(const Nccl *&out);
/// Loads NCCL from the first of `candidates` that works (not cached).
Status loadNcclFrom(const std::vector<std::string> &candidates, Nccl &out);
/// Ok when `result` is ncclSuccess; otherwise "ncclAllReduce failed: <its
/// error string> [where]".
Status checkNccl(const Nccl &nccl, ncclResult_t result, const char *call,
                 const std::string &where);

#undef XLNETC_DECLARE_CONSTANT

} // namespace xlnetc::rt::cuda

#endif // XLNETC_RUNTIME_DEVICE_CUDAAPI_H
