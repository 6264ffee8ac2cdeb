//===- DeviceExecutor.cpp - Runs a device program on a Device -------------===//

#include "runtime/exec/DeviceExecutor.h"

#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/PlanDataflow.h"
#include "runtime/device/GemmFallback.h"
#include "runtime/device/Sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <set>

namespace xlnetc::rt {

namespace {

/// The codes of runtime/device/kernels/xlnetc_k_common.cuh.
enum StatusCode {
  kErrEmbeddingId = 1,
  kErrTargetValue = 2,
  kErrTargetTwoOnes = 3,
  kErrNegativeStep = 8,
  kErrLmTarget = 9,
  kErrAttnRow = 10,
};

/// Host mirrors of XlNormEntry and XlAdamEntry (xlnetc_k_optim.cuh).
struct NormEntry {
  uint64_t data;
  int64_t count, chunkBegin;
};
static_assert(sizeof(NormEntry) == kNormEntryBytes, "XlNormEntry layout");
struct AdamEntry {
  uint64_t param, grad, m, v, paramOut, mOut, vOut;
  int64_t count, chunkBegin;
  int32_t decay, pad;
};
static_assert(sizeof(AdamEntry) == kAdamEntryBytes, "XlAdamEntry layout");

/// Device allocations released on every path.
class Allocations {
public:
  explicit Allocations(dev::Device &d) : device_(d) {}
  ~Allocations() {
    for (dev::DevPtr p : ptrs_)
      device_.free(p);
    for (void *p : host_)
      device_.freeHost(p);
  }
  Status alloc(size_t bytes, dev::DevPtr &out) {
    XLNETC_RETURN_IF_ERROR(device_.alloc(bytes ? bytes : 1, out));
    ptrs_.push_back(out);
    return Status::ok();
  }
  /// Host memory the device copies outputs into (Device::allocHost).
  Status allocHost(size_t bytes, void *&out) {
    XLNETC_RETURN_IF_ERROR(device_.allocHost(bytes, out));
    host_.push_back(out);
    return Status::ok();
  }

private:
  dev::Device &device_;
  std::vector<dev::DevPtr> ptrs_;
  std::vector<void *> host_;
};

int64_t joined(int lo, int hi) {
  return static_cast<int64_t>((static_cast<uint64_t>(static_cast<uint32_t>(hi))
                               << 32) |
                              static_cast<uint32_t>(lo));
}

/// The host's message for the data error a step's status words report.
std::string statusMessage(const Plan &plan, const Step &step, const int *w) {
  auto dim = [&](int id, size_t d) { return plan.buffers[id].shape[d]; };
  switch (w[0]) {
  case kErrEmbeddingId: {
    int64_t v = step.kind == OpKind::EmbeddingGrad ? dim(step.out[0], 0)
                                                   : dim(step.in[1], 0);
    return fmt::format("id {} at b={}, s={} is outside [0, {})",
                       joined(w[3], w[4]), w[1], w[2], v);
  }
  case kErrTargetValue: {
    float value;
    std::memcpy(&value, &w[3], sizeof value);
    return fmt::format(
        "target_mapping row b={}, row {} is not one-hot: value {} at column {}",
        w[1], w[2], value, w[4]);
  }
  case kErrTargetTwoOnes:
    return fmt::format("target_mapping row b={}, row {} is not one-hot: ones "
                       "at columns {} and {}",
                       w[1], w[2], w[3], w[4]);
  case kErrNegativeStep:
    return fmt::format("step {} is negative", joined(w[1], w[2]));
  case kErrLmTarget:
    return fmt::format("target {} at b={}, slot {} is outside [0, {})",
                       joined(w[3], w[4]), w[1], w[2], dim(step.in[0], 2));
  case kErrAttnRow: {
    size_t segMat = step.kind == OpKind::RelAttentionGrad ? 9 : 8;
    return fmt::format("query row {} at b={}, t={} is outside [-1, {})",
                       joined(w[3], w[4]), w[1], w[2],
                       dim(step.in[segMat], 1));
  }
  }
  return fmt::format("the device reported status code {} ({} {} {} {})", w[0],
                     w[1], w[2], w[3], w[4]);
}

} // namespace

bool syncEachOpRequested() { return dev::envSwitchOn("XLNETC_CUDA_SYNC"); }

Status DeviceExecutor::module(const DeviceProgram &program,
                              LoadedModule *&out) {
  const std::string key = program.sourceDigest.empty()
                              ? Sha256::hexHash(program.source)
                              : program.sourceDigest;
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    LoadedModule loaded;
    // With line information asked for (compute-sanitizer), the source is
    // compiled with -lineinfo instead.
    bool fromCubins = !program.cubins.empty() && program.cubinArch == device_.arch() &&
                      !dev::lineInfoRequested();
    if (fromCubins) {
      // CUBINs compiled ahead of time for this architecture: no kernel to
      // compile. One this driver cannot load (a newer NVRTC made it) sends
      // the whole program back to its source.
      for (const auto &[name, image] : program.cubins) {
        std::unique_ptr<dev::Module> m;
        if (!device_.loadCubin(name + ".cubin", image, m)) {
          loaded.cubins.clear();
          loaded.moduleOf.clear();
          fromCubins = false;
          break;
        }
        loaded.moduleOf[name] = m.get();
        loaded.cubins.push_back(std::move(m));
      }
    }
    if (!fromCubins) {
      dev::ModuleSource src;
      src.name = program.moduleName;
      src.text = program.source;
      XLNETC_RETURN_IF_ERROR(device_.loadModule(src, loaded.module));
    }
    it = modules_.emplace(key, std::move(loaded)).first;
  }
  out = &it->second;
  return Status::ok();
}

Status DeviceExecutor::epilogueKernel(const std::string &name, dev::Kernel &out) {
  if (!epilogue_.module)
    XLNETC_RETURN_IF_ERROR(device_.loadModule(dev::gemmEpilogueModule(), epilogue_.module));
  auto k = epilogue_.kernels.find(name);
  if (k == epilogue_.kernels.end()) {
    dev::Kernel kernel;
    XLNETC_RETURN_IF_ERROR(device_.getKernel(*epilogue_.module, name, kernel));
    k = epilogue_.kernels.emplace(name, kernel).first;
  }
  out = k->second;
  return Status::ok();
}

