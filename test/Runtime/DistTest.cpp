//===- DistTest.cpp - The data-parallel all-reduce and its buckets --------===//
//
// Runs in the suite as one process (a world of one), and under
// `mpirun -np 2` (test/Training/dist-unit.test, --gtest_filter=Dist*) through
// the MPI transport: every rank runs the same tests, so their collectives
// line up.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/DeviceProgram.h"
#include "runtime/dist/GradReducer.h"
#include "runtime/dist/NcclComm.h"
#include "runtime/dist/RankProtocol.h"
#include "runtime/dist/Transport.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <functional>

using namespace xlnetc::rt;
using namespace xlnetc::rt::dist;

namespace {

/// The process's world, opened once (MPI_Init may run once).
Transport &world() {
  static std::unique_ptr<Transport> w = [] {
    std::unique_ptr<Transport> t;
    Status st = openTransport(t);
    if (!st) {
      ADD_FAILURE() << st.message();
      t = singleProcess();
    }
    return t;
  }();
  return *w;
}

/// A plan whose steps 0, 1, 2 write gradients g2, g0, g1 (in that order) and
/// whose step 3 is the global_norm over g0, g1, g2; `early` makes step 2
/// read g2 as well (before the all-reduce).
Plan gradPlan(bool early = false, bool withNorm = true) {
  Plan p;
  const std::vector<int64_t> sizes = {3, 5, 4}; // g0, g1, g2 floats
  for (int i = 0; i < 3; ++i) {
    Buffer b;
    b.id = i;
    b.shape = {sizes[size_t(i)]};
    p.buffers.push_back(b);
  }
  Buffer norm;
  norm.id = 3;
  norm.shape = {};
  p.buffers.push_back(norm);
  const auto step = [](OpKind kind, std::vector<int> in, std::vector<int> out) {
    Step s;
    s.kind = kind;
    s.op = kind == OpKind::GlobalNorm ? "global_norm" : "add";
    s.in = std::move(in);
    s.out = std::move(out);
    return s;
  };
  p.steps.push_back(step(OpKind::Add, {}, {2}));
  p.steps.push_back(step(OpKind::Add, {}, {0}));
  p.steps.push_back(step(OpKind::Add, early ? std::vector<int>{2} : std::vector<int>{}, {1}));
  if (withNorm)
    p.steps.push_back(step(OpKind::GlobalNorm, {0, 1, 2}, {3}));
  return p;
}

/// gradPlan()'s device program: it writes g2 at step 0 (a kernel), g0 at
/// step 1 (a GEMM's D) and g1 at step 2; the norm reads them through a
/// table at step 3.
DeviceProgram gradProgram() {
  DeviceProgram program;
  program.steps.resize(4);
  DeviceLaunch k2;
  k2.args = {KernelArg{KernelArg::Buffer, 2, 0}};
  program.steps[0].launches.push_back(k2);
  DeviceLaunch g0;
  g0.kind = DeviceLaunch::Gemm;
  g0.d = 0;
  program.steps[1].launches.push_back(g0);
  DeviceLaunch k1;
  k1.args = {KernelArg{KernelArg::Buffer, 1, 0}};
  program.steps[2].launches.push_back(k1);
  DeviceLaunch norm;
  norm.args = {KernelArg{KernelArg::Table, 0, 0}};
  program.steps[3].launches.push_back(norm);
  return program;
}

/// What rank r contributes at element i.
float value(int r, int64_t i) { return float(r + 1) * (0.5f + float(i)) + 1e-3f * float(r); }

/// A "device" holding gradients g0, g1, g2 of gradPlan() as host tensors
/// (rank `rank`'s values), reached through DeviceBuffers; its side stream
/// queues host work until the step's stream waits for it. Records the ids
/// written back and the order of the stream operations.
struct FakeDevice {
  std::vector<Tensor> tensors;
  std::vector<int> written;
  std::vector<std::function<Status()>> side;
  std::vector<std::string> log; ///< "fork", "side", "join"
  explicit FakeDevice(int rank)
      : tensors{Tensor::zeros(DType::F32, {3}), Tensor::zeros(DType::F32, {5}),
                Tensor::zeros(DType::F32, {4})} {
    for (Tensor &t : tensors)
      for (int64_t i = 0; i < t.numel(); ++i)
        t.f32()[i] = value(rank, i);
  }
  StepObserver::DeviceBuffers buffers() {
    StepObserver::DeviceBuffers b;
    b.read = [this](int id, Tensor &out) {
      out = tensors[size_t(id)];
      return Status::ok();
    };
    b.write = [this](int id, const Tensor &in) {
      tensors[size_t(id)] = in;
      written.push_back(id);
      return Status::ok();
    };
    b.sideWaitsForMain = [this] {
      log.push_back("fork");
      return Status::ok();
    };
    b.onSide = [this](std::function<Status()> work) {
      log.push_back("side");
      side.push_back(std::move(work));
      return Status::ok();
    };
    b.mainWaitsForSide = [this] {
      log.push_back("join");
      std::vector<std::function<Status()>> queued;
      queued.swap(side);
      for (auto &work : queued)
        if (Status st = work(); !st)
          return st;
      return Status::ok();
    };
    return b;
  }
};

/// A fake NCCL for NcclComm::join: it records the calls a bucket makes, in
/// order, and its all-reduce is NCCL's PreMulSum done on host memory, the
/// ranks' contributions gathered through the transport.
namespace fake_nccl {
std::vector<std::string> calls;
cuda::ncclUniqueId joinedWith{};
int joinedRanks = 0, joinedRank = -1;
float weight = 0; ///< the PreMulSum scalar of the live operator
int residence = -1;
struct AllReduce {
  const void *send;
  void *recv;
  size_t count;
  int dtype, op;
  void *stream;
};
std::vector<AllReduce> allReduces;
int commTag = 0;
cuda::ncclComm_t comm() { return reinterpret_cast<cuda::ncclComm_t>(&commTag); }
constexpr cuda::ncclRedOp_t kOp = 1234;

cuda::ncclResult_t getVersion(int *v) { return *v = 22809, 0; }
const char *errorString(cuda::ncclResult_t) { return "fake error"; }
cuda::ncclResult_t uniqueId(cuda::ncclUniqueId *id) {
  *id = {};
  std::snprintf(id->internal, sizeof id->internal, "id made by rank %d", world().rank());
  calls.push_back("id");
  return 0;
}
cuda::ncclResult_t initRank(cuda::ncclComm_t *c, int n, cuda::ncclUniqueId id, int rank) {
  joinedWith = id, joinedRanks = n, joinedRank = rank;
  *c = comm();
  calls.push_back("init");
  return 0;
}
cuda::ncclResult_t destroy(cuda::ncclComm_t c) {
  calls.push_back(c == comm() ? "destroy" : "destroy ?");
  return 0;
}
cuda::ncclResult_t abortComm(cuda::ncclComm_t) { return calls.push_back("abort"), 0; }
cuda::ncclResult_t groupStart() { return calls.push_back("group"), 0; }
cuda::ncclResult_t groupEnd() { return calls.push_back("end"), 0; }
cuda::ncclResult_t preMulSum(cuda::ncclRedOp_t *op, void *scalar, cuda::ncclDataType_t dtype,
                             cuda::ncclScalarResidence_t where, cuda::ncclComm_t c) {
  if (dtype != cuda::ncclFloat32 || c != comm())
    return 4; // ncclInvalidArgument
  std::memcpy(&weight, scalar, sizeof weight);
  residence = where;
  *op = kOp;
  calls.push_back("premul");
  return 0;
}
cuda::ncclResult_t freeOp(cuda::ncclRedOp_t op, cuda::ncclComm_t) {
  calls.push_back(op == kOp ? "free op" : "free ?");
  return 0;
}
cuda::ncclResult_t allReduce(const void *send, void *recv, size_t count,
                             cuda::ncclDataType_t dtype, cuda::ncclRedOp_t op,
                             cuda::ncclComm_t, cuda::cudaStream_t stream) {
  allReduces.push_back({send, recv, count, dtype, op, stream});
  calls.push_back("allreduce");
  // Σ_r weight_r · x_r, in rank order, in float (as NCCL's PreMulSum).
  Transport &w = world();
  std::vector<float> mine(count), all(count * size_t(w.size()));
  const auto *in = static_cast<const float *>(send);
  for (size_t i = 0; i < count; ++i)
    mine[i] = weight * in[i];
  std::vector<int64_t> counts(size_t(w.size()), int64_t(count)), offsets;
  for (int r = 0; r < w.size(); ++r)
    offsets.push_back(int64_t(count) * r);
  if (!w.allGather(mine.data(), counts, offsets, all.data()))
    return 3; // ncclInternalError
  auto *out = static_cast<float *>(recv);
  for (size_t i = 0; i < count; ++i) {
    float sum = 0;
    for (int r = 0; r < w.size(); ++r)
      sum += all[count * size_t(r) + i];
    out[i] = sum;
  }
  return 0;
}

const cuda::Nccl &table() {
  static const cuda::Nccl nccl = [] {
    cuda::Nccl n;
    n.ncclGetVersion = getVersion;
    n.ncclGetErrorString = errorString;
    n.ncclGetUniqueId = uniqueId;
    n.ncclCommInitRank = initRank;
    n.ncclCommDestroy = destroy;
    n.ncclCommAbort = abortComm;
    n.ncclGroupStart = groupStart;
    n.ncclGroupEnd = groupEnd;
    n.ncclAllReduce = allReduce;
    n.ncclRedOpCreatePreMulSum = preMulSum;
    n.ncclRedOpDestroy = freeOp;
    n.library = "fake";
    return n;
  }();
  return nccl;
}
} // namespace fake_nccl

} // namespace

