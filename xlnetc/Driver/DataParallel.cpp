//===- DataParallel.cpp - How `xlnetc train` splits a batch over ranks ----===//

#include "xlnetc/Driver/DataParallel.h"

#include <fmt/format.h>

#include <cstring>

namespace xlnetc {

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

/// Every rank's `hash` (all-gather); `differs` is the first rank whose hash
/// is not rank 0's (0: none), `all` every rank's.
rt::Status compareHashes(rt::dist::Transport &world, uint64_t hash, int &differs,
                         std::vector<uint64_t> &all) {
  all.assign(size_t(world.size()), 0);
  XLNETC_RETURN_IF_ERROR(world.allGatherBytes(&hash, sizeof hash, all.data()));
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
  XLNETC_RETURN_IF_ERROR(compareHashes(world, hash, r, all));
  if (r == 0)
    return rt::Status::ok();
  return rt::Status::error(fmt::format(
      "after step {} the parameters of rank {} differ from rank 0's (hash {:016x} vs "
      "{:016x}): the ranks no longer train one model; stopping",
      step, r, all[size_t(r)], all[0]));
}

/// Every rank's `mine` must be rank 0's: otherwise "the processes do not
/// <what>: rank R's differs from rank 0's (this is rank X: <mine>); <hint>".
static rt::Status checkSame(rt::dist::Transport &world, const std::string &mine,
                            const char *what, const char *hint) {
  int r = 0;
  std::vector<uint64_t> all;
  XLNETC_RETURN_IF_ERROR(compareHashes(world, fnv1a(mine.data(), mine.size()), r, all));
  if (r == 0)
    return rt::Status::ok();
  return rt::Status::error(fmt::format(
      "the processes do not {}: rank {}'s differs from rank 0's (this is rank {}: {}); {}",
      what, r, world.rank(), mine, hint));
}

rt::Status checkSameSetup(rt::dist::Transport &world, const std::string &setup) {
  return checkSame(world, setup, "run the same step",
                   "check --device (auto picks per process) and that every process has the "
                   "same spec and bundle");
}

rt::Status checkSameStart(rt::dist::Transport &world, const std::string &start) {
  return checkSame(world, start, "start from the same data and state",
                   "every process must read the same corpus and tokenizer and, with "
                   "--resume, the same checkpoint (on several nodes, --out on a file system "
                   "they share)");
}

rt::Status gatherDoubles(rt::dist::Transport &world, double value, std::vector<double> &out) {
  out.assign(size_t(world.size()), 0.0);
  return world.allGatherBytes(&value, sizeof value, out.data());
}

} // namespace xlnetc
