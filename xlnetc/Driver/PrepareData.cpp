//===- PrepareData.cpp - `prepare-data`: tokenize corpora once ------------===//

#include "xlnetc/Driver/PrepareData.h"

#include "runtime/train/Metrics.h"

#include "xlnetc/Driver/Support.h"
#include "xlnetc/Spec/Spec.h"

#include "runtime/data/PreparedData.h"
#include "runtime/dist/Transport.h"

#include "xlnetc/Driver/Guard.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <iostream>

#include <unistd.h>

namespace xlnetc {

CLI::App *addPrepareDataCommand(CLI::App &app, PrepareDataArgs &a) {
  CLI::App *cmd = app.add_subcommand(
      "prepare-data", "Tokenize text corpora once, on every core (and every rank under "
                      "mpirun), into a directory that train --data memory-maps "
                      "(docs/DataPipeline.md \"Prepared data\")");
  cmd->add_option("inputs", a.inputs,
                  "Text files (plain, .gz or .zst, told by their content) or directories "
                  "(their files, sorted by path)")
      ->required();
  cmd->add_option("-o,--out", a.out, "The directory to write: new, empty, or an "
                                     "interrupted preparation of the same inputs (resumed)")
      ->required();
  cmd->add_option("--tokenizer", a.tokenizer,
                  "SentencePiece model (copied into the directory); default: train one on "
                  "the first --sample-mib of the inputs");
  cmd->add_option("--spec", a.spec,
                  "Take n_token (the trained tokenizer's vocabulary) and keep_accents from "
                  "this spec");
  cmd->add_option("--vocab-size", a.vocabSize, "A trained tokenizer's vocabulary")
      ->capture_default_str();
  cmd->add_option("--sample-mib", a.sampleMib, "A trained tokenizer's sample of the inputs")
      ->capture_default_str();
  cmd->add_flag("--keep-accents", a.keepAccents, "Keep accents (no NFKD stripping)");
  cmd->add_flag("--no-eod", a.noEod, "A blank line appends no <eod> (official use_eod=False)");
  cmd->add_option("--threads", a.threads, "Worker threads (0: every core)")
      ->capture_default_str();
  cmd->add_option("--unit-mib", a.unitMib,
                  "Plain files are cut into units of about this size, one shard each "
                  "(a compressed file is one unit)")
      ->capture_default_str();
  cmd->add_flag("--verify", a.verify,
                "Only check --out's shards and tokenizer against the SHA-256 its manifest "
                "records");
  return cmd;
}

namespace {

std::string mib(int64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20)); }

/// 950, 12.3k, 45.6M, 7.8G.
std::string count(int64_t n) {
  return n < 1000      ? std::to_string(n)
         : n < 1000000 ? fmt::format("{:.1f}k", double(n) / 1e3)
         : n < int64_t(1e9) ? fmt::format("{:.1f}M", double(n) / 1e6)
                            : fmt::format("{:.2f}G", double(n) / 1e9);
}

} // namespace

