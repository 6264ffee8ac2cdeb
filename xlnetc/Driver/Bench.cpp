//===- Bench.cpp - Benchmark programs: the training step, the attention --===//

#include "xlnetc/Driver/Bench.h"
#include "xlnetc/Driver/MemoryFit.h"

#include "xlnetc/Driver/Bundle.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Synthetic.h"
#include "xlnetc/Driver/Weights.h"
#include "xlnetc/Spec/Spec.h"

#include "runtime/BFloat16.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/Plan.h"
#include "runtime/data/Batch.h"
#include "runtime/train/Trainer.h"
#include "runtime/host/GemmKernels.h"
#include "runtime/host/Kernels.h"
#include "target/cuda/AttentionTc.h"
#include "target/cuda/CudaEmitter.h"
#include "runtime/device/Device.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <random>

namespace xlnetc {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}
double mib(double bytes) { return bytes / (1024.0 * 1024.0); }

/// `bench --profile`: the host executor's time in each op kind (steps
/// are timed from beforeStep to afterStep, so the executor's own
/// bookkeeping between steps is not in any op's time).
class OpProfile final : public rt::StepObserver {
public:
  /// Only steps while `timing` is set count (the warmup's do not).
  bool timing = false;

  rt::Status beforeStep(size_t, const rt::Step &) override {
    start_ = Clock::now();
    return rt::Status::ok();
  }
  rt::Status afterStep(size_t, const rt::Step &step, const std::vector<rt::Tensor *> &) override {
    if (timing) {
      Entry &e = byOp_[step.op];
      e.seconds += seconds(start_, Clock::now());
      ++e.count;
    }
    return rt::Status::ok();
  }
  bool wantsDeviceStep(size_t) const override { return false; }
  rt::Status beforeDeviceStep(size_t, const rt::Step &, const DeviceBuffers &) override {
    return rt::Status::error("bench --profile times the host executor only");
  }

  /// The table under a bundle's row (ms per training step of `steps`
  /// timed ones, largest first) and its JSON.
  void report(int steps, double stepSeconds, std::string &table,
              json &out) const {
    std::vector<std::pair<std::string, Entry>> rows(byOp_.begin(), byOp_.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) {
      return a.second.seconds > b.second.seconds;
    });
    double total = 0;
    int64_t run = 0;
    out = json::array();
    table += fmt::format("    {:<22} {:>9} {:>9} {:>7}\n", "op", "per step", "ms/step", "share");
    for (const auto &[op, e] : rows) {
      const double ms = e.seconds / steps * 1e3;
      const int64_t perStep = e.count / steps;
      total += ms;
      run += perStep;
      table += fmt::format("    {:<22} {:>9} {:>9.2f} {:>6.1f}%\n", op, perStep, ms,
                           100.0 * ms / (stepSeconds * 1e3));
      out.push_back({{"op", op}, {"steps_per_step", perStep}, {"ms_per_step", ms}});
    }
    table += fmt::format("    {:<22} {:>9} {:>9.2f} {:>6.1f}%  (the rest: the executor "
                         "between ops)\n",
                         "all ops", run, total, 100.0 * total / (stepSeconds * 1e3));
  }

  /// Seconds per training step of `steps` timed ones in the ops `ops`.
  double secondsPerStep(std::initializer_list<const char *> ops, int steps) const {
    double s = 0;
    for (const char *op : ops)
      if (auto it = byOp_.find(op); it != byOp_.end())
        s += it->second.seconds;
    return s / steps;
  }

private:
  struct Entry {
    double seconds = 0;
    int64_t count = 0;
  };
  std::map<std::string, Entry> byOp_;
  Clock::time_point start_;
};

/// The bf16 GEMM rate of the device (TFLOP/s): `size`³ products with bf16
/// A, B and D and f32 accumulation, as the training step's GEMMs run.
rt::Status measureGemm(rt::dev::Device &dev, int64_t size, double &tflops) {
  namespace dv = rt::dev;
  dv::GemmDesc d;
  d.m = d.n = d.k = size;
  d.lda = d.ldb = d.ldc = size;
  d.ab = d.cd = dv::GemmType::BF16;
  const size_t bytes = size_t(size * size) * 2;
  std::vector<uint16_t> host(static_cast<size_t>(size * size));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (uint16_t &h : host)
    h = rt::bf16FromFloat(u(gen));
  dv::GemmOperands ops;
  rt::Status st = dev.alloc(bytes, ops.a);
  if (st)
    st = dev.alloc(bytes, ops.b);
  if (st)
    st = dev.alloc(bytes, ops.d);
  ops.c = ops.d;
  if (st)
    st = dev.upload(ops.a, host.data(), bytes);
  if (st)
    st = dev.upload(ops.b, host.data(), bytes);
  const bool gpu = dev.kind() == dv::DeviceKind::Cuda;
  const int warmup = gpu ? 3 : 1, iters = gpu ? 20 : 2;
  for (int i = 0; st && i < warmup; ++i)
    st = dev.gemm(d, ops, "the reference GEMM");
  if (st)
    st = dev.synchronize("the reference GEMM");
  const auto t0 = Clock::now();
  for (int i = 0; st && i < iters; ++i)
    st = dev.gemm(d, ops, "the reference GEMM");
  if (st)
    st = dev.synchronize("the reference GEMM");
  const double secs = seconds(t0, Clock::now());
  for (dv::DevPtr p : {ops.a, ops.b, ops.d})
    if (p)
      dev.free(p);
  XLNETC_RETURN_IF_ERROR(st);
  tflops = 2.0 * double(size) * double(size) * double(size) * iters / secs / 1e12;
  return rt::Status::ok();
}

