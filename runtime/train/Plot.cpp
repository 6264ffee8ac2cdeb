//===- Plot.cpp - The loss curve of a training run ------------------------===//

#include "runtime/train/Plot.h"

#include "runtime/train/AtomicFile.h"
#include "runtime/train/CheckpointUtil.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <memory>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

extern char **environ;

namespace xlnetc::rt::train {

namespace {

constexpr const char *kInstallHint =
    "install gnuplot to get it, e.g. `apt-get install gnuplot-nox`";

/// Longest time gnuplot may take before it is killed.
constexpr auto kGnuplotTimeout = std::chrono::seconds(120);

struct FileCloser {
  void operator()(std::FILE *f) const {
    if (f)
      std::fclose(f);
  }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

/// The gnuplot script, with the data inline (no file names in it).
std::string buildScript(const std::vector<std::pair<int64_t, double>> &points,
                        const std::vector<std::pair<int64_t, double>> &evals) {
  size_t n = points.size();
  bool average = n >= 10;
  size_t window = std::max<size_t>(2, n / 25);
  std::string s;
  s += "if (strstrt(GPVAL_TERMINALS, \"pngcairo\") > 0) {\n"
       "  set terminal pngcairo size 960,540 noenhanced font \"sans,10\"\n"
       "} else {\n"
       "  set terminal png size 960,540 noenhanced\n"
       "}\n"
       "set output\n" // stdout
       "set title \"Training loss\"\n"
       "set xlabel \"step\"\n"
       "set ylabel \"loss (nats per predicted token)\"\n"
       "set grid\n"
       "set key top right\n"
       "$loss << EOD\n";
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += points[i].second;
    if (i >= window)
      sum -= points[i - window].second;
    double avg = sum / double(std::min(i + 1, window));
    s += fmt::format("{} {:.9g} {:.9g}\n", points[i].first, points[i].second,
                     avg);
  }
  s += "EOD\n";
  if (!evals.empty()) {
    s += "$eval << EOD\n";
    for (const auto &[step, loss] : evals)
      s += fmt::format("{} {:.9g}\n", step, loss);
    s += "EOD\n";
  }
  const char *style = n <= 50 ? "linespoints pt 7 ps 0.6" : "lines";
  s += fmt::format("plot $loss using 1:2 with {} lw 1 lc rgb \"{}\" title "
                   "\"loss\"",
                   style, average ? "#9ab8d8" : "#1f4e9a");
  if (average)
    s += fmt::format(", $loss using 1:3 with lines lw 2 lc rgb \"#1f4e9a\" "
                     "title \"moving average ({} points)\"",
                     window);
  if (!evals.empty())
    s += ", $eval using 1:2 with linespoints pt 5 ps 0.8 lw 2 lc rgb \"#c0392b\" "
         "title \"held-out loss\"";
  s += "\nunset output\n";
  return s;
}

/// Reads the whole of an unlinked temporary file.
std::string slurp(std::FILE *f) {
  std::string text;
  std::rewind(f);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    text.append(buf, n);
  return text;
}

/// The first lines of gnuplot's stderr, on one line.
std::string errorExcerpt(const std::string &text) {
  std::string out = detail::oneLine(text);
  size_t b = out.find_first_not_of(' ');
  out = b == std::string::npos ? "" : out.substr(b);
  while (!out.empty() && out.back() == ' ')
    out.pop_back();
  if (out.size() > 400)
    out = out.substr(0, 400) + "...";
  return out.empty() ? "no message" : out;
}

} // namespace

std::string findExecutable(const std::string &name) {
  const char *env = std::getenv("PATH");
  std::string path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos)
      end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty())
      dir = ".";
    std::string candidate = dir + "/" + name;
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return "";
}

/// 1. The points of `metricsJsonl`: the loss by step, the last line
///    winning (a resumed run that redid steps, or a hand-concatenated log,
///    still gives a curve that goes left to right); lines without a finite
///    loss are skipped. `evals`: the held-out losses (eval events) alike.
static Status readLossPoints(const std::string &metricsJsonl,
                             std::map<int64_t, double> &byStep,
                             std::map<int64_t, double> &evals) {
  std::ifstream in(metricsJsonl, std::ios::binary);
  if (!in)
    return Status::error(fmt::format("cannot read metrics file {}: {}",
                                     metricsJsonl, std::strerror(errno)));
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object())
      continue;
    auto step = j.find("step"), loss = j.find("loss"), eval = j.find("eval_loss");
    if (step == j.end() || !step->is_number_integer())
      continue;
    if (loss != j.end() && loss->is_number() && std::isfinite(loss->get<double>()))
      byStep[step->get<int64_t>()] = loss->get<double>();
    if (eval != j.end() && eval->is_number() && std::isfinite(eval->get<double>()))
      evals[step->get<int64_t>()] = eval->get<double>();
  }
  return Status::ok();
}

