//===- KernelCacheTest.cpp - SHA-256, cache keys and the kernel cache -----===//

#include "runtime/device/KernelCache.h"
#include "runtime/device/Sha256.h"

#include "test/Device/DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <functional>
#include <thread>

#include <sys/stat.h>

using namespace xlnetc::rt;
namespace fs = std::filesystem;

namespace {

//===----------------------------------------------------------------------===//
// SHA-256: FIPS 180-2 appendix B vectors
//===----------------------------------------------------------------------===//

TEST(Sha256Test, FipsVectors) {
  EXPECT_EQ(Sha256::hexHash(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // B.1: one block.
  EXPECT_EQ(Sha256::hexHash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // B.2: the 448-bit message (two blocks after padding).
  EXPECT_EQ(Sha256::hexHash(
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // B.3: one million 'a', fed in uneven pieces.
  Sha256 sha;
  std::string piece(997, 'a');
  size_t left = 1000000;
  while (left > 0) {
    size_t n = std::min(left, piece.size());
    sha.update(piece.data(), n);
    left -= n;
  }
  EXPECT_EQ(sha.hexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256Test, IncrementalEqualsOneShotAndDigestIsNonDestructive) {
  std::string data;
  for (int i = 0; i < 300; ++i)
    data.push_back(char(i * 7 + 3));
  for (size_t split : {0, 1, 55, 56, 63, 64, 65, 128, 299, 300}) {
    Sha256 sha;
    sha.update(std::string_view(data).substr(0, split));
    (void)sha.digest(); // must not disturb the state
    sha.update(std::string_view(data).substr(split));
    EXPECT_EQ(sha.hexDigest(), Sha256::hexHash(data)) << "split " << split;
  }
}

//===----------------------------------------------------------------------===//
// KeyBuilder
//===----------------------------------------------------------------------===//

// RFC 4231 test cases 1, 2 and 6 (a key longer than a block).
TEST(HmacSha256Test, Rfc4231Vectors) {
  auto hex = [](const std::string &key, const std::string &data) {
    return Sha256::toHex(HmacSha256(key).update(data).digest());
  };
  EXPECT_EQ(hex(std::string(20, '\x0b'), "Hi There"),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_EQ(hex(std::string(131, '\xaa'),
                "Test Using Larger Than Block-Size Key - Hash Key First"),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  Sha256::Digest d = HmacSha256("k").update("m").digest();
  EXPECT_TRUE(digestsEqual(d, d.data()));
  Sha256::Digest e = d;
  e[31] ^= 1;
  EXPECT_FALSE(digestsEqual(d, e.data()));
}

std::string key(const std::string &src, const std::string &prelude,
                const std::string &opts, const std::string &nvrtc,
                const std::string &arch) {
  return KeyBuilder()
      .add("source", src)
      .add("prelude", prelude)
      .add("options", opts)
      .add("nvrtc", nvrtc)
      .add("arch", arch)
      .hex();
}

TEST(KeyBuilderTest, EveryPartChangesTheKey) {
  std::string base = key("src", "pre", "-O3", "13.0", "sm_90");
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, key("src", "pre", "-O3", "13.0", "sm_90")); // deterministic
  EXPECT_NE(base, key("src2", "pre", "-O3", "13.0", "sm_90"));
  EXPECT_NE(base, key("src", "pre2", "-O3", "13.0", "sm_90"));
  EXPECT_NE(base, key("src", "pre", "-O2", "13.0", "sm_90"));
  EXPECT_NE(base, key("src", "pre", "-O3", "13.1", "sm_90"));
  EXPECT_NE(base, key("src", "pre", "-O3", "13.0", "sm_80"));
}

TEST(KeyBuilderTest, PartsCannotRunTogether) {
  EXPECT_NE(KeyBuilder().add("a", "bc").hex(),
            KeyBuilder().add("ab", "c").hex());
  EXPECT_NE(KeyBuilder().add("x", "ab").add("y", "c").hex(),
            KeyBuilder().add("x", "a").add("y", "bc").hex());
  EXPECT_NE(KeyBuilder().add("x", "1").add("y", "2").hex(),
            KeyBuilder().add("x", "2").add("y", "1").hex());
  EXPECT_NE(KeyBuilder().add("x", "").hex(), KeyBuilder().hex());
}

//===----------------------------------------------------------------------===//
// KernelCache
//===----------------------------------------------------------------------===//

/// A fake CUBIN: ELF magic and some bytes.
std::string fakeElf(const std::string &body) {
  return std::string("\x7f"
                     "ELF\x02\x01\x01",
                     7) +
         body;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void writeAll(const std::string &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  if (fs::exists(dir))
    for (const auto &entry : fs::directory_iterator(dir))
      names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

using xlnetc::rt::testing::ScopedEnv;

class KernelCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("xlnetc-kc-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    key_.emplace("XLNETC_KERNEL_CACHE_KEY", dir("config/kernel-cache.key").c_str());
  }
  void TearDown() override {
    key_.reset();
    fs::remove_all(root_);
  }
  std::string dir(const std::string &name) const { return root_ / name; }

  fs::path root_;
  std::optional<ScopedEnv> key_; ///< this test's own key file
};

TEST_F(KernelCacheTest, StoreLookupRoundTripCreatesTheDirectory) {
  // Two levels that do not exist yet.
  KernelCache cache(dir("a/b/kernels"));
  std::string k = KeyBuilder().add("source", "x").hex();
  std::string bytes;
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));

  std::string cubin = fakeElf(std::string(1000, '\x5a')), path;
  Status s =
      cache.store(k, "cubin", cubin, &path, "ptxas info : Used 8 registers");
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(path, dir("a/b/kernels") + "/" + k + ".cubin");
  EXPECT_EQ(path, cache.path(k, "cubin"));
  // Private: the directories it made 0700, entries and the key 0600.
  for (const char *made : {"a", "a/b", "a/b/kernels", "config"})
    EXPECT_EQ(fs::status(dir(made)).permissions() & fs::perms::all, fs::perms::owner_all) << made;
  for (const std::string &file : {path, dir("config/kernel-cache.key")})
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write)
        << file;
  EXPECT_EQ(fs::file_size(dir("config/kernel-cache.key")), 32u);
  EXPECT_EQ(cache.refusal(), "");

  std::string meta;
  ASSERT_TRUE(cache.lookup(k, "cubin", bytes, &meta));
  EXPECT_EQ(bytes, cubin);
  EXPECT_EQ(meta, "ptxas info : Used 8 registers");
  // The payload sits at offset 0: the entry is itself an ELF file.
  EXPECT_EQ(readAll(path).substr(0, cubin.size()), cubin);
  // Another extension is another entry.
  EXPECT_FALSE(cache.lookup(k, "so", bytes));
  // Overwriting is fine.
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("v2")));
  ASSERT_TRUE(cache.lookup(k, "cubin", bytes, &meta));
  EXPECT_EQ(bytes, fakeElf("v2"));
  EXPECT_EQ(meta, "");
}

TEST_F(KernelCacheTest, AtomicStoreLeavesNoTemporaryFiles) {
  KernelCache cache(dir("kernels"));
  std::string k1 = KeyBuilder().add("k", "1").hex();
  std::string k2 = KeyBuilder().add("k", "2").hex();
  ASSERT_TRUE(cache.store(k1, "cubin", fakeElf("one")));
  ASSERT_TRUE(cache.store(k2, "bin", "two"));
  // Concurrent writers of one key.
  std::vector<std::thread> writers;
  for (int t = 0; t < 8; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 20; ++i)
        EXPECT_TRUE(cache.store(k1, "cubin", fakeElf(std::string(5000, 'q'))));
    });
  for (std::thread &t : writers)
    t.join();
  std::vector<std::string> expected = {k1 + ".cubin", k2 + ".bin"};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(listDir(dir("kernels")), expected);
  std::string bytes;
  ASSERT_TRUE(cache.lookup(k1, "cubin", bytes));
  EXPECT_EQ(bytes, fakeElf(std::string(5000, 'q')));
}

TEST_F(KernelCacheTest, CorruptEntriesAreMissesAndGetOverwritten) {
  KernelCache cache(dir("kernels"));
  std::string k = KeyBuilder().add("k", "corrupt").hex();
  std::string cubin = fakeElf(std::string(4096, 'c')), path, bytes;
  ASSERT_TRUE(cache.store(k, "cubin", cubin, &path, "log"));
  const std::string good = readAll(path);
  ASSERT_TRUE(cache.lookup(k, "cubin", bytes));

  std::vector<std::pair<const char *, std::string>> bad = {
      {"empty", ""},
      {"garbage", "not a cache entry at all"},
      {"truncated by one byte", good.substr(0, good.size() - 1)},
      {"truncated to the payload", good.substr(0, cubin.size())},
      {"a flipped payload byte",
       [&] {
         std::string s = good;
         s[100] ^= 1;
         return s;
       }()},
      {"a flipped tag byte",
       [&] {
         std::string s = good;
         s[s.size() - 1] ^= 1;
         return s;
       }()},
      {"bytes appended", good + "x"},
  };
  for (const auto &[what, content] : bad) {
    writeAll(path, content);
    EXPECT_FALSE(cache.lookup(k, "cubin", bytes)) << what;
  }
  // A directory where the entry should be is a miss too.
  fs::remove(path);
  fs::create_directory(path);
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
  fs::remove(path);

  // An intact entry whose payload is not ELF is a miss for "cubin" ...
  std::string k2 = KeyBuilder().add("k", "not elf").hex();
  ASSERT_TRUE(cache.store(k2, "bin", "plain bytes"));
  fs::copy_file(cache.path(k2, "bin"), cache.path(k2, "cubin"));
  EXPECT_FALSE(cache.lookup(k2, "cubin", bytes));
  // ... and storing one is refused.
  EXPECT_FALSE(cache.store(k2, "cubin", "plain bytes"));

  // The next store repairs the entry.
  writeAll(path, "junk");
  ASSERT_TRUE(cache.store(k, "cubin", cubin));
  ASSERT_TRUE(cache.lookup(k, "cubin", bytes));
  EXPECT_EQ(bytes, cubin);
}

TEST_F(KernelCacheTest, BadNamesAreRejected) {
  KernelCache cache(dir("kernels"));
  std::string bytes;
  EXPECT_FALSE(cache.lookup("../escape", "cubin", bytes));
  EXPECT_FALSE(cache.store("../escape", "cubin", fakeElf("")));
  EXPECT_FALSE(cache.store("abc", "cu/bin", fakeElf("")));
  EXPECT_FALSE(cache.store("", "cubin", fakeElf("")));
}

TEST_F(KernelCacheTest, DirectoryFromTheEnvironment) {
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE", "/some/where");
    ScopedEnv b("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(KernelCache::defaultDirectory(), "/some/where");
  }
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "/xdg");
    ScopedEnv c("HOME", "/home/u");
    EXPECT_EQ(KernelCache::defaultDirectory(), "/xdg/xlnetc/kernels");
  }
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", "relative/ignored");
    ScopedEnv c("HOME", "/home/u");
    EXPECT_EQ(KernelCache::defaultDirectory(), "/home/u/.cache/xlnetc/kernels");
  }
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE", nullptr);
    ScopedEnv b("XDG_CACHE_HOME", nullptr);
    ScopedEnv c("HOME", nullptr);
    EXPECT_EQ(KernelCache::defaultDirectory(), "");
    EXPECT_FALSE(KernelCache::openDefault().enabled());
  }
  // The key file likewise.
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE_KEY", nullptr);
    ScopedEnv b("XDG_CONFIG_HOME", "/xdg");
    ScopedEnv c("HOME", "/home/u");
    EXPECT_EQ(KernelCache::defaultKeyFile(), "/xdg/xlnetc/kernel-cache.key");
  }
  {
    ScopedEnv a("XLNETC_KERNEL_CACHE_KEY", nullptr);
    ScopedEnv b("XDG_CONFIG_HOME", "relative/ignored");
    ScopedEnv c("HOME", "/home/u");
    EXPECT_EQ(KernelCache::defaultKeyFile(), "/home/u/.config/xlnetc/kernel-cache.key");
  }
  {
    // No key file anywhere: the cache is off, and says why.
    ScopedEnv a("XLNETC_KERNEL_CACHE_KEY", nullptr);
    ScopedEnv b("XDG_CONFIG_HOME", nullptr);
    ScopedEnv c("HOME", nullptr);
    EXPECT_EQ(KernelCache::defaultKeyFile(), "");
    KernelCache cache(dir("no-key"));
    EXPECT_NE(cache.refusal().find("no key file"), std::string::npos) << cache.refusal();
    EXPECT_FALSE(cache.store(KeyBuilder().hex(), "cubin", fakeElf("x")));
  }
  // The override is used end to end.
  ScopedEnv a("XLNETC_KERNEL_CACHE", dir("from-env").c_str());
  KernelCache cache = KernelCache::openDefault();
  EXPECT_EQ(cache.directory(), dir("from-env"));
  EXPECT_EQ(cache.keyFile(), dir("config/kernel-cache.key"));
  std::string k = KeyBuilder().add("env", "1").hex(), path;
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("env"), &path));
  EXPECT_EQ(path, dir("from-env") + "/" + k + ".cubin");
  EXPECT_TRUE(fs::exists(path));
}

