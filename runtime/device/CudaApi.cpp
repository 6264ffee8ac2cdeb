//===- CudaApi.cpp - CUDA driver, NVRTC and cuBLASLt loaded at run time ---===//
//
// Every library is opened with dlopen(RTLD_NOW | RTLD_LOCAL) and never closed:
// function pointers handed out stay valid for the life of the process. Each
// loader runs once per process behind a function-local static (thread-safe
// initialization) and caches its result, failure message included, so asking
// twice costs nothing and answers the same.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaApi.h"

#include <fmt/format.h>

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <utility>

namespace xlnetc::rt::cuda {

namespace {

/// The file that a dlopen handle refers to, or `fallback`.
std::string loadedPath(void *handle, const std::string &fallback) {
  struct link_map *map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name &&
      map->l_name[0] != '\0')
    return map->l_name;
  return fallback;
}

uint64_t fileSize(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
}

/// The last dlerror(), or `fallback` when there is none.
std::string lastDlError(const char *fallback) {
  const char *err = ::dlerror();
  return err ? err : fallback;
}

/// dlopens the first of `candidates` that loads. On failure the message
/// lists every candidate with its dlerror().
Status openFirst(const std::vector<std::string> &candidates, const char *what,
                 void *&handle, std::string &path) {
  std::string tried;
  for (const std::string &candidate : candidates) {
    ::dlerror(); // clear
    handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) {
      path = loadedPath(handle, candidate);
      return Status::ok();
    }
    tried += (tried.empty() ? "" : "; ") + candidate + " (" +
             lastDlError("unknown error") + ")";
  }
  if (candidates.empty())
    tried = "nothing";
  return Status::error(std::string("no ") + what + ": tried " + tried);
}

/// dlsym of every name in `names` into `slots`; fails naming the first
/// missing symbol.
Status
resolveSymbols(void *handle, const std::string &path,
               const std::vector<std::pair<const char *, void **>> &syms) {
  for (const auto &[name, slot] : syms) {
    ::dlerror();
    *slot = ::dlsym(handle, name);
    if (!*slot)
      return Status::error(path + " has no " + name + ": " +
                           lastDlError("symbol not found"));
  }
  return Status::ok();
}

/// The function name of a call expression: "cuMemAlloc(&p, n)" -> "cuMemAlloc".
std::string callName(const char *call) {
  std::string name = call ? call : "?";
  size_t paren = name.find('(');
  if (paren != std::string::npos)
    name.resize(paren);
  while (!name.empty() && name.back() == ' ')
    name.pop_back();
  return name;
}

/// " [where] (file:line)" with the empty parts left out; `file` loses its
/// directories.
std::string context(const std::string &where, const char *file, int line) {
  std::string out;
  if (!where.empty())
    out += " [" + where + "]";
  if (file) {
    const char *base = std::strrchr(file, '/');
    out += std::string(" (") + (base ? base + 1 : file) + ":" +
           std::to_string(line) + ")";
  }
  return out;
}

/// Every path that `pattern` (glob(3)) matches, sorted; none when nothing does.
std::vector<std::string> globPaths(const std::string &pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0)
    for (size_t i = 0; i < g.gl_pathc; ++i)
      out.push_back(g.gl_pathv[i]);
  ::globfree(&g);
  return out;
}

} // namespace

std::vector<std::string> pythonSiteDirs() {
  std::vector<std::string> roots;
  if (const char *env = std::getenv("XLNETC_PYTHON_SITE"); env && *env) {
    std::string list = env;
    for (size_t at = 0; at <= list.size();) {
      size_t colon = list.find(':', at);
      if (colon == std::string::npos)
        colon = list.size();
      if (colon > at)
        roots.push_back(list.substr(at, colon - at));
      at = colon + 1;
    }
    return roots;
  }
  std::vector<std::string> patterns = {
      "/usr/local/lib/python3*/dist-packages", "/usr/lib/python3/dist-packages",
      "/usr/local/lib/python3*/site-packages", "/usr/lib/python3*/site-packages",
      "/opt/*/.venv/lib/python3*/site-packages", "/opt/conda/lib/python3*/site-packages"};
  for (const char *var : {"VIRTUAL_ENV", "CONDA_PREFIX"})
    if (const char *prefix = std::getenv(var); prefix && *prefix)
      patterns.insert(patterns.begin(), std::string(prefix) + "/lib/python3*/site-packages");
  if (const char *home = std::getenv("HOME"); home && *home)
    patterns.push_back(std::string(home) + "/.local/lib/python3*/site-packages");
  for (const std::string &pattern : patterns)
    for (std::string &dir : globPaths(pattern))
      roots.push_back(std::move(dir));
  return roots;
}

