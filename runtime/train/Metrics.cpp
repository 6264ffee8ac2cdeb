//===- Metrics.cpp - Training metrics log and progress line ---------------===//

#include "runtime/train/Metrics.h"

#include "runtime/train/AtomicFile.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace xlnetc::rt::train {

double perplexity(double loss) { return std::exp(loss); }

double bitsPerToken(double loss) { return loss / std::log(2.0); }

std::string metricsJsonLine(const StepMetrics &m) {
  nlohmann::ordered_json j;
  j["step"] = m.step;
  j["loss"] = m.loss;
  j["ppl"] = perplexity(m.loss);
  j["bits_per_token"] = bitsPerToken(m.loss);
  j["lr"] = m.lr;
  j["grad_norm"] = m.gradNorm;
  j["tokens_per_s"] = m.tokensPerSec;
  j["elapsed_s"] = m.elapsedSec;
  return j.dump(); // non-finite numbers become null
}

std::string overrideJsonLine(const SettingOverride &o) {
  // A TOML integer, float, boolean or basic string reads as the same JSON
  // value; anything else (inf, nan) stays its TOML text.
  auto value = [](const std::string &toml) {
    nlohmann::ordered_json v = nlohmann::ordered_json::parse(toml, nullptr, false);
    return v.is_discarded() ? nlohmann::ordered_json(toml) : v;
  };
  nlohmann::ordered_json j;
  j["step"] = o.step;
  j["event"] = "override";
  j["key"] = o.key;
  j["old"] = value(o.oldValue);
  j["new"] = value(o.newValue);
  return j.dump();
}

std::string evalJsonLine(const EvalMetrics &m) {
  nlohmann::ordered_json j;
  j["step"] = m.step;
  j["event"] = "eval";
  j["eval_loss"] = m.loss;
  j["eval_ppl"] = perplexity(m.loss);
  j["eval_bits_per_token"] = bitsPerToken(m.loss);
  j["eval_tokens"] = m.tokens;
  j["eval_batches"] = m.batches;
  j["eval_s"] = m.seconds;
  return j.dump(); // non-finite numbers become null
}

std::string formatEval(const EvalMetrics &m) {
  return fmt::format("eval after step {}: loss {:.4f}, ppl {:.2f}, {:.3f} bits/token ({} "
                     "batch{}, {:.0f} predicted tokens, {:.1f} s)",
                     m.step, m.loss, perplexity(m.loss), bitsPerToken(m.loss), m.batches,
                     m.batches == 1 ? "" : "es", m.tokens, m.seconds);
}

MetricsWriter::~MetricsWriter() { close(); }

void MetricsWriter::close() {
  if (file_) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

Status MetricsWriter::open(const std::string &path,
                           std::optional<int64_t> resumeStep) {
  close();
  path_ = path;
  dropped_ = 0;
  // Never through (or over) a symbolic link: its target keeps its bytes.
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
    return Status::error(fmt::format("cannot open metrics file {}: it is a symbolic link, "
                                     "which xlnetc does not write through",
                                     path));
  if (resumeStep) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::vector<std::string> kept;
      std::string line;
      bool rewrite = false;
      while (std::getline(in, line)) {
        bool complete = !in.eof(); // the last line lacks its newline
        auto j = nlohmann::json::parse(line, nullptr, false);
        auto step = j.is_object() ? j.find("step") : j.end();
        if (complete && step != j.end() && step->is_number_integer() &&
            step->get<int64_t>() <= *resumeStep) {
          kept.push_back(line);
        } else {
          ++dropped_;
          rewrite = true;
        }
      }
      in.close();
      if (rewrite) {
        AtomicFile out;
        XLNETC_RETURN_IF_ERROR(out.open(path));
        for (const std::string &l : kept) {
          XLNETC_RETURN_IF_ERROR(out.write(l.data(), l.size()));
          XLNETC_RETURN_IF_ERROR(out.write("\n", 1));
        }
        XLNETC_RETURN_IF_ERROR(out.commit());
      }
    }
  }
  // Never through a symbolic link (O_NOFOLLOW: a link there is an error,
  // its target untouched).
  const int fd = ::open(path.c_str(),
                        O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC |
                            (resumeStep ? O_APPEND : O_TRUNC),
                        0666);
  if (fd >= 0 && !(file_ = ::fdopen(fd, resumeStep ? "ab" : "wb")))
    ::close(fd);
  if (file_)
    std::setvbuf(file_, nullptr, _IONBF, 0); // one write per line (see log)
  if (!file_)
    return Status::error(fmt::format("cannot open metrics file {}: {}", path,
                                     errno == ELOOP ? "it is a symbolic link, which xlnetc "
                                                      "does not write through"
                                                    : std::strerror(errno)));
  return Status::ok();
}

Status MetricsWriter::log(const StepMetrics &m) { return writeLine(metricsJsonLine(m)); }

Status MetricsWriter::logOverride(const SettingOverride &o) {
  return writeLine(overrideJsonLine(o));
}

Status MetricsWriter::logEval(const EvalMetrics &m) { return writeLine(evalJsonLine(m)); }

Status MetricsWriter::writeLine(const std::string &json) {
  if (!file_)
    return Status::error("metrics file is not open");
  const std::string line = json + "\n";
  const long before = std::ftell(file_);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() ||
      std::fflush(file_) != 0) {
    const int err = errno;
    // No partial line is left behind (a full disk): the file is cut back to
    // its last whole line, which a resume reads as before. The stream is
    // unbuffered (open), so nothing of this line is still pending.
    std::clearerr(file_);
    if (before >= 0 && ::ftruncate(::fileno(file_), before) == 0)
      std::fseek(file_, before, SEEK_SET);
    return Status::error(fmt::format("cannot write metrics file {}: {}", path_,
                                     std::strerror(err)));
  }
  return Status::ok();
}

std::string formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long long s = std::llround(seconds);
  if (s < 60)
    return fmt::format("{}s", s);
  if (s < 3600)
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
}

std::string formatTokensPerSec(double t) {
  if (!std::isfinite(t) || t < 0)
    return "? tok/s";
  if (t < 999.5)
    return fmt::format("{:.0f} tok/s", t);
  if (t < 999950)
    return fmt::format("{:.1f}k tok/s", t / 1e3);
  return fmt::format("{:.2f}M tok/s", t / 1e6);
}

double estimateEtaSec(int64_t stepsDoneThisRun, double elapsedSec,
                      int64_t stepsRemaining) {
  if (stepsRemaining <= 0)
    return 0;
  if (stepsDoneThisRun <= 0 || !(elapsedSec > 0) || !std::isfinite(elapsedSec))
    return -1;
  return elapsedSec / double(stepsDoneThisRun) * double(stepsRemaining);
}

std::string formatProgress(const ProgressInfo &p) {
  double ppl = perplexity(p.loss);
  std::string pplText = std::isfinite(ppl) && ppl >= 1e5
                            ? fmt::format("{:.3g}", ppl)
                            : fmt::format("{:.1f}", ppl);
  return fmt::format(
      "step {}/{} | loss {:.4f} | ppl {} | bpt {:.2f} | lr {:.2e} | gnorm "
      "{:.2f} | {} | ETA {}",
      p.step, p.totalSteps, p.loss, pplText, bitsPerToken(p.loss), p.lr,
      p.gradNorm, formatTokensPerSec(p.tokensPerSec), formatDuration(p.etaSec));
}

} // namespace xlnetc::rt::train