Status DeviceExecutor::launchKernel(LoadedModule &mod, const DeviceLaunch &l,
                                    const std::string &where, const dev::Kernel *&out) {
  auto k = mod.kernels.find(l.kernel);
  if (k == mod.kernels.end()) {
    dev::Module *in = mod.module.get();
    if (!in) {
      auto m = mod.moduleOf.find(l.kernel);
      if (m == mod.moduleOf.end())
        return Status::error(fmt::format("{}no CUBIN for kernel '{}' among the "
                                         "program's {} compiled ahead of time",
                                         where, l.kernel, mod.cubins.size()));
      in = m->second;
    }
    dev::Kernel kernel;
    XLNETC_RETURN_IF_ERROR(device_.getKernel(*in, l.kernel, kernel).withPrefix(where));
    k = mod.kernels.emplace(l.kernel, kernel).first;
  }
  // A program made for a GPU with more shared memory per block (a bundle
  // compiled for another --arch) would fail at its launch, mid-step, with
  // the driver's error: refuse it here, before anything runs.
  const size_t need = k->second.staticSmem + l.dynSmem,
               limit = device_.maxSharedMemoryPerBlock();
  if (need > limit)
    return Status::error(fmt::format(
        "{}kernel '{}' needs {} bytes of shared memory per block ({} static + {} dynamic); "
        "this device ({}) allows {}: {}",
        where, l.kernel, need, k->second.staticSmem, l.dynSmem, device_.arch(), limit,
        device_.kind() == dev::DeviceKind::Cuda
            ? fmt::format("compile the step for this GPU (xlnetc compile SPEC -o BUNDLE --arch "
                          "{}; run-step and train compile for the GPU they run on)",
                          device_.arch())
            : "compile the step for a GPU within that (xlnetc compile SPEC -o BUNDLE --arch "
              "ARCH) or raise XLNETC_EMU_SMEM_PER_BLOCK"));
  out = &k->second;
  return Status::ok();
}

/// A program made ready to run step after step: its device memory (every
/// input and parameter buffer, one arena for the temps, the workspace, the
/// status words, the step's seed and rows, the tables, all at fixed addresses) and its
/// work (the temps' zeroing, the GEMMs, the launches with every argument
/// resolved), plus the graph recorded from that work.
struct DeviceExecutor::Prepared {
  struct Op {
    enum Kind { Memset, Gemm, Launch } kind = Launch;
    std::string where;
    size_t step = 0; ///< the plan step it belongs to
    // Memset
    dev::DevPtr dst = 0;
    size_t bytes = 0;
    // Gemm
    dev::GemmDesc desc;
    dev::GemmOperands ops;
    // Launch: one 8-byte slot per parameter (pointers and immediates);
    // params[i] points at values[i], at a fixed address while this lives.
    dev::Kernel kernel;
    dev::LaunchDims dims;
    std::vector<uint64_t> values;
    std::vector<void *> params;
    /// The plan buffers the op may write, for skipping work nobody reads
    /// (skippableOps): a memset's buffer; a GEMM's C, D, bias and aux (and
    /// its batch members' D); a kernel's buffer arguments and what its
    /// table's entries write. `shared`: the op also does other steps' work
    /// through a table (the multi-tensor Adam, the norm): it runs when any
    /// buffer it writes is live.
    std::vector<int> writes;
    bool shared = false;
    /// A table op's entries' outputs (`shared`): with its own step's
    /// outputs, what it writes for sure.
    std::vector<int> tableWrites;
  };

  const DeviceProgram *program = nullptr;
  uint64_t programId = 0;
  std::string digest;
  /// The plan's buffers (what fetch needs after the plan is gone).
  std::vector<Buffer> buffers;
  /// Whether a step ran piece by piece already: the graph is recorded at
  /// the second step, once every lazy setup (cuBLASLt's handle and
  /// workspace, kernel attributes) has happened outside a capture.
  bool warm = false;
  /// Inputs whose buffers hold a value a step left (Executor::setCarry).
  std::set<int> kept;
  /// Buffer ids by input and by output name.
  std::map<std::string, int> inputId, outputId;
  std::unique_ptr<Allocations> allocs;
  std::vector<dev::DevPtr> addr;
  dev::DevPtr status = 0, seed = 0;
  std::vector<int> statusSlot;
  int statusSteps = 0;
  size_t statusBytes = 0;
  std::vector<Op> ops;
  /// The outputs the last step asked for (ExecOptions::wanted, joined) and,
  /// for them, which ops are skipped; the graph is recorded for them.
  std::string wantedKey;
  std::vector<char> skip;
  std::unique_ptr<dev::Graph> graph;
  /// The skipped ops and graphs of the other sets of wanted outputs seen.
  struct Choice {
    std::vector<char> skip;
    std::unique_ptr<dev::Graph> graph;
    bool warm = false;
  };
  std::map<std::string, Choice> otherChoices;

  /// One op, for the synchronous mode's messages: the kernel (with its
  /// geometry), the GEMM or the memset.
  static std::string describeOp(const Op &op) {
    switch (op.kind) {
    case Op::Memset:
      return fmt::format("zeroing {} bytes", op.bytes);
    case Op::Gemm:
      return dev::describeGemm(op.desc);
    case Op::Launch:
      break;
    }
    return fmt::format("kernel {} (grid {}, block {}, {} bytes of dynamic shared memory)",
                       op.kernel.name, op.dims.grid[0], op.dims.block[0], op.dims.dynSmem);
  }