// Every rank's micro-batch maps its local rows to the global rows its
// RowSplits give them (the dropout masks' index, host/DropoutHash.h), with
// bi_data too; one process's whole batch is the identity.
TEST(RowSplit, DropoutRowsAreTheRowsGlobalPlaces) {
  using xlnetc::rt::dist::RowSplit;
  for (bool biData : {false, true})
    for (int ranks : {1, 2, 4})
      for (int parts : {1, 2, 4}) {
        const int64_t global = 32;
        for (int r = 0; r < ranks; ++r) {
          RowSplit rank, part;
          ASSERT_TRUE(RowSplit::make(r, ranks, global, biData, rank));
          ASSERT_TRUE(RowSplit::make(0, parts, rank.localBatch, biData, part));
          for (int k = 0; k < parts; ++k) {
            part.rank = k;
            const xlnetc::rt::host::DropoutRows rows = xlnetc::rt::dist::dropoutRows(rank, part);
            for (int64_t j = 0; j < part.localBatch; ++j)
              ASSERT_EQ(xlnetc::rt::host::globalRow(rows, j), rank.globalRow(part.globalRow(j)))
                  << "bi_data " << biData << ", rank " << r << " of " << ranks
                  << ", micro-batch " << k << " of " << parts << ", row " << j;
            if (ranks == 1 && parts == 1)
              for (int64_t j = 0; j < global; ++j)
                EXPECT_EQ(xlnetc::rt::host::globalRow(rows, j), j);
          }
        }
      }
}

