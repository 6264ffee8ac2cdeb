//===- Bench.h - Benchmark programs: the training step, the attention ---===//
//
// `xlnetc-run bench BUNDLE...` times compiled training steps and prints a
// table (and JSON): tokens/s, step ms, model TFLOP/s, MFU against a bf16
// GEMM timed in the same run, device memory predicted by the memory plan
// and measured. `xlnetc-run bench-attention` times the fused relative
// attention kernels alone (forward and backward, both streams) on given
// shapes. Both run on any device, so they are known to work where there is
// no GPU (emu, at a tiny size); the figures that matter are the GPU's
// (docs/Benchmarks.md). No MLIR: they run from bundles on a GPU machine.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_BENCH_H
#define XLNETC_XLNETC_DRIVER_BENCH_H

#include "xlnetc/Driver/Commands.h"

#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc {

struct BenchArgs {
  std::vector<std::string> bundles; ///< train-step bundles, one per row
  std::string device = "auto";
  int warmup = 2; ///< untimed steps first (the second records the graph)
  int steps = 5;  ///< timed steps
  /// Edge of the square bf16 GEMM whose rate is the MFU's denominator; 0:
  /// 8192 on a GPU, 256 on the emulated device.
  int64_t gemmSize = 0;
  int threads = 0; ///< host executor threads (0: OpenMP's default)
  std::string json; ///< also write the results here
  bool noKernelCache = false;
  /// Host executor only: also time every plan step and print the time per
  /// op (ms per training step, share of the step) under each row.
  bool profile = false;
  /// Host executor: run every plan step as its own kernel (no
  /// host/HostFusion.h fusions), to measure what they bring.
  bool noHostFusion = false;
  MemoryCheckArgs memory;
};

/// `xlnetc-run bench`; returns the process exit code.
int runBench(const BenchArgs &args);

struct AttentionBenchArgs {
  int64_t batch = 4, heads = 16, dHead = 64, seqLen = 512, mlen = 384,
          numPredict = 85;
  std::string device = "auto";
  int warmup = 1, iters = 5;
  int64_t gemmSize = 0; ///< as BenchArgs::gemmSize
  std::string json;
  bool noKernelCache = false;
};

/// `xlnetc-run bench-attention`; returns the process exit code.
int runAttentionBench(const AttentionBenchArgs &args);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_BENCH_H
