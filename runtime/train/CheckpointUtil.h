//===- CheckpointUtil.h - Helpers shared by the checkpoint code -*- C++ -*-===//
//
// Internal to runtime/train.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_CHECKPOINTUTIL_H
#define XLNETC_RUNTIME_TRAIN_CHECKPOINTUTIL_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace xlnetc::rt::train::detail {

/// `text` with newlines and other control characters replaced by spaces, so
/// that a message stays on one line.
std::string oneLine(const std::string &text);

/// "'a', 'b', 'c' (and 4 more)": at most `max` quoted names.
std::string listNames(const std::vector<std::string> &names, size_t max = 8);

/// Checks that `path` names an existing regular file; `what` starts the
/// message ("checkpoint", "init-from file").
Status checkReadableFile(const std::string &path, const std::string &what);

/// True when `s` starts with `prefix`.
inline bool startsWith(const std::string &s, const std::string &prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

} // namespace xlnetc::rt::train::detail

#endif // XLNETC_RUNTIME_TRAIN_CHECKPOINTUTIL_H
