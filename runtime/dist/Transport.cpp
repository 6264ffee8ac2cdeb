//===- Transport.cpp - One process, or MPI through its plugin -------------===//

#include "runtime/dist/Transport.h"

#include "runtime/io/PluginPath.h"

#include "runtime/dist/MpiPlugin.h"
#include "runtime/dist/Watchdog.h"

#include <fmt/format.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <map>
#include <unistd.h>

namespace xlnetc::rt::dist {

namespace {

/// A world of one: every collective is a copy.
class SingleProcess final : public Transport {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string description() const override { return "one process"; }
  Status allToAll(const float *send, const std::vector<int64_t> &sendCount,
                  const std::vector<int64_t> &sendOffset, float *recv,
                  const std::vector<int64_t> &, const std::vector<int64_t> &recvOffset) override {
    std::memcpy(recv + recvOffset[0], send + sendOffset[0], size_t(sendCount[0]) * sizeof(float));
    return Status::ok();
  }
  Status allGather(const float *send, const std::vector<int64_t> &count,
                   const std::vector<int64_t> &offset, float *recv) override {
    std::memmove(recv + offset[0], send, size_t(count[0]) * sizeof(float));
    return Status::ok();
  }
  Status allGatherBytes(const void *send, int64_t bytes, void *recv) override {
    std::memmove(recv, send, size_t(bytes));
    return Status::ok();
  }
  Status broadcast(void *, int64_t, int) override { return Status::ok(); }
  void abort(int) override {}
};

/// The plugin's functions.
struct MpiApi {
  int (*version)(void);
  int (*init)(int *, int *, char *, int);
  int (*alltoallv)(const float *, const int *, const int *, float *, const int *, const int *);
  int (*allgatherv)(const float *, int, float *, const int *, const int *);
  int (*allgatherBytes)(const void *, int, void *);
  int (*bcast)(void *, int, int);
  void (*abort)(int);
  int (*finalize)(void);
};

Status toInts(const std::vector<int64_t> &v, std::vector<int> &out, const char *what) {
  out.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] < 0 || v[i] > INT_MAX)
      return Status::error(fmt::format("{}: {} elements exceed one MPI transfer", what, v[i]));
    out[i] = int(v[i]);
  }
  return Status::ok();
}

Status mpiStatus(int rc, const char *what) {
  return rc == 0 ? Status::ok()
                 : Status::error(fmt::format("MPI {} failed (error code {})", what, rc));
}

class MpiTransport final : public Transport {
public:
  MpiTransport(void *handle, MpiApi api, int rank, int size, std::string library)
      : handle_(handle), api_(api), rank_(rank), size_(size), library_(std::move(library)),
        watchdog_(rank) {}
  ~MpiTransport() override { api_.finalize(); } // the handle stays: MPI may run atexit
  void setTimeout(double seconds) override { watchdog_.setTimeout(seconds); }
  void beginWait(const char *what) override { watchdog_.arm(what); }
  void endWait() override { watchdog_.disarm(); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string description() const override {
    return fmt::format("MPI ({}), {} processes", library_, size_);
  }
  Status allToAll(const float *send, const std::vector<int64_t> &sendCount,
                  const std::vector<int64_t> &sendOffset, float *recv,
                  const std::vector<int64_t> &recvCount,
                  const std::vector<int64_t> &recvOffset) override {
    std::vector<int> sc, so, rc, ro;
    XLNETC_RETURN_IF_ERROR(toInts(sendCount, sc, "all-to-all"));
    XLNETC_RETURN_IF_ERROR(toInts(sendOffset, so, "all-to-all"));
    XLNETC_RETURN_IF_ERROR(toInts(recvCount, rc, "all-to-all"));
    XLNETC_RETURN_IF_ERROR(toInts(recvOffset, ro, "all-to-all"));
    Armed armed(watchdog_, "MPI all-to-all");
    return mpiStatus(api_.alltoallv(send, sc.data(), so.data(), recv, rc.data(), ro.data()),
                     "all-to-all");
  }
  Status allGather(const float *send, const std::vector<int64_t> &count,
                   const std::vector<int64_t> &offset, float *recv) override {
    std::vector<int> c, o;
    XLNETC_RETURN_IF_ERROR(toInts(count, c, "all-gather"));
    XLNETC_RETURN_IF_ERROR(toInts(offset, o, "all-gather"));
    Armed armed(watchdog_, "MPI all-gather");
    return mpiStatus(api_.allgatherv(send, c[size_t(rank_)], recv, c.data(), o.data()),
                     "all-gather");
  }
  Status allGatherBytes(const void *send, int64_t bytes, void *recv) override {
    if (bytes > INT_MAX)
      return Status::error("all-gather: too many bytes for one MPI transfer");
    Armed armed(watchdog_, "MPI all-gather");
    return mpiStatus(api_.allgatherBytes(send, int(bytes), recv), "all-gather");
  }
  Status broadcast(void *data, int64_t bytes, int root) override {
    auto *p = static_cast<char *>(data);
    Armed armed(watchdog_, "MPI broadcast");
    for (int64_t done = 0; done < bytes;) { // in pieces of at most 1 GiB
      const int n = int(std::min<int64_t>(bytes - done, int64_t(1) << 30));
      XLNETC_RETURN_IF_ERROR(mpiStatus(api_.bcast(p + done, n, root), "broadcast"));
      done += n;
    }
    return Status::ok();
  }
  void abort(int code) override { api_.abort(code); }

private:
  /// The watchdog armed for one collective.
  struct Armed {
    Watchdog &w;
    Armed(Watchdog &w, const char *what) : w(w) { w.arm(what); }
    ~Armed() { w.disarm(); }
  };

  void *handle_;
  MpiApi api_;
  int rank_, size_;
  std::string library_;
  Watchdog watchdog_;
};

int envInt(const char *name) {
  const char *v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

} // namespace

int launcherWorldSize() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"})
    if (int n = envInt(name); n > 0)
      return n;
  if (std::getenv("SLURM_STEP_ID")) // inside srun
    if (int n = envInt("SLURM_NTASKS"); n > 0)
      return n;
  return 1;
}

