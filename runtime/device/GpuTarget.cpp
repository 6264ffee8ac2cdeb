//===- GpuTarget.cpp - The GPU a device program is made for ---------------===//

#include "runtime/device/GpuTarget.h"

#include <fmt/format.h>

#include <cctype>

namespace xlnetc::rt::dev {

namespace {

/// Shared memory per block with the opt-in, by compute capability (CUDA C++
/// Programming Guide, "Technical Specifications per Compute Capability";
/// docs/Devices.md "GPUs" lists examples of each).
struct ArchSmem {
  const char *arch;
  int kib;
};
constexpr ArchSmem kArchs[] = {
    {"sm_80", 163},  // A100, A30
    {"sm_86", 99},   // A10, A40, RTX A6000, RTX 30
    {"sm_87", 163},  // Jetson AGX Orin
    {"sm_89", 99},   // L4, L40S, RTX 6000 Ada, RTX 40
    {"sm_90", 227},  // H100, H200, GH200
    {"sm_100", 227}, // B200, GB200
    {"sm_103", 227}, // B300, GB300
    {"sm_110", 227}, // Jetson Thor
    {"sm_120", 99},  // RTX PRO 6000 Blackwell, RTX 50
    {"sm_121", 99},  // DGX Spark (GB10)
};

} // namespace

std::string knownGpuArchs() {
  std::string s;
  for (const ArchSmem &a : kArchs)
    s += (s.empty() ? "" : ", ") + std::string(a.arch);
  return s;
}

Status gpuTargetForArch(const std::string &arch, GpuTarget &out) {
  // sm_90a and sm_100f name the same GPUs as sm_90 and sm_100.
  std::string base = arch;
  if (base.size() > 4 && (base.back() == 'a' || base.back() == 'f') &&
      std::isdigit(static_cast<unsigned char>(base[base.size() - 2])))
    base.pop_back();
  for (const ArchSmem &a : kArchs)
    if (base == a.arch) {
      out.arch = arch;
      out.smemPerBlock = int64_t(a.kib) * 1024;
      return Status::ok();
    }
  return Status::error(fmt::format("unknown GPU architecture '{}': xlnetc knows {} (the bf16 "
                                   "tensor cores of sm_80 and newer)",
                                   arch, knownGpuArchs()));
}

} // namespace xlnetc::rt::dev
