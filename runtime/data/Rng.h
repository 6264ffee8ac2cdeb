//===- Rng.h - The data pipeline's portable random numbers -----*- C++ -*-===//
//
// Every random choice of the data pipeline goes through Rng, so a stream is
// reproducible from its seed on every platform and standard library:
// std::mt19937_64's output sequence is fixed by the C++ standard, while the
// std::*_distribution classes are implementation-defined and are therefore
// never used. The helpers below derive integers and doubles from the raw
// 64-bit outputs with explicit, documented arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DATA_RNG_H
#define XLNETC_RUNTIME_DATA_RNG_H

#include "runtime/host/DropoutHash.h"

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace xlnetc::rt::data {

/// SplitMix64 finaliser: a bijective 64-bit mix used to derive seeds (the
/// dropout hash's, runtime/host/DropoutHash.h).
inline uint64_t mix64(uint64_t x) { return host::splitmix64(x); }

/// A seed for the sub-stream (a, b) of `seed`; distinct (a, b) give
/// unrelated streams.
inline uint64_t deriveSeed(uint64_t seed, uint64_t a, uint64_t b) {
  return mix64(mix64(mix64(seed) ^ a) ^ (b * 0xd6e8feb86659fd93ull));
}

/// A seeded generator with portable helpers.
class Rng {
public:
  explicit Rng(uint64_t seed) : engine_(seed) {}

  /// The next raw 64-bit output.
  uint64_t next() { return engine_(); }

  /// Uniform integer in [0, n) without modulo bias (rejection sampling);
  /// n must be positive.
  uint64_t uniformInt(uint64_t n) {
    // Largest multiple of n representable; outputs at or above it are
    // rejected so every residue is equally likely.
    uint64_t limit = UINT64_MAX - (UINT64_MAX % n + 1) % n;
    uint64_t x;
    do
      x = next();
    while (x > limit);
    return x % n;
  }

  /// Uniform double in [0, 1) from the top 53 bits.
  double uniform01() { return double(next() >> 11) * 0x1.0p-53; }

  /// Bernoulli(p).
  bool bernoulli(double p) { return uniform01() < p; }

  /// Index k drawn with probability weights[k] / sum(weights).
  size_t weighted(const std::vector<double> &weights) {
    double total = 0;
    for (double w : weights)
      total += w;
    double u = uniform01() * total, acc = 0;
    for (size_t k = 0; k < weights.size(); ++k) {
      acc += weights[k];
      if (u < acc)
        return k;
    }
    return weights.size() - 1;
  }

  /// Fisher-Yates shuffle.
  template <typename T> void shuffle(std::vector<T> &v) {
    for (size_t k = v.size(); k > 1; --k)
      std::swap(v[k - 1], v[uniformInt(k)]);
  }

private:
  std::mt19937_64 engine_;
};

} // namespace xlnetc::rt::data

#endif // XLNETC_RUNTIME_DATA_RNG_H
