//===- InputFile.cpp - Reading the files a user points at -----------------===//

#include "runtime/io/InputFile.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace xlnetc::rt {

namespace {

/// What a non-regular file is, for messages.
const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISLNK(mode))
    return "a symbolic link";
  return "not a regular file";
}

std::string errnoText() {
  if (errno == ENOENT)
    return "no such file";
  return std::strerror(errno);
}

/// `fd` checked to be a regular file, made blocking; closed on an error.
Status adopt(int fd, const std::string &where) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Status::error(where + ": cannot stat: " + errnoText());
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(where + ": " + kindOf(st.st_mode) + ", not a regular file");
  }
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0)
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return Status::ok();
}

Status readAll(int fd, const std::string &where, std::string &out) {
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      Status s = Status::error(where + ": cannot read: " + errnoText());
      ::close(fd);
      return s;
    }
    if (n == 0)
      break;
    data.append(buffer, size_t(n));
  }
  ::close(fd);
  out = std::move(data);
  return Status::ok();
}

} // namespace

std::string oddFileKind(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return "";
  return kindOf(st.st_mode);
}

Status checkInputFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return Status::error(path + ": " + errnoText());
  if (!S_ISREG(st.st_mode))
    return Status::error(path + ": " + kindOf(st.st_mode) + ", not a regular file");
  return Status::ok();
}

Status openInputFile(const std::string &path, int &fd) {
  fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return Status::error(path + ": cannot open: " + errnoText());
  Status s = adopt(fd, path);
  if (!s)
    fd = -1;
  return s;
}

Status readInputFile(const std::string &path, std::string &out) {
  int fd = -1;
  XLNETC_RETURN_IF_ERROR(openInputFile(path, fd));
  return readAll(fd, path, out);
}

bool isPlainName(const std::string &name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string::npos && name.find('\0') == std::string::npos;
}

Status readFileInside(const std::string &dir, const std::string &relative, std::string &out) {
  const std::string where = dir + "/" + relative;
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return Status::error(dir + ": cannot open the directory: " + errnoText());
  size_t begin = 0;
  for (;;) {
    const size_t slash = relative.find('/', begin);
    const std::string part = relative.substr(begin, slash - begin);
    if (!isPlainName(part)) {
      ::close(fd);
      return Status::error(where + ": not a plain name inside " + dir +
                           " (no '..', no absolute path, no empty component)");
    }
    const bool last = slash == std::string::npos;
    int next = ::openat(fd, part.c_str(),
                        O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (last ? 0 : O_DIRECTORY));
    const int error = errno;
    ::close(fd);
    if (next < 0) {
      errno = error;
      if (error == ELOOP)
        return Status::error(where + ": " + (last ? "" : part + " in it is ") +
                             "a symbolic link (nothing in it is followed out of " + dir + ")");
      if (error == ENOTDIR)
        return Status::error(where + ": " + part + " is not a directory");
      return Status::error(where + ": cannot open: " + errnoText());
    }
    fd = next;
    if (last)
      break;
    begin = slash + 1;
  }
  XLNETC_RETURN_IF_ERROR(adopt(fd, where));
  return readAll(fd, where, out);
}

} // namespace xlnetc::rt
