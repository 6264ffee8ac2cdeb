//===- FloatBits.h - Floating-point attributes as template arguments -*- C++ -*-===//
//
// C++17 has no floating-point template parameters, so the device templates
// (runtime/device/kernels/) take a float attribute as the bits of float(x)
// and a double one as its IEEE-754 bits. The emitter and the tests spell
// them with these.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_FLOATBITS_H
#define XLNETC_RUNTIME_DEVICE_FLOATBITS_H

#include <cstdint>
#include <cstring>

namespace xlnetc::rt::dev {

/// The bits of float(x).
inline uint32_t floatBits(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

/// The bits of the double x.
inline uint64_t doubleBits(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
}

} // namespace xlnetc::rt::dev

#endif // XLNETC_RUNTIME_DEVICE_FLOATBITS_H
