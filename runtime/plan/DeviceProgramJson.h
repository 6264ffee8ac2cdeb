//===- DeviceProgramJson.h - A device program as JSON ------------*- C++ -*-===//
//
// The launches of a device program (runtime/plan/DeviceProgram.h) as a JSON
// document, so a compiled bundle (docs/Bundles.md) carries them to a
// runtime that links no compiler: everything but the CUDA C++ source, which
// the bundle keeps in its own file and the reader checks against the
// recorded SHA-256. The memory plan is not stored: planMemory recomputes it
// from the plan and the launches.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_PLAN_DEVICEPROGRAMJSON_H
#define XLNETC_RUNTIME_PLAN_DEVICEPROGRAMJSON_H

#include "runtime/plan/DeviceProgram.h"
#include "runtime/Status.h"

#include <string>

namespace xlnetc::rt {

struct Plan;

/// The format name and version of the document.
inline constexpr const char *kDeviceProgramFormat = "xlnetc-device-program";
inline constexpr int kDeviceProgramVersion = 2;

/// `program` without its source, as JSON text.
std::string writeDeviceProgramJson(const DeviceProgram &program);

/// Reads a document writeDeviceProgramJson wrote for `plan`, with `source`
/// (the program's CUDA C++), into `out` (memory plan included). Checks the
/// format, one entry per plan step, every buffer and table index, the kinds
/// and the source's SHA-256; errors name the step and launch.
Status parseDeviceProgramJson(const std::string &text, const Plan &plan,
                              std::string source, DeviceProgram &out);

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_PLAN_DEVICEPROGRAMJSON_H