  /// Marks in `skip` the ops whose results no output in `needed` depends
  /// on (empty: every output is needed). A step is live when one of its
  /// outputs is needed or read by a live step; an op of a dead step still
  /// runs when it may write a live buffer of another step (a batched GEMM's
  /// member, a fused launch: a buffer a later step produces; an op working
  /// through a table: any of its entries').
  void chooseOps(const Plan &plan, const std::set<std::string> &needed) {
    skip.assign(ops.size(), 0);
    if (needed.empty())
      return;
    const PlanLiveness liveness = planLiveness(plan, needed);
    const std::vector<char> &live = liveness.buffer, &liveStep = liveness.step;
    const std::vector<int> producer = planDataflow(plan).writer;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op &op = ops[i];
      if (liveStep[op.step])
        continue;
      bool writesLive = false;
      if (op.shared) { // its entries' outputs and its own step's (not its reads)
        for (int id : op.tableWrites)
          writesLive = writesLive || live[size_t(id)];
        for (int id : plan.steps[op.step].out)
          writesLive = writesLive || live[size_t(id)];
      } else {
        for (int id : op.writes) {
          const int from = producer[size_t(id)];
          const bool mayWrite = from < 0 ? plan.buffers[size_t(id)].role == Buffer::Temp
                                         : from >= int(op.step);
          writesLive = writesLive || (mayWrite && live[size_t(id)]);
        }
      }
      skip[i] = !writesLive;
    }
  }
  /// Host memory each returned buffer is copied into after the step
  /// (allocated at the first step that returns it).
  std::map<int, void *> staging;
};

/// The step started and not finished yet: what finish() needs.
struct DeviceExecutor::Pending {
  const Plan *plan = nullptr;
  /// The buffers that come back, with the names they are returned under.
  std::vector<std::pair<int, std::vector<std::string>>> returned;
};

DeviceExecutor::DeviceExecutor(dev::Device &device)
    : device_(device), syncEachOp_(syncEachOpRequested()) {}
DeviceExecutor::~DeviceExecutor() {
  prepared_.reset();
  freeSets();
}

void DeviceExecutor::freeSets() {
  for (auto &[key, mem] : sets_)
    if (asideOnHost_)
      device_.freeHost(reinterpret_cast<void *>(mem));
    else
      device_.free(mem);
  sets_.clear();
}

/// The device addresses of GEMM launch `l`'s operands (C is D when absent).
static dev::GemmOperands gemmOperandsOf(const DeviceLaunch &l,
                                        const std::vector<dev::DevPtr> &addr) {
  dev::GemmOperands o;
  o.a = addr[l.a];
  o.b = addr[l.b];
  o.d = addr[l.d];
  o.c = l.c >= 0 ? addr[l.c] : o.d;
  o.bias = l.bias >= 0 ? addr[l.bias] : 0;
  o.aux = l.aux >= 0 ? addr[l.aux] : 0;
  return o;
}

/// What the phases of prepare() hand on: where the temps' offsets come
/// from, the shared workspace and scratch, the tables, the GEMMs that run
/// unfused.
struct DeviceExecutor::Layout {
  const MemoryPlan *memory = nullptr;
  MemoryPlan local; // a program built without its plan: planned here
  dev::DevPtr workspace = 0, scratch = 0;
  std::vector<dev::DevPtr> tables;
  std::set<const DeviceLaunch *> unfused;
};

Status DeviceExecutor::prepare(const Plan &plan, const DeviceProgram &program,
                               std::unique_ptr<Prepared> &out) {
  LoadedModule *mod = nullptr;
  XLNETC_RETURN_IF_ERROR(module(program, mod));
  // Every kernel, and whether its launches fit the device, before any
  // memory is taken.
  for (size_t i = 0; i < program.steps.size(); ++i)
    for (const DeviceLaunch &l : program.steps[i].launches)
      if (l.kind == DeviceLaunch::Kernel) {
        const dev::Kernel *kernel = nullptr;
        XLNETC_RETURN_IF_ERROR(
            launchKernel(*mod, l, stepPrefix(i, plan.steps[i]), kernel));
      }
  auto p = std::make_unique<Prepared>();
  p->program = &program;
  p->programId = program.id;
  p->buffers = plan.buffers;
  for (const Buffer &b : plan.buffers) {
    if (b.role != Buffer::Temp)
      p->inputId[b.name] = b.id;
    for (const std::string &name : b.outputs)
      p->outputId[name] = b.id;
  }
  p->digest = program.sourceDigest;
  p->allocs = std::make_unique<Allocations>(device_);
  Layout layout;
  XLNETC_RETURN_IF_ERROR(allocateMemory(plan, program, *p, layout));
  XLNETC_RETURN_IF_ERROR(chooseUnfusedGemms(plan, program, *p, layout));
  XLNETC_RETURN_IF_ERROR(resolveWork(plan, program, *mod, *p, layout));
  for (Prepared::Op &op : p->ops) // the vectors are in place now
    for (uint64_t &v : op.values)
      op.params.push_back(&v);
  out = std::move(p);
  return Status::ok();
}

