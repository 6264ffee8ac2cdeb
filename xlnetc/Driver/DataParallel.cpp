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
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < localBatch; ++j)
      std::memcpy(out.bytes() + (o * localBatch + j) * rowBytes,
                  t.bytes() + (o * globalBatch + globalRow(j)) * rowBytes, size_t(rowBytes));
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
    const auto *block = reinterpret_cast<const uint8_t *>(all.data() + n * r);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < localBatch; ++j)
        std::memcpy(global.bytes() + (o * globalBatch + other.globalRow(j)) * rowBytes,
                    block + (o * localBatch + j) * rowBytes, size_t(rowBytes));
  }
  return rt::Status::ok();
}

uint64_t hashTensors(const rt::TensorMap &tensors) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const auto &[name, t] : tensors) {
    for (char c : name)
      h = (h ^ uint8_t(c)) * 0x100000001b3ull;
    const uint8_t *p = t.bytes();
    for (size_t i = 0; i < t.nbytes(); ++i)
      h = (h ^ p[i]) * 0x100000001b3ull;
  }
  return h;
}

rt::Status checkSameOnEveryRank(rt::dist::Transport &world, uint64_t hash, int64_t step) {
  std::vector<uint64_t> all(size_t(world.size()));
  XLNETC_RETURN_IF_ERROR(world.allGatherBytes(&hash, sizeof hash, all.data()));
  for (int r = 1; r < world.size(); ++r)
    if (all[size_t(r)] != all[0])
      return rt::Status::error(fmt::format(
          "after step {} the parameters of rank {} differ from rank 0's (hash {:016x} vs "
          "{:016x}): the ranks no longer train one model; stopping",
          step, r, all[size_t(r)], all[0]));
  return rt::Status::ok();
}

rt::Status checkSameSetup(rt::dist::Transport &world, const std::string &setup) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : setup)
    h = (h ^ uint8_t(c)) * 0x100000001b3ull;
  std::vector<uint64_t> all(size_t(world.size()));
  XLNETC_RETURN_IF_ERROR(world.allGatherBytes(&h, sizeof h, all.data()));
  for (int r = 1; r < world.size(); ++r)
    if (all[size_t(r)] != all[0])
      return rt::Status::error(fmt::format(
          "the processes do not run the same step: rank {}'s differs from rank 0's (this is "
          "rank {}: {}); check --device (auto picks per process) and that every process "
          "has the same spec and bundle",
          r, world.rank(), setup));
  return rt::Status::ok();
}

rt::Status gatherDoubles(rt::dist::Transport &world, double value, std::vector<double> &out) {
  out.assign(size_t(world.size()), 0.0);
  return world.allGatherBytes(&value, sizeof value, out.data());
}

} // namespace xlnetc
