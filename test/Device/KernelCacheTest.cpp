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
#include <thread>

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
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string dir(const std::string &name) const { return root_ / name; }

  fs::path root_;
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
  // Mode 0755 less the umask; entries 0644.
  fs::perms mode = fs::status(dir("a/b/kernels")).permissions();
  EXPECT_EQ(mode & fs::perms::owner_all, fs::perms::owner_all);
  EXPECT_EQ(mode & (fs::perms::group_write | fs::perms::others_write),
            fs::perms::none);
  EXPECT_EQ(fs::status(path).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write |
                fs::perms::group_read | fs::perms::others_read);

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
      {"a flipped digest byte",
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
  // The override is used end to end.
  ScopedEnv a("XLNETC_KERNEL_CACHE", dir("from-env").c_str());
  KernelCache cache = KernelCache::openDefault();
  EXPECT_EQ(cache.directory(), dir("from-env"));
  std::string k = KeyBuilder().add("env", "1").hex(), path;
  ASSERT_TRUE(cache.store(k, "cubin", fakeElf("env"), &path));
  EXPECT_EQ(path, dir("from-env") + "/" + k + ".cubin");
  EXPECT_TRUE(fs::exists(path));
}

TEST_F(KernelCacheTest, DisabledCacheStoresNothingButCanStillMakeAFile) {
  std::string tmpdir;
  {
    KernelCache cache = KernelCache::disabled();
    EXPECT_FALSE(cache.enabled());
    std::string k = KeyBuilder().add("d", "1").hex(), path = "unchanged", bytes;
    ASSERT_TRUE(cache.store(k, "cubin", fakeElf("x"), &path));
    EXPECT_EQ(path, "");
    EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
    EXPECT_EQ(cache.temporaryDirectory(), "");
    EXPECT_EQ(cache.path(k, "cubin"), "");
    EXPECT_FALSE(KernelCache(dir("x"), /*enabled=*/false).enabled());
    EXPECT_TRUE(KernelCache(dir("x"), /*enabled=*/true).enabled());

    // storeFile: a private file that outlives nothing but the cache.
    Status s = cache.storeFile(k, "so", fakeElf("shared object"), path);
    ASSERT_TRUE(s) << s.message();
    tmpdir = cache.temporaryDirectory();
    EXPECT_NE(tmpdir, "");
    EXPECT_EQ(path.rfind(tmpdir + "/", 0), 0u) << path;
    EXPECT_EQ(readAll(path).substr(0, 20),
              fakeElf("shared object").substr(0, 20));
    EXPECT_FALSE(cache.lookup(k, "so", bytes)); // still disabled
  }
  EXPECT_FALSE(fs::exists(tmpdir)) << "removed with the cache";
}

TEST_F(KernelCacheTest, UnwritableDirectoryIsAMissNotAFailure) {
  // A directory below a regular file cannot be created, even by root.
  writeAll(dir("file"), "x");
  KernelCache cache(dir("file/kernels"));
  std::string k = KeyBuilder().add("u", "1").hex(), path, bytes;
  EXPECT_FALSE(cache.lookup(k, "cubin", bytes));
  Status s = cache.store(k, "cubin", fakeElf("x"), &path);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("kernel cache: cannot create"), std::string::npos)
      << s.message();
  EXPECT_EQ(path, "");
  // storeFile still produces a file, in the private directory.
  ASSERT_TRUE(cache.storeFile(k, "cubin", fakeElf("x"), path));
  EXPECT_EQ(path.rfind(cache.temporaryDirectory() + "/", 0), 0u);
  EXPECT_TRUE(fs::exists(path));
}

TEST_F(KernelCacheTest, StoredSharedObjectStillLoadsWithDlopen) {
  // A real shared object (libm), stored with the trailer, must dlopen.
  void *libm = ::dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(libm, nullptr);
  struct link_map *map = nullptr;
  ASSERT_EQ(::dlinfo(libm, RTLD_DI_LINKMAP, &map), 0);
  std::string so = readAll(map->l_name);
  ::dlclose(libm);
  ASSERT_TRUE(isElf(so));

  KernelCache cache(dir("kernels"));
  std::string k = KeyBuilder().add("so", "libm").hex(), path, bytes;
  ASSERT_TRUE(cache.storeFile(k, "so", so, path));
  EXPECT_EQ(path, cache.path(k, "so"));
  ASSERT_TRUE(cache.lookup(k, "so", bytes));
  EXPECT_EQ(bytes, so);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  auto *cosine = reinterpret_cast<double (*)(double)>(::dlsym(handle, "cos"));
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine(0.0), 1.0);
  ::dlclose(handle);
}

} // namespace