/// The fp32 sgemm rate of this CPU (GFLOP/s): `size`³ through the host
/// executor's own GEMM (rt::host::gemm: OpenMP splits the rows, one
/// single-threaded OpenBLAS sgemm per block), with the executor's threads.
double measureHostSgemm(int64_t size, int threads) {
  rt::HostThreadScope scope(threads);
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> data(static_cast<size_t>(size * size));
  for (float &f : data)
    f = u(gen);
  const rt::Tensor a = rt::Tensor::fromF32({size, size}, data);
  rt::Tensor out = rt::Tensor::zeros(rt::DType::F32, {size, size});
  rt::host::gemm(a, a, nullptr, 1, false, rt::Activation::None, out); // warm up
  // The best of 5 timings of at least 0.1 s each: a CPU's rate is noisy
  // (frequency, a neighbour), and the denominator should be its best.
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    int iters = 0;
    const auto t0 = Clock::now();
    double secs = 0;
    do {
      rt::host::gemm(a, a, nullptr, 1, false, rt::Activation::None, out);
      ++iters;
      secs = seconds(t0, Clock::now());
    } while (secs < 0.1);
    best = std::max(best, 2.0 * double(size) * double(size) * double(size) * iters / secs / 1e9);
  }
  return best;
}

/// Model FLOPs of one step: every GEMM of the device program (2·m·n·k per
/// batch entry, as issued) plus the attention's products counted
/// algorithmically — the forward's ac, bd and P·v, 2·B·N·T·K·H each, the
/// backward's six (dout·vᵀ, dv, dk, dq·k, dq·k_r, dk_r); the recomputation
/// of the scores in the backward is not counted (the convention of
/// FlashAttention's reports).
/// The GEMMs' share of stepFlops: the device program's GEMM launches, or on
/// the host the plan's gemm and gemm_wgrad steps.
double gemmFlops(const rt::Plan &plan) {
  double f = 0;
  if (plan.device)
    for (const rt::DeviceStep &s : plan.device->steps)
      for (const rt::DeviceLaunch &l : s.launches)
        if (l.kind == rt::DeviceLaunch::Gemm)
          f += 2.0 * double(l.gemm.m) * double(l.gemm.n) * double(l.gemm.k) *
               double(l.gemm.batch);
  if (!plan.device)
    for (const rt::Step &s : plan.steps) {
      if (s.kind != rt::OpKind::Gemm && s.kind != rt::OpKind::GemmWgrad)
        continue;
      const bool wgrad = s.kind == rt::OpKind::GemmWgrad;
      const rt::host::GemmView v = rt::host::gemmView(
          plan.buffers[size_t(s.in[0])].shape, s.attrs.kRank,
          plan.buffers[size_t(wgrad ? s.in[1] : s.out[0])].shape);
      f += 2.0 * double(v.M) * double(v.K) * double(v.N);
    }
  return f;
}

double stepFlops(const rt::Plan &plan) {
  double f = gemmFlops(plan);
  for (const rt::Step &s : plan.steps) {
    const bool grad = s.kind == rt::OpKind::RelAttentionGrad;
    if (!grad && s.kind != rt::OpKind::RelAttention)
      continue;
    const size_t o = grad ? 1 : 0;
    const std::vector<int64_t> &q = plan.buffers[size_t(s.in[o])].shape;
    const int64_t K = plan.buffers[size_t(s.in[o + 1])].shape[1];
    f += (grad ? 12.0 : 6.0) * double(q[0]) * double(q[2]) * double(q[1]) * double(K) *
         double(q[3]);
  }
  return f;
}

/// The default size of the reference GEMM on this device.
int64_t gemmSizeFor(const rt::dev::Device &dev, int64_t asked) {
  if (asked > 0)
    return asked;
  return dev.kind() == rt::dev::DeviceKind::Cuda ? 8192 : 256;
}

bool writeJson(const std::string &path, const json &j, std::string &error) {
  if (path.empty())
    return true;
  return writeText(path, j.dump(2) + "\n", error);
}

} // namespace

