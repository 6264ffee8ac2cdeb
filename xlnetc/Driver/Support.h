//===- Support.h - The helpers every subcommand shares ----------*- C++ -*-===//
//
// Where a step's plan comes from (StepCompiler: the compiler in xlnetc, a
// compiled bundle in xlnetc-run), the executor a command opens and what its
// device program is made for, the precision flag, the step-shape check, and
// the one-line errors. No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_SUPPORT_H
#define XLNETC_XLNETC_DRIVER_SUPPORT_H

#include "xlnetc/Spec/StepShape.h"

#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"

#include <functional>
#include <optional>
#include <string>

namespace xlnetc {

/// Gives the plan of `step` for `spec` and `shape` (with its device program,
/// made for `device`, when one is given), or false with `error`
/// (diagnostics, each line already saying "error:"). `planText`, when
/// given, receives the JSON.
using StepCompiler = std::function<bool(
    const ModelSpec &spec, const StepShape &shape, StepKind step, rt::Plan &plan,
    std::string &error, std::string *planText, const std::optional<rt::dev::GpuTarget> &device)>;

/// What the device program of a step run on `executor` is made for: its
/// device (none for the host executor).
std::optional<rt::dev::GpuTarget> deviceTarget(const rt::Executor &executor);

/// Prints "xlnetc: error: MESSAGE"; returns 1.
int fail(const std::string &message);
/// Prints a multi-line diagnostic text as is (it already says "error:");
/// returns 1.
int failDiagnostics(const std::string &text);
/// Writes `text` to `path`; false with `error` naming the file.
bool writeText(const std::string &path, const std::string &text, std::string &error);

/// Checks the step shape against the rules the IR relies on (`what` names
/// where it came from); the spec's own rules were checked when it was loaded.
bool checkShape(const ModelSpec &spec, const StepShape &s, const std::string &what,
                std::string &error);

/// Sets shape.precision from --precision (`flag`; empty: keep the spec's or
/// the bundle's) and checks that a bf16 step has a device executor.
bool applyPrecision(const std::string &flag, const rt::Executor &executor, StepShape &shape,
                    std::string &error);

/// Opens the executor `device` names (host, emu, cuda, auto) and prints one
/// "xlnetc: device: ..." line to stderr saying what runs the step (and why
/// auto fell back to the host). On failure `error` is one line.
/// `localRank` >= 0: a data-parallel process's index on its node, which
/// picks its GPU (cuda::processGpu); otherwise the first GPU.
/// `threads`: the --threads the steps will run with (0: OpenMP's default), checked
/// here (rt::checkHostThreads) and reported in the line.
/// `announce`: print the line (data parallel: rank 0 only), and on the host
/// a note when the GEMM kernels are weaker than the CPU runs.
bool openExecutor(const std::string &device, bool noKernelCache, int threads,
                  rt::Executor &executor, std::string &error, int localRank = -1,
                  bool announce = true);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_SUPPORT_H
