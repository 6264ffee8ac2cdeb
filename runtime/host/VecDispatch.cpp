//===- VecDispatch.cpp - Picks the VecKernels level for this CPU ----------===//

#include "runtime/host/VecKernels.h"

#include "runtime/host/CpuFeatures.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

namespace xlnetc::rt::host {

// One per level this build compiled (runtime/CMakeLists.txt).
const VecKernels &vecKernels_baseline();
#if XLNETC_VEC_X86
const VecKernels &vecKernels_avx2();
const VecKernels &vecKernels_avx512();
#endif

namespace {

struct Level {
  const char *name;
  const VecKernels &(*table)();
  bool (*supported)();
};

const std::vector<Level> &levels() {
  // Best first.
  static const std::vector<Level> all = {
#if XLNETC_VEC_X86
      // The features (CpuFeatures.h) the -march levels of VecKernels.cpp
      // compile for.
      {"avx512", vecKernels_avx512, [] { return cpuFeatures().x86_64_v4(); }},
      {"avx2", vecKernels_avx2, [] { return cpuFeatures().x86_64_v3(); }},
#endif
      {"baseline", vecKernels_baseline, [] { return true; }},
  };
  return all;
}

struct Selection {
  const VecKernels *table = nullptr;
  Status status = Status::ok();
};

Selection select() {
  Selection s;
  const char *forced = std::getenv("XLNETC_HOST_ISA");
  std::string names;
  for (const Level &l : levels()) {
    names += names.empty() ? l.name : std::string(", ") + l.name;
    if (forced && *forced && std::string(forced) != l.name)
      continue;
    if (!l.supported()) {
      if (forced && *forced) {
        s.status = Status::error(fmt::format(
            "XLNETC_HOST_ISA={}: this CPU does not support {}", forced, l.name));
        return s;
      }
      continue;
    }
    s.table = &l.table();
    return s;
  }
  s.status = Status::error(fmt::format(
      "XLNETC_HOST_ISA={}: unknown level (this build has {})", forced ? forced : "", names));
  return s;
}

const Selection &selection() {
  static const Selection s = select();
  return s;
}

} // namespace

Status selectVecKernels(const VecKernels *&out) {
  out = selection().table;
  return selection().status;
}

const VecKernels &vecKernels() {
  const VecKernels *t = selection().table;
  return t ? *t : vecKernels_baseline();
}

std::vector<const VecKernels *> runnableVecKernels() {
  std::vector<const VecKernels *> out;
  for (const Level &l : levels())
    if (l.supported())
      out.push_back(&l.table());
  return out;
}

} // namespace xlnetc::rt::host
