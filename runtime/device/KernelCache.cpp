//===- KernelCache.cpp - On-disk cache of compiled kernels ----------------===//

#include "runtime/device/KernelCache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace xlnetc::rt {

namespace {

constexpr char kTrailerMagic[8] = {'x', 'l', 'k', 'c', 'a', 'c', 'h', 'e'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kTrailerSize = 64; // magic 8, version 4, reserved 4,
                                    // payload size 8, meta size 8, digest 32

void putLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

uint64_t getLE(const unsigned char *p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i)
    value = value << 8 | p[i];
  return value;
}

std::string trailer(const std::string &payload, const std::string &meta) {
  std::string out(kTrailerMagic, sizeof(kTrailerMagic));
  putLE(out, kFormatVersion, 4);
  putLE(out, 0, 4);
  putLE(out, payload.size(), 8);
  putLE(out, meta.size(), 8);
  Sha256::Digest digest = Sha256().update(payload).update(meta).digest();
  out.append(reinterpret_cast<const char *>(digest.data()), digest.size());
  return out;
}

/// Splits a whole entry file into payload and meta; false when it is not a
/// complete, intact entry.
bool decode(const std::string &file, const std::string &ext,
            std::string &payload, std::string *meta) {
  if (file.size() < kTrailerSize)
    return false;
  const auto *t = reinterpret_cast<const unsigned char *>(file.data()) +
                  file.size() - kTrailerSize;
  if (std::memcmp(t, kTrailerMagic, sizeof(kTrailerMagic)) != 0 ||
      getLE(t + 8, 4) != kFormatVersion)
    return false;
  uint64_t payloadSize = getLE(t + 16, 8), metaSize = getLE(t + 24, 8);
  uint64_t body = file.size() - kTrailerSize;
  if (payloadSize > body || metaSize != body - payloadSize)
    return false;
  Sha256::Digest digest = Sha256().update(file.data(), body).digest();
  if (std::memcmp(digest.data(), t + 32, digest.size()) != 0)
    return false;
  std::string_view p(file.data(), payloadSize);
  // Belt and braces for the formats we know.
  if ((ext == "cubin" || ext == "so") && !isElf(p))
    return false;
  payload.assign(p);
  if (meta)
    meta->assign(file.data() + payloadSize, metaSize);
  return true;
}

bool validName(const std::string &s) {
  if (s.empty() || s.size() > 200)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'))
      return false;
  return true;
}

std::string errnoText(const std::string &what, const std::string &path) {
  return "kernel cache: " + what + " " + path + ": " + std::strerror(errno);
}

/// mkdir -p with mode 0755 (before the umask).
Status makeDirectories(const std::string &dir) {
  if (dir.empty())
    return Status::error("kernel cache: empty directory name");
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = dir.find('/', pos + 1);
    prefix = dir.substr(0, next);
    pos = next;
    if (prefix.empty() || prefix == "/")
      continue;
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return Status::error(errnoText("cannot create", prefix));
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::error("kernel cache: " + dir + " is not a directory");
  return Status::ok();
}

Status writeAll(int fd, const std::string &data, const std::string &path) {
  const char *p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return Status::error(errnoText("cannot write", path));
    p += n;
    left -= size_t(n);
  }
  return Status::ok();
}

/// Writes payload | meta | trailer to a temporary file in `dir`, fsyncs it
/// and renames it to `finalPath`.
Status writeEntry(const std::string &dir, const std::string &finalPath,
                  const std::string &payload, const std::string &meta) {
  // Beside the entry, so that rename() stays within one file system.
  std::string tmp = finalPath + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return Status::error(errnoText("cannot create a file in", dir));
  Status status = writeAll(fd, payload, tmp);
  if (status)
    status = writeAll(fd, meta, tmp);
  if (status)
    status = writeAll(fd, trailer(payload, meta), tmp);
  // mkstemp makes 0600; entries are ordinary readable files.
  if (status && ::fchmod(fd, 0644) != 0)
    status = Status::error(errnoText("cannot chmod", tmp));
  if (status && ::fsync(fd) != 0)
    status = Status::error(errnoText("cannot fsync", tmp));
  if (::close(fd) != 0 && status)
    status = Status::error(errnoText("cannot close", tmp));
  if (status && ::rename(tmp.c_str(), finalPath.c_str()) != 0)
    status = Status::error(errnoText("cannot rename to", finalPath));
  if (!status)
    ::unlink(tmp.c_str());
  return status;
}

/// A well-formed entry name, and ELF bytes for the formats that are ELF.
Status checkEntry(const std::string &key, const std::string &ext,
                  const std::string &bytes) {
  if (!validName(key) || !validName(ext))
    return Status::error("kernel cache: bad entry name '" + key + "." + ext +
                         "'");
  if ((ext == "cubin" || ext == "so") && !isElf(bytes))
    return Status::error("kernel cache: " + key + "." + ext +
                         " is not an ELF file");
  return Status::ok();
}