/// The reference GEMM rate of the device `args` names, and whether it is
/// the host.
namespace {
struct BenchReference {
  int64_t gemmSize = 0;
  double gemmTflops = 0;
  std::string deviceText;
  bool host = false; // the host executor: an fp32 sgemm reference, no device memory
};
} // namespace
/// Measures the reference once before the bundles; 0 or the exit code.
static int measureReference(const BenchArgs &args, BenchReference &ref) {
  std::string error;
  rt::Executor probe;
  if (!openExecutor(args.device, args.noKernelCache, args.threads, probe, error))
    return fail(error);
  rt::dev::Device *probeDev = probe.device();
  ref.host = probeDev == nullptr;
  if (args.profile && !ref.host)
    return fail(fmt::format("bench: --profile times the host executor's ops; {} runs "
                            "the step as kernels (use --device host, or nsys/ncu on a GPU)",
                            probe.description()));
  if (args.noHostFusion && !ref.host)
    return fail(fmt::format("bench: --no-host-fusion switches off the host executor's "
                            "beta-1 GEMMs and kept probabilities; {} runs the device "
                            "program (use --device host)",
                            probe.description()));
  if (ref.host) {
    ref.gemmSize = args.gemmSize > 0 ? args.gemmSize : 1024;
    ref.gemmTflops = measureHostSgemm(ref.gemmSize, args.threads) / 1e3;
  } else {
    ref.gemmSize = gemmSizeFor(*probeDev, args.gemmSize);
    if (rt::Status st = measureGemm(*probeDev, ref.gemmSize, ref.gemmTflops); !st)
      return fail("bench: " + st.message());
  }
  ref.deviceText = probe.description(args.threads);
  return 0;
}

/// `args.warmup` untimed and `args.steps` timed training steps of bundle
/// `b`'s `plan` on `executor`, from the state a run starts from and a
/// synthetic batch, bound as the trainer binds them (its StepState): the
/// timed steps' seconds and the last step's outputs; 0 or the exit code.
static int timeTrainingSteps(const BenchArgs &args, const std::string &dir, const ModelSpec &spec,
                      const Bundle &b, const rt::Plan &plan, rt::Executor &executor,
                      OpProfile &profile, std::vector<double> &times,
                      rt::TensorMap &outputs) {
  // The bundle's step reads memory when its shape has some (a bundle may
  // be compiled with --mlen 0 from a spec with mem_len > 0).
  rt::train::StepState state(planParamShapes(plan), spec.nLayer, b.shape.mlen > 0);
  state.startFresh(rt::train::initialParameters(plan, spec.initRange, 1),
                   {b.shape.mlen, b.shape.batch, spec.dModel});
  rt::TensorMap batch;
  if (rt::Status st = syntheticBatch(spec, b.shape, 1, batch); !st)
    return fail("bench: cannot build a synthetic batch: " + st.message());
  rt::data::PermMaskForm form;
  if (rt::Status st = rt::data::compactPermMask(batch, form); !st)
    return fail("bench: synthetic batch: " + st.message());
  executor.setCarry(state.carry());

  rt::ExecOptions exec;
  exec.threads = args.threads;
  exec.fuse = !args.noHostFusion;
  // What a training loop reads: nothing else is cast or copied back.
  exec.wanted = {"loss", "grad_norm", "lr"};
  if (args.profile)
    exec.observer = &profile;
  for (int i = 0; i < args.warmup + args.steps; ++i) {
    profile.timing = i >= args.warmup;
    state.bindInputs(i == 0 ? std::move(batch) : rt::TensorMap(), i);
    exec.seed = uint64_t(i) + 1;
    const auto t0 = Clock::now();
    rt::Status st = executor.start(plan, state.bindings(), exec);
    state.handedToExecutor();
    if (st)
      st = executor.finish(outputs);
    if (!st)
      return fail(fmt::format("bench: {} step {}: {}", dir, i + 1, st.message()));
    if (i >= args.warmup)
      times.push_back(seconds(t0, Clock::now()));
  }
  return 0;
}

