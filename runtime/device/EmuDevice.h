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

/// An emulated device. Fails to open only on a bad
/// $XLNETC_EMU_SMEM_PER_BLOCK: compiling a module is where a missing host
/// compiler is reported.
Status createEmuDevice(const DeviceOptions &options, std::unique_ptr<Device> &out);

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_EMUDEVICE_H