std::vector<std::string> libraryCandidates(const std::vector<std::string> &sonames) {
  std::vector<std::string> out;
  const std::vector<std::string> sites = pythonSiteDirs();
  for (const std::string &soname : sonames) {
    out.push_back(soname);
    out.push_back("/usr/local/cuda/lib64/" + soname);
    // NVIDIA's wheels: nvidia/cu13/lib (CUDA 13's), nvidia/nccl/lib, ...
    // Only files that exist, so a failure lists what was really there.
    for (const std::string &site : sites)
      for (std::string &path : globPaths(site + "/nvidia/*/lib/" + soname))
        out.push_back(std::move(path));
  }
  return out;
}

std::string versionString(int cudaVersion) {
  return std::to_string(cudaVersion / 1000) + "." +
         std::to_string(cudaVersion % 1000 / 10);
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

Status resolveDriver(cuGetProcAddress_v2_t *getProcV2,
                     cuGetProcAddress_v1_t *getProcV1, Driver &out) {
  if (!getProcV2 && !getProcV1)
    return Status::error("CUDA driver has no cuGetProcAddress: it is older "
                         "than 11.3; xlnetc needs " +
                         versionString(kMinDriverVersion) + " or newer");

  // Looks `symbol` up at `version`; names the problem when it is missing.
  auto lookup = [&](const char *symbol, int version, void **pfn) -> Status {
    *pfn = nullptr;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SUCCESS;
    CUresult r = getProcV2 ? getProcV2(symbol, pfn, version,
                                       CU_GET_PROC_ADDRESS_DEFAULT, &found)
                           : getProcV1(symbol, pfn, version,
                                       CU_GET_PROC_ADDRESS_DEFAULT);
    if (r == CUDA_SUCCESS && found == CU_GET_PROC_ADDRESS_SUCCESS && *pfn)
      return Status::ok();
    std::string why;
    if (r != CUDA_SUCCESS) {
      // The error-name functions may be what we are resolving; use them only
      // once they are there.
      const char *name = nullptr;
      if (out.cuGetErrorName && out.cuGetErrorName(r, &name) == CUDA_SUCCESS &&
          name)
        why = std::string("cuGetProcAddress returned ") + name;
      else
        why = "cuGetProcAddress returned CUresult " + std::to_string(r);
    } else if (found == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND) {
      why = "symbol not found";
    } else if (found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT) {
      why = "no ABI-compatible version for CUDA " + versionString(version);
    } else {
      why = "cuGetProcAddress returned no function";
    }
    std::string driver = out.version
                             ? "CUDA driver " + versionString(out.version)
                             : std::string("CUDA driver");
    return Status::error(driver + " lacks " + symbol + " (ABI of CUDA " +
                         versionString(version) + "): " + why);
  };

  // 1. Error names first, so later failures can be named; then the version.
  XLNETC_RETURN_IF_ERROR(lookup(
      "cuGetErrorName", 6000, reinterpret_cast<void **>(&out.cuGetErrorName)));
  XLNETC_RETURN_IF_ERROR(
      lookup("cuGetErrorString", 6000,
             reinterpret_cast<void **>(&out.cuGetErrorString)));
  XLNETC_RETURN_IF_ERROR(
      lookup("cuDriverGetVersion", 2020,
             reinterpret_cast<void **>(&out.cuDriverGetVersion)));
  int version = 0;
  XLNETC_RETURN_IF_ERROR(checkCu(out, out.cuDriverGetVersion(&version),
                                 "cuDriverGetVersion",
                                 "loading the CUDA driver"));
  out.version = version;

  // 2. The minimum version (kMinDriverVersion says why).
  if (version < kMinDriverVersion)
    return Status::error("CUDA driver " + versionString(version) +
                         " is older than " + versionString(kMinDriverVersion) +
                         " needed by xlnetc; update the NVIDIA driver (525 or "
                         "newer for CUDA 12, 580 or newer for CUDA 13)");

    // 3. Everything else, each at the version of its declared ABI.
#define XLNETC_RESOLVE(name, version, ...)                                     \
  XLNETC_RETURN_IF_ERROR(                                                      \
      lookup(#name, version, reinterpret_cast<void **>(&out.name)));
  XLNETC_CUDA_DRIVER_FUNCTIONS(XLNETC_RESOLVE)
#undef XLNETC_RESOLVE
  return Status::ok();
}

namespace {

struct LoadedDriver {
  Driver driver;
  Status status = Status::ok();
};

LoadedDriver loadDriverOnce() {
  LoadedDriver loaded;
  const char *soname = "libcuda.so.1";
  ::dlerror();
  void *handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    loaded.status =
        Status::error(std::string("no CUDA driver: dlopen(\"") + soname +
                      "\") failed: " + lastDlError("unknown error"));
    return loaded;
  }
  Driver drv;
  drv.library = loadedPath(handle, soname);
  // The _v2 entry point (CUDA 12.0) reports why a symbol is missing; the
  // original one is enough to learn that the driver is too old.
  auto *v2 = reinterpret_cast<cuGetProcAddress_v2_t *>(
      ::dlsym(handle, "cuGetProcAddress_v2"));
  auto *v1 = v2 ? nullptr
                : reinterpret_cast<cuGetProcAddress_v1_t *>(
                      ::dlsym(handle, "cuGetProcAddress"));
  Status status = resolveDriver(v2, v1, drv);
  if (!status) {
    loaded.status = Status::error(status.message() + " (" + drv.library + ")");
    return loaded;
  }
  loaded.driver = std::move(drv);
  return loaded;
}

} // namespace

Status loadDriver(const Driver *&out) {
  static const LoadedDriver loaded = loadDriverOnce();
  out = loaded.status ? &loaded.driver : nullptr;
  return loaded.status;
}

Status checkCu(const Driver &drv, CUresult result, const char *call,
               const std::string &where, const char *file, int line) {
  if (result == CUDA_SUCCESS)
    return Status::ok();
  const char *name = nullptr, *text = nullptr;
  if (drv.cuGetErrorName)
    drv.cuGetErrorName(result, &name);
  if (drv.cuGetErrorString)
    drv.cuGetErrorString(result, &text);
  std::string what = name ? name : "CUresult " + std::to_string(result);
  if (text && *text)
    what += std::string(" (") + text + ")";
  return Status::error(callName(call) + " failed: " + what +
                       context(where, file, line));
}

Status deviceCount(const Driver &drv, int &count) {
  count = 0;
  CUresult r = drv.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return Status::ok();
  XLNETC_RETURN_IF_ERROR(checkCu(drv, r, "cuInit", "")
                             .withPrefix("CUDA driver found but not usable: "));
  return XLNETC_CU_CHECK(drv, "counting GPUs", cuDeviceGetCount(&count));
}

Status processGpu(const Driver &drv, int localRank, int &ordinal) {
  ordinal = localRank;
  int count = 0;
  if (!deviceCount(drv, count) || count == 0)
    return Status::ok(); // openDevice says why
  if (count == 1) {
    ordinal = 0;
    return Status::ok();
  }
  if (localRank < count)
    return Status::ok();
  return Status::error(fmt::format(
      "this process is local rank {} (counting from 0) on its node but the driver sees {} "
      "GPUs: run at most {} processes per node, or bind one GPU to each (srun "
      "--gpus-per-task=1, CUDA_VISIBLE_DEVICES)",
      localRank, count, count));
}

Status openDevice(const Driver &drv, int ordinal, DeviceInfo &out) {
  const std::string where = "opening CUDA device " + std::to_string(ordinal);

  // 1. cuInit: a driver without a GPU answers CUDA_ERROR_NO_DEVICE here.
  CUresult r = drv.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return checkCu(drv, r, "cuInit", "")
        .withPrefix("CUDA driver found but no GPU: ");
  if (r != CUDA_SUCCESS)
    return checkCu(drv, r, "cuInit", "")
        .withPrefix("CUDA driver found but not usable: ");

  // 2. The device.
  int count = 0;
  XLNETC_CU_RETURN_IF_ERROR(drv, where, cuDeviceGetCount(&count));
  if (count == 0)
    return Status::error(
        "CUDA driver found but no GPU: cuDeviceGetCount returned 0");
  if (ordinal < 0 || ordinal >= count)
    return Status::error("CUDA device " + std::to_string(ordinal) +
                         " requested but the driver sees " +
                         std::to_string(count) + " GPU" +
                         (count == 1 ? "" : "s"));
  DeviceInfo info;
  info.ordinal = ordinal;
  info.driverVersion = drv.version;
  XLNETC_CU_RETURN_IF_ERROR(drv, where, cuDeviceGet(&info.device, ordinal));

  // 3. Its properties.
  char name[256] = {};
  XLNETC_CU_RETURN_IF_ERROR(
      drv, where, cuDeviceGetName(name, int(sizeof(name)) - 1, info.device));
  info.name = name;
  auto attribute = [&](CUdevice_attribute attr, int &value) {
    return XLNETC_CU_CHECK(drv, where,
                           cuDeviceGetAttribute(&value, attr, info.device));
  };
  XLNETC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, info.ccMajor));
  XLNETC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, info.ccMinor));
  XLNETC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, info.smCount));
  XLNETC_RETURN_IF_ERROR(attribute(
      CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, info.maxSharedPerBlock));
  XLNETC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                info.maxSharedPerBlockOptin));
  XLNETC_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                info.maxSharedPerSm));
  int pciDomain = 0, pciBus = 0, pciDevice = 0;
  XLNETC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, pciDomain));
  XLNETC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, pciBus));
  XLNETC_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, pciDevice));
  info.pciAddress = fmt::format("{:04x}:{:02x}:{:02x}", pciDomain, pciBus, pciDevice);
  XLNETC_CU_RETURN_IF_ERROR(drv, where,
                            cuDeviceTotalMem(&info.totalMemory, info.device));
  info.arch =
      "sm_" + std::to_string(info.ccMajor) + std::to_string(info.ccMinor);

  // 4. The primary context, current on this thread.
  XLNETC_CU_RETURN_IF_ERROR(
      drv, where, cuDevicePrimaryCtxRetain(&info.context, info.device));
  Status status = XLNETC_CU_CHECK(drv, where, cuCtxSetCurrent(info.context));
  if (!status) {
    (void)drv.cuDevicePrimaryCtxRelease(info.device);
    return status;
  }
  out = std::move(info);
  return Status::ok();
}