/// Times the training step of bundle `dir` (a fresh executor: its memory
/// is all this step's) and adds its row to `table` and `rows`; 0 or the
/// exit code.
static int benchBundle(const BenchArgs &args, const std::string &dir, const BenchReference &ref,
                std::string &table, json &rows) {
  std::string error;
  Bundle b;
  if (rt::Status st = readBundle(dir, b); !st)
    return fail(st.message());
  if (b.step != StepKind::Train)
    return fail(fmt::format("bench: {} holds the {} step; bench times training steps "
                            "(compile with --step train, the default)",
                            dir, stepKindName(b.step)));
  if (b.shape.accumulate)
    return fail(fmt::format("bench: {} holds a micro-batch of gradient accumulation; bench "
                            "times a whole training step (compile without --micro-batch)",
                            dir));
  ModelSpec spec;
  if (!loadSpec(b.specPath, spec, error))
    return failDiagnostics(error);
  // A fresh executor per bundle: its memory is all this step's.
  rt::Executor executor;
  if (!openExecutor(args.device, args.noKernelCache, args.threads, executor, error))
    return fail(error);
  rt::dev::Device *dev = executor.device();
  size_t before = 0, after = 0;
  if (dev)
    if (rt::Status st = dev->memoryInUse(before); !st)
      return fail(st.message());
  rt::Plan plan;
  if (!bundleCompiler(b)(spec, b.shape, b.step, plan, error, nullptr, deviceTarget(executor)))
    return failDiagnostics(error);
  if (!checkStepFits(spec, b.shape, b.step, plan, executor, /*keepsCopy=*/false,
                     args.memory, bundleCompiler(b), error))
    return fail(b.dir + ": " + error);

  std::vector<double> times;
  rt::TensorMap outputs;
  OpProfile profile;
  if (int rc = timeTrainingSteps(args, dir, spec, b, plan, executor, profile, times, outputs))
    return rc;
  if (dev)
    if (rt::Status st = dev->memoryInUse(after); !st)
      return fail(st.message());
  std::sort(times.begin(), times.end());
  const size_t mid = times.size() / 2;
  const double median =
      times.size() % 2 ? times[mid] : 0.5 * (times[mid - 1] + times[mid]);
  const double tokens = double(b.shape.batch * b.shape.seqLen);
  const double flops = stepFlops(plan);
  const double tflops = flops / median / 1e12;
  const double predicted = plan.device ? double(plan.device->memory.totalBytes()) : 0;
  const double measured = double(after > before ? after - before : 0);
  const std::string name = std::filesystem::path(dir).filename().string();
  // The host allocates from the heap, not a planned arena: no memory columns.
  const std::string predictedText = ref.host ? "-" : fmt::format("{:.0f}", mib(predicted));
  const std::string measuredText = ref.host ? "-" : fmt::format("{:.0f}", mib(measured));
  table += fmt::format("{:<20} {:>6} {:>7} {:>5} {:>6} {:>10.2f} {:>11.0f} {:>9.3f} {:>6.1f}% "
                       "{:>10} {:>10}\n",
                       name.substr(0, 20), spec.nLayer, spec.dModel, b.precision,
                       b.shape.batch, median * 1e3, tokens / median, tflops,
                       100.0 * tflops / ref.gemmTflops, predictedText, measuredText);
  rows.push_back({{"bundle", dir},
                  {"n_layer", spec.nLayer},
                  {"d_model", spec.dModel},
                  {"precision", b.precision},
                  {"batch", b.shape.batch},
                  {"seq_len", b.shape.seqLen},
                  {"mem_len", b.shape.mlen},
                  {"num_predict", b.shape.numPredict},
                  {"step_ms_median", median * 1e3},
                  {"step_ms", [&] {
                     json t = json::array();
                     for (double s : times)
                       t.push_back(s * 1e3);
                     return t;
                   }()},
                  {"tokens_per_s", tokens / median},
                  {"model_flops_per_step", flops},
                  {"tflops", tflops},
                  {"mfu", tflops / ref.gemmTflops},
                  {"memory_predicted_bytes", predicted},
                  {"memory_measured_bytes", measured},
                  {"final_loss", outputs.count("loss") ? outputs.at("loss").f32()[0] : NAN}});
  if (args.profile) {
    // Every timed step, as the mean over them (the row shows the median).
    const double sum = std::accumulate(times.begin(), times.end(), 0.0);
    profile.report(args.steps, sum / double(times.size()), table,
                   rows.back()["profile"]);
    // The GEMMs' own rate against the reference (adds summed inside a
    // GEMM count as its time).
    const double gemmSecs = profile.secondsPerStep({"gemm", "gemm_wgrad"}, args.steps);
    if (gemmSecs > 0) {
      const double gemmGflops = gemmFlops(plan) / gemmSecs / 1e9;
      table += fmt::format("    GEMMs (gemm, gemm_wgrad): {:.1f} GFLOP/s, {:.1f}% of the "
                           "reference sgemm\n",
                           gemmGflops, 100.0 * gemmGflops / (ref.gemmTflops * 1e3));
      rows.back()["gemm_gflops"] = gemmGflops;
    }
  }
  return 0;
}