namespace {

int prepareOnRank(const PrepareDataArgs &a, rt::dist::Transport &world) {
  if (a.verify) {
    if (world.rank() != 0) // one reader is enough
      return 0;
    if (rt::Status st = rt::data::verifyPreparedData(a.out); !st)
      return fail(st.message());
    std::cout << fmt::format("{}: every shard and the tokenizer match the manifest's SHA-256\n",
                             a.out);
    return 0;
  }
  rt::data::PrepareOptions o;
  o.inputs = a.inputs;
  o.outDir = a.out;
  o.tokenizer = a.tokenizer;
  o.vocabSize = a.vocabSize;
  o.corpus.keepAccents = a.keepAccents;
  o.corpus.useEod = !a.noEod;
  if (!a.spec.empty()) {
    ModelSpec spec;
    std::string error;
    if (!loadSpec(a.spec, spec, error))
      return failDiagnostics(error);
    o.vocabSize = spec.nToken;
    o.corpus.keepAccents = o.corpus.keepAccents || spec.keepAccents;
  }
  if (a.threads < 0)
    return fail(fmt::format("--threads must be 0 (every core) or more, got {}", a.threads));
  if (!(a.unitMib >= 0.01 && a.unitMib <= 1e6) || !(a.sampleMib > 0 && a.sampleMib <= 1e6))
    return fail(fmt::format("--unit-mib must be in [0.01, 1e6] and --sample-mib in (0, 1e6], "
                            "got {} and {}",
                            a.unitMib, a.sampleMib));
  o.threads = a.threads;
  // Every core of the node, shared by its ranks.
  if (o.threads == 0 && world.size() > 1)
    o.threads = std::max(1, int(std::thread::hardware_concurrency()) /
                                std::max(1, rt::dist::launcherLocalSize()));
  const bool lead = world.rank() == 0;
  if (world.size() > 1) {
    o.rank = world.rank();
    o.ranks = world.size();
    o.allOk = [&world](bool ok) {
      std::vector<char> all(size_t(world.size()));
      const char mine = ok ? 1 : 0;
      if (!world.allGatherBytes(&mine, 1, all.data()))
        return false;
      return std::all_of(all.begin(), all.end(), [](char c) { return c != 0; });
    };
    o.allSame = [&world](uint64_t value) {
      std::vector<uint64_t> all(size_t(world.size()));
      if (!world.allGatherBytes(&value, sizeof value, all.data()))
        return false;
      return std::all_of(all.begin(), all.end(), [&](uint64_t v) { return v == all[0]; });
    };
    if (lead)
      std::cout << fmt::format("prepare-data: {}: the units dealt out in turn, each rank "
                               "on its cores; the progress is rank 0's share\n",
                               world.description())
                << std::flush;
  }
  if (const char *hook = std::getenv("XLNETC_FAULT_PREPARE_UNITS"))
    o.stopAfterUnits = std::atoll(hook); // a test hook: an interruption
  o.unitBytes = std::max<int64_t>(1, int64_t(a.unitMib * (1 << 20)));
  o.sampleBytes = std::max<int64_t>(1, int64_t(a.sampleMib * (1 << 20)));
  // A bar redrawn in place on a terminal, a line every 10 s otherwise.
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  double lastLine = -10;
  bool drawn = false;
  int64_t ranBytes = -1; // input bytes this run tokenized (its last report)
  int64_t resumedBytes = 0; // input bytes tokenized before this run
  o.progress = [&](const rt::data::PrepareProgress &p) {
    resumedBytes = p.bytesResumed;
    ranBytes = p.bytesDone - p.bytesResumed;
    if (!lead || (!tty && p.seconds - lastLine < 10 && p.unitsDone < p.unitsTotal))
      return;
    lastLine = p.seconds;
    // This run's rate: units done before it took none of its time.
    const double rate = p.seconds > 0 ? double(p.bytesDone - p.bytesResumed) / p.seconds : 0;
    const double eta = rate > 0 ? double(p.bytesTotal - p.bytesDone) / rate : 0;
    std::cerr << fmt::format("{}prepare-data: {} of {} ({:.0f}%), {} of {} units, {} "
                             "tokens, {:.1f} MB/s, ETA {}{}",
                             tty ? "\r" : "", mib(p.bytesDone), mib(p.bytesTotal),
                             p.bytesTotal ? 100.0 * double(p.bytesDone) / double(p.bytesTotal)
                                          : 100.0,
                             p.unitsDone, p.unitsTotal, count(p.tokens), rate / 1e6,
                             rt::train::formatDuration(eta), tty ? "\x1b[K" : "\n");
    drawn = tty;
  };
  o.note = [&](const std::string &text) {
    if (lead)
      std::cout << text << "\n" << std::flush;
  };
  const auto start = std::chrono::steady_clock::now();
  rt::data::PreparedCounts counts;
  rt::Status st = rt::data::prepareData(o, counts);
  if (drawn)
    std::cerr << "\n";
  if (!st)
    return fail(st.message());
  if (!lead)
    return 0;
  // Under mpirun every rank's units count: all but those done before.
  if (world.size() > 1 && ranBytes >= 0)
    ranBytes = counts.inputBytes - resumedBytes;
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << fmt::format(
      "prepared {} tokens ({} lines, {} documents) from {} of input into {}: {} shard{} of "
      "uint{} tokens, in {} ({:.1f} MB/s)\n",
      counts.tokens, counts.lines, counts.documents, mib(counts.inputBytes), a.out,
      counts.shards, counts.shards == 1 ? "" : "s", 8 * counts.tokenBytes, rt::train::formatDuration(secs),
      secs > 0 ? double(ranBytes >= 0 ? ranBytes : counts.inputBytes) / secs / 1e6 : 0.0);
  return 0;
}

} // namespace

int runPrepareData(const PrepareDataArgs &a) {
  std::unique_ptr<rt::dist::Transport> world;
  if (rt::Status st = rt::dist::openTransport(world); !st)
    return fail(st.message());
  if (world->size() == 1)
    return prepareOnRank(a, *world);
  // Every rank fails together (prepareData agrees at each stage); only an
  // exception, which the others cannot know of, ends the job.
  bool thrown = true;
  const int rc = runGuarded("xlnetc", [&] {
    const int r = prepareOnRank(a, *world);
    thrown = false;
    return r;
  });
  if (thrown)
    world->abort(rc);
  return rc;
}

} // namespace xlnetc
