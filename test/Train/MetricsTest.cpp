//===- MetricsTest.cpp - Metrics log and progress line --------------------===//

#include "runtime/train/Metrics.h"

#include "TrainTestUtil.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <sstream>

using namespace xlnetc::rt;
using namespace xlnetc::rt::train;
using namespace xlnetc::rt::train::test;

namespace {

StepMetrics sample(int64_t step) {
  StepMetrics m;
  m.step = step;
  m.loss = 4.1234 - 0.001 * double(step);
  m.lr = 2.4e-4;
  m.gradNorm = 1.23;
  m.tokensPerSec = 15300;
  m.elapsedSec = 0.5 * double(step);
  return m;
}

std::vector<nlohmann::ordered_json> parseLines(const std::string &path) {
  std::vector<nlohmann::ordered_json> out;
  std::istringstream in(readFile(path));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::ordered_json::parse(line, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << "not JSON: " << line;
    out.push_back(j);
  }
  return out;
}

} // namespace

TEST(Metrics, JsonLineHasAllFieldsInOrder) {
  std::string line = metricsJsonLine(sample(120));
  auto j = nlohmann::ordered_json::parse(line);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"step", "loss", "ppl",
                                            "bits_per_token", "lr", "grad_norm",
                                            "tokens_per_s", "elapsed_s"}));
  EXPECT_EQ(j["step"].get<int64_t>(), 120);
  double loss = 4.1234 - 0.12;
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), loss);
  EXPECT_DOUBLE_EQ(j["ppl"].get<double>(), std::exp(loss));
  EXPECT_DOUBLE_EQ(j["bits_per_token"].get<double>(), loss / std::log(2.0));
  EXPECT_DOUBLE_EQ(j["lr"].get<double>(), 2.4e-4);
  EXPECT_DOUBLE_EQ(j["grad_norm"].get<double>(), 1.23);
  EXPECT_DOUBLE_EQ(j["tokens_per_s"].get<double>(), 15300);
  EXPECT_DOUBLE_EQ(j["elapsed_s"].get<double>(), 60);
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(Metrics, NonFiniteNumbersAreNull) {
  StepMetrics m = sample(1);
  m.loss = std::numeric_limits<double>::quiet_NaN();
  m.gradNorm = std::numeric_limits<double>::infinity();
  auto j = nlohmann::json::parse(metricsJsonLine(m));
  EXPECT_TRUE(j["loss"].is_null());
  EXPECT_TRUE(j["ppl"].is_null());
  EXPECT_TRUE(j["bits_per_token"].is_null());
  EXPECT_TRUE(j["grad_norm"].is_null());
  EXPECT_EQ(j["step"].get<int64_t>(), 1);
}

TEST(Metrics, WriterFlushesEachParsableLine) {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  MetricsWriter w;
  ASSERT_TRUE(w.open(path).isOk());
  for (int64_t s = 1; s <= 3; ++s) {
    ASSERT_TRUE(w.log(sample(s)).isOk());
    // Visible on disk before the writer is closed.
    auto lines = parseLines(path);
    ASSERT_EQ(lines.size(), size_t(s));
    EXPECT_EQ(lines.back()["step"].get<int64_t>(), s);
  }
}

TEST(Metrics, FreshRunTruncates) {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  writeFile(path, metricsJsonLine(sample(5)) + "\n");
  MetricsWriter w;
  ASSERT_TRUE(w.open(path).isOk());
  ASSERT_TRUE(w.log(sample(1)).isOk());
  w.close();
  auto lines = parseLines(path);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["step"].get<int64_t>(), 1);
}

TEST(Metrics, ResumeAppendsAndDropsStaleLines) {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  {
    MetricsWriter w;
    ASSERT_TRUE(w.open(path).isOk());
    for (int64_t s : {10, 20, 30})
      ASSERT_TRUE(w.log(sample(s)).isOk());
  }
  // A crash left half a line.
  writeFile(path, readFile(path) + "{\"step\":40,\"lo");

  // Resuming from the checkpoint of step 20: 30 and the partial 40 go.
  MetricsWriter w;
  ASSERT_TRUE(w.open(path, 20).isOk());
  EXPECT_EQ(w.droppedLines(), 2u);
  ASSERT_TRUE(w.log(sample(30)).isOk());
  w.close();
  auto lines = parseLines(path);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["step"].get<int64_t>(), 10);
  EXPECT_EQ(lines[1]["step"].get<int64_t>(), 20);
  EXPECT_EQ(lines[2]["step"].get<int64_t>(), 30);
  EXPECT_TRUE(filesWithPrefix(dir.path(), "metrics.jsonl.tmp.").empty());

  // Resuming with nothing stale just appends.
  ASSERT_TRUE(w.open(path, 30).isOk());
  EXPECT_EQ(w.droppedLines(), 0u);
  ASSERT_TRUE(w.log(sample(31)).isOk());
  w.close();
  EXPECT_EQ(parseLines(path).size(), 4u);

  // Resuming without an existing file creates it.
  std::string other = dir.file("new.jsonl");
  ASSERT_TRUE(w.open(other, 7).isOk());
  ASSERT_TRUE(w.log(sample(8)).isOk());
  w.close();
  EXPECT_EQ(parseLines(other).size(), 1u);
}

