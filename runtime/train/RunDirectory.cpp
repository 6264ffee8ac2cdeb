//===- RunDirectory.cpp - One run at a time, regular files only ----------===//

#include "runtime/train/RunDirectory.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace xlnetc::rt::train {

namespace {

/// What a non-regular file is, for messages.
std::string kindOf(const struct stat &st, const std::string &path) {
  if (S_ISLNK(st.st_mode)) {
    char target[4096];
    const ssize_t n = ::readlink(path.c_str(), target, sizeof target - 1);
    struct stat to;
    const bool dangling = ::stat(path.c_str(), &to) != 0;
    return fmt::format("a symbolic link{} to {}", dangling ? " (dangling)" : "",
                       n > 0 ? std::string(target, size_t(n)) : "?");
  }
  if (S_ISDIR(st.st_mode))
    return "a directory";
  if (S_ISFIFO(st.st_mode))
    return "a FIFO";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "a device";
  if (S_ISSOCK(st.st_mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

RunLock::RunLock(RunLock &&other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RunLock &RunLock::operator=(RunLock &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RunLock::~RunLock() {
  if (fd_ >= 0)
    ::close(fd_); // releases the flock
}

Status RunLock::acquire(const std::string &dir, RunLock &out) {
  const std::string path = dir + "/" + kRunLockName;
  // O_NOFOLLOW: a planted link is refused, never followed; O_NONBLOCK: a
  // FIFO planted there does not block the open.
  const int fd =
      ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return Status::error(fmt::format("the run directory {} has {} as {}: remove it", dir,
                                       kindOf(st, path), kRunLockName));
    return Status::error(fmt::format("cannot open the run directory's lock {}: {}", path,
                                     std::strerror(err)));
  }
  RunLock lock;
  lock.fd_ = fd;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    return Status::error(fmt::format("the run directory {} has {} as {}: remove it", dir,
                                     "something other than a regular file", kRunLockName));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err != EWOULDBLOCK)
      return Status::error(
          fmt::format("cannot lock the run directory {}: {}", dir, std::strerror(err)));
    char buf[32] = {};
    const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    std::string pid = n > 0 ? std::string(buf, size_t(n)) : "";
    while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
      pid.pop_back();
    return Status::error(fmt::format(
        "the run directory {} is in use by another run (process {}, holding {}): wait for "
        "it to end, or choose another --out",
        dir, pid.empty() ? "unknown" : pid, path));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size()))
    return Status::error(
        fmt::format("cannot write the run directory's lock {}: {}", path, std::strerror(errno)));
  out = std::move(lock);
  return Status::ok();
}

Status checkRunFiles(const std::string &dir, const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    const std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0)
      continue; // not there: the run creates it
    if (!S_ISREG(st.st_mode))
      return Status::error(fmt::format(
          "the run directory {} has {} as {}; xlnetc writes only regular files there, never "
          "through a link: remove it, or choose another --out",
          dir, kindOf(st, path), name));
  }
  return Status::ok();
}

} // namespace xlnetc::rt::train
