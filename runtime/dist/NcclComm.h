//===- NcclComm.h - The gradient all-reduce on GPUs ------------*- C++ -*-===//
//
// A data-parallel run on `--device cuda` all-reduces the gradients with NCCL
// (loaded with dlopen like the rest of CUDA, runtime/device/CudaApi.h),
// directly in device memory. The communicator is bootstrapped through the
// MPI transport: rank 0 makes the unique id, every rank receives it, each
// joins with its own GPU (its CUDA context current). A bucket is one NCCL
// group of in-place all-reduces on the device's side stream with the
// PreMulSum operator, so rank r's gradients are multiplied by its weight w_r
// before the sum (GradReducer.h); NCCL gives every rank the same bits.
//
// Built and tested without a GPU up to loading NCCL and making the id, and
// with a fake NCCL (join) for the calls a bucket makes; the all-reduce
// itself has not run on a GPU yet (docs/Distributed.md).
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_NCCLCOMM_H
#define XLNETC_RUNTIME_DIST_NCCLCOMM_H

#include "runtime/device/CudaApi.h"
#include "runtime/dist/Transport.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt::dist {

class NcclComm {
public:
  /// Loads NCCL and joins every rank of `world` (a collective: all ranks
  /// call it).
  static Status create(Transport &world, std::unique_ptr<NcclComm> &out);
  /// Joins with the entry points of `nccl` (which must outlive the
  /// communicator; a fake one in tests): rank 0's unique id, broadcast
  /// through `world`, then ncclCommInitRank.
  static Status join(const cuda::Nccl &nccl, Transport &world, std::unique_ptr<NcclComm> &out);
  ~NcclComm();
  NcclComm(const NcclComm &) = delete;
  NcclComm &operator=(const NcclComm &) = delete;

  /// The run ended well: the destructor destroys the communicator, waiting
  /// for its work. Otherwise it aborts it (ncclCommAbort), so a rank that
  /// fails never blocks on an all-reduce the others will not join.
  void finished() { finished_ = true; }

  /// One bucket, in place, ordered on `stream`: every (device address,
  /// floats) buffer becomes Σ_r w_r · buffer_r, `weight` this rank's w_r.
  Status allReduceWeighted(const std::vector<std::pair<uint64_t, int64_t>> &buffers,
                           float weight, void *stream, const std::string &where);

private:
  NcclComm() = default;
  const cuda::Nccl *nccl_ = nullptr;
  cuda::ncclComm_t comm_ = nullptr;
  bool finished_ = false;
};

} // namespace xlnetc::rt::dist

#endif // XLNETC_RUNTIME_DIST_NCCLCOMM_H
