//===- Export.h - xlnetc export: a HuggingFace model directory --*- C++ -*-===//
//
// `xlnetc export SOURCE OUT_DIR` writes what transformers' from_pretrained
// loads (docs/Training.md "Export to HuggingFace"): config.json, a
// parameters-only model.safetensors, spiece.model and a
// tokenizer_config.json that makes XLNetTokenizer tokenize as training did.
// SOURCE is a run directory (its checkpoint, spec.toml and spiece.model) or
// any weights source (runtime/train/WeightsSource.h) with --spec.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_EXPORT_H
#define XLNETC_XLNETC_DRIVER_EXPORT_H

#include "xlnetc/Spec/Spec.h"

#include <string>

namespace xlnetc {

struct ExportArgs {
  std::string source; ///< a run directory, a checkpoint or other weights
  std::string outDir; ///< must not exist, or be empty
  std::string spec;   ///< the model (default: the run directory's spec.toml)
  std::string tokenizer; ///< default: the run directory's spiece.model
};

/// Runs `xlnetc export`; returns the process exit code (errors are one
/// "xlnetc: error: ..." line; nothing is left half-written).
int runExport(const ExportArgs &args);

/// The HuggingFace XLNetConfig of `spec` as config.json text.
std::string hfConfigJson(const ModelSpec &spec);

/// tokenizer_config.json for XLNetTokenizer, as the run tokenized.
std::string hfTokenizerConfigJson(const ModelSpec &spec);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_EXPORT_H