TEST_F(KernelCacheTest, DisabledCacheStoresNothing) {
  KernelCache cache = KernelCache::disabled();
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.refusal(), "");
  std::string k = KeyBuilder().add("d", "1").hex(), path = "unchanged", bytes;
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("x"), &path));
  EXPECT_EQ(path, "");
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
  EXPECT_EQ(cache.path(k, "cubin"), "");
  EXPECT_FALSE(KernelCache(dir("x"), /*enabled=*/false).enabled());
  EXPECT_TRUE(KernelCache(dir("x"), /*enabled=*/true).enabled());
  EXPECT_FALSE(fs::exists(dir("config"))) << "no key made for a disabled cache";
}

TEST_F(KernelCacheTest, UnwritableDirectoryIsAMissNotAFailure) {
  // A directory below a regular file cannot be created, even by root.
  writeAll(dir("file"), "x");
  KernelCache cache(dir("file/kernels"));
  std::string k = KeyBuilder().add("u", "1").hex(), path, bytes;
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
  Status s = cache.store(k, "cubin", fakeElf("x"), &path);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("is not used: cannot create"), std::string::npos)
      << s.message();
  EXPECT_EQ(path, "");
}

TEST_F(KernelCacheTest, StoredSharedObjectIsStillAnElfFile) {
  // A real shared object (libm), stored with the trailer, comes back whole
  // and the entry still starts with it.
  void *libm = ::dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr);
  struct link_map *map = nullptr;
  ASSERT_EQ(::dlinfo(libm, RTLD_DI_LINKMAP, &map), 0);
  std::string so = readAll(map->l_name);
  ::dlclose(libm);
  ASSERT_TRUE(isElf(so));

  KernelCache cache(dir("kernels"));
  std::string k = KeyBuilder().add("so", "libm").hex(), path, bytes;
  ASSERT_TRUE(cache.store(k, "so", so, &path));
  ASSERT_TRUE(cache.lookup(k, "so", bytes));
  EXPECT_EQ(bytes, so);
  EXPECT_EQ(readAll(path).substr(0, so.size()), so);
}

