//===- DeviceExecutor.cpp - Runs a device program on a Device -------------===//

#include "runtime/DeviceExecutor.h"

#include "runtime/MemoryPlan.h"
#include "runtime/device/Sha256.h"

#include <fmt/format.h>

#include <cstring>

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
  }
  Status alloc(size_t bytes, dev::DevPtr &out) {
    XLNETC_RETURN_IF_ERROR(device_.alloc(bytes ? bytes : 1, out));
    ptrs_.push_back(out);
    return Status::ok();
  }

private:
  dev::Device &device_;
  std::vector<dev::DevPtr> ptrs_;
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

DeviceExecutor::~DeviceExecutor() = default;

Status DeviceExecutor::module(const DeviceProgram &program,
                              LoadedModule *&out) {
  const std::string key = program.sourceDigest.empty()
                              ? Sha256::hexHash(program.source)
                              : program.sourceDigest;
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    LoadedModule loaded;
    dev::ModuleSource src;
    src.name = program.moduleName;
    src.text = program.source;
    XLNETC_RETURN_IF_ERROR(device_.loadModule(src, loaded.module));
    it = modules_.emplace(key, std::move(loaded)).first;
  }
  out = &it->second;
  return Status::ok();
}

Status DeviceExecutor::execute(const Plan &plan, const DeviceProgram &program,
                               const TensorMap &bindings, TensorMap &outputs,
                               const ExecOptions &opts) {
  size_t n = plan.buffers.size();
  if (program.steps.size() != plan.steps.size())
    return Status::error(fmt::format(
        "internal error: the device program has {} steps, the plan {}",
        program.steps.size(), plan.steps.size()));

  // 1. Check the bindings before any device work.
  std::vector<const Tensor *> bound(n, nullptr);
  for (const Buffer &b : plan.buffers)
    if (b.role != Buffer::Temp)
      XLNETC_RETURN_IF_ERROR(checkBinding(b, bindings, bound[b.id]));

  LoadedModule *mod = nullptr;
  XLNETC_RETURN_IF_ERROR(module(program, mod));

  // 2. Device memory: every input and parameter, one arena for the temps
  //    (the program's memory plan), the largest step workspace, the status
  //    words of the reporting steps, the tables.
  MemoryPlan local;
  const MemoryPlan *memory = &program.memory;
  if (memory->offset.size() != n) { // a program built without its plan
    local = planMemory(plan, &program);
    memory = &local;
  }
  Allocations allocs(device_);
  std::vector<dev::DevPtr> addr(n, 0);
  dev::DevPtr arena = 0;
  XLNETC_RETURN_IF_ERROR(allocs.alloc(size_t(memory->arenaBytes), arena).withPrefix(
      fmt::format("the arena of the temporaries ({} bytes): ", memory->arenaBytes)));
  for (const Buffer &b : plan.buffers) {
    if (b.role == Buffer::Temp) {
      addr[b.id] = arena + dev::DevPtr(memory->offset[size_t(b.id)]);
      continue;
    }
    size_t bytes = static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype);
    XLNETC_RETURN_IF_ERROR(allocs.alloc(bytes, addr[b.id]).withPrefix(
        fmt::format("buffer {} ({}): ", b.id, b.name)));
    XLNETC_RETURN_IF_ERROR(device_.upload(addr[b.id], bound[b.id]->storage.data(), bytes));
  }
  int64_t workspaceBytes = 0;
  std::vector<int> statusSlot(plan.steps.size(), -1);
  int statusSteps = 0;
  for (size_t i = 0; i < program.steps.size(); ++i) {
    workspaceBytes = std::max(workspaceBytes, program.steps[i].workspaceBytes);
    if (program.steps[i].status)
      statusSlot[i] = statusSteps++;
  }
  dev::DevPtr workspace = 0, status = 0;
  if (workspaceBytes > 0)
    XLNETC_RETURN_IF_ERROR(allocs.alloc(size_t(workspaceBytes), workspace));
  size_t statusBytes = size_t(statusSteps) * kStatusWords * sizeof(int);
  if (statusSteps > 0) {
    XLNETC_RETURN_IF_ERROR(allocs.alloc(statusBytes, status));
    XLNETC_RETURN_IF_ERROR(device_.memset(status, 0, statusBytes));
  }
  std::vector<dev::DevPtr> tables(program.tables.size(), 0);
  for (size_t t = 0; t < program.tables.size(); ++t) {
    const DeviceTable &table = program.tables[t];
    std::vector<unsigned char> bytes;
    for (const DeviceTable::Entry &e : table.entries) {
      auto at = [&](size_t k) { return uint64_t(addr[e.buffers.at(k)]); };
      if (table.kind == DeviceTable::Norm) {
        NormEntry ne{at(0), e.count, e.chunkBegin};
        const auto *p = reinterpret_cast<const unsigned char *>(&ne);
        bytes.insert(bytes.end(), p, p + sizeof ne);
      } else {
        AdamEntry ae{at(0), at(1), at(2), at(3), at(4), at(5), at(6),
                     e.count, e.chunkBegin, e.decay ? 1 : 0, 0};
        const auto *p = reinterpret_cast<const unsigned char *>(&ae);
        bytes.insert(bytes.end(), p, p + sizeof ae);
      }
    }
    XLNETC_RETURN_IF_ERROR(allocs.alloc(bytes.size(), tables[t]));
    XLNETC_RETURN_IF_ERROR(
        device_.upload(tables[t], bytes.data(), bytes.size()));
  }

  // 3. The launches, in plan order, without reading anything back.
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    std::string where = stepPrefix(i, step);
    dev::DevPtr stepStatus =
        statusSlot[i] < 0 ? 0
                          : status + size_t(statusSlot[i]) * kStatusWords *
                                         sizeof(int);
    // Temps start as zeros, as the host executor hands them to its kernels
    // (a kernel may leave elements alone, e.g. rel_pos_encoding's last
    // column for an odd D); the arena's memory was another temp's before.
    for (int id : memory->firstTouched[i]) {
      const Buffer &b = plan.buffers[size_t(id)];
      size_t bytes = static_cast<size_t>(numelOf(b.shape)) * dtypeSize(b.dtype);
      if (bytes > 0)
        XLNETC_RETURN_IF_ERROR(device_.memset(addr[size_t(id)], 0, bytes).withPrefix(where));
    }
    for (const DeviceLaunch &l : program.steps[i].launches) {
      if (l.kind == DeviceLaunch::Gemm) {
        dev::GemmOperands ops;
        ops.a = addr[l.a];
        ops.b = addr[l.b];
        ops.d = addr[l.d];
        ops.c = ops.d;
        ops.bias = l.bias >= 0 ? addr[l.bias] : 0;
        ops.aux = l.aux >= 0 ? addr[l.aux] : 0;
        XLNETC_RETURN_IF_ERROR(device_.gemm(l.gemm, ops, where));
        continue;
      }
      auto k = mod->kernels.find(l.kernel);
      if (k == mod->kernels.end()) {
        dev::Kernel kernel;
        XLNETC_RETURN_IF_ERROR(
            device_.getKernel(*mod->module, l.kernel, kernel).withPrefix(where));
        k = mod->kernels.emplace(l.kernel, kernel).first;
      }
      // One 8-byte slot per parameter: pointers and the seed are 8 bytes.
      std::vector<uint64_t> values(l.args.size());
      std::vector<void *> params(l.args.size());
      for (size_t a = 0; a < l.args.size(); ++a) {
        const KernelArg &arg = l.args[a];
        switch (arg.kind) {
        case KernelArg::Buffer:
          values[a] = addr[arg.index];
          break;
        case KernelArg::Null:
          values[a] = 0;
          break;
        case KernelArg::Workspace:
          values[a] = workspace + uint64_t(arg.value);
          break;
        case KernelArg::Status:
          values[a] = stepStatus;
          break;
        case KernelArg::Seed:
          values[a] = opts.seed;
          break;
        case KernelArg::Table:
          values[a] = tables[arg.index];
          break;
        case KernelArg::Immediate:
          values[a] = uint64_t(arg.value);
          break;
        }
        params[a] = &values[a];
      }
      dev::LaunchDims dims;
      dims.grid[0] = l.grid;
      dims.block[0] = l.block;
      dims.dynSmem = l.dynSmem;
      XLNETC_RETURN_IF_ERROR(
          device_.launch(k->second, dims, params.data(), where));
    }
  }
  XLNETC_RETURN_IF_ERROR(device_.synchronize("the end of the step"));

  // 4. Data errors: the first reporting step in plan order.
  if (statusSteps > 0) {
    std::vector<int> words(size_t(statusSteps) * kStatusWords);
    XLNETC_RETURN_IF_ERROR(device_.download(words.data(), status, statusBytes));
    for (size_t i = 0; i < plan.steps.size(); ++i) {
      if (statusSlot[i] < 0)
        continue;
      const int *w = &words[size_t(statusSlot[i]) * kStatusWords];
      if (w[0] != 0)
        return Status::error(stepPrefix(i, plan.steps[i]) +
                             statusMessage(plan, plan.steps[i], w));
    }
  }

  // 5. The outputs, as the host executor returns them.
  TensorMap result;
  for (const Buffer &b : plan.buffers) {
    if (b.outputs.empty())
      continue;
    Tensor t = Tensor::zeros(b.dtype, b.shape);
    XLNETC_RETURN_IF_ERROR(
        device_.download(t.storage.data(), addr[b.id], t.nbytes()));
    for (const std::string &name : b.outputs)
      result[name] = t;
  }
  for (auto &[name, t] : result)
    outputs[name] = std::move(t);
  return Status::ok();
}

} // namespace xlnetc::rt