int runBench(const BenchArgs &args) {
  if (args.bundles.empty())
    return fail("bench: no bundle given (compile one with `xlnetc compile SPEC -o DIR`)");
  if (args.steps < 1 || args.warmup < 1)
    return fail("bench: --steps and --warmup must be at least 1 (the first step compiles "
                "the kernels; the second records the step's graph)");
  std::string error;
  BenchReference ref;
  if (int rc = measureReference(args, ref))
    return rc;
  const int64_t gemmSize = ref.gemmSize;
  const double gemmTflops = ref.gemmTflops;
  const std::string &deviceText = ref.deviceText;
  const bool host = ref.host;
  const rt::host::CpuFeatures &cpu = rt::host::cpuFeatures();
  const rt::host::KernelReport kernels = rt::host::currentKernels();
  if (host)
    std::cout << fmt::format("xlnetc-run bench on the {}\n  CPU: {}: {}\n  GEMM kernels: {}{}\n"
                             "  reference: fp32 sgemm {}³ through the host executor's GEMM, "
                             "{:.1f} GFLOP/s (the MFU's denominator)\n",
                             deviceText, cpu.identity(), cpu.list(), kernels.why,
                             kernels.weakerThan.empty() ? "" : "; " + kernels.weakerThan,
                             gemmSize, gemmTflops * 1e3);
  else
    std::cout << fmt::format("xlnetc-run bench on {}\n  reference: bf16 GEMM {}³, {:.3f} "
                             "TFLOP/s (the MFU's denominator)\n",
                             deviceText, gemmSize, gemmTflops);

  json rows = json::array();
  std::string table =
      fmt::format("{:<20} {:>6} {:>7} {:>5} {:>6} {:>10} {:>11} {:>9} {:>7} {:>10} {:>10}\n",
                  "bundle", "layers", "d_model", "prec", "batch", "step ms", "tokens/s",
                  "TFLOP/s", "MFU", "pred. MiB", "meas. MiB");
  for (const std::string &dir : args.bundles)
    if (int rc = benchBundle(args, dir, ref, table, rows))
      return rc;
  std::cout << table
            << fmt::format("  {} timed steps after {} untimed (median shown); tokens = batch × "
                           "seq_len per step; model FLOPs: the GEMMs as issued and the "
                           "attention's products (docs/Benchmarks.md); measured memory: the "
                           "device's use after the steps less before the executor's first "
                           "allocation\n",
                           args.steps, args.warmup);
  json out = {{"program", "xlnetc-run bench"},
              {"device", deviceText},
              {"gemm_reference",
               {{"size", gemmSize}, {"dtype", host ? "fp32" : "bf16"}, {"tflops", gemmTflops}}},
              {"warmup", args.warmup},
              {"steps", args.steps},
              {"rows", rows}};
  if (host) { // the host's GEMMs are OpenBLAS's (a GPU's are cuBLASLt's)
    out["cpu"] = {{"name", cpu.identity()}, {"features", cpu.list()}};
    out["gemm_library"] = {{"name", rt::host::blasLibrary().name},
                           {"kernels", rt::host::blasLibrary().core},
                           {"why", kernels.why},
                           {"weaker_than", kernels.weakerThan}};
  }
  if (!writeJson(args.json, out, error))
    return fail(error);
  return 0;
}

//===----------------------------------------------------------------------===//
// The attention kernels alone
//===----------------------------------------------------------------------===//

namespace {

/// One stream's shapes for the kernel benchmark.
struct AttnShape {
  const char *stream;
  int64_t T; // query rows: seq_len (content) or num_predict (query)
  bool rows; // the query stream reads the prediction rows
};

/// The plan of the attention benchmark: for each stream of `shapes`, the
/// bf16 `rel_attention` of a training step on compact masks and its
/// `rel_attention_grad` (steps 2s and 2s + 1), over shared k, v, k_r,
/// segment ids and ranks: what the emitter makes of a bf16 step's attention.
std::string attentionPlan(const std::vector<AttnShape> &shapes, int64_t B, int64_t N, int64_t H,
                          int64_t S, int64_t K, int64_t R, int64_t NP) {
  json buffers = json::array(), steps = json::array();
  auto buffer = [&](const char *dtype, std::vector<int64_t> shape, const std::string &role,
                    const std::string &name) {
    json b = {{"id", buffers.size()}, {"dtype", dtype}, {"shape", shape}, {"role", role}};
    if (!name.empty())
      b["name"] = name;
    buffers.push_back(b);
    return int(buffers.size() - 1);
  };
  const int k = buffer("bf16", {B, K, N, H}, "input", "k"),
            v = buffer("bf16", {B, K, N, H}, "input", "v"),
            kr = buffer("bf16", {1, R, N, H}, "input", "k_r"),
            se = buffer("f32", {2, N, H}, "input", "seg_embed"),
            rw = buffer("f32", {N, H}, "input", "r_w_bias"),
            rr = buffer("f32", {N, H}, "input", "r_r_bias"),
            rs = buffer("f32", {N, H}, "input", "r_s_bias"),
            seg = buffer("i64", {B, S}, "input", "seg_id"),
            rank = buffer("i64", {B, 2, S}, "input", "perm_rank"),
            rows = buffer("i64", {B, NP}, "input", "rows");
  const json attrs = {{"scale", 1.0 / std::sqrt(double(H))}, {"dropatt", 0.0}};
  int64_t site = 1;
  for (const AttnShape &a : shapes) {
    const std::string s = a.stream;
    const int q = buffer("bf16", {B, a.T, N, H}, "input", "q." + s),
              dout = buffer("bf16", {B, a.T, N, H}, "input", "dout." + s);
    json operands = {q, k, v, kr, se, rw, rr, rs, seg, rank};
    if (a.rows)
      operands.push_back(rows);
    json stepAttrs = attrs;
    stepAttrs["dropout_site"] = site++;
    const int out = buffer("bf16", {B, a.T, N, H}, "temp", "");
    steps.push_back({{"op", "rel_attention"}, {"in", operands}, {"out", {out}},
                     {"attrs", stepAttrs}, {"loc", s + " forward"}});
    json gradIn = {dout};
    gradIn.insert(gradIn.end(), operands.begin(), operands.end());
    json gradOut = json::array();
    for (std::vector<int64_t> shape : {std::vector<int64_t>{B, a.T, N, H}, {B, K, N, H},
                                       {B, K, N, H}, {1, R, N, H}})
      gradOut.push_back(buffer("bf16", shape, "temp", ""));
    for (std::vector<int64_t> shape :
         {std::vector<int64_t>{2, N, H}, {N, H}, {N, H}, {N, H}})
      gradOut.push_back(buffer("f32", shape, "temp", ""));
    steps.push_back({{"op", "rel_attention_grad"}, {"in", gradIn}, {"out", gradOut},
                     {"attrs", stepAttrs}, {"loc", s + " backward"}});
  }
  return json{{"format", "xlnetc-plan"}, {"version", rt::kSupportedPlanVersion},
              {"function", "attention"}, {"buffers", buffers}, {"steps", steps}}
      .dump();
}

/// The device memory of the attention benchmark's plan: every buffer
/// (random bf16 and f32 values, segment ids, ranks and gathered rows; the
/// outputs zeroed), the largest step workspace, status words and the seed;
/// freed with the object.
struct AttentionBuffers {
  explicit AttentionBuffers(rt::dev::Device &dev) : dev(dev) {}
  ~AttentionBuffers() {
    for (rt::dev::DevPtr p : live)
      if (p)
        dev.free(p);
  }
  AttentionBuffers(const AttentionBuffers &) = delete;
  AttentionBuffers &operator=(const AttentionBuffers &) = delete;