//===----------------------------------------------------------------------===//
// The trust model (docs/Security.md "The kernel cache"): another user's
// entries, directories and keys are never trusted.
//===----------------------------------------------------------------------===//

/// An entry with a trailer of format `version` whose tag is the bare SHA-256
/// of the bytes (version 1's format): what anyone can make without the key.
std::string unkeyedEntry(const std::string &payload, uint32_t version) {
  std::string out = payload + std::string("xlkcache", 8);
  auto le = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      out.push_back(char((v >> (8 * i)) & 0xff));
  };
  le(version, 4);
  le(0, 4);
  le(payload.size(), 8);
  le(0, 8);
  Sha256::Digest d = Sha256::hash(payload);
  out.append(reinterpret_cast<const char *>(d.data()), d.size());
  return out;
}

TEST_F(KernelCacheTest, AnEntryMadeWithoutTheKeyIsAMiss) {
  const std::string k = KeyBuilder().add("planted", "1").hex();
  const std::string code = fakeElf("someone else's code"), theirs = fakeElf("theirs");
  KernelCache mine(dir("kernels"));
  std::string bytes;
  ASSERT_EQ(mine.refusal(), "");

  // Another key (another user's, or a guess) over the very same directory.
  {
    ScopedEnv other("XLNETC_KERNEL_CACHE_KEY", dir("other/key").c_str());
    KernelCache planter(dir("kernels"));
    ASSERT_TRUE(planter.store(k, "so", theirs));
    ASSERT_TRUE(planter.lookup(k, "so", bytes)); // good under its own key
  }
  EXPECT_FALSE(mine.lookup(k, "so", bytes)) << "an entry tagged with another key ran";

  // The old unkeyed format with a correct SHA-256, in version 2's dress too.
  for (uint32_t version : {1u, 2u}) {
    writeAll(mine.path(k, "so"), unkeyedEntry(code, version));
    ::chmod(mine.path(k, "so").c_str(), 0600);
    EXPECT_FALSE(mine.lookup(k, "so", bytes)) << "version " << version;
  }

  // A good entry of one kernel copied under another kernel's name.
  const std::string k2 = KeyBuilder().add("planted", "2").hex();
  ASSERT_TRUE(mine.store(k2, "so", fakeElf("kernel two")));
  fs::copy_file(mine.path(k2, "so"), mine.path(k, "so"), fs::copy_options::overwrite_existing);
  EXPECT_FALSE(mine.lookup(k, "so", bytes)) << "an entry answered for another kernel";

  // The next store replaces any of them.
  ASSERT_TRUE(mine.store(k, "so", code));
  ASSERT_TRUE(mine.lookup(k, "so", bytes));
  EXPECT_EQ(bytes, code);
}