TEST(Dist, ReduceIsTheWeightedSumInRankOrderOnEveryRank) {
  Transport &w = world();
  GradReducer reducer;
  Plan plan = gradPlan();
  ASSERT_TRUE(GradReducer::create(plan, w, kDefaultBucketBytes, reducer));
  std::vector<double> weights;
  double total = 0;
  for (int r = 0; r < w.size(); ++r)
    total += r + 2.0;
  for (int r = 0; r < w.size(); ++r)
    weights.push_back((r + 2.0) / total);
  reducer.setWeights(weights);
  // 7 floats: shards of unequal size when the world does not divide them.
  const int64_t n = 7;
  std::vector<float> data(n);
  for (int64_t i = 0; i < n; ++i)
    data[size_t(i)] = value(w.rank(), i);
  ASSERT_TRUE(reducer.reduce(data.data(), n));
  for (int64_t i = 0; i < n; ++i) {
    double want = 0;
    for (int r = 0; r < w.size(); ++r)
      want += weights[size_t(r)] * double(value(r, i));
    EXPECT_EQ(data[size_t(i)], float(want)) << "element " << i;
  }
  // The same bits on every rank.
  uint64_t mine = 0;
  for (float f : data) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    mine = mine * 1000003u + bits;
  }
  std::vector<uint64_t> all(size_t(w.size()));
  ASSERT_TRUE(w.allGatherBytes(&mine, sizeof mine, all.data()));
  for (int r = 0; r < w.size(); ++r)
    EXPECT_EQ(all[size_t(r)], all[0]) << "rank " << r;
}