  rt::Status allocate(const rt::Plan &plan, const rt::DeviceProgram &program, int64_t B,
                      int64_t S, int64_t NP) {
    std::mt19937 gen(11);
    std::vector<int64_t> seg(static_cast<size_t>(B * S)),
        rank(static_cast<size_t>(B * 2 * S)), rows(static_cast<size_t>(B * NP));
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t i = 0; i < S; ++i)
        seg[size_t(b * S + i)] = i < S / 2 ? 0 : 1;
      std::vector<int64_t> perm(static_cast<size_t>(S));
      for (int64_t i = 0; i < S; ++i)
        perm[size_t(i)] = i;
      std::shuffle(perm.begin(), perm.end(), gen);
      for (int64_t i = 0; i < S; ++i)
        rank[size_t((b * 2) * S + i)] = rank[size_t((b * 2 + 1) * S + i)] = perm[size_t(i)];
      std::vector<int64_t> pos(perm.begin(), perm.begin() + NP);
      std::sort(pos.begin(), pos.end());
      for (int64_t t = 0; t < NP; ++t)
        rows[size_t(b * NP + t)] = pos[size_t(t)];
    }
    const std::map<std::string, const std::vector<int64_t> *> ids = {
        {"seg_id", &seg}, {"perm_rank", &rank}, {"rows", &rows}};
    for (const rt::Buffer &buf : plan.buffers) {
      const size_t n = size_t(rt::numelOf(buf.shape));
      if (buf.role != rt::Buffer::Input) {
        addr.push_back(put(nullptr, n * rt::dtypeSize(buf.dtype)));
      } else if (auto it = ids.find(buf.name); it != ids.end()) {
        addr.push_back(put(it->second->data(), n * 8));
      } else if (buf.dtype == rt::DType::BF16) {
        std::vector<uint16_t> h(n);
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (uint16_t &x : h)
          x = rt::bf16FromFloat(u(gen));
        addr.push_back(put(h.data(), n * 2));
      } else {
        std::vector<float> h(n);
        std::uniform_real_distribution<float> u(-0.1f, 0.1f);
        for (float &x : h)
          x = u(gen);
        addr.push_back(put(h.data(), n * 4));
      }
    }
    int64_t workspaceBytes = 0;
    for (const rt::DeviceStep &ds : program.steps)
      workspaceBytes = std::max(workspaceBytes, ds.workspaceBytes);
    const rt::host::StepRandomRecord seedValue = rt::host::stepRandomRecord(5, {});
    workspace = put(nullptr, size_t(workspaceBytes));
    status = put(nullptr, rt::kStatusWords * 4);
    seed = put(&seedValue, sizeof seedValue);
    return allocated;
  }

  rt::dev::Device &dev;
  std::vector<rt::dev::DevPtr> live, addr; // every allocation; each buffer's
  rt::dev::DevPtr workspace = 0, status = 0, seed = 0;
  rt::Status allocated = rt::Status::ok(); // every allocation and upload so far

private:
  rt::dev::DevPtr put(const void *src, size_t bytes) {
    rt::dev::DevPtr p = 0;
    if (allocated)
      allocated = dev.alloc(std::max<size_t>(bytes, 8), p);
    if (allocated)
      allocated = src ? dev.upload(p, src, bytes) : dev.memset(p, 0, std::max<size_t>(bytes, 8));
    live.push_back(p);
    return p;
  }
};

