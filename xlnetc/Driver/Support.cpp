//===- Support.cpp - The helpers every subcommand shares ------------------===//

#include "xlnetc/Driver/Support.h"

#include "runtime/exec/HostExecutor.h"
#include "runtime/host/GemmKernels.h"

#include <fmt/core.h>

#include <fstream>
#include <iostream>

namespace xlnetc {

int fail(const std::string &message) {
  // One write: the ranks of a data-parallel run share one stderr, and a
  // line written in pieces interleaves with another rank's.
  std::cerr << ("xlnetc: error: " + message + "\n") << std::flush;
  return 1;
}

/// Prints a multi-line diagnostic text as is (it already says "error:").
int failDiagnostics(const std::string &text) {
  std::cerr << text;
  if (!text.empty() && text.back() != '\n')
    std::cerr << "\n";
  return 1;
}

bool writeText(const std::string &path, const std::string &text, std::string &error) {
  std::ofstream os(path, std::ios::binary);
  if (!os || !(os << text) || !os.flush()) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

/// Checks the step shape against the rules the IR relies on; the spec's own
/// rules were checked when it was loaded.
bool checkShape(const ModelSpec &spec, const StepShape &s, const std::string &what,
                std::string &error) {
  auto bad = [&](const std::string &msg) {
    error = what + ": " + msg;
    return false;
  };
  if (s.batch <= 0 || s.seqLen <= 0 || s.numPredict <= 0)
    return bad(fmt::format("batch size ({}), seq_len ({}) and num_predict ({}) must be > 0",
                           s.batch, s.seqLen, s.numPredict));
  if (spec.biData && s.batch % 2 != 0)
    return bad(fmt::format("bi_data needs an even batch size, got {}", s.batch));
  if (s.numPredict > s.seqLen)
    return bad(fmt::format("num_predict ({}) exceeds seq_len ({})", s.numPredict, s.seqLen));
  if (s.reuseLen > s.seqLen)
    return bad(fmt::format("reuse_len ({}) exceeds seq_len ({})", s.reuseLen, s.seqLen));
  if (s.mlen < 0)
    return bad(fmt::format("memory length must be >= 0, got {}", s.mlen));
  // The spec's bounds and size products (docs/SpecFormat.md "Bounds") for a
  // shape that overrides it.
  if (s.batch > (int64_t(1) << 30) || s.seqLen > (int64_t(1) << 20) ||
      s.mlen > (int64_t(1) << 20))
    return bad(fmt::format("batch size ({}), seq_len ({}) or memory length ({}) is beyond "
                           "the spec's bounds (2^30, 2^20, 2^20)",
                           s.batch, s.seqLen, s.mlen));
  const __int128 klen = s.seqLen + s.mlen;
  const __int128 limit = __int128(1) << 58;
  if (__int128(spec.nLayer) * s.batch * klen * std::max(spec.dInner, spec.dModel) >= limit ||
      __int128(s.batch) * spec.nHead * s.seqLen * klen >= limit)
    return bad(fmt::format("batch size {} with seq_len {} and memory length {} makes "
                           "tensors whose byte size would not fit in 64 bits",
                           s.batch, s.seqLen, s.mlen));
  return true;
}

bool openExecutor(const std::string &device, bool noKernelCache, int threads,
                  rt::Executor &executor, std::string &error, int localRank, bool announce) {
  rt::dev::DeviceKind kind;
  if (rt::Status st = rt::dev::parseDeviceKind(device, kind); !st) {
    error = st.message();
    return false;
  }
  rt::dev::DeviceOptions options;
  options.kernelCache = !noKernelCache;
  options.localRank = localRank;
  if (rt::Status st = rt::Executor::open(kind, options, executor); !st) {
    error = "--device " + device + ": " + st.message();
    return false;
  }
  // The CPU executors' threads, on the device auto resolved to (a GPU
  // step's host threads are not --threads).
  const rt::dev::DeviceKind resolved = executor.kind();
  if (resolved == rt::dev::DeviceKind::Host || resolved == rt::dev::DeviceKind::Emu)
    if (rt::Status st = rt::checkHostThreads(threads); !st) {
      error = st.message();
      return false;
    }
  if (!announce)
    return true;
  std::cerr << "xlnetc: device: " << executor.description(threads);
  if (!executor.autoFallbackReason().empty())
    std::cerr << " (auto: " << executor.autoFallbackReason() << ")";
  std::cerr << "\n";
  static bool noted = false; // once a process, however many executors it opens
  if (std::string note = rt::host::weakerKernelsNote();
      !noted && !note.empty() && executor.kind() == rt::dev::DeviceKind::Host) {
    std::cerr << "xlnetc: note: " << note << "\n";
    noted = true;
  }
  return true;
}

std::optional<rt::dev::GpuTarget> deviceTarget(const rt::Executor &executor) {
  if (!executor.device())
    return std::nullopt;
  return rt::dev::gpuTargetOf(*executor.device());
}

bool applyPrecision(const std::string &flag, const rt::Executor &executor, StepShape &shape,
                    std::string &error) {
  if (!flag.empty()) {
    std::optional<Precision> p = parsePrecision(flag);
    if (!p) {
      error = "unknown --precision '" + flag + "' (expected fp32 or bf16)";
      return false;
    }
    shape.precision = *p;
  }
  if (shape.precision == Precision::BF16 && executor.kind() == rt::dev::DeviceKind::Host) {
    error = fmt::format("bf16 mixed precision runs on the CUDA executor (--device cuda or "
                        "emu), but the step would run on the host executor{}, the fp32 "
                        "reference; use --device emu or cuda, or an fp32 step (xlnetc: "
                        "--precision fp32; xlnetc-run: a bundle compiled without "
                        "--precision bf16)",
                        executor.autoFallbackReason().empty()
                            ? std::string()
                            : " (auto: " + executor.autoFallbackReason() + ")");
    return false;
  }
  return true;
}

} // namespace xlnetc