/// 1. Device memory: every input and parameter, one arena for the temps
///    (the program's memory plan), the largest step workspace, the status
///    words of the reporting steps, the step's seed and rows, the tables.
Status DeviceExecutor::allocateMemory(const Plan &plan, const DeviceProgram &program,
                                      Prepared &prepared, Layout &layout) {
  Prepared *p = &prepared;
  const size_t n = plan.buffers.size();
  Allocations &allocs = *p->allocs;
  layout.memory = &program.memory;
  if (layout.memory->offset.size() != n) { // a program built without its plan
    layout.local = planMemory(plan, &program);
    layout.memory = &layout.local;
  }
  const MemoryPlan *memory = layout.memory;
  p->addr.assign(n, 0);
  dev::DevPtr arena = 0;
  XLNETC_RETURN_IF_ERROR(allocs.alloc(size_t(memory->arenaBytes), arena).withPrefix(
      fmt::format("the arena of the temporaries ({} bytes): ", memory->arenaBytes)));
  // The inputs and parameters: one block (the parameters side by side,
  // then the optimizer state, then the batch and the memory).
  dev::DevPtr inputs = 0;
  XLNETC_RETURN_IF_ERROR(allocs.alloc(size_t(memory->inputBlockBytes), inputs).withPrefix(
      fmt::format("the parameters, optimizer state and inputs ({} bytes): ",
                  memory->inputBlockBytes)));
  for (const Buffer &b : plan.buffers)
    p->addr[b.id] = (b.role == Buffer::Temp ? arena : inputs) +
                    dev::DevPtr(b.role == Buffer::Temp ? memory->offset[size_t(b.id)]
                                                       : memory->inputOffset[size_t(b.id)]);
  // Outputs written in place of an input (the optimizer's) share its memory.
  for (const auto &[out, in] : program.inPlace)
    p->addr[size_t(out)] = p->addr[size_t(in)];
  const std::vector<dev::DevPtr> &addr = p->addr;
  int64_t workspaceBytes = 0;
  p->statusSlot.assign(plan.steps.size(), -1);
  for (size_t i = 0; i < program.steps.size(); ++i) {
    workspaceBytes = std::max(workspaceBytes, program.steps[i].workspaceBytes);
    if (program.steps[i].status)
      p->statusSlot[i] = p->statusSteps++;
  }
  if (workspaceBytes > 0)
    XLNETC_RETURN_IF_ERROR(allocs.alloc(size_t(workspaceBytes), layout.workspace));
  p->statusBytes = size_t(p->statusSteps) * kStatusWords * sizeof(int);
  if (p->statusSteps > 0)
    XLNETC_RETURN_IF_ERROR(allocs.alloc(p->statusBytes, p->status));
  XLNETC_RETURN_IF_ERROR(allocs.alloc(sizeof(host::StepRandomRecord), p->seed));
  std::vector<dev::DevPtr> &tables = layout.tables;
  tables.assign(program.tables.size(), 0);
  for (size_t t = 0; t < program.tables.size(); ++t) {
    const DeviceTable &table = program.tables[t];
    std::vector<unsigned char> bytes;
    for (const DeviceTable::Entry &e : table.entries) {
      auto at = [&](size_t k) { return uint64_t(addr[e.buffers.at(k)]); };
      if (table.kind == DeviceTable::Norm) {
        NormEntry ne{at(0), e.count, e.chunkBegin};
        const auto *b = reinterpret_cast<const unsigned char *>(&ne);
        bytes.insert(bytes.end(), b, b + sizeof ne);
      } else {
        AdamEntry ae{at(0), at(1), at(2), at(3), at(4), at(5), at(6),
                     e.count, e.chunkBegin, e.decay ? 1 : 0, 0};
        const auto *b = reinterpret_cast<const unsigned char *>(&ae);
        bytes.insert(bytes.end(), b, b + sizeof ae);
      }
    }
    XLNETC_RETURN_IF_ERROR(allocs.alloc(bytes.size(), tables[t]));
    XLNETC_RETURN_IF_ERROR(device_.upload(tables[t], bytes.data(), bytes.size()));
  }
  return Status::ok();
}

/// 2. The GEMMs whose fused epilogue the device cannot run as one call
///    (Device::gemmSupported: on a GPU, no cuBLASLt algorithm for it),
///    decided here, once per program: each runs as the GEMM with the
///    default epilogue and then an epilogue kernel (GemmFallback.h), with
///    one warning per descriptor (and executor). Those with a bf16 D share
///    one f32 scratch matrix for the product (the ops run in order).
Status DeviceExecutor::chooseUnfusedGemms(const Plan &plan, const DeviceProgram &program,
                                          Prepared &prepared, Layout &layout) {
  const std::vector<dev::DevPtr> &addr = prepared.addr;
  std::set<const DeviceLaunch *> &unfused = layout.unfused;
  struct Unfused {
    std::string where, why;
    size_t count = 0;
  };
  std::vector<std::pair<std::string, Unfused>> byDescriptor; // in plan order
  int64_t scratchBytes = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (const DeviceLaunch &l : program.steps[i].launches) {
      if (l.kind != DeviceLaunch::Gemm || l.gemm.epilogue == dev::GemmEpilogue::Default)
        continue;
      const std::string where = stepPrefix(i, plan.steps[i]);
      bool supported = true;
      std::string why;
      XLNETC_RETURN_IF_ERROR(
          device_.gemmSupported(l.gemm, gemmOperandsOf(l, addr), where, supported, why));
      if (supported)
        continue;
      unfused.insert(&l);
      scratchBytes = std::max(scratchBytes, dev::gemmFallbackScratchBytes(l.gemm));
      const std::string desc = dev::describeGemm(l.gemm);
      auto same = std::find_if(byDescriptor.begin(), byDescriptor.end(),
                               [&](const auto &e) { return e.first == desc; });
      if (same == byDescriptor.end())
        same = byDescriptor.insert(byDescriptor.end(), {desc, Unfused{where, why, 0}});
      ++same->second.count;
    }
  for (const auto &[desc, u] : byDescriptor)
    if (warnedUnfused_.insert(desc).second)
      std::cerr << fmt::format("xlnetc: warning: {}{}: {}; it runs unfused, as the GEMM with "
                               "the default epilogue and then an epilogue kernel ({} GEMM{} "
                               "of this program)\n",
                               u.where, desc, u.why, u.count, u.count == 1 ? "" : "s");
  if (scratchBytes > 0)
    XLNETC_RETURN_IF_ERROR(prepared.allocs->alloc(size_t(scratchBytes), layout.scratch).withPrefix(
        fmt::format("the f32 scratch of the unfused GEMM epilogues ({} bytes): ",
                    scratchBytes)));
  return Status::ok();
}