TEST_F(KernelCacheTest, ASharedDirectoryIsRefusedWithItsReason) {
  const std::string k = KeyBuilder().add("shared", "1").hex();
  std::string bytes;
  {
    KernelCache cache(dir("kernels"));
    ASSERT_TRUE(cache.store(k, "cubin", fakeElf("mine")));
  }
  ASSERT_EQ(::chmod(dir("kernels").c_str(), 01777), 0); // like /tmp
  KernelCache cache(dir("kernels"));
  EXPECT_NE(cache.refusal().find("mode 1777: writable by others"), std::string::npos)
      << cache.refusal();
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes)) << "an entry of a shared directory was used";
  Status s = cache.store(k, "cubin", fakeElf("mine"));
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("is not used"), std::string::npos) << s.message();

  ASSERT_EQ(::chmod(dir("kernels").c_str(), 0770), 0); // group-writable
  EXPECT_NE(KernelCache(dir("kernels")).refusal().find("mode 0770"), std::string::npos);
  ASSERT_EQ(::chmod(dir("kernels").c_str(), 0755), 0); // readable is fine
  EXPECT_EQ(KernelCache(dir("kernels")).refusal(), "");
}

TEST_F(KernelCacheTest, AnotherUsersDirectoryEntryOrKeyIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "giving a file to another user needs root";
  const uid_t other = 4242;
  const std::string k = KeyBuilder().add("owner", "1").hex();
  std::string bytes;
  KernelCache mine(dir("kernels"));
  ASSERT_TRUE(mine.store(k, "cubin", fakeElf("x")));
  // An entry of another user (say, one that existed before the directory
  // was made private) is not ours to run.
  ASSERT_EQ(::chown(mine.path(k, "cubin").c_str(), other, other), 0);
  EXPECT_FALSE(mine.lookup(k, "cubin", bytes)) << "another user's entry was used";
  ASSERT_TRUE(mine.store(k, "cubin", fakeElf("x")));
  EXPECT_TRUE(mine.lookup(k, "cubin", bytes)) << "the store replaces it";

  // Another user's directory.
  ASSERT_EQ(::chown(dir("kernels").c_str(), other, other), 0);
  EXPECT_NE(KernelCache(dir("kernels")).refusal().find("owned by uid 4242"), std::string::npos);
  ASSERT_EQ(::chown(dir("kernels").c_str(), 0, 0), 0);

  // Another user's key.
  ASSERT_EQ(::chown(dir("config/kernel-cache.key").c_str(), other, other), 0);
  EXPECT_NE(KernelCache(dir("kernels")).refusal().find("owned by uid 4242"), std::string::npos);
}

