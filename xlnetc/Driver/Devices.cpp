//===- Devices.cpp - `xlnetc devices` ------------------------------------===//
//
// Says what this machine can run: the host executor always, with the CPU's
// features and the GEMM kernels chosen for it (and why); the emulated
// device when the host C++ compiler builds and runs a kernel; a GPU when the
// CUDA driver loads and reports one. Also where the driver, NVRTC, cuBLASLt
// and NCCL were loaded from (the loader's search path, /usr/local/cuda or
// NVIDIA's pip wheels: CudaApi.h libraryCandidates) and the kernel cache
// directory. In xlnetc and xlnetc-run. Exit code 0 whatever is missing:
// this is a report, not a check.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Commands.h"

#include "runtime/exec/Executor.h"
#include "runtime/device/CudaApi.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/host/GemmKernels.h"

#include <fmt/format.h>

#include <iostream>

namespace xlnetc {

namespace {

/// Builds and launches a one-thread kernel on the emulated device.
rt::Status probeEmu(std::string &description) {
  std::unique_ptr<rt::dev::Device> dev;
  rt::dev::DeviceOptions options;
  XLNETC_RETURN_IF_ERROR(rt::dev::openDevice(rt::dev::DeviceKind::Emu, options, dev));
  description = dev->description();
  rt::dev::ModuleSource src;
  src.name = "devices-probe.cu";
  src.text = "#include \"xlnetc_prelude.cuh\"\n"
             "XL_KERNEL void probe(int *out) { out[threadIdx.x] = 7; }\n"
             "XL_EXPORT(probe)\n";
  std::unique_ptr<rt::dev::Module> mod;
  XLNETC_RETURN_IF_ERROR(dev->loadModule(src, mod));
  rt::dev::Kernel k;
  XLNETC_RETURN_IF_ERROR(dev->getKernel(*mod, "probe", k));
  rt::dev::DevPtr buf;
  XLNETC_RETURN_IF_ERROR(dev->alloc(sizeof(int), buf));
  void *params[] = {&buf};
  rt::dev::LaunchDims dims;
  rt::Status st = dev->launch(k, dims, params, "probe");
  int value = 0;
  if (st)
    st = dev->download(&value, buf, sizeof(int));
  dev->free(buf);
  XLNETC_RETURN_IF_ERROR(st);
  if (value != 7)
    return rt::Status::error("the probe kernel computed a wrong value");
  return rt::Status::ok();
}

} // namespace

int runDevices() {
  auto row = [](const char *what, bool ok, const std::string &text) {
    std::cout << fmt::format("{:<10} {:<4} {}\n", what, ok ? "yes" : "no", text);
  };
  rt::Executor host;
  (void)rt::Executor::open(rt::dev::DeviceKind::Host, {}, host);
  row("host", true, host.description());
  const rt::host::CpuFeatures &cpu = rt::host::cpuFeatures();
  const int cpus = rt::host::availableCpus();
  row("cpu", true, fmt::format("{}, {} CPU{} for this process: {}", cpu.identity(), cpus,
                               cpus == 1 ? "" : "s", cpu.list()));
  const rt::host::KernelReport kernels = rt::host::currentKernels();
  row("gemm", kernels.weakerThan.empty(),
      fmt::format("{} ({}{})", rt::host::gemmKernelsText(), kernels.why,
                  kernels.weakerThan.empty() ? "" : "; " + kernels.weakerThan));
  std::string cores;
  for (const std::string &core : rt::host::openBlasCoresFor(cpu))
    cores += core + " ";
  if (!rt::host::blasLibrary().dynamicArch)
    row("gemm-cores", false, "none: this OpenBLAS is built for one target (no DYNAMIC_ARCH)");
  else
    row("gemm-cores", !cores.empty(),
        cores.empty() ? "none beyond OpenBLAS's own choice (this CPU has no AVX)"
                      : cores + "(the OPENBLAS_CORETYPE values this CPU runs, best first)");

  std::string emuText;
  rt::Status emu = probeEmu(emuText);
  row("emu", emu.isOk(), emu ? emuText : emu.message());

  std::unique_ptr<rt::dev::Device> gpu;
  rt::Status cuda = rt::dev::openDevice(rt::dev::DeviceKind::Cuda, {}, gpu);
  row("cuda", cuda.isOk(), cuda ? gpu->description() : cuda.message());
  const rt::cuda::Driver *drv = nullptr;
  if (rt::Status st = rt::cuda::loadDriver(drv); !st)
    row("driver", false, st.message());
  else
    row("driver", true, fmt::format("CUDA {} ({})", rt::cuda::versionString(drv->version),
                                    drv->library));

  const rt::cuda::Nvrtc *nvrtc = nullptr;
  if (rt::Status st = rt::cuda::loadNvrtc(nvrtc); !st) {
    row("nvrtc", false, st.message());
  } else {
    std::vector<int> archs;
    std::string list;
    if (rt::supportedArchs(archs))
      for (int a : archs)
        list += fmt::format(" sm_{}", a);
    row("nvrtc", true, fmt::format("{} ({}); archs{}", nvrtc->version(),
                                   nvrtc->library, list));
  }
  const rt::cuda::CublasLt *lt = nullptr;
  if (rt::Status st = rt::cuda::loadCublasLt(lt); !st)
    row("cublasLt", false, st.message());
  else
    row("cublasLt", true, fmt::format("{} ({})", lt->version, lt->library));
  const rt::cuda::Nccl *nccl = nullptr;
  if (rt::Status st = rt::cuda::loadNccl(nccl); !st)
    row("nccl", false, st.message());
  else
    row("nccl", true, fmt::format("{} ({})", nccl->version, nccl->library));

  std::string dir = rt::KernelCache::defaultDirectory();
  std::cout << "kernel cache: " << (dir.empty() ? "(none: no HOME)" : dir)
            << " ($XLNETC_KERNEL_CACHE)\n";
  if (!dir.empty()) {
    rt::KernelCache cache(dir);
    std::string why = cache.refusal(); // also warns once
    std::cout << "kernel cache key: "
              << (cache.keyFile().empty() ? "(none: no HOME)" : cache.keyFile())
              << " ($XLNETC_KERNEL_CACHE_KEY)\n"
              << "kernel cache in use: " << (why.empty() ? "yes" : "no: " + why) << "\n";
  }
  std::string why;
  rt::dev::DeviceKind autoKind =
      rt::dev::resolveDeviceKind(rt::dev::DeviceKind::Auto, &why);
  std::cout << "--device auto runs on: " << rt::dev::deviceKindName(autoKind)
            << "\n";
  return 0;
}

} // namespace xlnetc
