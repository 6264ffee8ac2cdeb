//===- Bundle.h - Compiled bundles: a step a runtime can run alone -*- C++ -*-===//
//
// A bundle is a directory (docs/Bundles.md) holding one compiled step: the
// spec it came from, the plan, the device program's launches and its CUDA
// C++ source, and a manifest (format, step, shapes, precision, the spec's
// fingerprint, each file's SHA-256). `xlnetc compile SPEC -o DIR` writes one;
// `xlnetc-run`, which links no MLIR, runs and trains from it. No MLIR here.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_BUNDLE_H
#define XLNETC_XLNETC_DRIVER_BUNDLE_H

#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Spec/StepShape.h"

#include "runtime/plan/DeviceProgram.h"
#include "runtime/Status.h"

#include <map>
#include <string>

namespace xlnetc {

inline constexpr const char *kBundleFormat = "xlnetc-bundle";
inline constexpr int kBundleVersion = 3;

/// A bundle as read back (the plan and program still as text).
struct Bundle {
  std::string dir;
  std::string specPath; ///< DIR/spec.toml or DIR/config.json
  std::string fingerprint;
  StepKind step = StepKind::Train;
  StepShape shape;
  std::string precision; ///< "fp32" or "bf16" (also in shape.precision)
  std::string planText, programText, source;
  /// CUBINs compiled ahead of time (empty: none), by kernel name.
  std::string cubinArch;
  std::map<std::string, std::string> cubins;
};

/// Compiles every kernel of `program` alone (its head and its wrapper) with
/// NVRTC for `arch`, through the kernel cache unless `noCache`; prints one
/// progress line. `out` maps kernel names to CUBINs.
rt::Status compileKernelCubins(const rt::DeviceProgram &program, const std::string &arch,
                               bool noCache, std::map<std::string, std::string> &out);

/// Writes the bundle of `step` of the spec at `specPath` (its file is copied)
/// into `dir`, with `cubins` (compileKernelCubins for `cubinArch`) under
/// cubin/ARCH/KERNEL.cubin when given: into a fresh sibling directory
/// first, then renamed over `dir`. An existing `dir` is replaced only when
/// it is a bundle holding nothing but its files, or empty; anything else
/// there is an error and stays as it was.
rt::Status writeBundle(const std::string &dir, const std::string &specPath,
                       const ModelSpec &spec, const StepShape &shape, StepKind step,
                       const std::string &planText, const rt::DeviceProgram &program,
                       const std::string &cubinArch = {},
                       const std::map<std::string, std::string> &cubins = {});

/// Reads the bundle in `dir`: the manifest, every file it names, each
/// checked against its recorded SHA-256. Errors name the file.
rt::Status readBundle(const std::string &dir, Bundle &out);

/// The StepCompiler of a bundle: gives its plan (and device program) when
/// asked for its own step and shape, and otherwise says what it holds and
/// what was asked.
StepCompiler bundleCompiler(const Bundle &bundle);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_BUNDLE_H