/// GEMM launch `l` of plan step `step`: one op, or the GEMM and its
/// epilogue kernel when the device cannot run the epilogue fused.
Status DeviceExecutor::resolveGemm(const DeviceLaunch &l, size_t step, const std::string &where,
                                   Prepared &prepared, const Layout &layout) {
  const std::vector<dev::DevPtr> &addr = prepared.addr;
  Prepared::Op op;
  op.where = where;
  op.step = step;
  op.kind = Prepared::Op::Gemm;
  op.desc = l.gemm;
  op.ops = gemmOperandsOf(l, addr);
  for (int id : {l.c, l.d, l.bias, l.aux})
    if (id >= 0)
      op.writes.push_back(id);
  for (const auto &member : l.batchMembers)
    op.writes.push_back(member.second);
  // A batched GEMM's entries must lie where its strides say.
  const dev::DevPtr size = dev::DevPtr(dev::gemmTypeSize(l.gemm.ab)),
                    sizeD = dev::DevPtr(dev::gemmTypeSize(l.gemm.cd));
  for (size_t e = 0; e < l.batchMembers.size(); ++e) {
    const auto [a, d] = l.batchMembers[e];
    if (addr[size_t(a)] != op.ops.a + (e + 1) * dev::DevPtr(l.gemm.strideA) * size ||
        addr[size_t(d)] != op.ops.d + (e + 1) * dev::DevPtr(l.gemm.strideC) * sizeD)
      return Status::error(fmt::format(
          "{}the batched GEMM's entry {} (A buffer {}, D buffer {}) is not {} and {} "
          "elements after the previous one in memory: the program and the memory "
          "plan disagree",
          where, e + 1, a, d, l.gemm.strideA, l.gemm.strideC));
  }
  if (layout.unfused.count(&l)) {
    // The GEMM, then its epilogue kernel: ordinary ops of the step
    // (skipped together: same step, same buffers; captured alike).
    dev::GemmFallback fb;
    XLNETC_RETURN_IF_ERROR(
        dev::gemmFallback(l.gemm, op.ops, layout.scratch, fb).withPrefix(where));
    bool supported = true;
    std::string why;
    XLNETC_RETURN_IF_ERROR(device_.gemmSupported(fb.gemm, fb.ops, where, supported, why));
    if (!supported)
      return Status::error(fmt::format(
          "{}{}: its epilogue does not run fused, and its unfused GEMM {} does not run "
          "either: {}",
          where, dev::describeGemm(l.gemm), dev::describeGemm(fb.gemm), why));
    Prepared::Op epilogue;
    epilogue.where = where;
    epilogue.step = op.step;
    epilogue.writes = op.writes;
    XLNETC_RETURN_IF_ERROR(epilogueKernel(fb.kernel, epilogue.kernel).withPrefix(where));
    epilogue.dims = fb.dims;
    epilogue.values = fb.args;
    op.desc = fb.gemm;
    op.ops = fb.ops;
    prepared.ops.push_back(std::move(op));
    prepared.ops.push_back(std::move(epilogue));
    return Status::ok();
  }
  prepared.ops.push_back(std::move(op));
  return Status::ok();
}

/// 3. The work, in plan order, every argument resolved.
Status DeviceExecutor::resolveWork(const Plan &plan, const DeviceProgram &program,
                                   LoadedModule &mod, Prepared &prepared, const Layout &layout) {
  Prepared *p = &prepared;
  const std::vector<dev::DevPtr> &addr = prepared.addr;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const std::string where = stepPrefix(i, plan.steps[i]);
    const dev::DevPtr stepStatus =
        p->statusSlot[i] < 0
            ? 0
            : p->status + size_t(p->statusSlot[i]) * kStatusWords * sizeof(int);
    // Temps start as zeros, as the host executor hands them to its kernels
    // (a kernel may leave elements alone, e.g. rel_pos_encoding's last
    // column for an odd D); the arena's memory was another temp's before.
    for (int id : layout.memory->firstTouched[i]) {
      const Buffer &b = plan.buffers[size_t(id)];
      Prepared::Op op;
      op.kind = Prepared::Op::Memset;
      op.where = where;
      op.step = i;
      op.dst = addr[size_t(id)];
      op.bytes = static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype);
      op.writes = {id};
      if (op.bytes > 0)
        p->ops.push_back(std::move(op));
    }
    for (const DeviceLaunch &l : program.steps[i].launches) {
      if (l.kind == DeviceLaunch::Gemm) {
        XLNETC_RETURN_IF_ERROR(resolveGemm(l, i, where, prepared, layout));
        continue;
      }
      Prepared::Op op;
      op.where = where;
      op.step = i;
      const dev::Kernel *kernel = nullptr;
      XLNETC_RETURN_IF_ERROR(launchKernel(mod, l, where, kernel));
      op.kernel = *kernel;
      op.dims.grid[0] = l.grid;
      op.dims.block[0] = l.block;
      op.dims.dynSmem = l.dynSmem;
      for (const KernelArg &arg : l.args) {
        switch (arg.kind) {
        case KernelArg::Buffer:
          op.values.push_back(addr[arg.index]);
          op.writes.push_back(arg.index);
          break;
        case KernelArg::Null:
          op.values.push_back(0);
          break;
        case KernelArg::Workspace:
          op.values.push_back(layout.workspace + uint64_t(arg.value));
          break;
        case KernelArg::Status:
          op.values.push_back(stepStatus);
          break;
        case KernelArg::Seed:
          op.values.push_back(p->seed);
          break;
        case KernelArg::Table: {
          op.values.push_back(layout.tables[arg.index]);
          op.shared = true;
          // What the other steps' entries write: Adam's param_out, m_out
          // and v_out (the norm's entries are read only).
          const DeviceTable &table = program.tables[size_t(arg.index)];
          for (const DeviceTable::Entry &e : table.entries)
            for (size_t b = DeviceTable::kAdamFirstOutput;
                 table.kind == DeviceTable::Adam && b < e.buffers.size(); ++b)
              op.tableWrites.push_back(e.buffers[b]);
          break;
        }
        case KernelArg::Immediate:
          op.values.push_back(uint64_t(arg.value));
          break;
        }
      }
      p->ops.push_back(std::move(op));
    }
  }
  return Status::ok();
}

