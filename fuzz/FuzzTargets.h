//===- FuzzTargets.h - The input paths the fuzzers drive -------*- C++ -*-===//
//
// One function per input path a user's file reaches (docs/Testing.md
// "Fuzzing"): each takes arbitrary bytes, runs the reader on them as a
// command would, and must return normally — an error Status is the expected
// answer to bad input; a crash, hang or sanitizer report is a bug. The
// libFuzzer targets (fuzz/FuzzMain.cpp, scripts/fuzz.sh) and the regression
// test over the kept reproducers (test/Train/FuzzRegressionTest.cpp) call
// the same functions.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_FUZZ_FUZZTARGETS_H
#define XLNETC_FUZZ_FUZZTARGETS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace xlnetc::fuzz {

using Target = void (*)(const uint8_t *data, size_t size);

/// The safetensors readers: the runtime's (readSafetensors) and the
/// weights reader's (indexSafetensors + readAsF32 of every float tensor).
void safetensors(const uint8_t *data, size_t size);
/// The TOML spec loader (and validation).
void tomlSpec(const uint8_t *data, size_t size);
/// The HuggingFace config.json loader.
void hfConfig(const uint8_t *data, size_t size);
/// The plan reader (parsePlan: JSON, then every verifier).
void plan(const uint8_t *data, size_t size);
/// The checkpoint loader, against the shapes of a small model.
void checkpoint(const uint8_t *data, size_t size);
/// A raw-form batch file through the pipeline: read as safetensors, then
/// deriveBatchFromRaw (perm_index permutations, span targets, the masks).
void rawBatch(const uint8_t *data, size_t size);
/// A bundle's program.json against a plan: the bytes are the plan's JSON, a
/// NUL, then the program's JSON (its source_sha256 set to the source the
/// harness passes, so the fuzzer gets past that check); parsePlan, then
/// parseDeviceProgramJson (every launch, table, group and geometry check)
/// and the memory plan it makes.
void deviceProgram(const uint8_t *data, size_t size);
/// A bundle's manifest.json, read by readBundle in a bundle directory the
/// harness makes once: its files, a file in cubin/sm_90/, a symbolic link
/// out of the bundle and a FIFO (a read of which would hang).
void bundleManifest(const uint8_t *data, size_t size);

struct NamedTarget {
  const char *name;
  Target run;
};
/// Every target, by the name scripts/fuzz.sh and fuzz/reproducers/ use.
const std::vector<NamedTarget> &targets();

} // namespace xlnetc::fuzz

#endif // XLNETC_FUZZ_FUZZTARGETS_H