TEST_F(KernelCacheTest, OddEntriesAreMissesThatNeverBlock) {
  const std::string k = KeyBuilder().add("odd", "1").hex();
  std::string bytes;
  KernelCache cache(dir("kernels"));
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("real")));
  const std::string entry = cache.path(k, "cubin");
  fs::rename(entry, dir("elsewhere.cubin"));

  // A link to a good entry: never followed.
  fs::create_symlink(dir("elsewhere.cubin"), entry);
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes)) << "a symbolic link was followed";
  // The store replaces the link itself, not its target.
  const std::string target = readAll(dir("elsewhere.cubin"));
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("new")));
  EXPECT_FALSE(fs::is_symlink(entry));
  EXPECT_EQ(readAll(dir("elsewhere.cubin")), target);

  // A good entry others may write.
  ASSERT_EQ(::chmod(entry.c_str(), 0666), 0);
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes)) << "an entry others may write was used";

  // A FIFO: a miss at once (a blocking open would wait for a writer forever).
  fs::remove(entry);
  ASSERT_EQ(::mkfifo(entry.c_str(), 0600), 0);
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
}

TEST_F(KernelCacheTest, TheDirectoryIsHeldOpenNotFollowedByName) {
  // Once opened, the cache stays in the directory it checked: a directory
  // put in its place afterwards (a rename race) is never read or written.
  const std::string k = KeyBuilder().add("held", "1").hex();
  std::string bytes;
  KernelCache cache(dir("kernels"));
  ASSERT_EQ(cache.refusal(), "");
  fs::rename(dir("kernels"), dir("checked"));
  fs::create_directory(dir("kernels"));
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("held")));
  EXPECT_TRUE(fs::exists(dir("checked") + "/" + k + ".cubin"));
  EXPECT_TRUE(listDir(dir("kernels")).empty());
  EXPECT_TRUE(cache.lookup(k, "cubin", bytes));
}

