//===- EmuDevice.h - The emulated device -----------------------*- C++ -*-===//
//
// Host memory, kernels compiled by the host C++ compiler against the
// same-source prelude's SIMT emulator (EmuDevice.cpp, docs/Devices.md).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_EMUDEVICE_H
#define XLNETC_RUNTIME_DEVICE_EMUDEVICE_H

#include "runtime/device/Device.h"

namespace xlnetc::rt::dev {

/// An emulated device. Never fails to open: compiling a module is where a
/// missing host compiler is reported.
std::unique_ptr<Device> createEmuDevice(const DeviceOptions &options);

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_EMUDEVICE_H