Status openDevice(int ordinal, DeviceInfo &out) {
  const Driver *drv = nullptr;
  XLNETC_RETURN_IF_ERROR(loadDriver(drv));
  return openDevice(*drv, ordinal, out);
}

Status closeDevice(const Driver &drv, DeviceInfo &info) {
  if (!info.context)
    return Status::ok();
  info.context = nullptr;
  return XLNETC_CU_CHECK(drv,
                         "closing CUDA device " + std::to_string(info.ordinal),
                         cuDevicePrimaryCtxRelease(info.device));
}

//===----------------------------------------------------------------------===//
// NVRTC
//===----------------------------------------------------------------------===//

std::string Nvrtc::version() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string Nvrtc::fingerprint() const {
  return version() + "/" + std::to_string(librarySize);
}

std::vector<std::string> nvrtcCandidates() {
  const char *home = std::getenv("XLNETC_CUDA_HOME");
  if (home && *home) {
    std::string lib = std::string(home) + "/lib64/";
    return {lib + "libnvrtc.so.13", lib + "libnvrtc.so.12"};
  }
  return libraryCandidates({"libnvrtc.so.13", "libnvrtc.so.12"});
}

Status loadNvrtcFrom(const std::vector<std::string> &candidates, Nvrtc &out) {
  void *handle = nullptr;
  Nvrtc nvrtc;
  XLNETC_RETURN_IF_ERROR(openFirst(candidates, "NVRTC", handle, nvrtc.library));
  std::vector<std::pair<const char *, void **>> syms;
#define XLNETC_SYMBOL(name, ...)                                               \
  syms.emplace_back(#name, reinterpret_cast<void **>(&nvrtc.name));
  XLNETC_NVRTC_FUNCTIONS(XLNETC_SYMBOL)
#undef XLNETC_SYMBOL
  XLNETC_RETURN_IF_ERROR(resolveSymbols(handle, nvrtc.library, syms));
  XLNETC_RETURN_IF_ERROR(
      XLNETC_NVRTC_CHECK(nvrtc, "loading " + nvrtc.library,
                         nvrtcVersion(&nvrtc.major, &nvrtc.minor)));
  nvrtc.librarySize = fileSize(nvrtc.library);
  out = std::move(nvrtc);
  return Status::ok();
}

namespace {

/// Loads library `Lib` from `Candidates()` once per process (thread-safe:
/// a function-local static per library) and hands out the same result
/// after.
template <typename Lib, Status (*LoadFrom)(const std::vector<std::string> &, Lib &),
          std::vector<std::string> (*Candidates)()>
Status loadOnce(const Lib *&out) {
  struct Loaded {
    Lib lib;
    Status status = Status::ok();
  };
  static const Loaded loaded = [] {
    Loaded l;
    l.status = LoadFrom(Candidates(), l.lib);
    return l;
  }();
  out = loaded.status ? &loaded.lib : nullptr;
  return loaded.status;
}

} // namespace

Status loadNvrtc(const Nvrtc *&out) {
  return loadOnce<Nvrtc, loadNvrtcFrom, nvrtcCandidates>(out);
}

Status checkNvrtc(const Nvrtc &nvrtc, nvrtcResult result, const char *call,
                  const std::string &where, const char *file, int line) {
  if (result == NVRTC_SUCCESS)
    return Status::ok();
  const char *text =
      nvrtc.nvrtcGetErrorString ? nvrtc.nvrtcGetErrorString(result) : nullptr;
  std::string what = text ? text : "nvrtcResult " + std::to_string(result);
  return Status::error(callName(call) + " failed: " + what +
                       context(where, file, line));
}

//===----------------------------------------------------------------------===//
// cuBLASLt
//===----------------------------------------------------------------------===//

std::vector<std::string> cublasLtCandidates() {
  const char *home = std::getenv("XLNETC_CUDA_HOME");
  if (home && *home)
    return {std::string(home) + "/lib64/libcublasLt.so.13"};
  return libraryCandidates({"libcublasLt.so.13"});
}

Status loadCublasLtFrom(const std::vector<std::string> &candidates,
                        CublasLt &out) {
  void *handle = nullptr;
  CublasLt lt;
  XLNETC_RETURN_IF_ERROR(openFirst(candidates, "cuBLASLt", handle, lt.library));
  std::vector<std::pair<const char *, void **>> syms;
#define XLNETC_SYMBOL(name, ...)                                               \
  syms.emplace_back(#name, reinterpret_cast<void **>(&lt.name));
  XLNETC_CUBLASLT_FUNCTIONS(XLNETC_SYMBOL)
#undef XLNETC_SYMBOL
  XLNETC_RETURN_IF_ERROR(resolveSymbols(handle, lt.library, syms));
  lt.version = lt.cublasLtGetVersion();
  out = std::move(lt);
  return Status::ok();
}

Status loadCublasLt(const CublasLt *&out) {
  return loadOnce<CublasLt, loadCublasLtFrom, cublasLtCandidates>(out);
}

Status checkCublas(const CublasLt &lt, cublasStatus_t status, const char *call,
                   const std::string &where, const char *file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  const char *name =
      lt.cublasLtGetStatusName ? lt.cublasLtGetStatusName(status) : nullptr;
  const char *text =
      lt.cublasLtGetStatusString ? lt.cublasLtGetStatusString(status) : nullptr;
  std::string what = name ? name : "cublasStatus_t " + std::to_string(status);
  if (text && *text)
    what += std::string(" (") + text + ")";
  return Status::error(callName(call) + " failed: " + what +
                       context(where, file, line));
}

//===----------------------------------------------------------------------===//
// NCCL
//===----------------------------------------------------------------------===//

std::vector<std::string> ncclCandidates() {
  const char *home = std::getenv("XLNETC_CUDA_HOME");
  if (home && *home)
    return {std::string(home) + "/lib64/libnccl.so.2"};
  return libraryCandidates({"libnccl.so.2"});
}

Status loadNcclFrom(const std::vector<std::string> &candidates, Nccl &out) {
  void *handle = nullptr;
  Nccl nccl;
  XLNETC_RETURN_IF_ERROR(openFirst(candidates, "NCCL", handle, nccl.library));
  std::vector<std::pair<const char *, void **>> syms;
#define XLNETC_SYMBOL(name, ...)                                               \
  syms.emplace_back(#name, reinterpret_cast<void **>(&nccl.name));
  XLNETC_NCCL_FUNCTIONS(XLNETC_SYMBOL)
#undef XLNETC_SYMBOL
  XLNETC_RETURN_IF_ERROR(resolveSymbols(handle, nccl.library, syms));
  XLNETC_RETURN_IF_ERROR(checkNccl(nccl, nccl.ncclGetVersion(&nccl.version), "ncclGetVersion",
                                   nccl.library));
  out = std::move(nccl);
  return Status::ok();
}

Status loadNccl(const Nccl *&out) {
  return loadOnce<Nccl, loadNcclFrom, ncclCandidates>(out);
}

Status checkNccl(const Nccl &nccl, ncclResult_t result, const char *call,
                 const std::string &where) {
  if (result == ncclSuccess)
    return Status::ok();
  const char *text = nccl.ncclGetErrorString ? nccl.ncclGetErrorString(result) : nullptr;
  return Status::error(fmt::format("{} failed: {} (ncclResult_t {}) [{}]", call,
                                   text ? text : "unknown error", result, where));
}

} // namespace xlnetc::rt::cuda