TEST(Dist, BucketsFollowTheBackwardAndReduceAsSoonAsReady) {
  Transport &w = world();
  GradReducer reducer;
  Plan plan = gradPlan();
  // Room for 8 floats per bucket: g2 (4, step 0) and g0 (3, step 1) share
  // one; g1 (5, step 2) needs its own.
  ASSERT_TRUE(GradReducer::create(plan, w, 8 * sizeof(float), reducer));
  ASSERT_EQ(reducer.buckets().size(), 2u);
  EXPECT_EQ(reducer.buckets()[0].buffers, (std::vector<int>{2, 0}));
  EXPECT_EQ(reducer.buckets()[0].readyAfter, 1u);
  EXPECT_EQ(reducer.buckets()[1].buffers, (std::vector<int>{1}));
  EXPECT_EQ(reducer.buckets()[1].readyAfter, 2u);

  std::vector<Tensor> g = {Tensor::zeros(DType::F32, {3}), Tensor::zeros(DType::F32, {5}),
                           Tensor::zeros(DType::F32, {4})};
  for (Tensor &t : g)
    for (int64_t i = 0; i < t.numel(); ++i)
      t.f32()[i] = value(w.rank(), i);
  const auto mean = [&](int64_t i) {
    double sum = 0;
    for (int r = 0; r < w.size(); ++r)
      sum += (1.0 / w.size()) * double(value(r, i));
    return float(sum);
  };
  // Step 0 writes g2: its bucket waits for g0.
  ASSERT_TRUE(reducer.beforeStep(0, plan.steps[0]));
  ASSERT_TRUE(reducer.afterStep(0, plan.steps[0], {&g[2]}));
  EXPECT_TRUE(reducer.reducedOrder().empty());
  // Step 1 writes g0: bucket 0 is reduced at once, g1 is not touched.
  ASSERT_TRUE(reducer.afterStep(1, plan.steps[1], {&g[0]}));
  EXPECT_EQ(reducer.reducedOrder(), (std::vector<size_t>{0}));
  EXPECT_EQ(g[0].f32()[2], mean(2));
  EXPECT_EQ(g[2].f32()[3], mean(3));
  EXPECT_EQ(g[1].f32()[4], value(w.rank(), 4));
  // The norm may not run before the last bucket is.
  EXPECT_FALSE(reducer.beforeStep(3, plan.steps[3]));
  ASSERT_TRUE(reducer.afterStep(2, plan.steps[2], {&g[1]}));
  EXPECT_EQ(reducer.reducedOrder(), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(g[1].f32()[4], mean(4));
  EXPECT_TRUE(reducer.beforeStep(3, plan.steps[3]));
  // A new step starts over.
  ASSERT_TRUE(reducer.beforeStep(0, plan.steps[0]));
  EXPECT_TRUE(reducer.reducedOrder().empty());
}

TEST(Dist, RefusesPlansItCannotReduce) {
  GradReducer reducer;
  Plan early = gradPlan(/*early=*/true);
  Status st = GradReducer::create(early, world(), kDefaultBucketBytes, reducer);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("step 2 (add) reads gradient buffer 2 before the all-reduce"),
            std::string::npos)
      << st.message();
  Plan forward = gradPlan(false, /*withNorm=*/false);
  st = GradReducer::create(forward, world(), kDefaultBucketBytes, reducer);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("needs a training step"), std::string::npos) << st.message();
}

TEST(Dist, DeviceExecutorsReduceEveryBucketAtTheNorm) {
  Transport &w = world();
  GradReducer reducer;
  Plan plan = gradPlan();
  ASSERT_TRUE(GradReducer::create(plan, w, 8 * sizeof(float), reducer));
  EXPECT_FALSE(reducer.wantsDeviceStep(2));
  EXPECT_TRUE(reducer.wantsDeviceStep(3));
  FakeDevice device(w.rank());
  ASSERT_TRUE(reducer.beforeDeviceStep(3, plan.steps[3], device.buffers()));
  EXPECT_EQ(device.log, (std::vector<std::string>{"fork", "side", "side", "join"}));
  EXPECT_EQ(device.written.size(), 3u);
  EXPECT_EQ(reducer.reducedOrder(), (std::vector<size_t>{0, 1}));
  for (const Tensor &t : device.tensors)
    for (int64_t i = 0; i < t.numel(); ++i) {
      double sum = 0;
      for (int r = 0; r < w.size(); ++r)
        sum += (1.0 / w.size()) * double(value(r, i));
      EXPECT_EQ(t.f32()[i], float(sum));
    }
}