Status DeviceExecutor::runOpsObserved(const Prepared &p, const Plan &plan,
                                      StepObserver &observer) {
  // The observer's buffers; read and write run as host work on the side
  // stream, after the events the observer asked for.
  StepObserver::DeviceBuffers buffers;
  buffers.read = [&](int id, Tensor &out) -> Status {
    const Buffer &b = plan.buffers[size_t(id)];
    out = Tensor::zeros(b.dtype, b.shape);
    return device_.download(out.bytes(), p.addr[size_t(id)], out.nbytes());
  };
  buffers.write = [&](int id, const Tensor &in) -> Status {
    return device_.upload(p.addr[size_t(id)], in.bytes(), in.nbytes());
  };
  buffers.address = [&](int id) -> uint64_t { return p.addr[size_t(id)]; };
  buffers.stream = device_.nativeStream();
  buffers.sideStream = device_.nativeSideStream();
  // The observer's errors get the step's prefix below; the device's own
  // name the side stream (and host work its own, e.g. the bucket).
  buffers.sideWaitsForMain = [&] { return device_.sideWaitsForMain("the side stream"); };
  buffers.onSide = [&](std::function<Status()> work) {
    return device_.hostWorkOnSide(std::move(work), "");
  };
  buffers.mainWaitsForSide = [&] { return device_.mainWaitsForSide("the side stream"); };
  // Before the first op of each step it wants (or of a later step, when
  // its own ops were fused away).
  size_t nextStep = 0;
  const auto before = [&](size_t upTo) -> Status {
    for (; nextStep <= upTo && nextStep < plan.steps.size(); ++nextStep) {
      if (!observer.wantsDeviceStep(nextStep))
        continue;
      XLNETC_RETURN_IF_ERROR(
          observer.beforeDeviceStep(nextStep, plan.steps[nextStep], buffers)
              .withPrefix(stepPrefix(nextStep, plan.steps[nextStep])));
    }
    return Status::ok();
  };
  // Whatever the observer enqueued has joined the step's stream when the
  // step ends; after an error its queued work (which reads this call's
  // buffers) is dropped.
  Status st = runOps(p, before);
  if (st)
    st = device_.mainWaitsForSide("the end of the step");
  if (!st)
    device_.abandonSide();
  return st;
}

Status DeviceExecutor::runOps(const Prepared &p,
                              const std::function<Status(size_t step)> &before) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const Prepared::Op &op = p.ops[i];
    if (i < p.skip.size() && p.skip[i])
      continue;
    if (before)
      XLNETC_RETURN_IF_ERROR(before(op.step));
    switch (op.kind) {
    case Prepared::Op::Memset:
      XLNETC_RETURN_IF_ERROR(device_.memset(op.dst, 0, op.bytes).withPrefix(op.where));
      break;
    case Prepared::Op::Gemm:
      XLNETC_RETURN_IF_ERROR(device_.gemm(op.desc, op.ops, op.where));
      break;
    case Prepared::Op::Launch:
      XLNETC_RETURN_IF_ERROR(device_.launch(
          op.kernel, op.dims, const_cast<void **>(op.params.data()), op.where));
      break;
    }
    if (syncEachOp_)
      XLNETC_RETURN_IF_ERROR(device_.synchronize(op.where + Prepared::describeOp(op)));
  }
  return Status::ok();
}

size_t DeviceExecutor::skippedOps() const {
  return prepared_ ? size_t(std::count(prepared_->skip.begin(), prepared_->skip.end(), 1)) : 0;
}

void DeviceExecutor::dropKept() {
  if (prepared_)
    prepared_->kept.clear();
  freeSets();
}

Status DeviceExecutor::inputBuffer(const std::string &name, int &id) const {
  if (prepared_)
    if (auto it = prepared_->inputId.find(name); it != prepared_->inputId.end()) {
      id = it->second;
      return Status::ok();
    }
  return Status::error(fmt::format("no step has left a value of input '{}' on the device", name));
}

Status DeviceExecutor::zeroKept(const std::string &name) {
  int id = -1;
  XLNETC_RETURN_IF_ERROR(inputBuffer(name, id));
  const Buffer &b = prepared_->buffers[size_t(id)];
  XLNETC_RETURN_IF_ERROR(device_.memset(
      prepared_->addr[size_t(id)], 0, size_t(numelOf(b.shape)) * dtypeSize(b.dtype)));
  prepared_->kept.insert(id);
  return Status::ok();
}

Status DeviceExecutor::switchKeptSet(const std::vector<std::string> &names, int from, int to) {
  if (pending_)
    return Status::error("internal error: kept sets switched while a step is in flight");
  for (const std::string &name : names) {
    int id = -1;
    XLNETC_RETURN_IF_ERROR(inputBuffer(name, id));
    const Buffer &b = prepared_->buffers[size_t(id)];
    const size_t bytes = size_t(numelOf(b.shape)) * dtypeSize(b.dtype);
    const dev::DevPtr live = prepared_->addr[size_t(id)];
    if (prepared_->kept.count(id)) {
      auto &aside = sets_[{from, name}];
      const std::string what = fmt::format("the memory of micro-batch {} ('{}'): ", from, name);
      if (!aside && asideOnHost_) {
        void *host = nullptr;
        XLNETC_RETURN_IF_ERROR(device_.allocHost(bytes, host).withPrefix(what));
        aside = reinterpret_cast<dev::DevPtr>(host);
      } else if (!aside) {
        XLNETC_RETURN_IF_ERROR(device_.alloc(bytes, aside).withPrefix(what));
      }
      XLNETC_RETURN_IF_ERROR(
          asideOnHost_ ? device_.download(reinterpret_cast<void *>(aside), live, bytes)
                       : device_.copy(aside, live, bytes));
    }
    auto it = sets_.find({to, name});
    if (it == sets_.end()) {
      prepared_->kept.erase(id);
      continue;
    }
    XLNETC_RETURN_IF_ERROR(
        asideOnHost_
            ? device_.upload(live, reinterpret_cast<const void *>(it->second), bytes)
            : device_.copy(live, it->second, bytes));
    prepared_->kept.insert(id);
  }
  return Status::ok();
}

Status DeviceExecutor::fetchFromSet(const std::string &name, int set, Tensor &out) {
  int id = -1;
  XLNETC_RETURN_IF_ERROR(inputBuffer(name, id));
  auto it = sets_.find({set, name});
  if (it == sets_.end())
    return Status::error(
        fmt::format("no value of input '{}' was set aside as set {}", name, set));
  const Buffer &b = prepared_->buffers[size_t(id)];
  Tensor t = Tensor::zeros(b.dtype, b.shape);
  if (asideOnHost_)
    std::memcpy(t.storage.data(), reinterpret_cast<const void *>(it->second), t.nbytes());
  else
    XLNETC_RETURN_IF_ERROR(device_.download(t.storage.data(), it->second, t.nbytes()));
  out = std::move(t);
  return Status::ok();
}

