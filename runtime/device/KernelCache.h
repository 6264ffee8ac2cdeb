//===- KernelCache.h - On-disk cache of compiled kernels --------*- C++ -*-===//
//
// Compiled artifacts (NVRTC CUBINs, emulated-kernel shared objects) are kept
// on disk between runs, named by the SHA-256 of everything that went into
// them (design/cuda.md §4, style rule 10). An entry is code: the emulated
// device runs a cached shared object, the GPU a cached CUBIN. So the cache
// is private to its user (docs/Security.md "The kernel cache"):
//
// Directory: $XLNETC_KERNEL_CACHE if set, else $XDG_CACHE_HOME/xlnetc/kernels,
// else $HOME/.cache/xlnetc/kernels. Opened once, on first use (missing
// directories created 0700); it must be a directory owned by this user and
// writable by no one else, or the cache is off for the process with one
// warning that says why. Entries are opened and created relative to that
// open directory, so renaming a directory above it changes nothing.
//
// Key: 32 random bytes in $XLNETC_KERNEL_CACHE_KEY, else
// $XDG_CONFIG_HOME/xlnetc/kernel-cache.key, else
// $HOME/.config/xlnetc/kernel-cache.key; made on first use (0600), and
// refused (cache off, one warning) unless it is a regular file of this user
// that no one else can read or write.
//
// One entry is one file `<key>.<ext>` (0600):
//
//   payload | meta | trailer (64 bytes: "xlkcache", format version, payload
//                             and meta sizes, HMAC-SHA-256 of the entry's
//                             name, sizes, payload and meta under the key)
//
// The payload starts at offset 0, so a cached CUBIN or shared object is itself
// an ELF file; `meta` carries text that must travel with the payload, such as
// the NVRTC log with ptxas's register and spill report. A store writes a
// temporary file in the directory, fsyncs it and renames it over the entry,
// so readers see the old entry or the new one, never a part; concurrent
// writers of one key are harmless (same key, same content; the last rename
// wins).
//
// Failure policy — the cache can only make things faster, never stop a run
// and never run someone else's code:
//   - a lookup opens the entry once (O_NOFOLLOW, O_NONBLOCK), checks the open
//     file (a regular file of this user, writable by no one else), reads it
//     and verifies its tag: the bytes it returns are the bytes checked, and
//     callers load those bytes, never the path. Anything else — missing,
//     truncated, corrupt, planted (a tag made without the key), a link, a
//     FIFO, another user's — is a miss (a foreign or odd file also gets one
//     warning naming it), and the next store replaces it;
//   - an unwritable directory makes every store return an error Status that
//     callers treat as a note, not a failure (compilation goes on);
//   - a disabled cache (--no-kernel-cache) misses and stores nothing.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DEVICE_KERNELCACHE_H
#define XLNETC_RUNTIME_DEVICE_KERNELCACHE_H

#include "runtime/Status.h"
#include "runtime/device/Sha256.h"

#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace xlnetc::rt {

/// Builds a cache key: the SHA-256 of named parts, each serialized as
/// `<len>:<name><len>:<value>;` after a format tag, so parts cannot run into
/// each other ("ab"+"c" and "a"+"bc" differ) and a name is bound to its value.
/// Parts are hashed in the order they are added.
class KeyBuilder {
public:
  KeyBuilder();
  KeyBuilder &add(std::string_view name, std::string_view value);
  /// 64 lowercase hex characters.
  std::string hex() const { return sha_.hexDigest(); }

private:
  Sha256 sha_;
};

/// True when `bytes` starts with the ELF magic "\x7fELF".
bool isElf(std::string_view bytes);

class KernelCache {
public:
  /// A cache in `directory` authenticated with the key in `keyFile`; an empty
  /// directory gives a disabled cache. Nothing is opened until first use.
  explicit KernelCache(std::string directory, std::string keyFile = defaultKeyFile());
  /// KernelCache(directory) when `enabled`, else a disabled cache.
  KernelCache(std::string directory, bool enabled)
      : KernelCache(enabled ? std::move(directory) : std::string()) {}
  /// A cache that stores nothing.
  static KernelCache disabled() { return KernelCache(std::string()); }
  /// The directory from the environment (see the file comment); empty when
  /// neither XLNETC_KERNEL_CACHE, XDG_CACHE_HOME nor HOME is set.
  static std::string defaultDirectory();
  /// The key file from the environment (see the file comment); empty when
  /// neither XLNETC_KERNEL_CACHE_KEY, XDG_CONFIG_HOME nor HOME is set.
  static std::string defaultKeyFile();
  /// A cache in defaultDirectory() (disabled when that is empty).
  static KernelCache openDefault() { return KernelCache(defaultDirectory()); }

  /// Moves; a moved-from cache may only be destroyed or assigned to.
  KernelCache(KernelCache &&other) noexcept;
  KernelCache &operator=(KernelCache &&other) noexcept;
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;
  ~KernelCache();

  /// Whether a directory was given (it may still be refused on first use).
  bool enabled() const { return !directory_.empty(); }
  const std::string &directory() const { return directory_; }
  const std::string &keyFile() const { return keyFile_; }
  /// Opens the directory and the key if not done yet: "" when the cache is
  /// in use, else why not (also "" for a disabled cache). The reason is
  /// printed once per process as a warning the first time it is found.
  std::string refusal() const;

  /// The file of entry (`key`, `ext`), for messages — whether or not it
  /// exists; "" when the cache is disabled. `key` and `ext` must be made of
  /// [A-Za-z0-9_-] (a key is KeyBuilder::hex()).
  std::string path(const std::string &key, const std::string &ext) const;

  /// The payload of a valid entry in `bytes` (and its meta in `meta`); false
  /// on a miss, a refused or bad entry, or a disabled or refused cache. Never
  /// fails otherwise. Thread-safe.
  bool lookup(const std::string &key, const std::string &ext,
              std::string &bytes, std::string *meta = nullptr) const;

  /// Stores an entry atomically; `pathOut` receives its file. Ok without
  /// writing anything when the cache is disabled (pathOut is then cleared).
  /// An error means the entry could not be written (a refused or unwritable
  /// directory, a full disk): callers may carry on without the cache.
  /// Thread-safe.
  Status store(const std::string &key, const std::string &ext,
               const std::string &bytes, std::string *pathOut = nullptr,
               const std::string &meta = std::string()) const;

private:
  struct State;
  /// The opened directory and key (opening them on first call); null when
  /// the cache is disabled or refused.
  const State *open() const;

  std::string directory_, keyFile_;
  std::unique_ptr<State> state_;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_DEVICE_KERNELCACHE_H
