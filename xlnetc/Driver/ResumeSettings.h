//===- ResumeSettings.h - A resume trains the run it resumes ----*- C++ -*-===//
//
// `xlnetc train --resume` continues the run in DIR, so the spec it resolves
// (the spec file, --keep-accents, --precision) must be the run's own, kept as
// DIR/spec.toml, on every key that changes what training computes. A training
// setting (ResumeRule::Override: learning rate, schedule, dropout, clip, ...)
// may change when `--override KEY` names it; a key the checkpoint was made
// with (ResumeRule::Fixed: the model, the batch shape, the data pipeline,
// the seed) never does; `device` (ResumeRule::Free) says where the step runs,
// not what it computes. docs/Training.md "Resume" describes the rules.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_RESUMESETTINGS_H
#define XLNETC_XLNETC_DRIVER_RESUMESETTINGS_H

#include "runtime/Status.h"
#include "xlnetc/Spec/Spec.h"

#include <string>
#include <vector>

namespace xlnetc {

/// Compares `resolved`, the spec this resume resolved from `specName`, with
/// `kept`, the run's spec read from `keptPath`. Returns ok and the changes
/// this resume takes in `accepted` (every changed Override key, each named
/// by `overrides`), or ONE error that lists every change it does not take
/// as `KEY: OLD -> NEW` and says how to go on. An override that names no
/// spec key, a key that did not change or a Fixed key is an error too.
rt::Status checkResumeSettings(const ModelSpec &kept, const ModelSpec &resolved,
                               const std::vector<std::string> &overrides,
                               const std::string &keptPath, const std::string &specName,
                               std::vector<SpecChange> &accepted);

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_RESUMESETTINGS_H