Status DeviceExecutor::fetch(const std::string &name, Tensor &out) {
  if (prepared_) {
    auto it = prepared_->inputId.find(name);
    if (it != prepared_->inputId.end() && prepared_->kept.count(it->second)) {
      const Buffer &b = prepared_->buffers[size_t(it->second)];
      Tensor t = Tensor::zeros(b.dtype, b.shape);
      XLNETC_RETURN_IF_ERROR(device_.download(t.storage.data(), prepared_->addr[b.id], t.nbytes()));
      out = std::move(t);
      return Status::ok();
    }
  }
  return Status::error(fmt::format("no step has left a value of input '{}' on the device", name));
}

Status DeviceExecutor::execute(const Plan &plan, const DeviceProgram &program,
                               const TensorMap &bindings, TensorMap &outputs,
                               const ExecOptions &opts,
                               const std::vector<std::pair<std::string, std::string>> &carry) {
  XLNETC_RETURN_IF_ERROR(start(plan, program, bindings, opts, carry));
  return finish(outputs);
}

/// The (output, input) buffer pairs of `carry` (names), each pair of one
/// type, or an error naming the pair.
Status DeviceExecutor::carriedPairs(const Plan &plan, const Prepared &p,
                                    const std::vector<std::pair<std::string, std::string>> &carry,
                                    std::vector<std::pair<int, int>> &carried) {
  for (const auto &[out, in] : carry) {
    auto o = p.outputId.find(out);
    auto i = p.inputId.find(in);
    if (o == p.outputId.end() || i == p.inputId.end() ||
        plan.buffers[size_t(o->second)].shape != plan.buffers[size_t(i->second)].shape ||
        plan.buffers[size_t(o->second)].dtype != plan.buffers[size_t(i->second)].dtype)
      return Status::error(fmt::format(
          "cannot carry output '{}' to input '{}': the plan has no such pair of the same "
          "type",
          out, in));
    carried.emplace_back(o->second, i->second);
  }

  return Status::ok();
}

/// The bound inputs named in `keep` (ExecOptions::keep) stay kept, unless
/// an update that ran wrote over them in place.
void DeviceExecutor::keepAsked(const DeviceProgram &program, Prepared &p,
                               const std::vector<const Tensor *> &bound,
                               const std::vector<std::string> &keep) {
  for (const std::string &name : keep) {
    auto it = p.inputId.find(name);
    if (it == p.inputId.end() || !bound[size_t(it->second)])
      continue;
    bool overwritten = false;
    for (const auto &[out, in] : program.inPlace)
      if (in == it->second)
        for (size_t i = 0; i < p.ops.size() && !overwritten; ++i)
          overwritten = !p.skip[i] && std::find(p.ops[i].writes.begin(), p.ops[i].writes.end(),
                                                out) != p.ops[i].writes.end();
    if (!overwritten)
      p.kept.insert(it->second);
  }
}

/// The work only outputs nobody wants need is skipped: `wanted` (empty:
/// every output) and the carried outputs; a new set of them records a new
/// graph (a set seen before takes its own back).
void DeviceExecutor::chooseWanted(const Plan &plan, Prepared &p,
                                  const std::set<std::string> &carriedNames,
                                  const std::set<std::string> &wanted) {
  std::set<std::string> needed;
  if (!wanted.empty()) {
    needed = wanted;
    needed.insert(carriedNames.begin(), carriedNames.end());
  }
  std::string wantedKey;
  for (const std::string &name : needed)
    wantedKey += name + '\n';
  if (p.skip.size() == p.ops.size() && wantedKey == p.wantedKey)
    return;
  // Gradient accumulation alternates two sets (a micro-batch that only
  // accumulates, the step's last): each keeps its skipped ops and graph.
  if (p.skip.size() == p.ops.size()) {
    Prepared::Choice &mine = p.otherChoices[p.wantedKey];
    mine.skip = std::move(p.skip);
    mine.graph = std::move(p.graph);
    mine.warm = p.warm;
  }
  p.wantedKey = wantedKey;
  if (auto it = p.otherChoices.find(wantedKey); it != p.otherChoices.end()) {
    p.skip = std::move(it->second.skip);
    p.graph = std::move(it->second.graph);
    p.warm = it->second.warm;
    p.otherChoices.erase(it);
    return;
  }
  // A new set runs piece by piece once before its graph is recorded (its
  // ops' lazy setup outside a capture).
  p.chooseOps(plan, needed);
  p.graph.reset();
  p.warm = false;
}

/// The work, in plan order, without reading anything back: launched piece
/// by piece at the first step, recorded into the step's graph at the
/// second, which every later step replays (docs/Devices.md "The step as
/// one graph").
Status DeviceExecutor::runWork(const Plan &plan, Prepared &p, const ExecOptions &opts) {
  if (opts.observer) { // host work between the launches: no graph
    XLNETC_RETURN_IF_ERROR(runOpsObserved(p, plan, *opts.observer));
    p.warm = true;
  } else if (!opts.deviceGraph || !p.warm || syncEachOp_) {
    XLNETC_RETURN_IF_ERROR(runOps(p));
    p.warm = true;
  } else {
    if (!p.graph) {
      XLNETC_RETURN_IF_ERROR(device_.beginCapture("the step"));
      Status recorded = runOps(p);
      std::unique_ptr<dev::Graph> graph;
      Status ended = device_.endCapture(graph, "the step");
      XLNETC_RETURN_IF_ERROR(recorded);
      XLNETC_RETURN_IF_ERROR(ended);
      p.graph = std::move(graph);
    }
    XLNETC_RETURN_IF_ERROR(device_.launchGraph(*p.graph, "the step"));
  }
  return Status::ok();
}

