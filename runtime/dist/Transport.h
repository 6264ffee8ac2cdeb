//===- Transport.h - The processes of a data-parallel run ------*- C++ -*-===//
//
// What `xlnetc train` needs from the launcher's processes (docs/Distributed.md):
// its rank and the world's size, and a few blocking collectives on bytes and
// floats. One process alone is a world of size 1 (no MPI involved). Under
// mpirun or srun the transport is MPI, reached through the plugin
// libxlnetc-mpi.so (runtime/dist/MpiPlugin.cpp), which alone links libmpi:
// xlnetc and xlnetc-run load it with dlopen, so they still run on machines
// without MPI.
//
// The collectives are the MPI ones the deterministic all-reduce
// (GradReducer.h) is built from; every rank must call them in the same
// order. Errors inside MPI end the whole job (MPI's default error handler),
// so a rank that dies never leaves the others waiting.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_TRANSPORT_H
#define XLNETC_RUNTIME_DIST_TRANSPORT_H

#include "runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace xlnetc::rt::dist {

class Transport {
public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "MPI (Open MPI 4.1.4), 2 processes" / "one process".
  virtual std::string description() const = 0;

  /// Every rank sends send[sendOffset[r], + sendCount[r]) to rank r and
  /// receives rank r's piece at recv[recvOffset[r], + recvCount[r]) (floats).
  virtual Status allToAll(const float *send, const std::vector<int64_t> &sendCount,
                          const std::vector<int64_t> &sendOffset, float *recv,
                          const std::vector<int64_t> &recvCount,
                          const std::vector<int64_t> &recvOffset) = 0;
  /// Every rank contributes count[rank()] floats; everyone receives all of
  /// them, rank r's at recv[offset[r]].
  virtual Status allGather(const float *send, const std::vector<int64_t> &count,
                           const std::vector<int64_t> &offset, float *recv) = 0;
  /// Every rank contributes `bytes` bytes; recv holds size() × bytes, by rank.
  virtual Status allGatherBytes(const void *send, int64_t bytes, void *recv) = 0;
  /// Rank `root`'s bytes to every rank.
  virtual Status broadcast(void *data, int64_t bytes, int root) = 0;
  /// Ends every process of the job with `code` (a rank that cannot go on
  /// must not leave the others waiting in a collective).
  virtual void abort(int code) = 0;
  /// A collective that waits longer than this for the other ranks (one that
  /// hangs rather than dies) ends this process with one line and exit code
  /// 1; the launcher then ends the job. 0 (or more than a year): wait
  /// forever, the default.
  virtual void setTimeout(double seconds) { (void)seconds; }
  /// A wait for the other ranks outside the collectives above (joining
  /// NCCL, a GPU step whose all-reduce needs every rank), `what` naming it
  /// ("joining NCCL"): timed as a collective is, until endWait(). Nested
  /// waits keep the outer deadline. `what` must be a string literal (the
  /// watchdog may print it at any time).
  virtual void beginWait(const char *what) { (void)what; }
  virtual void endWait() {}
};

/// beginWait for a scope.
class WaitingForRanks {
public:
  WaitingForRanks(Transport &world, const char *what) : world_(world) { world.beginWait(what); }
  ~WaitingForRanks() { world_.endWait(); }
  WaitingForRanks(const WaitingForRanks &) = delete;
  WaitingForRanks &operator=(const WaitingForRanks &) = delete;

private:
  Transport &world_;
};

/// The world of this process: MPI when a launcher started it (Open MPI's
/// mpirun, or srun / MPICH through PMI or PMIx) with more than one process,
/// else one process. An MPI launch without the plugin or libmpi is an error
/// saying what is missing.
Status openTransport(std::unique_ptr<Transport> &out);

/// Every rank's device (`device`: Device::physicalId, with this node's
/// name) must be its own: an error, on every rank, naming the first two
/// ranks that share one (two NCCL ranks cannot share a GPU). An empty
/// `device` (host, emu) is not compared.
Status checkOwnDevices(Transport &world, const std::string &device);

/// A world of one process (every collective copies).
std::unique_ptr<Transport> singleProcess();

/// This process's rank among those on its node (OMPI_COMM_WORLD_LOCAL_RANK,
/// MPI_LOCALRANKID, SLURM_LOCALID; none: 0): which GPU it takes.
int launcherLocalRank();

/// How many processes of the job run on this node (OMPI_COMM_WORLD_LOCAL_SIZE,
/// MPI_LOCALNRANKS; none: 1).
int launcherLocalSize();

/// The world size a launcher announced in the environment (OMPI_COMM_WORLD_SIZE,
/// PMI_SIZE, MV2_COMM_WORLD_SIZE; inside srun SLURM_NTASKS; none: 1), before
/// any MPI call.
int launcherWorldSize();

} // namespace xlnetc::rt::dist

#endif // XLNETC_RUNTIME_DIST_TRANSPORT_H
