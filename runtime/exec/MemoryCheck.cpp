//===- MemoryCheck.cpp - Will a step fit? ---------------------------------===//

#include "runtime/exec/MemoryCheck.h"

#include "runtime/exec/Executor.h"
#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/Plan.h"
#include "runtime/host/HostFusion.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

namespace xlnetc::rt {

StepMemoryNeed stepMemoryNeed(const Plan &plan, StepMemory where, bool keepsCopy) {
  const bool onDevice = where != StepMemory::HostExecutor;
  MemoryPlan m;
  int64_t hostExtraBytes = 0; // the kept probabilities and the LayerNorm scratch
  if (onDevice && plan.device && plan.device->memory.offset.size() == plan.buffers.size()) {
    m = plan.device->memory;
  } else if (onDevice) {
    m = planMemory(plan, plan.device.get());
  } else { // the host executor as it runs by default: with its fusions
    const host::HostFusions f = host::findHostFusions(plan, true);
    m = f.memory;
    hostExtraBytes = f.keptProbsBytes() + f.scratchBytes;
  }
  StepMemoryNeed need;
  need.stateBytes = m.parameterBytes + m.optimizerBytes;
  need.stepBytes = m.inputBytes + m.arenaBytes + m.workspaceBytes + hostExtraBytes;
  if (where == StepMemory::Gpu)
    return need;
  // In host RAM also: the returned outputs (the host executor's tensors of
  // their own, beside their slots in the arena; the emulated device's
  // copies back) and the caller's copy of the state.
  need.stepBytes += m.outputBytes;
  if (keepsCopy)
    need.stateBytes *= 2;
  return need;
}

namespace {

/// A number from a /proc or /sys file ("max" and unreadable files: none).
bool readNumber(const std::string &path, int64_t &out) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || !std::isdigit(static_cast<unsigned char>(word[0])))
    return false;
  out = std::strtoll(word.c_str(), nullptr, 10);
  return true;
}

/// The memory cgroup's room (limit less use), when this process runs under a
/// limit: cgroup v2, then v1.
bool cgroupRoom(int64_t &room) {
  int64_t limit = 0, used = 0;
  if (readNumber("/sys/fs/cgroup/memory.max", limit) &&
      readNumber("/sys/fs/cgroup/memory.current", used)) {
    room = std::max<int64_t>(0, limit - used);
    return true;
  }
  if (readNumber("/sys/fs/cgroup/memory/memory.limit_in_bytes", limit) &&
      readNumber("/sys/fs/cgroup/memory/memory.usage_in_bytes", used) &&
      limit < (int64_t(1) << 60)) { // v1 writes a huge number for "no limit"
    room = std::max<int64_t>(0, limit - used);
    return true;
  }
  return false;
}

} // namespace

Status hostMemoryAvailable(int64_t &bytes) {
  std::ifstream in("/proc/meminfo");
  std::string line;
  int64_t kib = -1;
  while (std::getline(in, line))
    if (line.rfind("MemAvailable:", 0) == 0) {
      kib = std::strtoll(line.c_str() + 13, nullptr, 10);
      break;
    }
  if (kib < 0)
    return Status::error("cannot read the available memory (no MemAvailable in "
                         "/proc/meminfo); pass --no-memory-check to skip the check");
  bytes = kib * 1024;
  int64_t room = 0;
  if (cgroupRoom(room))
    bytes = std::min(bytes, room);
  return Status::ok();
}

Status memoryAvailable(Executor &executor, int64_t &bytes, std::string &what) {
  if (dev::Device *device = executor.device();
      device && executor.kind() == dev::DeviceKind::Cuda) {
    size_t freeBytes = 0;
    XLNETC_RETURN_IF_ERROR(device->memoryFree(freeBytes));
    bytes = int64_t(freeBytes);
    what = "is free on the GPU";
    return Status::ok();
  }
  what = "of RAM is available";
  return hostMemoryAvailable(bytes);
}

std::string formatBytes(int64_t bytes) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (std::fabs(v) >= 1024.0 && u < 6)
    v /= 1024.0, ++u;
  if (u == 0)
    return fmt::format("{} B", bytes);
  return fmt::format("{:.{}f} {}", v, v < 10 ? 2 : v < 100 ? 1 : 0, units[u]);
}

Status parseByteSize(const std::string &text, int64_t &bytes) {
  const auto bad = [&] {
    return Status::error(fmt::format("'{}' is not a size: expected bytes, or a number "
                                     "with K, M, G or T (e.g. 16G, 512MiB)",
                                     text));
  };
  size_t end = 0;
  double value = 0;
  try {
    value = std::stod(text, &end);
  } catch (...) {
    return bad();
  }
  std::string unit = text.substr(end);
  double scale = 1;
  if (!unit.empty()) {
    const char c = char(std::toupper(static_cast<unsigned char>(unit[0])));
    const std::string rest = unit.substr(1);
    if (c == 'B' && rest.empty())
      scale = 1;
    else if ((c == 'K' || c == 'M' || c == 'G' || c == 'T') &&
             (rest.empty() || rest == "B" || rest == "iB" || rest == "IB"))
      scale = std::pow(1024.0, c == 'K' ? 1 : c == 'M' ? 2 : c == 'G' ? 3 : 4);
    else
      return bad();
  }
  const double v = value * scale;
  if (!(v >= 0) || v >= 9.2e18)
    return bad();
  bytes = int64_t(v);
  return Status::ok();
}

} // namespace xlnetc::rt