TEST(Dist, DeviceBucketsFollowTheProgramsLaunches) {
  Transport &w = world();
  GradReducer reducer;
  Plan plan = gradPlan();
  ASSERT_TRUE(GradReducer::create(plan, w, 8 * sizeof(float), reducer));
  DeviceProgram program = gradProgram();
  ASSERT_TRUE(reducer.useDeviceProgram(program));
  // Bucket 0 (g2, g0) is ready before step 2, bucket 1 (g1) before the norm.
  EXPECT_FALSE(reducer.wantsDeviceStep(1));
  EXPECT_TRUE(reducer.wantsDeviceStep(2));
  EXPECT_TRUE(reducer.wantsDeviceStep(3));

  FakeDevice device(w.rank());
  for (int round = 0; round < 2; ++round) { // a second step starts over
    device.written.clear();
    device.log.clear();
    // Bucket 0's all-reduce is enqueued on the side stream after the work
    // so far and has not run yet: the backward goes on.
    ASSERT_TRUE(reducer.beforeDeviceStep(2, plan.steps[2], device.buffers()));
    EXPECT_EQ(device.log, (std::vector<std::string>{"fork", "side"}));
    EXPECT_TRUE(device.written.empty());
    EXPECT_EQ(reducer.reducedOrder(), (std::vector<size_t>{0}));
    // At the norm: bucket 1 after the work so far, then the step waits.
    ASSERT_TRUE(reducer.beforeDeviceStep(3, plan.steps[3], device.buffers()));
    EXPECT_EQ(device.log,
              (std::vector<std::string>{"fork", "side", "fork", "side", "join"}));
    EXPECT_EQ(device.written, (std::vector<int>{2, 0, 1}));
    EXPECT_EQ(reducer.reducedOrder(), (std::vector<size_t>{0, 1}));
  }

  // A gradient no launch before the norm writes cannot be reduced in time.
  program.steps[2].launches.clear();
  Status st = reducer.useDeviceProgram(program);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("no launch before the global_norm step writes gradient buffer 1"),
            std::string::npos)
      << st.message();
}

TEST(Dist, NcclBootstrapsThroughTheTransport) {
  const cuda::Nccl *nccl = nullptr;
  if (Status s = cuda::loadNccl(nccl); !s)
    GTEST_SKIP() << s.message();
  // The real NCCL: joining needs a GPU per rank, and without one the error
  // names the call and the rank (what the id's broadcast and the calls
  // per bucket do is checked through the fake NCCL below).
  std::unique_ptr<NcclComm> comm;
  Status st = NcclComm::create(world(), comm);
  if (st) {
    EXPECT_NE(comm, nullptr);
    return;
  }
  EXPECT_EQ(st.message().rfind("ncclCommInitRank failed: ", 0), 0u) << st.message();
  EXPECT_NE(st.message().find(fmt::format("[rank {} of {}]", world().rank(), world().size())),
            std::string::npos)
      << st.message();
}

