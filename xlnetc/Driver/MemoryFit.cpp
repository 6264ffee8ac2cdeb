//===- MemoryFit.cpp - Refuse a step that cannot fit ----------------------===//

#include "xlnetc/Driver/MemoryFit.h"

#include "runtime/exec/MemoryCheck.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace xlnetc {

namespace {

/// Where `executor`'s step keeps its memory.
rt::StepMemory memoryOf(const rt::Executor &executor) {
  switch (executor.kind()) {
  case rt::dev::DeviceKind::Cuda:
    return rt::StepMemory::Gpu;
  case rt::dev::DeviceKind::Emu:
    return rt::StepMemory::EmulatedDevice;
  default:
    return rt::StepMemory::HostExecutor;
  }
}

/// The need of one step of `spec` at `batch` rows, or -1 when the step
/// cannot be compiled at that batch (a bundle holds one shape).
int64_t needAtBatch(const ModelSpec &spec, StepShape shape, StepKind step, int64_t batch,
                    rt::StepMemory where, bool keepsCopy, const StepCompiler &compile) {
  shape.batch = batch;
  shape.accumulate = shape.accumulate && step != StepKind::Forward;
  rt::Plan plan;
  std::string ignored;
  // A device program made for any GPU: its memory does not depend on it.
  if (!compile(spec, shape, step, plan, ignored, nullptr,
               where != rt::StepMemory::HostExecutor
                   ? std::optional<rt::dev::GpuTarget>(rt::dev::GpuTarget())
                   : std::nullopt))
    return -1;
  return rt::stepMemoryNeed(plan, where, keepsCopy).total();
}

/// The largest micro-batch of gradient accumulation, at most `most` rows and
/// dividing the process's `processRows` into equal micro-batches (of a
/// multiple of `unit` rows), whose training step fits `limit` with every
/// micro-batch's memory set aside beside it; 0 when none does (or none is
/// tried: a few probes, from the largest).
int64_t fittingMicroBatch(const ModelSpec &spec, StepShape shape, int64_t most, int64_t unit,
                          int64_t limit, int64_t processRows, rt::StepMemory where,
                          bool keepsCopy, const StepCompiler &compile) {
  const int64_t aside = memoryBytesOfRows(spec, processRows);
  shape.accumulate = true;
  int probes = 0;
  for (int64_t m = std::min(most, processRows - 1) / unit * unit; m >= unit && probes < 8;
       m -= unit) {
    if (processRows % m != 0)
      continue;
    ++probes;
    const int64_t n = needAtBatch(spec, shape, StepKind::Train, m, where, keepsCopy, compile);
    if (n < 0)
      return 0;
    if (n + aside <= limit)
      return m;
  }
  return 0;
}

/// The hint after "does not fit": the largest batch that fits (and, for a
/// training step, the micro-batch that keeps the batch), or which keys to
/// reduce when none does.
std::string fitHint(const ModelSpec &spec, const StepShape &shape, StepKind step,
                    const rt::StepMemoryNeed &need, int64_t limit, rt::StepMemory where,
                    bool keepsCopy, int ranks, int64_t processRows,
                    const StepCompiler &compile) {
  const std::string modelKeys = "reduce n_token, d_model, d_inner or n_layer";
  if (need.stateBytes > limit)
    return fmt::format("the model's state alone ({}) does not fit: {}",
                       rt::formatBytes(need.stateBytes), modelKeys);
  const int64_t unit = spec.biData ? 2 : 1; // bi_data needs an even batch
  const auto at = [&](int64_t b) {
    return needAtBatch(spec, shape, step, b, where, keepsCopy, compile);
  };
  const int64_t smallest = shape.batch <= unit ? need.total() : at(unit);
  if (smallest < 0)
    return "compile the step for a smaller batch (xlnetc compile --batch-size)";
  if (smallest > limit)
    return fmt::format("even a batch of {} needs {}: reduce seq_len or mem_len, or {}", unit,
                       rt::formatBytes(smallest), modelKeys);
  // The need grows about linearly with the batch: the first probe is the
  // batch the two needs predict, the second one row more (the estimate is
  // usually exact), then bisection; lo fits, hi does not.
  int64_t lo = unit, hi = shape.batch;
  const double perRow = double(need.total() - smallest) / double(shape.batch - unit);
  int64_t probe = perRow > 0 ? unit + int64_t(std::floor(double(limit - smallest) / perRow))
                             : lo + (hi - lo) / 2;
  for (int probes = 0; hi - lo > unit && probes < 24; ++probes) {
    probe = std::clamp<int64_t>(probe / unit * unit, lo + unit, hi - unit);
    const int64_t n = at(probe);
    if (n < 0)
      break;
    (n <= limit ? lo : hi) = probe;
    probe = probes == 0 && n <= limit ? lo + unit : lo + (hi - lo) / 2;
  }
  const std::string largest =
      ranks > 1 ? fmt::format("the largest batch that fits is {} rows per process "
                              "(train_batch_size {} over {} processes)",
                              lo, lo * ranks, ranks)
                : fmt::format("the largest batch that fits is {} (train_batch_size; "
                              "--batch-size when compiling a bundle)",
                              lo);
  const int64_t m = step == StepKind::Train
                        ? fittingMicroBatch(spec, shape, lo, unit, limit, processRows, where,
                                            keepsCopy, compile)
                        : 0;
  if (m <= 0)
    return largest;
  return largest + fmt::format("; or keep train_batch_size {} with gradient accumulation: "
                               "micro_batch_size = {} in [train] (or --micro-batch {}), {} "
                               "micro-batches{}",
                               spec.trainBatchSize, m, m, processRows / m,
                               ranks > 1 ? " on each process" : "");
}

/// --memory-limit in bytes (0: not given); false, with `error`, when it is
/// not a size.
bool memoryLimitArg(const MemoryCheckArgs &args, int64_t &limit, std::string &error) {
  limit = 0;
  if (args.limit.empty())
    return true;
  if (rt::Status st = rt::parseByteSize(args.limit, limit); !st) {
    error = "--memory-limit: " + st.message();
    return false;
  }
  return true;
}

/// The memory a step may use (`what` says whose): --memory-limit or what
/// the executor's memory has, this process's share of it; false, with
/// `error`, when it cannot be read.
bool stepLimit(const MemoryCheckArgs &args, rt::Executor &executor, int64_t &limit,
               std::string &what, std::string &error) {
  if (!memoryLimitArg(args, limit, error))
    return false;
  if (limit > 0) {
    what = "is the --memory-limit";
  } else if (rt::Status st = rt::memoryAvailable(executor, limit, what); !st) {
    error = st.message();
    return false;
  }
  if (args.sharers > 1) { // ranks on one node share its RAM
    limit /= args.sharers;
    what += fmt::format(" (a share of {}: {} processes on this node)",
                        rt::formatBytes(limit * args.sharers), args.sharers);
  }
  return true;
}

} // namespace

