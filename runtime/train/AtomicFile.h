//===- AtomicFile.h - Crash-safe replacement of a file ---------*- C++ -*-===//
//
// Writes a file so that readers only ever see the old complete contents or the
// new complete contents: the data goes to a fresh temporary file in the same
// directory ("<path>.tmp.<pid>.<n>", created with O_EXCL), which commit()
// fsyncs, renames over <path> and makes durable by fsyncing the directory.
// If the process dies before commit() the temporary file is left behind (safe
// to delete); if a write fails or the object is destroyed uncommitted, the
// temporary file is removed. The target is never opened for writing.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_ATOMICFILE_H
#define XLNETC_RUNTIME_TRAIN_ATOMICFILE_H

#include "runtime/Status.h"

#include <cstddef>
#include <string>

namespace xlnetc::rt::train {

/// One atomic replacement of `path`: open(), write()..., commit().
class AtomicFile {
public:
  AtomicFile() = default;
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;
  /// Removes the temporary file when commit() did not succeed.
  ~AtomicFile();

  /// Creates the temporary file next to `path`. Error messages name `path`.
  Status open(const std::string &path);
  /// Appends `n` bytes (handles short writes and EINTR).
  Status write(const void *data, size_t n);
  /// fsync, close, rename over the target, fsync the directory.
  Status commit();
  /// Removes the temporary file (also done by the destructor).
  void abandon();

  /// The file descriptor of the temporary file (-1 when not open); for a
  /// child process that writes the contents itself.
  int fd() const { return fd_; }
  const std::string &tempPath() const { return tmp_; }

private:
  std::string path_, tmp_;
  int fd_ = -1;
};

/// The directory part of `path` ("." when it has none).
std::string parentDirectory(const std::string &path);

/// The prefix every temporary file of `path` starts with ("<path>.tmp.").
std::string atomicTempPrefix(const std::string &path);

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_ATOMICFILE_H
