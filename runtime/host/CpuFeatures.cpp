//===- CpuFeatures.cpp - CPUID and XGETBV, read once ----------------------===//

#include "runtime/host/CpuFeatures.h"

#include <fmt/format.h>

#include <cstring>
#include <thread>

#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define XLNETC_CPUID 1
#else
#define XLNETC_CPUID 0
#endif

namespace xlnetc::rt::host {

namespace {

#if XLNETC_CPUID
struct Regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

/// CPUID leaf `leaf`, sub-leaf `sub`; all zero when the leaf is beyond the
/// CPU's highest.
Regs cpuid(unsigned leaf, unsigned sub = 0) {
  Regs r;
  unsigned top = __get_cpuid_max(leaf & 0x80000000u, nullptr);
  if (top == 0 || leaf > top)
    return r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

/// XCR0: which register states the OS saves on a context switch.
unsigned long long xcr0() {
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}

bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

std::string trimmed(std::string s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

CpuFeatures detect() {
  CpuFeatures f;
  Regs v = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor, &v.b, 4);
  std::memcpy(vendor + 4, &v.d, 4);
  std::memcpy(vendor + 8, &v.c, 4);
  f.vendor = vendor;

  char brand[49] = {};
  for (unsigned i = 0; i < 3; ++i) {
    Regs r = cpuid(0x80000002u + i);
    std::memcpy(brand + 16 * i, &r, 16);
  }
  f.brand = trimmed(brand);

  Regs l1 = cpuid(1);
  unsigned family = (l1.a >> 8) & 0xf, model = (l1.a >> 4) & 0xf;
  if (family == 0xf)
    family += (l1.a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf)
    model |= ((l1.a >> 16) & 0xf) << 4;
  f.family = family;
  f.model = model;

  // The OS must save the wider registers, or the instructions fault.
  bool osxsave = bit(l1.c, 27);
  unsigned long long xcr = osxsave ? xcr0() : 0;
  bool ymm = (xcr & 0x6) == 0x6;          // SSE and AVX state
  bool zmm = ymm && (xcr & 0xe0) == 0xe0; // opmask, ZMM_Hi256, Hi16_ZMM
  bool tiles = (xcr & 0x60000) == 0x60000; // XTILECFG, XTILEDATA

  f.sse42 = bit(l1.c, 20);
  f.movbe = bit(l1.c, 22);
  f.avx = ymm && bit(l1.c, 28);
  f.fma = f.avx && bit(l1.c, 12);
  f.f16c = f.avx && bit(l1.c, 29);
  Regs l7 = cpuid(7, 0);
  f.bmi1 = bit(l7.b, 3);
  f.bmi2 = bit(l7.b, 8);
  f.avx2 = f.avx && bit(l7.b, 5);
  f.avx512f = zmm && bit(l7.b, 16);
  f.avx512dq = f.avx512f && bit(l7.b, 17);
  f.avx512cd = f.avx512f && bit(l7.b, 28);
  f.avx512bw = f.avx512f && bit(l7.b, 30);
  f.avx512vl = f.avx512f && bit(l7.b, 31);
  f.amxBf16 = tiles && bit(l7.d, 22);
  f.amxTile = tiles && bit(l7.d, 24);
  if (l7.a >= 1)
    f.avx512bf16 = f.avx512f && bit(cpuid(7, 1).a, 5);
  return f;
}
#else
CpuFeatures detect() {
  CpuFeatures f;
  f.brand = "not an x86-64 CPU";
  return f;
}
#endif

} // namespace

std::string CpuFeatures::list() const {
  std::string out;
  auto add = [&out](bool has, const char *name) {
    if (has)
      out += (out.empty() ? "" : " ") + std::string(name);
  };
  add(sse42, "SSE4.2");
  add(avx, "AVX");
  add(avx2, "AVX2");
  add(fma, "FMA");
  if (avx512f) {
    std::string parts = "F";
    for (auto [has, name] : {std::pair{avx512bw, "BW"}, {avx512cd, "CD"}, {avx512dq, "DQ"},
                             {avx512vl, "VL"}})
      if (has)
        parts += std::string(" ") + name;
    add(true, ("AVX-512 (" + parts + ")").c_str());
  }
  add(avx512bf16, "AVX512-BF16");
  add(amxTile, amxBf16 ? "AMX (TILE BF16)" : "AMX (TILE)");
  return out.empty() ? "none" : out;
}

std::string CpuFeatures::identity() const {
  if (vendor.empty())
    return brand;
  return fmt::format("{} ({} family {} model {})", brand.empty() ? "unnamed CPU" : brand,
                     vendor, family, model);
}

const CpuFeatures &cpuFeatures() {
  static const CpuFeatures f = detect();
  return f;
}

int availableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0)
      return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

} // namespace xlnetc::rt::host