TEST(Dist, NcclJoinsWithRankZerosIdAndReducesEachBucketOnTheSideStream) {
  Transport &w = world();
  fake_nccl::calls.clear();
  fake_nccl::allReduces.clear();
  std::unique_ptr<NcclComm> comm;
  ASSERT_TRUE(NcclComm::join(fake_nccl::table(), w, comm));
  // Rank 0 alone makes the id; every rank joins with it.
  const std::vector<std::string> joinCalls =
      w.rank() == 0 ? std::vector<std::string>{"id", "init"} : std::vector<std::string>{"init"};
  EXPECT_EQ(fake_nccl::calls, joinCalls);
  EXPECT_STREQ(fake_nccl::joinedWith.internal, "id made by rank 0");
  EXPECT_EQ(fake_nccl::joinedRanks, w.size());
  EXPECT_EQ(fake_nccl::joinedRank, w.rank());

  GradReducer reducer;
  Plan plan = gradPlan();
  ASSERT_TRUE(GradReducer::create(plan, w, 8 * sizeof(float), reducer));
  ASSERT_TRUE(reducer.useDeviceProgram(gradProgram()));
  reducer.useNccl(comm.get());
  std::vector<double> weights;
  for (int r = 0; r < w.size(); ++r)
    weights.push_back((r + 2.0) / (w.size() * (w.size() + 3.0) / 2.0)); // sum 1
  reducer.setWeights(weights);
  FakeDevice device(w.rank());
  int mainTag = 0, sideTag = 0;
  StepObserver::DeviceBuffers buffers = device.buffers();
  buffers.address = [&](int id) { return uint64_t(uintptr_t(device.tensors[size_t(id)].f32())); };
  buffers.stream = &mainTag;
  buffers.sideStream = &sideTag;
  const auto name = [&](const void *p) {
    for (size_t id = 0; id < device.tensors.size(); ++id)
      if (p == device.tensors[id].f32())
        return "g" + std::to_string(id);
    return std::string("?");
  };
  const auto reduces = [&] {
    std::vector<std::string> out;
    for (const auto &a : fake_nccl::allReduces) {
      EXPECT_EQ(a.send, a.recv); // in place
      EXPECT_EQ(a.dtype, cuda::ncclFloat32);
      EXPECT_EQ(a.op, fake_nccl::kOp);
      EXPECT_EQ(a.stream, &sideTag); // on the side stream, not the step's
      out.push_back(fmt::format("{} {}", name(a.send), a.count));
    }
    return out;
  };
  fake_nccl::calls.clear();
  // Bucket 0 (g2, g0) before step 2: one group, after the fork; the
  // operator carries this rank's weight and is freed once enqueued.
  ASSERT_TRUE(reducer.beforeDeviceStep(2, plan.steps[2], buffers));
  EXPECT_EQ(device.log, (std::vector<std::string>{"fork"}));
  EXPECT_EQ(fake_nccl::calls, (std::vector<std::string>{"premul", "group", "allreduce",
                                                         "allreduce", "end", "free op"}));
  EXPECT_EQ(reduces(), (std::vector<std::string>{"g2 4", "g0 3"}));
  EXPECT_EQ(fake_nccl::weight, float(weights[size_t(w.rank())]));
  EXPECT_EQ(fake_nccl::residence, cuda::ncclScalarHostImmediate);
  // Bucket 1 (g1) at the norm, then the step's stream waits.
  ASSERT_TRUE(reducer.beforeDeviceStep(3, plan.steps[3], buffers));
  EXPECT_EQ(device.log, (std::vector<std::string>{"fork", "fork", "join"}));
  EXPECT_EQ(reduces(), (std::vector<std::string>{"g2 4", "g0 3", "g1 5"}));
  EXPECT_TRUE(device.written.empty()); // no host copies
  for (const Tensor &t : device.tensors)
    for (int64_t i = 0; i < t.numel(); ++i) {
      float sum = 0;
      for (int r = 0; r < w.size(); ++r)
        sum += float(weights[size_t(r)]) * value(r, i);
      EXPECT_EQ(t.f32()[i], sum) << "element " << i;
    }
  // A run that ended well destroys the communicator; one that failed
  // aborts it.
  comm->finished();
  comm.reset();
  EXPECT_EQ(fake_nccl::calls.back(), "destroy");
  ASSERT_TRUE(NcclComm::join(fake_nccl::table(), w, comm));
  comm.reset();
  EXPECT_EQ(fake_nccl::calls.back(), "abort");
}

TEST(Dist, RanksThatShareADeviceAreRefused) {
  Transport &w = world();
  // Each rank on its own device, or devices not compared (host, emu).
  EXPECT_TRUE(checkOwnDevices(w, "GPU 0000:1b:0" + std::to_string(w.rank())));
  EXPECT_TRUE(checkOwnDevices(w, ""));
  // One device for every rank: refused on every rank (in one process there
  // is no one to share it with).
  Status st = checkOwnDevices(w, "GPU 0000:1b:00");
  if (w.size() == 1) {
    EXPECT_TRUE(st) << st.message();
    return;
  }
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message().rfind("ranks 0 and 1 both run on GPU 0000:1b:00 of node ", 0), 0u)
      << st.message();
  EXPECT_NE(st.message().find("each process needs a device of its own"), std::string::npos);
}