/// Times the launches of plan step `index` of `program` as the device
/// executor makes them (DeviceExecutor.cpp: every argument one 64-bit
/// value): `args.warmup` untimed rounds, then the mean of `args.iters`.
rt::Status timeStep(rt::dev::Device &dev, rt::dev::Module &mod, const rt::Plan &plan,
                    const rt::DeviceProgram &program, const AttentionBuffers &bufs,
                    size_t index, const AttentionBenchArgs &args, double &secs) {
  struct Launch {
    rt::dev::Kernel kernel;
    rt::dev::LaunchDims dims;
    std::vector<uint64_t> values;
    std::vector<void *> params;
  };
  std::vector<Launch> launches;
  for (const rt::DeviceLaunch &l : program.steps[index].launches) {
    if (l.kind != rt::DeviceLaunch::Kernel)
      return rt::Status::error(fmt::format("{}: a GEMM launch in the attention's program",
                                           plan.steps[index].loc));
    Launch &x = launches.emplace_back();
    XLNETC_RETURN_IF_ERROR(dev.getKernel(mod, l.kernel, x.kernel));
    x.dims.grid[0] = l.grid;
    x.dims.block[0] = l.block;
    x.dims.dynSmem = l.dynSmem;
    for (const rt::KernelArg &arg : l.args)
      switch (arg.kind) {
      case rt::KernelArg::Buffer: x.values.push_back(bufs.addr[size_t(arg.index)]); break;
      case rt::KernelArg::Null: x.values.push_back(0); break;
      case rt::KernelArg::Workspace: x.values.push_back(bufs.workspace + uint64_t(arg.value)); break;
      case rt::KernelArg::Status: x.values.push_back(bufs.status); break;
      case rt::KernelArg::Seed: x.values.push_back(bufs.seed); break;
      case rt::KernelArg::Immediate: x.values.push_back(uint64_t(arg.value)); break;
      case rt::KernelArg::Table:
        return rt::Status::error("a multi-tensor table in the attention's program");
      }
  }
  for (Launch &x : launches)
    for (uint64_t &value : x.values)
      x.params.push_back(&value);
  auto once = [&]() -> rt::Status {
    for (Launch &x : launches)
      XLNETC_RETURN_IF_ERROR(dev.launch(x.kernel, x.dims, x.params.data(), plan.steps[index].loc));
    return rt::Status::ok();
  };
  for (int i = 0; i < args.warmup; ++i)
    XLNETC_RETURN_IF_ERROR(once());
  XLNETC_RETURN_IF_ERROR(dev.synchronize("bench-attention"));
  const auto t0 = Clock::now();
  for (int i = 0; i < args.iters; ++i)
    XLNETC_RETURN_IF_ERROR(once());
  XLNETC_RETURN_IF_ERROR(dev.synchronize("bench-attention"));
  secs = seconds(t0, Clock::now()) / args.iters;
  return rt::Status::ok();
}

/// The timed rows of bench-attention: forward and backward of each stream.
struct AttentionTimes {
  json results = json::array();
  std::string table;
  double flops = 0, secs = 0; // all rows together
};

/// Times each stream's forward and backward (plan steps 2·i and 2·i + 1)
/// and checks the kernels' status words after each stream.
rt::Status timeStreams(rt::dev::Device &dev, rt::dev::Module &mod, const rt::Plan &plan,
                       const rt::DeviceProgram &program, const AttentionBuffers &bufs,
                       const std::vector<AttnShape> &shapes, int64_t K,
                       const AttentionBenchArgs &args, double gemmTflops, AttentionTimes &t) {
  const int64_t B = args.batch, N = args.heads, H = args.dHead;
  t.table = fmt::format("{:<9} {:<9} {:>10} {:>10} {:>12}\n", "stream", "pass", "ms", "TFLOP/s",
                        "of GEMM");
  for (size_t si = 0; si < shapes.size(); ++si) {
    const AttnShape &a = shapes[si];
    double fwdSecs = 0, bwdSecs = 0;
    XLNETC_RETURN_IF_ERROR(timeStep(dev, mod, plan, program, bufs, 2 * si, args, fwdSecs));
    XLNETC_RETURN_IF_ERROR(timeStep(dev, mod, plan, program, bufs, 2 * si + 1, args, bwdSecs));
    int words[rt::kStatusWords] = {};
    XLNETC_RETURN_IF_ERROR(dev.download(words, bufs.status, sizeof words));
    if (words[0] != 0)
      return rt::Status::error(fmt::format("the {} stream's kernels reported data error {} "
                                           "(status words {} {} {} {})",
                                           a.stream, words[0], words[1], words[2], words[3],
                                           words[4]));
    const double unit = 2.0 * double(B * N) * double(a.T) * double(K) * double(H);
    for (auto [pass, secs, flops] :
         {std::tuple<const char *, double, double>{"forward", fwdSecs, 3 * unit},
          {"backward", bwdSecs, 6 * unit}}) {
      const double tf = flops / secs / 1e12;
      t.table += fmt::format("{:<9} {:<9} {:>10.3f} {:>10.3f} {:>11.1f}%\n", a.stream, pass,
                             secs * 1e3, tf, 100.0 * tf / gemmTflops);
      t.results.push_back({{"stream", a.stream}, {"pass", pass}, {"rows", a.T}, {"keys", K},
                           {"ms", secs * 1e3}, {"model_flops", flops}, {"tflops", tf},
                           {"fraction_of_gemm", tf / gemmTflops}});
      t.flops += flops;
      t.secs += secs;
    }
  }
  return rt::Status::ok();
}

} // namespace