/// Waits for gnuplot (`pid`) at most kGnuplotTimeout, then kills it.
static Status waitForGnuplot(pid_t pid, const std::string &pngPath, int &status) {
  auto deadline = std::chrono::steady_clock::now() + kGnuplotTimeout;
  bool timedOut = false;
  for (;;) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid)
      break;
    if (r < 0 && errno != EINTR)
      return Status::error(fmt::format("waiting for gnuplot failed: {}",
                                       std::strerror(errno)));
    if (!timedOut && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      timedOut = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timedOut)
    return Status::error(fmt::format(
        "gnuplot did not finish the loss plot {} within {} s", pngPath,
        kGnuplotTimeout.count()));
  return Status::ok();
}

Status plotLossCurve(const std::string &metricsJsonl,
                     const std::string &pngPath, std::string &warning) {
  warning.clear();

  // 1. The points.
  std::map<int64_t, double> byStep, byStepEval;
  XLNETC_RETURN_IF_ERROR(readLossPoints(metricsJsonl, byStep, byStepEval));
  std::vector<std::pair<int64_t, double>> points(byStep.begin(), byStep.end());
  std::vector<std::pair<int64_t, double>> evals(byStepEval.begin(), byStepEval.end());
  if (points.empty()) {
    warning = fmt::format("no loss values in {}; skipped the loss plot {}",
                          metricsJsonl, pngPath);
    return Status::ok();
  }

  // 2. gnuplot.
  std::string gnuplot = findExecutable("gnuplot");
  if (gnuplot.empty()) {
    warning = fmt::format("gnuplot is not installed: skipped the loss plot {} "
                          "({})",
                          pngPath, kInstallHint);
    return Status::ok();
  }

  FilePtr script(std::tmpfile()), errors(std::tmpfile());
  if (!script || !errors)
    return Status::error(fmt::format(
        "cannot create a temporary file for gnuplot: {}", std::strerror(errno)));
  std::string text = buildScript(points, evals);
  if (std::fwrite(text.data(), 1, text.size(), script.get()) != text.size() ||
      std::fflush(script.get()) != 0)
    return Status::error(fmt::format(
        "cannot write the gnuplot script: {}", std::strerror(errno)));
  std::rewind(script.get());

  AtomicFile png;
  if (Status s = png.open(pngPath); !s)
    return Status::error("cannot write the loss plot: " + s.message());

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fileno(script.get()), 0);
  posix_spawn_file_actions_adddup2(&actions, png.fd(), 1);
  posix_spawn_file_actions_adddup2(&actions, fileno(errors.get()), 2);
  std::string arg0 = "gnuplot";
  char *argv[] = {arg0.data(), nullptr};
  pid_t pid = -1;
  int rc = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    return Status::error(fmt::format("cannot run {}: {}", gnuplot,
                                     std::strerror(rc)));

  int status = 0;
  XLNETC_RETURN_IF_ERROR(waitForGnuplot(pid, pngPath, status));
  std::string stderrText = slurp(errors.get());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::error(fmt::format(
        "gnuplot failed ({}) drawing the loss plot {}: {}",
        WIFEXITED(status) ? fmt::format("exit status {}", WEXITSTATUS(status))
                          : fmt::format("signal {}", WTERMSIG(status)),
        pngPath, errorExcerpt(stderrText)));

  // 3. Check what it wrote before it replaces the target.
  unsigned char sig[8] = {0};
  int rfd = ::open(png.tempPath().c_str(), O_RDONLY | O_CLOEXEC);
  ssize_t got = rfd >= 0 ? ::pread(rfd, sig, 8, 0) : -1;
  if (rfd >= 0)
    ::close(rfd);
  static const unsigned char kPngSignature[8] = {0x89, 'P',  'N',  'G',
                                                 '\r', '\n', 0x1a, '\n'};
  if (got != 8 || std::memcmp(sig, kPngSignature, 8) != 0)
    return Status::error(fmt::format(
        "gnuplot wrote no PNG for the loss plot {}: {}", pngPath,
        errorExcerpt(stderrText)));
  if (Status s = png.commit(); !s)
    return Status::error("cannot write the loss plot: " + s.message());
  return Status::ok();
}

} // namespace xlnetc::rt::train
