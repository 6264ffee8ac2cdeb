//===- KernelCache.cpp - On-disk cache of compiled kernels ----------------===//

#include "runtime/device/KernelCache.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <set>

namespace xlnetc::rt {

namespace {

constexpr char kTrailerMagic[8] = {'x', 'l', 'k', 'c', 'a', 'c', 'h', 'e'};
/// 2: the tag is an HMAC under the user's key over the name too (1 was a
/// bare SHA-256 of the bytes, which anyone could recompute).
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kTrailerSize = 64; // magic 8, version 4, reserved 4,
                                    // payload size 8, meta size 8, tag 32
constexpr size_t kKeyBytes = 32;
/// No kernel comes near this; a bigger file is not read into memory.
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

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

/// The tag of an entry: binds the bytes to their name, so an entry cannot be
/// passed off as another kernel's either.
Sha256::Digest entryTag(const std::string &key, const std::string &name, std::string_view payload,
                        std::string_view meta) {
  std::string header = "xlnetc-kernel-cache/2\n" + name + "\n";
  putLE(header, payload.size(), 8);
  putLE(header, meta.size(), 8);
  return HmacSha256(key).update(header).update(payload).update(meta).digest();
}

std::string trailer(const std::string &key, const std::string &name, const std::string &payload,
                    const std::string &meta) {
  std::string out(kTrailerMagic, sizeof(kTrailerMagic));
  putLE(out, kFormatVersion, 4);
  putLE(out, 0, 4);
  putLE(out, payload.size(), 8);
  putLE(out, meta.size(), 8);
  Sha256::Digest tag = entryTag(key, name, payload, meta);
  out.append(reinterpret_cast<const char *>(tag.data()), tag.size());
  return out;
}

/// Splits a whole entry file into payload and meta; false when it is not a
/// complete, intact entry made with `key` under `name`.
bool decode(const std::string &key, const std::string &name, const std::string &file,
            const std::string &ext, std::string &payload, std::string *meta) {
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
  Sha256::Digest tag = entryTag(key, name, std::string_view(file.data(), payloadSize),
                                std::string_view(file.data() + payloadSize, metaSize));
  if (!digestsEqual(tag, t + 32))
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

/// The environment variable `name`, "" when unset.
std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

/// Prints `message` as a warning once per process.
void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(message).second)
    std::cerr << "xlnetc: warning: " << message << "\n";
}

/// mkdir -p; the directories it makes are 0700 (before the umask).
Status makeDirectories(const std::string &dir) {
  if (dir.empty())
    return Status::error("kernel cache: empty directory name");
  size_t pos = 0;
  while (pos != std::string::npos) {
    size_t next = dir.find('/', pos + 1);
    std::string prefix = dir.substr(0, next);
    pos = next;
    if (prefix.empty() || prefix == "/")
      continue;
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::error(errnoText("cannot create", prefix));
  }
  return Status::ok();
}

/// Why the open file `st` (named `what` in messages) may not be trusted as
/// this user's own: "" when it is a regular file (or a directory, when
/// `directory`) of this user that no one else may write (nor read or write,
/// when `secret`).
std::string untrusted(const struct stat &st, const std::string &what, bool directory,
                      bool secret) {
  if (directory ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
    return what + " is not a " + (directory ? "directory" : "regular file");
  if (st.st_uid != ::geteuid())
    return what + " is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
           std::to_string(::geteuid()) + ")";
  const mode_t others = secret ? 077 : 022;
  if (st.st_mode & others) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return what + " has mode " + mode + ": " + (secret ? "readable or writable" : "writable") +
           " by others";
  }
  return "";
}

Status writeAll(int fd, std::string_view data, const std::string &path) {
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

/// Reads the rest of `fd` (at most `limit` bytes; false past it or on an
/// error).
bool readAll(int fd, std::string &out, uint64_t limit) {
  out.clear();
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0)
      return true;
    if (out.size() + size_t(n) > limit)
      return false;
    out.append(buffer, size_t(n));
  }
}

