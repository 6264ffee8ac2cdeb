//===- PlotTest.cpp - The loss curve PNG ----------------------------------===//

#include "runtime/train/Metrics.h"
#include "runtime/train/Plot.h"

#include "TrainTestUtil.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;
using namespace xlnetc::rt::train::test;

namespace {

const std::string kPngSignature("\x89PNG\r\n\x1a\n", 8);

void writeMetrics(const std::string &path, int steps) {
  MetricsWriter w;
  ASSERT_TRUE(w.open(path).isOk());
  for (int s = 1; s <= steps; ++s) {
    StepMetrics m;
    m.step = s;
    m.loss = 10.0 * std::exp(-s / 30.0) + 2.0 + 0.1 * std::sin(s);
    m.lr = 1e-4;
    ASSERT_TRUE(w.log(m).isOk());
  }
}

/// Sets $PATH for the lifetime of the object.
class ScopedPath {
public:
  explicit ScopedPath(const std::string &value) {
    const char *old = std::getenv("PATH");
    had_ = old != nullptr;
    if (old)
      old_ = old;
    ::setenv("PATH", value.c_str(), 1);
  }
  ~ScopedPath() {
    if (had_)
      ::setenv("PATH", old_.c_str(), 1);
    else
      ::unsetenv("PATH");
  }

private:
  bool had_ = false;
  std::string old_;
};

} // namespace

TEST(Plot, WritesPngWithGnuplot) {
  if (findExecutable("gnuplot").empty())
    GTEST_SKIP() << "gnuplot is not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  // A directory name that would break or exploit naive quoting.
  std::string sub = dir.file("it's a \"dir\" $(touch pwned) `touch pwned2`;");
  std::filesystem::create_directory(sub);
  std::string metrics = sub + "/metrics.jsonl", png = sub + "/loss 'curve'.png";
  writeMetrics(metrics, 200);
  writeFile(png, "old contents");
  std::string warning = "stale";
  Status s = plotLossCurve(metrics, png, warning);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(warning, "");
  std::string bytes = readFile(png);
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(0, 8), kPngSignature);
  EXPECT_TRUE(filesWithPrefix(sub, "loss 'curve'.png.tmp.").empty());
  EXPECT_FALSE(std::filesystem::exists("pwned"));
  EXPECT_FALSE(std::filesystem::exists(sub + "/pwned"));
  EXPECT_FALSE(std::filesystem::exists("pwned2"));
}

TEST(Plot, SinglePoint) {
  if (findExecutable("gnuplot").empty())
    GTEST_SKIP() << "gnuplot is not installed (apt-get install gnuplot-nox)";
  TempDir dir;
  std::string metrics = dir.file("metrics.jsonl"), png = dir.file("loss.png");
  writeMetrics(metrics, 1);
  std::string warning;
  Status s = plotLossCurve(metrics, png, warning);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(readFile(png).substr(0, 8), kPngSignature);
}

TEST(Plot, MissingGnuplotIsAWarning) {
  TempDir dir;
  std::string metrics = dir.file("metrics.jsonl"), png = dir.file("loss.png");
  writeMetrics(metrics, 20);
  std::string empty = dir.file("empty-bin");
  std::filesystem::create_directory(empty);
  ScopedPath path(empty);
  ASSERT_EQ(findExecutable("gnuplot"), "");
  std::string warning;
  Status s = plotLossCurve(metrics, png, warning);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(warning, "gnuplot is not installed: skipped the loss plot " + png +
                         " (install gnuplot to get it, e.g. `apt-get install "
                         "gnuplot-nox`)");
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST(Plot, NothingToPlotIsAWarning) {
  TempDir dir;
  std::string metrics = dir.file("metrics.jsonl"), png = dir.file("loss.png");
  // A step without a loss, a line that is not JSON and an override event
  // (Metrics.h), which has no loss.
  writeFile(metrics, "{\"step\":1,\"loss\":null}\nnot json\n" +
                         overrideJsonLine({1, "clip", "1.0", "0.5"}) + "\n");
  std::string warning;
  Status s = plotLossCurve(metrics, png, warning);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(warning, "no loss values in " + metrics +
                         "; skipped the loss plot " + png);
  EXPECT_FALSE(std::filesystem::exists(png));
}

TEST(Plot, MissingMetricsFileIsAnError) {
  TempDir dir;
  std::string metrics = dir.file("metrics.jsonl");
  std::string warning;
  Status s = plotLossCurve(metrics, dir.file("loss.png"), warning);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "cannot read metrics file " + metrics +
                             ": No such file or directory");
}

TEST(Plot, FindExecutable) {
  TempDir dir;
  std::string bin = dir.file("bin");
  std::filesystem::create_directory(bin);
  writeFile(bin + "/tool", "#!/bin/sh\n");
  writeFile(bin + "/plain", "data");
  std::filesystem::permissions(bin + "/tool",
                               std::filesystem::perms::owner_all);
  std::filesystem::permissions(bin + "/plain",
                               std::filesystem::perms::owner_read);
  ScopedPath path("/nonexistent:" + bin);
  EXPECT_EQ(findExecutable("tool"), bin + "/tool");
  EXPECT_EQ(findExecutable("plain"), ""); // not executable
  EXPECT_EQ(findExecutable("absent"), "");
}