TEST_F(KernelCacheTest, ABadKeyFileTurnsTheCacheOff) {
  fs::create_directories(dir("config"));
  const std::string key = dir("config/kernel-cache.key");
  const std::vector<std::pair<std::string, std::function<void()>>> cases = {
      {"readable or writable by others", [&] { writeAll(key, std::string(32, 'k')); ::chmod(key.c_str(), 0644); }},
      {"is not 32 bytes", [&] { writeAll(key, "short"); ::chmod(key.c_str(), 0600); }},
      {"is a symbolic link", [&] {
         writeAll(dir("real-key"), std::string(32, 'k'));
         ::chmod(dir("real-key").c_str(), 0600);
         fs::create_symlink(dir("real-key"), key);
       }},
      {"is not a regular file", [&] { fs::create_directory(key); }},
  };
  for (const auto &[why, make] : cases) {
    fs::remove_all(key);
    make();
    KernelCache cache(dir("kernels"));
    EXPECT_NE(cache.refusal().find(why), std::string::npos) << why << ": " << cache.refusal();
    EXPECT_FALSE(cache.store(KeyBuilder().hex(), "cubin", fakeElf("x")));
  }
  // Two caches making the key at once agree on it.
  fs::remove_all(key);
  std::vector<std::thread> makers;
  std::vector<std::string> refusals(4);
  for (int t = 0; t < 4; ++t)
    makers.emplace_back([&, t] { refusals[t] = KernelCache(dir("kernels")).refusal(); });
  for (std::thread &t : makers)
    t.join();
  for (const std::string &r : refusals)
    EXPECT_EQ(r, "");
  EXPECT_EQ(fs::file_size(key), 32u);
}

} // namespace