/// A name for a temporary file no other thread or process of this user
/// picks (O_EXCL decides in the end).
std::string temporaryName(const std::string &name) {
  static std::atomic<uint64_t> counter{0};
  return name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

/// Writes `parts` to a new temporary file in the directory `dirFd` (named
/// `dirName` in messages), fsyncs it and renames it to `name`.
Status writeEntry(int dirFd, const std::string &dirName, const std::string &name,
                  std::initializer_list<std::string_view> parts) {
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; fd < 0 && attempt < 16; ++attempt) {
    tmp = temporaryName(name);
    fd = ::openat(dirFd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return Status::error(errnoText("cannot create a file in", dirName));
  const std::string where = dirName + "/" + tmp;
  Status status = Status::ok();
  for (std::string_view part : parts)
    if (status)
      status = writeAll(fd, part, where);
  if (status && ::fsync(fd) != 0)
    status = Status::error(errnoText("cannot fsync", where));
  if (::close(fd) != 0 && status)
    status = Status::error(errnoText("cannot close", where));
  if (status && ::renameat(dirFd, tmp.c_str(), dirFd, name.c_str()) != 0)
    status = Status::error(errnoText("cannot rename to", dirName + "/" + name));
  if (!status)
    ::unlinkat(dirFd, tmp.c_str(), 0);
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

/// Opens `path` without following a final link and without blocking on a
/// FIFO; -1 with errno otherwise.
int openNoFollow(int dirFd, const char *path) {
  return ::openat(dirFd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

/// The key in `keyFile`, made first when there is none: `key` gets its 32
/// bytes; an error says why it cannot be used.
Status loadKey(const std::string &keyFile, std::string &key) {
  if (keyFile.empty())
    return Status::error("no key file (set XLNETC_KERNEL_CACHE_KEY, XDG_CONFIG_HOME or HOME)");
  int fd = openNoFollow(AT_FDCWD, keyFile.c_str());
  if (fd < 0 && errno == ENOENT) {
    // Made beside and linked in: of two processes making it at once, one
    // link wins and both read the winner.
    size_t slash = keyFile.rfind('/');
    if (slash != std::string::npos && slash > 0)
      XLNETC_RETURN_IF_ERROR(makeDirectories(keyFile.substr(0, slash)));
    std::string tmp = keyFile + ".tmp-XXXXXX";
    int out = ::mkostemp(tmp.data(), O_CLOEXEC); // 0600
    if (out < 0)
      return Status::error(errnoText("cannot create", tmp));
    std::string bytes(kKeyBytes, '\0');
    Status status = Status::ok();
    if (::getrandom(bytes.data(), bytes.size(), 0) != ssize_t(bytes.size()))
      status = Status::error(errnoText("no random bytes for", keyFile));
    if (status)
      status = writeAll(out, bytes, tmp);
    if (status && ::fsync(out) != 0)
      status = Status::error(errnoText("cannot fsync", tmp));
    ::close(out);
    if (status && ::link(tmp.c_str(), keyFile.c_str()) != 0 && errno != EEXIST)
      status = Status::error(errnoText("cannot create", keyFile));
    ::unlink(tmp.c_str());
    XLNETC_RETURN_IF_ERROR(status);
    fd = openNoFollow(AT_FDCWD, keyFile.c_str());
  }
  if (fd < 0 && errno == ELOOP)
    return Status::error("the key " + keyFile + " is a symbolic link");
  if (fd < 0)
    return Status::error("cannot open the key " + keyFile + ": " + std::strerror(errno));
  struct stat st;
  std::string why = ::fstat(fd, &st) != 0 ? "cannot stat it"
                                           : untrusted(st, "the key " + keyFile, false, true);
  if (why.empty() && (!readAll(fd, key, kKeyBytes) || key.size() != kKeyBytes))
    why = "the key " + keyFile + " is not " + std::to_string(kKeyBytes) + " bytes";
  ::close(fd);
  if (!why.empty())
    return Status::error(why);
  return Status::ok();
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

/// The opened cache: its directory (a descriptor, so a later rename of a
/// directory above it changes nothing) and key; opened once, on first use.
struct KernelCache::State {
  std::once_flag once;
  int dirFd = -1;
  std::string key;
  std::string refusal; ///< why the cache is not in use ("": it is)
  ~State() {
    if (dirFd >= 0)
      ::close(dirFd);
  }
};

KernelCache::KernelCache(std::string directory, std::string keyFile)
    : directory_(std::move(directory)), keyFile_(std::move(keyFile)),
      state_(std::make_unique<State>()) {
  while (directory_.size() > 1 && directory_.back() == '/')
    directory_.pop_back();
}

KernelCache::KernelCache(KernelCache &&other) noexcept = default;
KernelCache &KernelCache::operator=(KernelCache &&other) noexcept = default;
KernelCache::~KernelCache() = default;

const KernelCache::State *KernelCache::open() const {
  if (!enabled())
    return nullptr;
  State &s = *state_;
  std::call_once(s.once, [&] {
    auto refuse = [&](std::string why) {
      const std::string prefix = "kernel cache: ";
      if (why.rfind(prefix, 0) == 0)
        why.erase(0, prefix.size());
      s.refusal = why;
      if (s.dirFd >= 0)
        ::close(s.dirFd);
      s.dirFd = -1;
      warnOnce("kernel cache " + directory_ + " is not used: " + why +
               "; compiling without it (" +
               (why.rfind("the key", 0) == 0 || why.rfind("no key", 0) == 0
                    ? std::string("a key file of your own, 0600 (XLNETC_KERNEL_CACHE_KEY), ")
                    : std::string("a private directory of your own, e.g. "
                                  "XLNETC_KERNEL_CACHE=~/.cache/xlnetc/kernels, ")) +
               "or --no-kernel-cache, ends this warning)");
    };
    if (Status st = makeDirectories(directory_); !st)
      return refuse(st.message());
    s.dirFd = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    if (s.dirFd < 0)
      return refuse(errnoText("cannot open", directory_));
    struct stat st;
    if (::fstat(s.dirFd, &st) != 0)
      return refuse(errnoText("cannot stat", directory_));
    if (std::string why = untrusted(st, "it", true, false); !why.empty())
      return refuse(why);
    if (Status key = loadKey(keyFile_, s.key); !key)
      return refuse(key.message());
  });
  return s.refusal.empty() ? &s : nullptr;
}

std::string KernelCache::refusal() const {
  open();
  return enabled() ? state_->refusal : std::string();
}

std::string KernelCache::defaultDirectory() {
  if (std::string dir = env("XLNETC_KERNEL_CACHE"); !dir.empty())
    return dir;
  // The XDG spec ignores relative paths.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && xdg[0] == '/')
    return xdg + "/xlnetc/kernels";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.cache/xlnetc/kernels";
  return "";
}

std::string KernelCache::defaultKeyFile() {
  if (std::string file = env("XLNETC_KERNEL_CACHE_KEY"); !file.empty())
    return file;
  if (std::string xdg = env("XDG_CONFIG_HOME"); !xdg.empty() && xdg[0] == '/')
    return xdg + "/xlnetc/kernel-cache.key";
  if (std::string home = env("HOME"); !home.empty())
    return home + "/.config/xlnetc/kernel-cache.key";
  return "";
}

std::string KernelCache::path(const std::string &key,
                              const std::string &ext) const {
  return enabled() ? directory_ + "/" + key + "." + ext : std::string();
}

bool KernelCache::lookup(const std::string &key, const std::string &ext,
                         std::string &bytes, std::string *meta) const {
  if (!validName(key) || !validName(ext))
    return false;
  const State *s = open();
  if (!s)
    return false;
  const std::string name = key + "." + ext;
  int fd = openNoFollow(s->dirFd, name.c_str());
  if (fd < 0) {
    if (errno == ELOOP)
      warnOnce("kernel cache: ignoring " + path(key, ext) +
               ": it is a symbolic link (a miss: the kernel is compiled again)");
    return false;
  }
  struct stat st;
  std::string why = ::fstat(fd, &st) != 0 ? "cannot stat it" : untrusted(st, "it", false, false);
  std::string file;
  bool read = why.empty() && readAll(fd, file, kMaxEntryBytes);
  ::close(fd);
  if (!why.empty())
    warnOnce("kernel cache: ignoring " + path(key, ext) + ": " + why +
             " (a miss: the kernel is compiled again)");
  return read && decode(s->key, name, file, ext, bytes, meta);
}

Status KernelCache::store(const std::string &key, const std::string &ext,
                          const std::string &bytes, std::string *pathOut,
                          const std::string &meta) const {
  if (pathOut)
    pathOut->clear();
  if (!enabled())
    return Status::ok();
  XLNETC_RETURN_IF_ERROR(checkEntry(key, ext, bytes));
  const State *s = open();
  if (!s)
    return Status::error("kernel cache " + directory_ + " is not used: " + state_->refusal);
  const std::string name = key + "." + ext;
  XLNETC_RETURN_IF_ERROR(
      writeEntry(s->dirFd, directory_, name, {bytes, meta, trailer(s->key, name, bytes, meta)}));
  if (pathOut)
    *pathOut = path(key, ext);
  return Status::ok();
}

} // namespace xlnetc::rt