/// Starts copying back the outputs that return (not carried, and wanted),
/// into `pending`.
Status DeviceExecutor::startReadback(const Plan &plan, Prepared &p,
                                     const std::set<std::string> &carriedNames,
                                     const std::set<std::string> &wanted, Pending &pending) {
  for (const Buffer &b : plan.buffers) {
    std::vector<std::string> names; // the buffer's names that come back
    for (const std::string &name : b.outputs)
      if (!carriedNames.count(name) && (wanted.empty() || wanted.count(name)))
        names.push_back(name);
    if (names.empty())
      continue;
    const size_t bytes = static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype);
    void *&host = p.staging[b.id];
    if (!host)
      XLNETC_RETURN_IF_ERROR(p.allocs->allocHost(bytes, host));
    XLNETC_RETURN_IF_ERROR(device_.downloadAsync(host, p.addr[b.id], bytes));
    pending.returned.emplace_back(b.id, std::move(names));
  }
  return Status::ok();
}

Status DeviceExecutor::start(const Plan &plan, const DeviceProgram &program,
                             const TensorMap &bindings, const ExecOptions &opts,
                             const std::vector<std::pair<std::string, std::string>> &carry) {
  if (pending_)
    return Status::error("internal error: a step was started while another is in flight "
                         "(finish it first)");
  size_t n = plan.buffers.size();
  if (program.steps.size() != plan.steps.size())
    return Status::error(fmt::format(
        "internal error: the device program has {} steps, the plan {}",
        program.steps.size(), plan.steps.size()));

  // 1. The program's memory and work: prepared once, kept for the next
  //    steps of the same program (with the inputs earlier steps left).
  const bool same = prepared_ &&
                    (program.id != 0 ? prepared_->programId == program.id
                                     : prepared_->program == &program) &&
                    prepared_->digest == program.sourceDigest && prepared_->addr.size() == n;

  // 2. Check the bindings before any device work; a kept input needs none.
  std::vector<const Tensor *> bound(n, nullptr);
  for (const Buffer &b : plan.buffers)
    if (b.role != Buffer::Temp &&
        !(same && !bindings.count(b.name) && prepared_->kept.count(b.id)))
      XLNETC_RETURN_IF_ERROR(checkBinding(b, bindings, bound[b.id]));

  if (!same) {
    prepared_.reset(); // its memory goes before the next one's comes
    XLNETC_RETURN_IF_ERROR(prepare(plan, program, prepared_));
  }
  Prepared &p = *prepared_;
  std::vector<std::pair<int, int>> carried; // (output buffer, input buffer)
  XLNETC_RETURN_IF_ERROR(carriedPairs(plan, p, carry, carried));
  // The outputs that come back, and the work only the others need skipped.
  std::set<std::string> carriedNames;
  for (const auto &[out, in] : carry)
    carriedNames.insert(out);
  const std::set<std::string> wanted(opts.wanted.begin(), opts.wanted.end());
  chooseWanted(plan, p, carriedNames, wanted);

  // 3. This step's bound inputs, parameters and seed; clean status words.
  for (const Buffer &b : plan.buffers)
    if (bound[b.id]) {
      XLNETC_RETURN_IF_ERROR(device_.upload(
          p.addr[b.id], bound[b.id]->bytes(), // a view too
          static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype)));
      p.kept.erase(b.id);
    }
  const host::StepRandomRecord rnd = host::stepRandomRecord(opts.seed, opts.rows);
  XLNETC_RETURN_IF_ERROR(device_.upload(p.seed, &rnd, sizeof rnd));
  if (p.statusSteps > 0)
    XLNETC_RETURN_IF_ERROR(device_.memset(p.status, 0, p.statusBytes));

  // 4. The work, in plan order, without reading anything back.
  XLNETC_RETURN_IF_ERROR(runWork(plan, p, opts));
  // 5. The inputs asked to stay kept do; the carried outputs become kept
  //    inputs, on the device (copies in order after the step's work).
  keepAsked(program, p, bound, opts.keep);
  for (auto [out, in] : carried) {
    const Buffer &b = plan.buffers[size_t(out)];
    if (p.addr[size_t(in)] != p.addr[size_t(out)]) // else updated in place
      XLNETC_RETURN_IF_ERROR(device_.copy(
          p.addr[size_t(in)], p.addr[size_t(out)],
          static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype)));
    p.kept.insert(in);
  }

  // 6. The other outputs (the loss, the gradient norm, ...) are copied back
  //    without waiting: finish() collects them.
  auto pending = std::make_unique<Pending>();
  pending->plan = &plan;
  XLNETC_RETURN_IF_ERROR(startReadback(plan, p, carriedNames, wanted, *pending));
  pending_ = std::move(pending);
  return Status::ok();
}

Status DeviceExecutor::finish(TensorMap &outputs) {
  if (!pending_)
    return Status::error("internal error: no step is in flight");
  std::unique_ptr<Pending> pending = std::move(pending_);
  const Plan &plan = *pending->plan;
  Prepared &p = *prepared_;
  XLNETC_RETURN_IF_ERROR(device_.synchronize("the end of the step"));

  // 7. Data errors: the first reporting step in plan order.
  if (p.statusSteps > 0) {
    std::vector<int> words(size_t(p.statusSteps) * kStatusWords);
    XLNETC_RETURN_IF_ERROR(device_.download(words.data(), p.status, p.statusBytes));
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (p.statusSlot[i] < 0)
        continue;
      const int *w = &words[size_t(p.statusSlot[i]) * kStatusWords];
      if (w[0] != 0)
        return Status::error(stepPrefix(i, plan.steps[i]) +
                             statusMessage(plan, plan.steps[i], w));
    }
  }

  // 8. The outputs, as the host executor returns them.
  for (const auto &[id, names] : pending->returned) {
    const Buffer &b = plan.buffers[size_t(id)];
    Tensor t = Tensor::zeros(b.dtype, b.shape);
    std::memcpy(t.storage.data(), p.staging.at(id), t.nbytes());
    for (const std::string &name : names)
      outputs[name] = t;
  }
  return Status::ok();
}

} // namespace xlnetc::rt