int launcherLocalRank() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                           "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *v = std::getenv(name); v && *v)
      return std::atoi(v);
  return 0;
}

int launcherLocalSize() {
  for (const char *name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                           "MV2_COMM_WORLD_LOCAL_SIZE"})
    if (int n = envInt(name); n > 0)
      return n;
  // srun: "4(x2),3" — this node's count is not said; the first is the
  // largest share a node gets.
  if (std::getenv("SLURM_STEP_ID"))
    if (int n = envInt("SLURM_STEP_TASKS_PER_NODE"); n > 0)
      return n;
  return 1;
}

Status checkOwnDevices(Transport &world, const std::string &device) {
  // Fixed-size records: "<node> <device>", NUL-padded.
  constexpr size_t kRecord = 256;
  char host[128] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    std::snprintf(host, sizeof host, "?");
  std::vector<char> mine(kRecord, '\0'), all(kRecord * size_t(world.size()));
  if (!device.empty())
    std::snprintf(mine.data(), kRecord, "%s of node %s", device.c_str(), host);
  XLNETC_RETURN_IF_ERROR(world.allGatherBytes(mine.data(), int64_t(kRecord), all.data()));
  // The first rank on each device; a later one on it is the first pair.
  std::map<std::string, int> first;
  for (int r = 0; r < world.size(); ++r) {
    std::string record(all.data() + kRecord * size_t(r));
    if (record.empty())
      continue;
    auto [at, fresh] = first.emplace(record, r);
    if (!fresh)
      return Status::error(fmt::format(
          "ranks {} and {} both run on {}: each process needs a device of its own (run at "
          "most as many processes per node as it has GPUs, or bind one GPU to each: srun "
          "--gpus-per-task=1, CUDA_VISIBLE_DEVICES)",
          at->second, r, record));
  }
  return Status::ok();
}

std::unique_ptr<Transport> singleProcess() { return std::make_unique<SingleProcess>(); }

Status openTransport(std::unique_ptr<Transport> &out) {
  if (launcherWorldSize() <= 1) {
    out = singleProcess();
    return Status::ok();
  }
  std::string tried;
  void *handle = nullptr;
  for (const std::string &path : pluginCandidates("XLNETC_MPI_PLUGIN", "libxlnetc-mpi.so")) {
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle)
      break;
    tried += fmt::format("\n  {}: {}", path, dlerror());
  }
  if (!handle)
    return Status::error(fmt::format(
        "this process was started by an MPI launcher ({} processes) but the MPI plugin "
        "libxlnetc-mpi.so could not be loaded (it is built when CMake finds MPI: install "
        "libopenmpi-dev and rebuild; $XLNETC_MPI_PLUGIN names it):{}",
        launcherWorldSize(), tried));
  MpiApi api{};
  const auto sym = [&](const char *name, auto &fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(handle, name));
    return fn != nullptr;
  };
  if (!sym("xlnetc_mpi_version", api.version) || !sym("xlnetc_mpi_init", api.init) ||
      !sym("xlnetc_mpi_alltoallv_f32", api.alltoallv) ||
      !sym("xlnetc_mpi_allgatherv_f32", api.allgatherv) ||
      !sym("xlnetc_mpi_allgather_bytes", api.allgatherBytes) ||
      !sym("xlnetc_mpi_bcast_bytes", api.bcast) || !sym("xlnetc_mpi_abort", api.abort) ||
      !sym("xlnetc_mpi_finalize", api.finalize))
    return Status::error("libxlnetc-mpi.so lacks a function of the plugin interface");
  if (api.version() != XLNETC_MPI_PLUGIN_VERSION)
    return Status::error(fmt::format("libxlnetc-mpi.so has interface version {}; this xlnetc "
                                     "needs {} (rebuild them together)",
                                     api.version(), XLNETC_MPI_PLUGIN_VERSION));
  int rank = 0, size = 0;
  char library[256] = {};
  if (int rc = api.init(&rank, &size, library, int(sizeof library)); rc != 0)
    return Status::error(fmt::format("MPI_Init failed (error code {})", rc));
  // A launcher whose processes MPI does not join into one world (srun
  // without PMI support: each is a world of its own) would give N
  // independent runs writing the same files.
  if (size != launcherWorldSize())
    return Status::error(fmt::format(
        "the launcher started {} processes but MPI joined this one into a world of {} "
        "(with srun, pass --mpi=pmix or the PMI your MPI was built with)",
        launcherWorldSize(), size));
  out = std::make_unique<MpiTransport>(handle, api, rank, size, library);
  return Status::ok();
}

} // namespace xlnetc::rt::dist
