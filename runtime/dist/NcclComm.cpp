//===- NcclComm.cpp - The gradient all-reduce on GPUs ---------------------===//

#include "runtime/dist/NcclComm.h"

#include <fmt/format.h>

namespace xlnetc::rt::dist {

Status NcclComm::create(Transport &world, std::unique_ptr<NcclComm> &out) {
  const cuda::Nccl *nccl = nullptr;
  // Every rank loads NCCL; a rank without it says so, and the job ends.
  XLNETC_RETURN_IF_ERROR(cuda::loadNccl(nccl).withPrefix("data parallel on GPUs: "));
  return join(*nccl, world, out);
}

Status NcclComm::join(const cuda::Nccl &nccl, Transport &world, std::unique_ptr<NcclComm> &out) {
  cuda::ncclUniqueId id{};
  if (world.rank() == 0)
    XLNETC_RETURN_IF_ERROR(
        cuda::checkNccl(nccl, nccl.ncclGetUniqueId(&id), "ncclGetUniqueId", "rank 0"));
  XLNETC_RETURN_IF_ERROR(world.broadcast(&id, sizeof id, 0));
  std::unique_ptr<NcclComm> comm(new NcclComm);
  comm->nccl_ = &nccl;
  XLNETC_RETURN_IF_ERROR(cuda::checkNccl(
      nccl, nccl.ncclCommInitRank(&comm->comm_, world.size(), id, world.rank()),
      "ncclCommInitRank", fmt::format("rank {} of {}", world.rank(), world.size())));
  out = std::move(comm);
  return Status::ok();
}

NcclComm::~NcclComm() {
  if (comm_)
    (finished_ ? nccl_->ncclCommDestroy : nccl_->ncclCommAbort)(comm_);
}

Status NcclComm::allReduceWeighted(const std::vector<std::pair<uint64_t, int64_t>> &buffers,
                                   float weight, void *stream, const std::string &where) {
  cuda::ncclRedOp_t op = cuda::ncclSum;
  XLNETC_RETURN_IF_ERROR(cuda::checkNccl(
      *nccl_,
      nccl_->ncclRedOpCreatePreMulSum(&op, &weight, cuda::ncclFloat32,
                                      cuda::ncclScalarHostImmediate, comm_),
      "ncclRedOpCreatePreMulSum", where));
  Status status = cuda::checkNccl(*nccl_, nccl_->ncclGroupStart(), "ncclGroupStart", where);
  for (const auto &[address, floats] : buffers) {
    if (!status)
      break;
    auto *data = reinterpret_cast<void *>(address);
    status = cuda::checkNccl(*nccl_,
                             nccl_->ncclAllReduce(data, data, size_t(floats), cuda::ncclFloat32,
                                                  op, comm_,
                                                  static_cast<cuda::cudaStream_t>(stream)),
                             "ncclAllReduce", where);
  }
  // The group ends even after an error, so NCCL's state stays consistent.
  Status ended = cuda::checkNccl(*nccl_, nccl_->ncclGroupEnd(), "ncclGroupEnd", where);
  nccl_->ncclRedOpDestroy(op, comm_); // after the group: the op is enqueued
  XLNETC_RETURN_IF_ERROR(status);
  return ended;
}

} // namespace xlnetc::rt::dist