/// An override event: its fields in order, the TOML values as JSON numbers,
/// booleans and strings (a value JSON cannot spell stays its TOML text).
TEST(Metrics, OverrideLineCarriesTypedValues) {
  auto j = nlohmann::ordered_json::parse(
      overrideJsonLine({120, "learning_rate", "0.0001", "5e-05"}));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it)
    keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"step", "event", "key", "old", "new"}));
  EXPECT_EQ(j["step"].get<int64_t>(), 120);
  EXPECT_EQ(j["event"], "override");
  EXPECT_EQ(j["key"], "learning_rate");
  EXPECT_EQ(j["old"].get<double>(), 1e-4);
  EXPECT_EQ(j["new"].get<double>(), 5e-5);
  j = nlohmann::ordered_json::parse(overrideJsonLine({3, "train_steps", "200", "400"}));
  EXPECT_EQ(j["new"].get<int64_t>(), 400);
  j = nlohmann::ordered_json::parse(overrideJsonLine({3, "decay_method", "\"poly\"", "\"cos\""}));
  EXPECT_EQ(j["old"], "poly");
  EXPECT_EQ(j["new"], "cos");
  j = nlohmann::ordered_json::parse(overrideJsonLine({3, "clip", "1.0", "inf"}));
  EXPECT_EQ(j["new"], "inf");
  EXPECT_FALSE(j.contains("loss")); // how readers tell it from a step line
}

/// Override events are kept by a later resume like the step lines of their
/// step: from a checkpoint at or after it they stay, from one before they go.
TEST(Metrics, ResumeKeepsOverridesOfKeptSteps) {
  TempDir dir;
  std::string path = dir.file("metrics.jsonl");
  {
    MetricsWriter w;
    ASSERT_TRUE(w.open(path).isOk());
    ASSERT_TRUE(w.log(sample(10)).isOk());
    ASSERT_TRUE(w.logOverride({10, "clip", "1.0", "0.5"}).isOk());
    ASSERT_TRUE(w.log(sample(11)).isOk());
    ASSERT_TRUE(w.logOverride({11, "clip", "0.5", "0.25"}).isOk());
    ASSERT_TRUE(w.log(sample(12)).isOk());
  }
  MetricsWriter w;
  ASSERT_TRUE(w.open(path, 10).isOk());
  EXPECT_EQ(w.droppedLines(), 3u);
  w.close();
  auto lines = parseLines(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["event"], "override");
  EXPECT_EQ(lines[1]["new"].get<double>(), 0.5);
}

TEST(Metrics, OpenErrorNamesTheFile) {
  TempDir dir;
  std::string path = dir.file("no/such/dir/metrics.jsonl");
  MetricsWriter w;
  Status s = w.open(path);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "cannot open metrics file " + path +
                             ": No such file or directory");
  EXPECT_FALSE(w.log(sample(1)).isOk());
}

TEST(Progress, FormatsTheExampleLine) {
  ProgressInfo p;
  p.step = 120;
  p.totalSteps = 1000;
  p.loss = 4.1234;
  p.lr = 2.4e-4;
  p.gradNorm = 1.23;
  p.tokensPerSec = 15300;
  p.etaSec = 72;
  EXPECT_EQ(formatProgress(p),
            "step 120/1000 | loss 4.1234 | ppl 61.8 | bpt 5.95 | lr 2.40e-04 "
            "| gnorm 1.23 | 15.3k tok/s | ETA 1m12s");
}

TEST(Progress, EarlyAndDegenerateValues) {
  ProgressInfo p;
  p.step = 1;
  p.totalSteps = 10;
  p.loss = std::log(32000.0);
  p.lr = 0;
  p.gradNorm = std::numeric_limits<double>::quiet_NaN();
  p.tokensPerSec = 850;
  p.etaSec = -1;
  EXPECT_EQ(formatProgress(p),
            "step 1/10 | loss 10.3735 | ppl 32000.0 | bpt 14.97 | lr 0.00e+00 "
            "| gnorm nan | 850 tok/s | ETA ?");
  p.loss = 20;
  p.tokensPerSec = 2.5e6;
  p.etaSec = 3720;
  EXPECT_EQ(formatProgress(p),
            "step 1/10 | loss 20.0000 | ppl 4.85e+08 | bpt 28.85 | lr "
            "0.00e+00 | gnorm nan | 2.50M tok/s | ETA 1h02m");
}

TEST(Progress, Durations) {
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(45), "45s");
  EXPECT_EQ(formatDuration(59.4), "59s");
  EXPECT_EQ(formatDuration(59.6), "1m00s");
  EXPECT_EQ(formatDuration(185), "3m05s");
  EXPECT_EQ(formatDuration(3599), "59m59s");
  EXPECT_EQ(formatDuration(3600), "1h00m");
  EXPECT_EQ(formatDuration(3720), "1h02m");
  EXPECT_EQ(formatDuration(90061), "25h01m");
  EXPECT_EQ(formatDuration(-1), "?");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::quiet_NaN()), "?");
  EXPECT_EQ(formatDuration(std::numeric_limits<double>::infinity()), "?");
}

TEST(Progress, Throughput) {
  EXPECT_EQ(formatTokensPerSec(0), "0 tok/s");
  EXPECT_EQ(formatTokensPerSec(999.4), "999 tok/s");
  EXPECT_EQ(formatTokensPerSec(999.6), "1.0k tok/s");
  EXPECT_EQ(formatTokensPerSec(15300), "15.3k tok/s");
  EXPECT_EQ(formatTokensPerSec(999940), "999.9k tok/s");
  EXPECT_EQ(formatTokensPerSec(1.25e6), "1.25M tok/s");
}

TEST(Progress, Eta) {
  EXPECT_DOUBLE_EQ(estimateEtaSec(10, 20.0, 90), 180.0);
  EXPECT_EQ(estimateEtaSec(0, 0.0, 90), -1);
  EXPECT_EQ(estimateEtaSec(10, 20.0, 0), 0);
}
