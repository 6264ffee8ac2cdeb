//===- AtomicFile.cpp - Crash-safe replacement of a file ------------------===//

#include "runtime/train/AtomicFile.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace xlnetc::rt::train {

namespace {
std::atomic<unsigned> tempCounter{0};
} // namespace

std::string parentDirectory(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

std::string atomicTempPrefix(const std::string &path) {
  return path + ".tmp.";
}

AtomicFile::~AtomicFile() { abandon(); }

void AtomicFile::abandon() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    tmp_.clear();
  }
}

Status AtomicFile::open(const std::string &path) {
  abandon();
  path_ = path;
  if (path.empty())
    return Status::error("empty output path");
  if (path.back() == '/')
    return Status::error(fmt::format("{}: is a directory name, not a file",
                                     path));
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string tmp = fmt::format("{}{}.{}", atomicTempPrefix(path), ::getpid(),
                                  tempCounter.fetch_add(1));
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fd_ = fd;
      tmp_ = tmp;
      return Status::ok();
    }
    if (errno != EEXIST)
      return Status::error(fmt::format("{}: cannot create temporary file {}: {}",
                                       path, tmp, std::strerror(errno)));
  }
  return Status::error(
      fmt::format("{}: cannot find a free temporary file name", path));
}

Status AtomicFile::write(const void *data, size_t n) {
  if (fd_ < 0)
    return Status::error(fmt::format("{}: write to a closed file", path_));
  const char *p = static_cast<const char *>(data);
  while (n > 0) {
    // Linux transfers at most ~2 GiB per call.
    size_t chunk = n < (size_t(1) << 30) ? n : (size_t(1) << 30);
    ssize_t w = ::write(fd_, p, chunk);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      int err = errno;
      std::string tmp = tmp_;
      abandon();
      return Status::error(fmt::format("{}: writing {} failed: {}", path_, tmp,
                                       std::strerror(err)));
    }
    p += w;
    n -= size_t(w);
  }
  return Status::ok();
}

Status AtomicFile::commit() {
  if (fd_ < 0)
    return Status::error(fmt::format("{}: commit of a closed file", path_));
  std::string tmp = tmp_;
  if (::fsync(fd_) != 0) {
    int err = errno;
    abandon();
    return Status::error(
        fmt::format("{}: fsync of {} failed: {}", path_, tmp, std::strerror(err)));
  }
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    int err = errno;
    abandon();
    return Status::error(
        fmt::format("{}: closing {} failed: {}", path_, tmp, std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    int err = errno;
    abandon();
    return Status::error(fmt::format("{}: cannot rename {} into place: {}",
                                     path_, tmp, std::strerror(err)));
  }
  tmp_.clear(); // committed: nothing to clean up any more
  // Make the rename itself durable. Some file systems cannot fsync a
  // directory; the file is already complete and in place, so that is not an
  // error.
  int dfd = ::open(parentDirectory(path_).c_str(),
                   O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
  return Status::ok();
}

} // namespace xlnetc::rt::train
