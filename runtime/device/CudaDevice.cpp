//===- CudaDevice.cpp - The real GPU through the CUDA driver -------------===//
//
// The `cuda` device: the driver API loaded with dlopen (CudaApi.h), one
// primary context, one stream; modules are NVRTC-compiled CUBINs for the
// GPU's own architecture, through the on-disk kernel cache. Every driver
// error names the call and `where` (the plan step and its location).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaDevice.h"

#include "runtime/device/CudaApi.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"

#include <fmt/format.h>

namespace xlnetc::rt::dev {

namespace {

using namespace xlnetc::rt::cuda;

class CudaModule : public Module {
public:
  CudaModule(const Driver &drv, CUmodule mod) : drv_(drv), mod_(mod) {}
  ~CudaModule() override { drv_.cuModuleUnload(mod_); }
  CUmodule get() const { return mod_; }

private:
  const Driver &drv_;
  CUmodule mod_;
};

class CudaDevice : public Device {
public:
  CudaDevice(const Driver &drv, DeviceInfo info, const DeviceOptions &options)
      : drv_(drv), info_(std::move(info)), options_(options),
        cache_(options.kernelCache ? KernelCache::openDefault()
                                   : KernelCache::disabled()) {}
  ~CudaDevice() override {
    if (stream_)
      drv_.cuStreamDestroy(stream_);
    (void)closeDevice(drv_, info_);
  }

  Status init() {
    return XLNETC_CU_CHECK(drv_, "opening " + info_.name,
                           cuStreamCreate(&stream_, 0));
  }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  std::string description() const override {
    return fmt::format("{} ({}, {} SMs, {:.1f} GiB)", info_.name, info_.arch,
                       info_.smCount, double(info_.totalMemory) / (1ull << 30));
  }
  std::string arch() const override { return info_.arch; }

  Status alloc(size_t bytes, DevPtr &out) override {
    CUdeviceptr p = 0;
    XLNETC_CU_RETURN_IF_ERROR(drv_, fmt::format("allocating {} bytes", bytes),
                              cuMemAlloc(&p, std::max<size_t>(bytes, 1)));
    out = p;
    return Status::ok();
  }
  void free(DevPtr ptr) override {
    if (ptr)
      drv_.cuMemFree(ptr);
  }
  Status upload(DevPtr dst, const void *src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("uploading {} bytes", bytes),
                           cuMemcpyHtoD(dst, src, bytes));
  }
  Status download(void *dst, DevPtr src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("downloading {} bytes", bytes),
                           cuMemcpyDtoH(dst, src, bytes));
  }
  Status copy(DevPtr dst, DevPtr src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("copying {} bytes", bytes),
                           cuMemcpyDtoD(dst, src, bytes));
  }
  Status memset(DevPtr dst, int value, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("setting {} bytes", bytes),
                           cuMemsetD8(dst, (unsigned char)value, bytes));
  }

  Status loadModule(const ModuleSource &source,
                    std::unique_ptr<Module> &out) override {
    NvrtcSource src;
    src.name = source.name;
    src.text = source.text;
    for (const SourceFile &h : embeddedDeviceFiles())
      src.headers.push_back({h.name, h.text});
    for (const SourceFile &h : source.headers)
      src.headers.push_back({h.name, h.text});
    NvrtcOptions opts;
    opts.arch = info_.arch;
    CompiledCubin cubin;
    XLNETC_RETURN_IF_ERROR(compileCubin(src, opts, &cache_, cubin));
    CUmodule mod = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(drv_, "loading " + source.name,
                              cuModuleLoadData(&mod, cubin.cubin.data()));
    out = std::make_unique<CudaModule>(drv_, mod);
    return Status::ok();
  }
  Status getKernel(Module &module, const std::string &name,
                   Kernel &out) override {
    CUfunction fn = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(
        drv_, "kernel '" + name + "'",
        cuModuleGetFunction(&fn, static_cast<CudaModule &>(module).get(),
                            name.c_str()));
    out.name = name;
    out.handle = fn;
    return Status::ok();
  }
  Status launch(const Kernel &kernel, const LaunchDims &d, void **params,
                const std::string &where) override {
    auto fn = static_cast<CUfunction>(kernel.handle);
    std::string at = where.empty() ? "kernel '" + kernel.name + "'"
                                   : where + ", kernel '" + kernel.name + "'";
    // More than 48 KiB of dynamic shared memory must be opted into.
    if (d.dynSmem > 48 * 1024)
      XLNETC_CU_RETURN_IF_ERROR(
          drv_, at,
          cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(d.dynSmem)));
    return XLNETC_CU_CHECK(drv_, at,
                           cuLaunchKernel(fn, d.grid[0], d.grid[1], d.grid[2],
                                          d.block[0], d.block[1], d.block[2],
                                          unsigned(d.dynSmem), stream_, params,
                                          nullptr));
  }
  Status synchronize(const std::string &where) override {
    return XLNETC_CU_CHECK(drv_, where, cuStreamSynchronize(stream_));
  }

private:
  const Driver &drv_;
  DeviceInfo info_;
  DeviceOptions options_;
  KernelCache cache_;
  CUstream stream_ = nullptr;
};

} // namespace

Status createCudaDevice(const DeviceOptions &options,
                        std::unique_ptr<Device> &out) {
  const Driver *drv = nullptr;
  XLNETC_RETURN_IF_ERROR(loadDriver(drv));
  // Kernels are NVRTC-compiled CUBINs: NVRTC must load, and the driver must
  // be new enough to load what it writes.
  const Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(loadNvrtc(nvrtc));
  XLNETC_RETURN_IF_ERROR(
      checkDriverForNvrtc(drv->version, nvrtc->major, nvrtc->minor));
  DeviceInfo info;
  XLNETC_RETURN_IF_ERROR(openDevice(*drv, options.ordinal, info));
  auto dev = std::make_unique<CudaDevice>(*drv, std::move(info), options);
  XLNETC_RETURN_IF_ERROR(dev->init());
  out = std::move(dev);
  return Status::ok();
}

bool cudaDeviceAvailable(std::string *why) {
  // Cached: auto may ask more than once, and cuInit is not free.
  static const std::pair<bool, std::string> answer = [] {
    const Driver *drv = nullptr;
    Status st = loadDriver(drv);
    int count = 0;
    if (st)
      st = XLNETC_CU_CHECK(*drv, "", cuInit(0));
    if (st)
      st = XLNETC_CU_CHECK(*drv, "", cuDeviceGetCount(&count));
    if (st && count == 0)
      st = Status::error(
          "CUDA driver found but no GPU: cuDeviceGetCount returned 0");
    return std::make_pair(st.isOk(), st.message());
  }();
  if (!answer.first && why)
    *why = answer.second;
  return answer.first;
}

} // namespace xlnetc::rt::dev