bool checkStepFits(const ModelSpec &spec, const StepShape &shape, StepKind step,
                   const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
                   const MemoryCheckArgs &args, const StepCompiler &compile,
                   std::string &error) {
  if (args.skip)
    return true;
  int64_t limit = 0;
  std::string what;
  if (!stepLimit(args, executor, limit, what, error))
    return false;
  const rt::StepMemory where = memoryOf(executor);
  rt::StepMemoryNeed need = rt::stepMemoryNeed(plan, where, keepsCopy);
  need.stepBytes += args.asideBytes; // the other micro-batches' memory
  if (need.total() <= limit)
    return true;

  const std::string memory =
      executor.kind() == rt::dev::DeviceKind::Cuda ? "GPU memory" : "memory";
  const std::string state = step == StepKind::Train
                                ? "parameters and Adam moments"
                                : "parameters";
  error = fmt::format(
      "the {} step does not fit: it needs {} of {} but {} {}: {} for the {} (n_token {}, "
      "d_model {}, d_inner {}, n_layer {}) and {} for the step's activations, gradients "
      "and inputs (batch {}, seq_len {}, mem_len {}, num_predict {}); {}; "
      "--no-memory-check skips this check",
      stepKindName(step), rt::formatBytes(need.total()), memory, rt::formatBytes(limit), what,
      rt::formatBytes(need.stateBytes), state, spec.nToken, spec.dModel, spec.dInner,
      spec.nLayer, rt::formatBytes(need.stepBytes), shape.batch, shape.seqLen, shape.mlen,
      shape.numPredict,
      fitHint(spec, shape, step, need, limit, where, keepsCopy, args.ranks,
              args.processRows > 0 ? args.processRows : shape.batch, compile));
  return false;
}

bool stepFits(const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
              const MemoryCheckArgs &args, int64_t extraBytes) {
  int64_t limit = 0;
  std::string what, error;
  if (args.skip || !stepLimit(args, executor, limit, what, error))
    return true;
  return rt::stepMemoryNeed(plan, memoryOf(executor), keepsCopy).total() + extraBytes <= limit;
}

bool pipelineMemoryBudget(const rt::Plan &plan, rt::Executor &executor, bool keepsCopy,
                          const MemoryCheckArgs &args, int64_t &bytes, std::string &what,
                          std::string &error) {
  bytes = 0;
  if (args.skip)
    return true;
  const bool onGpu = executor.kind() == rt::dev::DeviceKind::Cuda;
  int64_t limit = 0;
  if (!onGpu && !memoryLimitArg(args, limit, error))
    return false;
  if (limit > 0) {
    what = "the --memory-limit";
  } else if (rt::Status st = rt::hostMemoryAvailable(limit); !st) {
    error = st.message();
    return false;
  } else {
    what = "the available RAM";
  }
  if (args.sharers > 1)
    limit /= args.sharers;
  if (!onGpu) {
    limit -= rt::stepMemoryNeed(plan, memoryOf(executor), keepsCopy).total();
    what += " less the step's need";
  }
  bytes = std::max<int64_t>(limit, 1);
  return true;
}

} // namespace xlnetc
