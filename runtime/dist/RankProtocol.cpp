//===- RankProtocol.cpp - A data-parallel run's rows and exchanges ------===//

#include "runtime/dist/RankProtocol.h"

#include <fmt/format.h>

#include <cstring>

namespace xlnetc::rt::dist {

rt::Status RowSplit::make(int rank, int size, int64_t globalBatch, bool biData,
                          RowSplit &out) {
  const int64_t unit = biData ? 2 * int64_t(size) : int64_t(size);
  if (size < 1 || globalBatch % unit != 0)
    return rt::Status::error(fmt::format(
        "train_batch_size {} cannot be split over {} processes: each needs the same number "
        "of rows{} (train_batch_size a multiple of {})",
        globalBatch, size, biData ? ", an even number with bi_data" : "", unit));
  out = RowSplit{rank, size, globalBatch, globalBatch / size, biData};
  return rt::Status::ok();
}

int64_t RowSplit::globalRow(int64_t j) const {
  if (!biData)
    return rank * localBatch + j;
  const int64_t half = localBatch / 2;
  return j < half ? rank * half + j : globalBatch / 2 + rank * half + (j - half);
}

rt::host::DropoutRows dropoutRows(const RowSplit &rank, const RowSplit &part) {
  auto global = [&](int64_t j) { return rank.globalRow(part.globalRow(j)); };
  rt::host::DropoutRows rows;
  rows.base0 = global(0);
  if (part.biData) { // a forward half and its backward copy, each contiguous
    rows.half = part.localBatch / 2;
    rows.base1 = global(rows.half);
  }
  return rows;
}

namespace {

/// Bytes of one row of `t` along `dim`, and how many blocks precede it.
void rowGeometry(const rt::Tensor &t, int dim, int64_t &outer, int64_t &rowBytes) {
  outer = 1;
  for (int d = 0; d < dim; ++d)
    outer *= t.shape[size_t(d)];
  rowBytes = int64_t(rt::dtypeSize(t.dtype));
  for (size_t d = size_t(dim) + 1; d < t.shape.size(); ++d)
    rowBytes *= t.shape[d];
}

} // namespace

rt::Status RowSplit::slice(const rt::Tensor &t, int dim, rt::Tensor &out) const {
  if (int64_t(t.shape.size()) <= dim || t.shape[size_t(dim)] != globalBatch)
    return rt::Status::error(fmt::format("a batch tensor of shape {} has no dimension {} of "
                                         "the batch's {} rows",
                                         rt::shapeStr(t.shape), dim, globalBatch));
  std::vector<int64_t> shape = t.shape;
  shape[size_t(dim)] = localBatch;
  out = rt::Tensor::zeros(t.dtype, shape);
  int64_t outer = 0, rowBytes = 0;
  rowGeometry(t, dim, outer, rowBytes);
  copyRows(t.bytes(), out.bytes(), outer, rowBytes, /*toGlobal=*/false);
  return rt::Status::ok();
}

rt::Status RowSplit::place(const rt::Tensor &local, int dim, rt::Tensor &global) const {
  if (local.dtype != global.dtype || int64_t(local.shape.size()) <= dim ||
      local.shape.size() != global.shape.size() || local.shape[size_t(dim)] != localBatch ||
      global.shape[size_t(dim)] != globalBatch)
    return rt::Status::error(fmt::format("cannot put rows of shape {} back into a batch of "
                                         "shape {}",
                                         rt::shapeStr(local.shape), rt::shapeStr(global.shape)));
  int64_t outer = 0, rowBytes = 0;
  rowGeometry(local, dim, outer, rowBytes);
  copyRows(local.bytes(), global.bytes(), outer, rowBytes, /*toGlobal=*/true);
  return rt::Status::ok();
}

rt::Status RowSplit::gather(rt::dist::Transport &world, const rt::Tensor &local, int dim,
                            rt::Tensor &global) const {
  if (local.dtype != rt::DType::F32 || int64_t(local.shape.size()) <= dim ||
      local.shape[size_t(dim)] != localBatch)
    return rt::Status::error("internal error: gathering a tensor that is not this rank's "
                             "f32 rows");
  const int64_t n = local.numel();
  std::vector<float> all(size_t(n * size));
  std::vector<int64_t> count(static_cast<size_t>(size), n), offset(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    offset[size_t(r)] = n * r;
  XLNETC_RETURN_IF_ERROR(world.allGather(local.f32(), count, offset, all.data()));
  std::vector<int64_t> shape = local.shape;
  shape[size_t(dim)] = globalBatch;
  global = rt::Tensor::zeros(rt::DType::F32, shape);
  int64_t outer = 0, rowBytes = 0;
  rowGeometry(local, dim, outer, rowBytes);
  for (int r = 0; r < size; ++r) {
    RowSplit other = *this;
    other.rank = r;
    other.copyRows(reinterpret_cast<const uint8_t *>(all.data() + n * r), global.bytes(),
                   outer, rowBytes, /*toGlobal=*/true);
  }
  return rt::Status::ok();
}

void RowSplit::copyRows(const uint8_t *from, uint8_t *to, int64_t outer, int64_t rowBytes,
                        bool toGlobal) const {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < localBatch; ++j) {
      const int64_t local = (o * localBatch + j) * rowBytes;
      const int64_t global = (o * globalBatch + globalRow(j)) * rowBytes;
      std::memcpy(to + (toGlobal ? global : local), from + (toGlobal ? local : global),
                  size_t(rowBytes));
    }
}

namespace {

/// FNV-1a over `n` bytes, continuing from `h`.
uint64_t fnv1a(const void *data, size_t n, uint64_t h = 0xcbf29ce484222325ull) {
  const auto *p = static_cast<const uint8_t *>(data);
  for (size_t i = 0; i < n; ++i)
    h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

/// Every rank's `hash` (a tagged exchange); `differs` is the first rank
/// whose hash is not rank 0's (0: none), `all` every rank's.
rt::Status compareHashes(rt::dist::Transport &world, Exchange what, uint64_t hash, int &differs,
                         std::vector<uint64_t> &all) {
  XLNETC_RETURN_IF_ERROR(exchange64(world, what, hash, all));
  differs = 0;
  for (int r = 1; r < world.size() && !differs; ++r)
    if (all[size_t(r)] != all[0])
      differs = r;
  return rt::Status::ok();
}

} // namespace

uint64_t hashTensors(const rt::TensorMap &tensors) {
  uint64_t h = fnv1a(nullptr, 0);
  for (const auto &[name, t] : tensors)
    h = fnv1a(t.bytes(), t.nbytes(), fnv1a(name.data(), name.size(), h));
  return h;
}

rt::Status checkSameOnEveryRank(rt::dist::Transport &world, uint64_t hash, int64_t step) {
  int r = 0;
  std::vector<uint64_t> all;
  XLNETC_RETURN_IF_ERROR(compareHashes(world, Exchange::ParameterCheck, hash, r, all));
  if (r == 0)
    return rt::Status::ok();
  return rt::Status::error(fmt::format(
      "after step {} the parameters of rank {} differ from rank 0's (hash {:016x} vs "
      "{:016x}): the ranks no longer train one model; stopping",
      step, r, all[size_t(r)], all[0]));
}

/// Every rank's `mine` must be rank 0's: otherwise "the processes do not
/// <what>: rank R's differs from rank 0's (this is rank X: <mine>); <hint>".
static rt::Status checkSame(rt::dist::Transport &world, Exchange exchange,
                            const std::string &mine, const char *what, const char *hint) {
  int r = 0;
  std::vector<uint64_t> all;
  XLNETC_RETURN_IF_ERROR(
      compareHashes(world, exchange, fnv1a(mine.data(), mine.size()), r, all));
  if (r == 0)
    return rt::Status::ok();
  return rt::Status::error(fmt::format(
      "the processes do not {}: rank {}'s differs from rank 0's (this is rank {}: {}); {}",
      what, r, world.rank(), mine, hint));
}

rt::Status checkSameSetup(rt::dist::Transport &world, const std::string &setup) {
  return checkSame(world, Exchange::Setup, setup, "run the same step",
                   "check --device (auto picks per process) and that every process has the "
                   "same spec and bundle");
}

rt::Status checkSameStart(rt::dist::Transport &world, const std::string &start) {
  return checkSame(world, Exchange::Start, start, "start from the same data and state",
                   "every process must read the same corpus and tokenizer and, with "
                   "--resume, the same checkpoint (on several nodes, --out on a file system "
                   "they share)");
}

rt::Status gatherDoubles(rt::dist::Transport &world, Exchange what, double value,
                         std::vector<double> &out) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  std::vector<uint64_t> all;
  XLNETC_RETURN_IF_ERROR(exchange64(world, what, bits, all));
  out.assign(all.size(), 0.0);
  for (size_t r = 0; r < all.size(); ++r)
    std::memcpy(&out[r], &all[r], sizeof bits);
  return rt::Status::ok();
}

const char *exchangeName(Exchange what) {
  switch (what) {
  case Exchange::Settings:
    return "the settings check";
  case Exchange::Setup:
    return "the step check";
  case Exchange::Start:
    return "the start check";
  case Exchange::TokenCounts:
    return "the token-count exchange";
  case Exchange::Loss:
    return "the loss exchange";
  case Exchange::Stop:
    return "the stop exchange";
  case Exchange::StopCheckpoint:
    return "the stop's checkpoint exchange";
  case Exchange::ParameterCheck:
    return "the parameter check";
  case Exchange::EvalLoss:
    return "the held-out loss exchange";
  case Exchange::EvalTokens:
    return "the held-out token-count exchange";
  }
  return "an unknown exchange";
}

rt::Status exchange64(rt::dist::Transport &world, Exchange what, uint64_t value,
                      std::vector<uint64_t> &out) {
  // Every rank counts its exchanges; ranks in step are at the same count
  // in the same exchange.
  static uint64_t count = 0;
  const uint64_t mine[3] = {uint64_t(what), ++count, value};
  std::vector<uint64_t> all(3 * size_t(world.size()));
  XLNETC_RETURN_IF_ERROR(world.allGatherBytes(mine, sizeof mine, all.data())
                             .withPrefix(fmt::format("{} (exchange {}): ",
                                                     exchangeName(what), count)));
  for (int r = 1; r < world.size(); ++r) {
    const uint64_t *theirs = &all[3 * size_t(r)];
    if (theirs[0] != all[0] || theirs[1] != all[1])
      return rt::Status::error(fmt::format(
          "the processes are out of step: rank 0 is in {} (exchange {}) but rank {} in {} "
          "(exchange {}); every process must run the same steps with the same settings",
          exchangeName(Exchange(all[0])), all[1], r, exchangeName(Exchange(theirs[0])),
          theirs[1]));
  }
  out.resize(size_t(world.size()));
  for (int r = 0; r < world.size(); ++r)
    out[size_t(r)] = all[3 * size_t(r) + 2];
  return rt::Status::ok();
}

rt::Status checkSameSettings(rt::dist::Transport &world,
                             const std::vector<std::pair<std::string, std::string>> &settings) {
  std::string mine;
  for (const auto &[key, value] : settings)
    mine += key + "=" + value + "\n";
  int r = 0;
  std::vector<uint64_t> all;
  XLNETC_RETURN_IF_ERROR(
      compareHashes(world, Exchange::Settings, fnv1a(mine.data(), mine.size()), r, all));
  if (r == 0)
    return rt::Status::ok();
  // Rank 0's and rank r's settings to every rank, which name the first key
  // whose values differ, all alike.
  auto fetch = [&](int root, std::string &text) -> rt::Status {
    int64_t size = int64_t(mine.size());
    XLNETC_RETURN_IF_ERROR(world.broadcast(&size, sizeof size, root));
    text = world.rank() == root ? mine : std::string(size_t(size), '\0');
    return world.broadcast(text.data(), size, root);
  };
  std::string first, other;
  XLNETC_RETURN_IF_ERROR(fetch(0, first).withPrefix("the settings check: "));
  XLNETC_RETURN_IF_ERROR(fetch(r, other).withPrefix("the settings check: "));
  auto parse = [](const std::string &text) {
    std::vector<std::pair<std::string, std::string>> out;
    size_t begin = 0;
    while (begin < text.size()) {
      size_t end = text.find('\n', begin), eq = text.find('=', begin);
      out.emplace_back(text.substr(begin, eq - begin), text.substr(eq + 1, end - eq - 1));
      begin = end + 1;
    }
    return out;
  };
  const auto a = parse(first), b = parse(other);
  std::string key = "?", va = "(none)", vb = "(none)";
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const bool hasA = i < a.size(), hasB = i < b.size();
    if (hasA && hasB && a[i] == b[i])
      continue;
    key = hasA ? a[i].first : b[i].first;
    for (const auto &[k, v] : a)
      if (k == key)
        va = v;
    for (const auto &[k, v] : b)
      if (k == key)
        vb = v;
    break;
  }
  return rt::Status::error(fmt::format(
      "the processes do not run with the same settings: {} is {} on rank 0 but {} on rank {}; "
      "start every process with the same spec and flags",
      key, va, vb, r));
}

} // namespace xlnetc::rt::dist
