//===- RunDirectoryTest.cpp - One run at a time, regular files only ------===//

#include "runtime/train/Metrics.h"
#include "runtime/train/RunDirectory.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;
namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string &name) {
  fs::path dir = fs::temp_directory_path() /
                 ("xlnetc-rundir-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string readAll(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A second lock on a held directory is refused naming the holder's pid;
/// once the first is released the directory can be taken again.
TEST(RunLock, ASecondRunIsRefusedNamingTheHolder) {
  fs::path dir = freshDir("lock");
  RunLock first;
  ASSERT_TRUE(RunLock::acquire(dir.string(), first));
  EXPECT_EQ(readAll(dir / kRunLockName), std::to_string(::getpid()) + "\n");
  {
    RunLock second;
    Status st = RunLock::acquire(dir.string(), second);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("is in use by another run (process " +
                                std::to_string(::getpid()) + ","),
              std::string::npos)
        << st.message();
  }
  first = RunLock(); // released
  RunLock again;
  EXPECT_TRUE(RunLock::acquire(dir.string(), again));
  fs::remove_all(dir);
}

/// A link planted as the lock file is refused, not followed.
TEST(RunLock, ALinkAsTheLockIsRefused) {
  fs::path dir = freshDir("locklink");
  std::ofstream(dir / "target") << "mine\n";
  fs::create_symlink(dir / "target", dir / kRunLockName);
  RunLock lock;
  Status st = RunLock::acquire(dir.string(), lock);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a symbolic link to"), std::string::npos) << st.message();
  EXPECT_EQ(readAll(dir / "target"), "mine\n");
  fs::remove_all(dir);
}

/// Links (dangling or not), directories and FIFOs where the run writes are
/// named; regular files and absent ones pass.
TEST(RunFiles, OddEntriesAreNamed) {
  fs::path dir = freshDir("odd");
  const std::vector<std::string> names = {"metrics.jsonl", "spec.toml", "loss.png"};
  std::ofstream(dir / "spec.toml") << "[model]\n";
  EXPECT_TRUE(checkRunFiles(dir.string(), names));
  fs::create_symlink("/nonexistent/xlnetc", dir / "metrics.jsonl");
  Status st = checkRunFiles(dir.string(), names);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a symbolic link (dangling) to /nonexistent/xlnetc as "
                              "metrics.jsonl"),
            std::string::npos)
      << st.message();
  fs::remove(dir / "metrics.jsonl");
  fs::create_directory(dir / "loss.png");
  st = checkRunFiles(dir.string(), names);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a directory as loss.png"), std::string::npos) << st.message();
  fs::remove(dir / "loss.png");
  ASSERT_EQ(::mkfifo((dir / "spec.toml.fifo").c_str(), 0600), 0);
  st = checkRunFiles(dir.string(), {"spec.toml.fifo"});
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("a FIFO as spec.toml.fifo"), std::string::npos) << st.message();
  fs::remove_all(dir);
}

/// The metrics file is never written through a link: opening one is an
/// error, and the link's target keeps its bytes.
TEST(MetricsWriterLinks, ALinkIsNotWrittenThrough) {
  fs::path dir = freshDir("metricslink");
  std::ofstream(dir / "precious.txt") << "keep me\n";
  fs::create_symlink(dir / "precious.txt", dir / "metrics.jsonl");
  for (bool resume : {false, true}) {
    MetricsWriter w;
    Status st = w.open((dir / "metrics.jsonl").string(),
                       resume ? std::optional<int64_t>(0) : std::nullopt);
    ASSERT_FALSE(st);
    EXPECT_NE(st.message().find("symbolic link"), std::string::npos) << st.message();
  }
  EXPECT_EQ(readAll(dir / "precious.txt"), "keep me\n");
  fs::remove_all(dir);
}

} // namespace