int runAttentionBench(const AttentionBenchArgs &args) {
  namespace dv = rt::dev;
  const int64_t B = args.batch, N = args.heads, H = args.dHead, S = args.seqLen,
                M = args.mlen, NP = args.numPredict;
  if (B < 1 || N < 1 || S < 1 || M < 0 || NP < 1 || NP > S)
    return fail("bench-attention: need batch, heads, seq_len >= 1, mlen >= 0 and "
                "1 <= num_predict <= seq_len");
  if (!dv::attnTcSupports(H))
    return fail(fmt::format("bench-attention: d_head {} has no tensor-core kernels (a "
                            "multiple of 16, at most 128)", H));
  if (args.iters < 1 || args.warmup < 0)
    return fail("bench-attention: --iters must be at least 1 and --warmup at least 0");
  std::string error;
  rt::Executor executor;
  if (!openExecutor(args.device, args.noKernelCache, /*threads=*/0, executor, error))
    return fail(error);
  dv::Device *devp = executor.device();
  if (!devp)
    return fail("bench-attention: the host executor runs no kernels; use --device emu or cuda");
  dv::Device &dev = *devp;
  const int64_t K = M + S, R = K + S;
  const std::vector<AttnShape> shapes = {{"content", S, false}, {"query", NP, true}};
  // The kernels and launches the CUDA emitter makes of the attention of a
  // bf16 training step for this device (the ones a step runs).
  const std::optional<dv::GpuTarget> target = deviceTarget(executor);
  rt::Plan plan;
  if (rt::Status st = rt::parsePlan(attentionPlan(shapes, B, N, H, S, K, R, NP), plan); !st)
    return fail("bench-attention: " + st.message());
  cuda::CudaEmitOptions emit;
  emit.moduleName = "attention-bench.cu";
  emit.origin = "xlnetc-run bench-attention";
  if (target)
    emit.target = *target;
  rt::DeviceProgram program;
  if (rt::Status st = cuda::emitDeviceProgram(plan, emit, program); !st)
    return fail("bench-attention: " + st.message());
  const int fwdWarps = dv::attnTcWarps(H, false, emit.target.smemPerBlock),
            bwdWarps = dv::attnTcWarps(H, true, emit.target.smemPerBlock);
  std::unique_ptr<dv::Module> mod;
  const auto tCompile = Clock::now();
  if (rt::Status st = dev.loadModule({program.moduleName, program.source, {}}, mod); !st)
    return fail("bench-attention: " + st.message());
  std::cout << fmt::format("xlnetc-run bench-attention on {}: batch {}, {} heads × {}, seq {}, "
                           "mem {}, num_predict {}, {} and {} warps per block (kernels ready "
                           "in {:.1f} s)\n",
                           executor.description(), B, N, H, S, M, NP, fwdWarps, bwdWarps,
                           seconds(tCompile, Clock::now()));
  const int64_t gemmSize = gemmSizeFor(dev, args.gemmSize);
  double gemmTflops = 0;
  if (rt::Status st = measureGemm(dev, gemmSize, gemmTflops); !st)
    return fail("bench-attention: " + st.message());

  AttentionBuffers bufs(dev);
  if (rt::Status st = bufs.allocate(plan, program, B, S, NP); !st)
    return fail("bench-attention: " + st.message());
  AttentionTimes times;
  if (rt::Status st = timeStreams(dev, *mod, plan, program, bufs, shapes, K, args, gemmTflops,
                                  times);
      !st)
    return fail("bench-attention: " + st.message());
  json &results = times.results;
  std::string &table = times.table;
  const double totalFlops = times.flops, totalSecs = times.secs;
  const double totalTf = totalFlops / totalSecs / 1e12;
  table += fmt::format("{:<19} {:>10.3f} {:>10.3f} {:>11.1f}%\n", "both, fwd + bwd",
                       totalSecs * 1e3, totalTf, 100.0 * totalTf / gemmTflops);
  std::cout << table
            << fmt::format("  reference: bf16 GEMM {}³, {:.3f} TFLOP/s; model FLOPs: forward "
                           "3 and backward 6 products of 2·B·N·T·K·H (the scores' "
                           "recomputation not counted); {} timed iterations after {}\n",
                           gemmSize, gemmTflops, args.iters, args.warmup);
  json out = {{"program", "xlnetc-run bench-attention"},
              {"device", executor.description()},
              {"shape", {{"batch", B}, {"heads", N}, {"d_head", H}, {"seq_len", S},
                         {"mem_len", M}, {"num_predict", NP}}},
              {"gemm_reference", {{"size", gemmSize}, {"dtype", "bf16"}, {"tflops", gemmTflops}}},
              {"kernels", results},
              {"total", {{"ms", totalSecs * 1e3}, {"tflops", totalTf},
                         {"fraction_of_gemm", totalTf / gemmTflops}}}};
  if (!writeJson(args.json, out, error))
    return fail(error);
  return 0;
}

} // namespace xlnetc
