//===- Device.cpp - Device selection -------------------------------------===//

#include "runtime/device/Device.h"

#include <cstdlib>

#include "runtime/device/CudaDevice.h"
#include "runtime/device/EmuDevice.h"

#include <fmt/format.h>

namespace xlnetc::rt::dev {

const char *deviceKindName(DeviceKind kind) {
  switch (kind) {
  case DeviceKind::Host:
    return "host";
  case DeviceKind::Emu:
    return "emu";
  case DeviceKind::Cuda:
    return "cuda";
  case DeviceKind::Auto:
    return "auto";
  }
  return "?";
}

Status parseDeviceKind(const std::string &name, DeviceKind &out) {
  for (DeviceKind k : {DeviceKind::Host, DeviceKind::Emu, DeviceKind::Cuda,
                       DeviceKind::Auto})
    if (name == deviceKindName(k)) {
      out = k;
      return Status::ok();
    }
  return Status::error(fmt::format(
      "unknown device '{}' (expected host, emu, cuda or auto)", name));
}

GemmPointers gemmPointers(const GemmOperands &ops) {
  GemmPointers p;
  p.a = reinterpret_cast<const void *>(ops.a);
  p.b = reinterpret_cast<const void *>(ops.b);
  p.c = reinterpret_cast<const void *>(ops.c);
  p.d = reinterpret_cast<void *>(ops.d);
  p.bias = reinterpret_cast<void *>(ops.bias);
  p.aux = reinterpret_cast<void *>(ops.aux);
  return p;
}

DeviceKind resolveDeviceKind(DeviceKind kind, std::string *why) {
  if (kind != DeviceKind::Auto)
    return kind;
  return cudaDeviceAvailable(why) ? DeviceKind::Cuda : DeviceKind::Host;
}

Status gemmEpilogueFault(bool &unsupported) {
  const char *v = std::getenv("XLNETC_FAULT_GEMM_EPILOGUE");
  const std::string value = v ? v : "";
  unsupported = value == "unsupported";
  if (!value.empty() && !unsupported)
    return Status::error(fmt::format(
        "XLNETC_FAULT_GEMM_EPILOGUE is '{}'; the test hook takes 'unsupported'", value));
  return Status::ok();
}

GpuTarget gpuTargetOf(const Device &device) {
  GpuTarget t;
  t.arch = device.arch();
  t.smemPerBlock = int64_t(device.maxSharedMemoryPerBlock());
  return t;
}

bool envSwitchOn(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

bool lineInfoRequested() { return envSwitchOn("XLNETC_CUDA_LINEINFO"); }

Status openDevice(DeviceKind kind, const DeviceOptions &options,
                  std::unique_ptr<Device> &out) {
  switch (resolveDeviceKind(kind)) {
  case DeviceKind::Emu:
    return createEmuDevice(options, out);
  case DeviceKind::Cuda:
    return createCudaDevice(options, out);
  case DeviceKind::Host:
  case DeviceKind::Auto:
    break;
  }
  return Status::error("the host executor is not a device (internal error)");
}

} // namespace xlnetc::rt::dev