bool readFile(const std::string &path, std::string &out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok) {
    out.resize(size_t(st.st_size));
    size_t done = 0;
    while (ok && done < out.size()) {
      ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        ok = false;
      else
        done += size_t(n);
    }
  }
  ::close(fd);
  return ok;
}

} // namespace

//===----------------------------------------------------------------------===//
// KeyBuilder
//===----------------------------------------------------------------------===//

KeyBuilder::KeyBuilder() { sha_.update("xlnetc-kernel-key/1\n"); }

KeyBuilder &KeyBuilder::add(std::string_view name, std::string_view value) {
  std::string n = std::to_string(name.size()) + ":";
  std::string v = std::to_string(value.size()) + ":";
  sha_.update(n).update(name).update(v).update(value).update(";");
  return *this;
}

bool isElf(std::string_view bytes) {
  return bytes.size() >= 4 && bytes.compare(0, 4,
                                            "\x7f"
                                            "ELF") == 0;
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

/// The private temporary directory of storeFile and the files in it.
struct KernelCache::TempDir {
  std::string path;
  std::vector<std::string> files;
};

KernelCache::KernelCache(std::string directory)
    : directory_(std::move(directory)), mutex_(std::make_unique<std::mutex>()) {
  while (directory_.size() > 1 && directory_.back() == '/')
    directory_.pop_back();
}

KernelCache::KernelCache(KernelCache &&other) noexcept = default;

KernelCache &KernelCache::operator=(KernelCache &&other) noexcept {
  if (this != &other) {
    removeTemporaryDirectory();
    directory_ = std::move(other.directory_);
    mutex_ = std::move(other.mutex_);
    tempDir_ = std::move(other.tempDir_);
  }
  return *this;
}

KernelCache::~KernelCache() { removeTemporaryDirectory(); }

void KernelCache::removeTemporaryDirectory() {
  if (!tempDir_)
    return;
  for (const std::string &file : tempDir_->files)
    ::unlink(file.c_str());
  ::rmdir(tempDir_->path.c_str());
  tempDir_.reset();
}

std::string KernelCache::defaultDirectory() {
  auto env = [](const char *name) -> std::string {
    const char *v = std::getenv(name);
    return v ? v : "";
  };
  if (std::string dir = env("XLNETC_KERNEL_CACHE"); !dir.empty())
    return dir;
  // The XDG spec ignores relative paths.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/')
    return xdg + "/xlnetc/kernels";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/xlnetc/kernels";
  return "";
}

std::string KernelCache::path(const std::string &key,
                              const std::string &ext) const {
  return enabled() ? directory_ + "/" + key + "." + ext : std::string();
}

bool KernelCache::lookup(const std::string &key, const std::string &ext,
                         std::string &bytes, std::string *meta) const {
  if (!enabled() || !validName(key) || !validName(ext))
    return false;
  std::string file;
  if (!readFile(path(key, ext), file))
    return false;
  return decode(file, ext, bytes, meta);
}

Status KernelCache::store(const std::string &key, const std::string &ext,
                          const std::string &bytes, std::string *pathOut,
                          const std::string &meta) const {
  if (pathOut)
    pathOut->clear();
  if (!enabled())
    return Status::ok();
  XLNETC_RETURN_IF_ERROR(checkEntry(key, ext, bytes));
  XLNETC_RETURN_IF_ERROR(makeDirectories(directory_));
  std::string file = path(key, ext);
  XLNETC_RETURN_IF_ERROR(writeEntry(directory_, file, bytes, meta));
  if (pathOut)
    *pathOut = file;
  return Status::ok();
}

Status KernelCache::storeFile(const std::string &key, const std::string &ext,
                              const std::string &bytes, std::string &pathOut,
                              const std::string &meta) {
  pathOut.clear();
  XLNETC_RETURN_IF_ERROR(checkEntry(key, ext, bytes));
  if (enabled()) {
    Status status = store(key, ext, bytes, &pathOut, meta);
    if (status)
      return status;
    // Unwritable cache: fall through to the private directory.
  }
  std::lock_guard<std::mutex> lock(*mutex_);
  if (!tempDir_) {
    const char *tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/xlnetc-kernels-XXXXXX";
    if (!::mkdtemp(dir.data()))
      return Status::error(
          errnoText("cannot create a temporary directory", dir));
    tempDir_ = std::make_unique<TempDir>();
    tempDir_->path = dir;
  }
  std::string file = tempDir_->path + "/" + key + "." + ext;
  XLNETC_RETURN_IF_ERROR(writeEntry(tempDir_->path, file, bytes, meta));
  tempDir_->files.push_back(file);
  pathOut = file;
  return Status::ok();
}

std::string KernelCache::temporaryDirectory() const {
  std::lock_guard<std::mutex> lock(*mutex_);
  return tempDir_ ? tempDir_->path : std::string();
}

} // namespace xlnetc::rt
