//===- RunDirectory.h - One run at a time, regular files only -*- C++ -*-===//
//
// A run directory (`xlnetc train --out DIR`) is written by one run at a
// time, and only through regular files it owns (docs/Training.md "Run
// directory"):
//   - RunLock holds an exclusive flock(2) on DIR/.xlnetc-run.lock for the
//     life of the run, so a second run on DIR is refused, naming the
//     process that holds it (the lock goes with the process, even killed);
//   - checkRunFiles refuses, before anything is written, an entry the run
//     would write that is not a regular file: a symbolic link (dangling or
//     not: a write would go through it, or replace it), a directory, a
//     FIFO or a device, each named.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_RUNDIRECTORY_H
#define XLNETC_RUNTIME_TRAIN_RUNDIRECTORY_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace xlnetc::rt::train {

/// The lock file's name inside a run directory.
inline constexpr const char *kRunLockName = ".xlnetc-run.lock";

/// An exclusive lock on a run directory, released when destroyed.
class RunLock {
public:
  RunLock() = default;
  RunLock(const RunLock &) = delete;
  RunLock &operator=(const RunLock &) = delete;
  RunLock(RunLock &&other) noexcept;
  RunLock &operator=(RunLock &&other) noexcept;
  ~RunLock();

  /// Takes the lock of `dir` (which must exist) and writes this process's
  /// id into the lock file. Held by another process (or another RunLock of
  /// this one): an error naming the directory and the holder's pid. A lock
  /// file that is not a regular file (a symbolic link, say) is refused.
  static Status acquire(const std::string &dir, RunLock &out);

private:
  int fd_ = -1;
};

/// Refuses the entries of `dir` named in `names` that exist but are not
/// regular files (lstat: a symbolic link is one, dangling or not), naming
/// each and what it is.
Status checkRunFiles(const std::string &dir, const std::vector<std::string> &names);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_RUNDIRECTORY_H
