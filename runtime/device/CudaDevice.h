//===- CudaDevice.h - The real GPU through the CUDA driver -----*- C++ -*-===//
//
// The device of `--device cuda` (CudaDevice.cpp, docs/Devices.md): the driver
// API loaded with dlopen, kernels compiled by NVRTC to CUBIN for the GPU's
// architecture through the kernel cache.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_CUDADEVICE_H
#define XLNETC_RUNTIME_DEVICE_CUDADEVICE_H

#include "runtime/device/Device.h"

namespace xlnetc::rt::dev {

/// Opens GPU `options.ordinal`. Without a driver, without a GPU, or with a
/// driver too old, fails with one line saying which.
Status createCudaDevice(const DeviceOptions &options,
                        std::unique_ptr<Device> &out);

/// Whether a driver loads and reports at least one GPU; `why` receives the
/// reason when not.
bool cudaDeviceAvailable(std::string *why);

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_CUDADEVICE_H
