//===- KernelCache.h - On-disk cache of compiled kernels --------*- C++ -*-===//
//
// Compiled artifacts (NVRTC CUBINs, emulated-kernel shared objects) are kept
// on disk between runs, named by the SHA-256 of everything that went into
// them (design/cuda.md §4, style rule 10).
//
// Directory: $XLNETC_KERNEL_CACHE if set, else $XDG_CACHE_HOME/xlnetc/kernels,
// else $HOME/.cache/xlnetc/kernels; created on the first store (mode 0755).
//
// One entry is one file `<key>.<ext>`:
//
//   payload | meta | trailer (64 bytes: "xlkcache", format version, payload
//                             and meta sizes, SHA-256 of payload | meta)
//
// The payload starts at offset 0, so a cached CUBIN or shared object is itself
// a valid ELF file (dlopen and ELF readers ignore bytes past the sections);
// `meta` carries text that must travel with the payload, such as the NVRTC
// log with ptxas's register and spill report. A store writes a temporary file
// in the same directory, fsyncs it and renames it over the entry, so readers
// see the old entry or the new one, never a part; concurrent writers of one
// key are harmless (same key, same content; the last rename wins).
//
// Failure policy — the cache can only make things faster, never stop a run:
//   - a missing, truncated or corrupt entry (bad trailer, size or digest, or
//     no ELF magic for "cubin" and "so") is a miss; the next store overwrites
//     it;
//   - an unwritable directory makes every lookup miss and every store return
//     an error Status that callers treat as a note, not a failure (compilation
//     goes on; nothing is printed);
//   - a disabled cache (--no-kernel-cache) misses and stores nothing. When a
//     *file* is needed (an emulated kernel must be dlopen'd from a path),
//     storeFile() writes into a private temporary directory instead, which
//     the KernelCache removes when it is destroyed.
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
#include <vector>

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
  /// A cache in `directory`; an empty directory gives a disabled cache.
  explicit KernelCache(std::string directory);
  /// KernelCache(directory) when `enabled`, else a disabled cache.
  KernelCache(std::string directory, bool enabled)
      : KernelCache(enabled ? std::move(directory) : std::string()) {}
  /// A cache that stores nothing.
  static KernelCache disabled() { return KernelCache(std::string()); }
  /// The directory from the environment (see the file comment); empty when
  /// neither XLNETC_KERNEL_CACHE, XDG_CACHE_HOME nor HOME is set.
  static std::string defaultDirectory();
  /// A cache in defaultDirectory() (disabled when that is empty).
  static KernelCache openDefault() { return KernelCache(defaultDirectory()); }

  /// Moves; a moved-from cache may only be destroyed or assigned to.
  KernelCache(KernelCache &&other) noexcept;
  KernelCache &operator=(KernelCache &&other) noexcept;
  KernelCache(const KernelCache &) = delete;
  KernelCache &operator=(const KernelCache &) = delete;
  /// Removes the private temporary directory, if storeFile made one.
  ~KernelCache();

  bool enabled() const { return !directory_.empty(); }
  const std::string &directory() const { return directory_; }

  /// The file of entry (`key`, `ext`) — whether or not it exists; "" when
  /// the cache is disabled. `key` and `ext` must be made of [A-Za-z0-9_-]
  /// (a key is KeyBuilder::hex()).
  std::string path(const std::string &key, const std::string &ext) const;

  /// The payload of a valid entry in `bytes` (and its meta in `meta`); false
  /// on a miss, a bad entry or a disabled cache. Never fails otherwise.
  bool lookup(const std::string &key, const std::string &ext,
              std::string &bytes, std::string *meta = nullptr) const;

  /// Stores an entry atomically; `pathOut` receives its file. Ok without
  /// writing anything when the cache is disabled (pathOut is then cleared).
  /// An error means the entry could not be written (unwritable directory,
  /// full disk): callers may carry on without the cache.
  Status store(const std::string &key, const std::string &ext,
               const std::string &bytes, std::string *pathOut = nullptr,
               const std::string &meta = std::string()) const;

  /// Like store, but always leaves the bytes in a file and returns its path:
  /// the cache entry when the cache is enabled and writable, otherwise a file
  /// in this cache's private temporary directory ($TMPDIR or /tmp,
  /// `xlnetc-kernels-XXXXXX`, removed with this KernelCache). For artifacts
  /// that must be opened from a path, e.g. dlopen of an emulated kernel.
  Status storeFile(const std::string &key, const std::string &ext,
                   const std::string &bytes, std::string &pathOut,
                   const std::string &meta = std::string());

  /// The private temporary directory ("" until storeFile needed one).
  std::string temporaryDirectory() const;

private:
  struct TempDir;
  void removeTemporaryDirectory();

  std::string directory_;
  std::unique_ptr<std::mutex> mutex_; // guards tempDir_ (movable)
  std::unique_ptr<TempDir> tempDir_;
};

} // namespace xlnetc::rt

#endif // XLNETC_RUNTIME_DEVICE_KERNELCACHE_H
