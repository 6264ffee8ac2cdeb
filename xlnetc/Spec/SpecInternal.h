//===- SpecInternal.h - Shared helpers of the spec loaders -------*- C++
//-*-===//
//
// Private to XLNetSpec: the TOML and HF config.json loaders share the error
// formatting, the key-suggestion distance and the validation rules, which
// take a locator so that a loader can point each rule at the offending value.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_SPEC_SPECINTERNAL_H
#define XLNETC_SPEC_SPECINTERNAL_H

#include "xlnetc/Spec/Spec.h"

#include <functional>
#include <string>
#include <string_view>

namespace xlnetc::detail {

/// A 1-based source position; line 0 means "no position".
struct SourcePos {
  uint32_t line = 0;
  uint32_t column = 0;
};

/// Formats "PATH:LINE:COL: error: MESSAGE" ("PATH: error: MESSAGE" when `pos`
/// has no line, "error: MESSAGE" when there is no path), flattening any newline
/// in MESSAGE so it stays one line.
std::string formatError(const std::string &path, SourcePos pos,
                        std::string_view message);

/// Maps an official key name (e.g. "perm_size") to where its value was
/// written; a position with line 0 when the loader has none.
using Locator = std::function<SourcePos(std::string_view key)>;

/// Runs every range and cross-field rule in a fixed order and reports the
/// first broken one at `locate(key)` of the key it names first.
bool validateWith(const ModelSpec &spec, const Locator &locate,
                  std::string &error);

/// Levenshtein distance, for "did you mean" suggestions.
size_t editDistance(std::string_view a, std::string_view b);

/// Quotes a user string for a message: 'text', control characters escaped.
std::string quote(std::string_view text);

/// Parses `text` (the contents of `path`) as a TOML spec into `out`.
bool loadTomlSpec(const std::string &path, const std::string &text,
                  ModelSpec &out, std::string &error);

/// Parses `text` (the contents of `path`) as a HuggingFace config.json.
bool loadHFConfig(const std::string &path, const std::string &text,
                  ModelSpec &out, std::string &error);

} // namespace xlnetc::detail

#endif // XLNETC_SPEC_SPECINTERNAL_H
