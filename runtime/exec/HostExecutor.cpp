//===- HostExecutor.cpp - Runs a plan on the CPU in fp32 ------------------===//

#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/PlanDataflow.h"

#include "runtime/plan/MemoryPlan.h"
#include "runtime/host/CpuFeatures.h"
#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace xlnetc::rt {

HostThreadScope::HostThreadScope(int threads)
    : savedOmp_(omp_get_max_threads()), savedBlas_(openblas_get_num_threads()) {
  if (threads > 0)
    omp_set_num_threads(threads);
  openblas_set_num_threads(1);
}

HostThreadScope::~HostThreadScope() {
  omp_set_num_threads(savedOmp_);
  openblas_set_num_threads(savedBlas_);
}

Status checkHostThreads(int threads, const char *what) {
  if (threads < 0)
    return Status::error(fmt::format("{} {}: the thread count must be 0 (all CPUs) or more",
                                     what, threads));
  int cpus = host::availableCpus();
  int used = threads > 0 ? threads : omp_get_max_threads();
  if (used <= cpus)
    return Status::ok();
  if (threads > 0)
    return Status::error(fmt::format("{} {}: this process can run on {} CPU{}; use at most "
                                     "{} threads ({} 0: OpenMP's default, all of them)",
                                     what, threads, cpus, cpus == 1 ? "" : "s", cpus, what));
  return Status::error(fmt::format("OMP_NUM_THREADS={}: this process can run on {} CPU{}; set "
                                   "it to at most {}, or unset it",
                                   used, cpus, cpus == 1 ? "" : "s", cpus));
}

namespace {

/// Whether the kernel of `s` sums its output 0 into an init itself (a
/// GEMM's beta 1, the scatter starting from a copy): a plain gemm,
/// gemm_wgrad, embedding_grad. Other inits are added after the kernel.
bool kernelTakesInit(const Step &s) {
  return (s.kind == OpKind::Gemm && s.out.size() == 1 &&
          s.attrs.activationGrad == Activation::None) ||
         s.kind == OpKind::GemmWgrad || s.kind == OpKind::EmbeddingGrad;
}

/// A gemm step and its fused epilogues (docs/Plan.md "Fused forms"): the
/// same kernels as the steps they replace, so the same numbers.
void runGemm(const Step &s, const std::vector<const Tensor *> &in, std::vector<Tensor *> &out,
             const Tensor *init) {
  const StepAttrs &a = s.attrs;
  if (a.activationGrad != Activation::None) {
    // dP = (x·op(w)) · act'(pre), in place; db = dP summed over its rows.
    host::gemm(*in[0], *in[1], nullptr, a.kRank, a.transposeW, Activation::None, *out[0]);
    host::activationGrad(*out[0], *in[2], a.activationGrad, *out[0]);
    host::biasGrad(*out[0], *out[1]);
    return;
  }
  const Tensor *bias = in.size() == 3 ? in[2] : nullptr;
  if (out.size() == 2) {
    // aux = x·op(w) + bias (the pre-activation), y = act(aux).
    host::gemm(*in[0], *in[1], bias, a.kRank, a.transposeW, Activation::None, *out[1]);
    host::applyActivation(*out[1], a.activation, *out[0]);
    return;
  }
  host::gemm(*in[0], *in[1], bias, a.kRank, a.transposeW, a.activation, *out[0], init);
}

/// x, or, where the step drops its x itself (the fused LayerNorm dropout,
/// docs/Plan.md "Fused forms"), dropout(x) as the dropout step computed it,
/// in `scratch` (a thread's buffer reused from step to step).
const Tensor &layerNormInput(const Tensor &x, const StepAttrs &a, const ExecOptions &opts) {
  if (!a.xDropout)
    return x;
  static thread_local std::vector<float> storage;
  static thread_local Tensor scratch;
  storage.resize(size_t(x.numel()));
  scratch = Tensor::view(x.dtype, x.shape, storage.data());
  host::dropout(x, a.xDropoutRate, a.xDropoutSite, opts.seed, opts.rows,
                host::batchRowElems(x), scratch);
  return scratch;
}

/// Runs one verified step on resolved operands (`out` holds one tensor per
/// output; multi-output ops write all of them). `init` (a step that
/// kernelTakesInit; may be null): out[0] = init + the step's result;
/// `probs` (rel_attention writes, rel_attention_grad reads; may be null):
/// the kept probabilities (HostFusion.h).
/// The forward ops.
static Status runForwardStep(const Step &s, const std::vector<const Tensor *> &in,
                             std::vector<Tensor *> &out, const ExecOptions &opts, const Tensor *init,
                             float *probs) {
  const StepAttrs &a = s.attrs;
  switch (s.kind) {
  case OpKind::Embedding:
    return host::embedding(*in[0], *in[1], *out[0]);
  case OpKind::MaskEmbedding:
    host::maskEmbedding(*in[0], *out[0]);
    return Status::ok();
  case OpKind::RelPosEncoding:
    host::relPosEncoding(a.klen, a.clampLen, *out[0]);
    return Status::ok();
  case OpKind::RelSegment:
    host::relSegment(*in[0], a.mlen, *out[0]);
    return Status::ok();
  case OpKind::AttnMask:
    host::attnMask(*in[0], a.mlen, a.stream, *out[0]);
    return Status::ok();
  case OpKind::TargetPositions:
    return host::targetPositions(*in[0], *out[0]);
  case OpKind::MemConcat:
    host::memConcat(*in[0], *in[1], *out[0]);
    return Status::ok();
  case OpKind::MemCache:
    host::memCache(in.size() == 2 ? in[0] : nullptr, *in.back(), a.reuseLen,
                   *out[0]);
    return Status::ok();
  case OpKind::Gemm:
    runGemm(s, in, out, init);
    return Status::ok();
  case OpKind::RelAttention: {
    host::RelAttentionArgs args{in[0], in[1], in[2], in[3],
                                in[4], in[5], in[6], in[7],
                                in[8], in[9], in.size() == 11 ? in[10] : nullptr};
    args.scale = a.scale;
    args.dropatt = a.dropatt;
    args.dropoutSite = a.dropoutSite;
    args.seed = opts.seed;
    args.dropRows = opts.rows;
    return host::relAttention(args, *out[0], probs);
  }
  case OpKind::AddLayerNorm:
    host::addLayerNorm(layerNormInput(*in[0], a, opts), *in[1], *in[2], *in[3], a.eps,
                       *out[0]);
    return Status::ok();
  case OpKind::Dropout:
    host::dropout(*in[0], a.rate, a.dropoutSite, opts.seed, opts.rows,
                  a.batchShared ? 0 : host::batchRowElems(*in[0]), *out[0]);
    return Status::ok();
  case OpKind::LmLoss:
    return host::lmLoss(*in[0], *in[1], *in[2], *out[0], *out[1]);
  default:
    break;
  }
  return Status::error("internal error: unhandled op");
}

/// The backward ops.
static Status runBackwardStep(const Step &s, const std::vector<const Tensor *> &in,
                              std::vector<Tensor *> &out, const ExecOptions &opts, const Tensor *init,
                              float *probs) {
  const StepAttrs &a = s.attrs;
  switch (s.kind) {
  case OpKind::EmbeddingGrad:
    return host::embeddingGrad(*in[0], *in[1], *out[0], init);
  case OpKind::MaskEmbeddingGrad:
    host::maskEmbeddingGrad(*in[0], *out[0]);
    return Status::ok();
  case OpKind::MemConcatGrad:
    host::memConcatGrad(*in[0], *out[0]);
    return Status::ok();
  case OpKind::ActivationOp:
    host::applyActivation(*in[0], a.activation, *out[0]);
    return Status::ok();
  case OpKind::ActivationGrad:
    host::activationGrad(*in[0], *in[1], a.activation, *out[0]);
    return Status::ok();
  case OpKind::GemmWgrad:
    host::gemmWgrad(*in[0], *in[1], a.kRank, a.transposeW, *out[0], init);
    return Status::ok();
  case OpKind::BiasGrad:
    host::biasGrad(*in[0], *out[0]);
    return Status::ok();
  case OpKind::RelAttentionGrad: {
    // in[0] is dout; the rest are rel_attention's operands.
    host::RelAttentionArgs args{in[1],  in[2], in[3], in[4], in[5],
                                in[6],  in[7], in[8], in[9], in[10],
                                in.size() == 12 ? in[11] : nullptr};
    args.scale = a.scale;
    args.dropatt = a.dropatt;
    args.dropoutSite = a.dropoutSite;
    args.seed = opts.seed;
    args.dropRows = opts.rows;
    host::RelAttentionGrads grads{out[0], out[1], out[2], out[3],
                                  out[4], out[5], out[6], out[7]};
    return host::relAttentionGrad(*in[0], args, grads, probs);
  }
  case OpKind::AddLayerNormGrad:
    host::addLayerNormGrad(*in[0], layerNormInput(*in[1], a, opts), *in[2], *in[3], a.eps,
                           *out[0], *out[1], *out[2]);
    if (a.dsumDropout) // output 3: the dropout of dsum
      host::dropout(*out[0], a.dsumDropoutRate, a.dsumDropoutSite, opts.seed, opts.rows,
                    host::batchRowElems(*out[0]), *out[3]);
    return Status::ok();
  case OpKind::LmLossGrad:
    return host::lmLossGrad(*in[0], *in[1], *in[2], *out[0], in.size() > 3 ? in[3] : nullptr);
  case OpKind::Add:
    host::add(*in[0], *in[1], *out[0]);
    return Status::ok();
  default:
    break;
  }
  return Status::error("internal error: unhandled op");
}

/// The cast and the optimizer ops.
static Status runOptimizerStep(const Step &s, const std::vector<const Tensor *> &in,
                               std::vector<Tensor *> &out) {
  const StepAttrs &a = s.attrs;
  switch (s.kind) {
  case OpKind::Cast: // every cast touches bf16, which executeHost refuses
    return Status::error("cast needs a device executor (bf16)");
  case OpKind::LrSchedule: {
    host::LrScheduleArgs args;
    args.learningRate = a.learningRate;
    args.warmupSteps = a.warmupSteps;
    args.trainSteps = a.trainSteps;
    args.minLrRatio = a.minLrRatio;
    args.decay = a.decay;
    return host::lrSchedule(*in[0], args, *out[0]);
  }
  case OpKind::GlobalNorm:
    host::globalNorm(in, *out[0]);
    return Status::ok();
  case OpKind::AdamUpdate: {
    host::AdamArgs args;
    args.beta1 = a.beta1;
    args.beta2 = a.beta2;
    args.epsilon = a.epsilon;
    args.clip = a.clip;
    args.weightDecay = a.weightDecay;
    args.biasCorrection = a.biasCorrection;
    return host::adamUpdate(*in[0], *in[1], *in[2], *in[3], *in[4], *in[5],
                            *in[6], args, *out[0], *out[1], *out[2]);
  }
  default:
    break;
  }
  return Status::error("internal error: unhandled op");
}

Status runStep(const Step &s, const std::vector<const Tensor *> &in,
               std::vector<Tensor *> &out, const ExecOptions &opts, const Tensor *init,
               float *probs) {
  // By family; the switch names every kind (-Werror=switch).
  switch (s.kind) {
  case OpKind::Embedding:
  case OpKind::MaskEmbedding:
  case OpKind::RelPosEncoding:
  case OpKind::RelSegment:
  case OpKind::AttnMask:
  case OpKind::TargetPositions:
  case OpKind::MemConcat:
  case OpKind::MemCache:
  case OpKind::Gemm:
  case OpKind::RelAttention:
  case OpKind::AddLayerNorm:
  case OpKind::Dropout:
  case OpKind::LmLoss:
    return runForwardStep(s, in, out, opts, init, probs);
  case OpKind::EmbeddingGrad:
  case OpKind::MaskEmbeddingGrad:
  case OpKind::MemConcatGrad:
  case OpKind::ActivationOp:
  case OpKind::ActivationGrad:
  case OpKind::GemmWgrad:
  case OpKind::BiasGrad:
  case OpKind::RelAttentionGrad:
  case OpKind::AddLayerNormGrad:
  case OpKind::LmLossGrad:
  case OpKind::Add:
    return runBackwardStep(s, in, out, opts, init, probs);
  case OpKind::Cast:
  case OpKind::LrSchedule:
  case OpKind::GlobalNorm:
  case OpKind::AdamUpdate:
    return runOptimizerStep(s, in, out);
  }
  return Status::error("unhandled op");
}

} // namespace

static std::string bufferType(const Buffer &b) {
  return std::string(dtypeName(b.dtype)) + shapeStr(b.shape);
}

Status checkBinding(const Buffer &b, const TensorMap &bindings,
                    const Tensor *&bound) {
  auto it = bindings.find(b.name);
  if (it == bindings.end()) {
    const char *role = b.role == Buffer::Input ? "input" : "param";
    return Status::error(fmt::format("missing {} '{}' (buffer {}, expected {})",
                                     role, b.name, b.id, bufferType(b)));
  }
  return checkBound(b, it->second, bound);
}

Status checkBound(const Buffer &b, const Tensor &t, const Tensor *&bound) {
  const char *role = b.role == Buffer::Input ? "input" : "param";
  if (t.dtype != b.dtype || t.shape != b.shape)
    return Status::error(fmt::format("{} '{}' (buffer {}): expected {}, got {}",
                                     role, b.name, b.id, bufferType(b),
                                     t.typeStr()));
  if (t.capacityBytes() < t.nbytes())
    return Status::error(fmt::format(
        "{} '{}' (buffer {}): tensor holds {} bytes but {} needs {}", role,
        b.name, b.id, t.capacityBytes(), t.typeStr(), t.nbytes()));
  bound = &t;
  return Status::ok();
}

HostWorkspace::HostWorkspace() = default;
HostWorkspace::~HostWorkspace() = default;

void HostWorkspace::prepare(const Plan &plan, bool keepProbs) {
  // What the memory plan and the kept probabilities depend on: every
  // buffer's type and role, every step's op and buffers (a plan at the same
  // address may be another plan), and the switch.
  std::vector<int64_t> shape;
  shape.reserve(signature_.size());
  shape.push_back(keepProbs ? 1 : 0);
  for (const Buffer &b : plan.buffers) {
    shape.push_back(int64_t(b.dtype) * 4 + int64_t(b.role));
    shape.push_back(int64_t(b.shape.size()));
    shape.insert(shape.end(), b.shape.begin(), b.shape.end());
  }
  for (const Step &s : plan.steps) {
    // What the choice reads besides the ids: the op, the attention's scale.
    shape.push_back(int64_t(s.kind));
    int64_t scaleBits = 0;
    std::memcpy(&scaleBits, &s.attrs.scale, sizeof(scaleBits));
    shape.push_back(scaleBits);
    shape.push_back(int64_t(s.in.size()) * 65536 + int64_t(s.out.size()));
    shape.insert(shape.end(), s.in.begin(), s.in.end());
    shape.insert(shape.end(), s.out.begin(), s.out.end());
    shape.push_back(int64_t(s.init.size()));
    shape.insert(shape.end(), s.init.begin(), s.init.end());
  }
  if (arena_ && shape == signature_)
    return;
  signature_ = std::move(shape);
  fusions_ = host::findHostFusions(plan, keepProbs);
  keptProbs_.clear();
  for (int64_t floats : fusions_.keptProbsFloats)
    keptProbs_.emplace_back(size_t(floats));
  // 64-byte aligned (a cache line, an AVX-512 vector); never zeroed: every
  // kernel writes all of its outputs (checked by poisonTemps in the tests).
  const size_t bytes = size_t(std::max<int64_t>(fusions_.memory.arenaBytes, 64));
  arena_.reset(static_cast<uint8_t *>(::operator new[](bytes, std::align_val_t(64))));
  arenaBytes_ = bytes;
}

void HostWorkspace::AlignedDelete::operator()(uint8_t *p) const {
  ::operator delete[](p, std::align_val_t(64));
}

namespace {

/// One step of executeHost's run: what the plan's buffers are bound to.
struct HostRun {
  const Plan &plan;
  const ExecOptions &opts;
  HostWorkspace &ws;
  std::vector<const Tensor *> bound; // every buffer's value (inputs, then written temps)
  std::vector<Tensor *> donor;       // a donated tensor bound to the buffer
  std::vector<Tensor> temps;         // the temps' tensors (arena views, returned outputs)
  std::vector<bool> written;

  HostRun(const Plan &plan, const ExecOptions &opts, HostWorkspace &ws)
      : plan(plan), opts(opts), ws(ws), bound(plan.buffers.size(), nullptr),
        donor(plan.buffers.size(), nullptr), temps(plan.buffers.size()),
        written(plan.buffers.size(), false) {}

  /// 1. Bind inputs and params (`bindings` first, then `donated`).
  Status bindInputs(const TensorMap &bindings, TensorMap *donated) {
    for (const Buffer &b : plan.buffers) {
      if (b.role == Buffer::Temp)
        continue;
      if (bindings.count(b.name) || !donated || !donated->count(b.name)) {
        XLNETC_RETURN_IF_ERROR(checkBinding(b, bindings, bound[b.id]));
        continue;
      }
      Tensor &t = donated->at(b.name);
      XLNETC_RETURN_IF_ERROR(checkBound(b, t, bound[b.id]));
      donor[b.id] = &t;
    }
    return Status::ok();
  }

  /// Step `s`'s ids: it reads written buffers and writes unwritten temps,
  /// one init per output; then its types. Plans built in memory may skip
  /// parsePlan, so each step is re-checked (cheap next to the kernels).
  Status checkStep(const Step &s, const std::string &where) const {
    const size_t n = plan.buffers.size();
    if (!s.init.empty() && s.init.size() != s.out.size())
      return Status::error(where + fmt::format("has {} inits for {} outputs", s.init.size(),
                                               s.out.size()));
    for (int id : s.reads())
      if (id < 0 || size_t(id) >= n ||
          (plan.buffers[id].role == Buffer::Temp && !written[id]))
        return Status::error(where + fmt::format("reads buffer {} which is "
                                                 "not a written buffer", id));
    for (int id : s.out)
      if (id < 0 || size_t(id) >= n || plan.buffers[id].role != Buffer::Temp ||
          written[id])
        return Status::error(where + fmt::format("writes buffer {} which is "
                                                 "not an unwritten temp", id));
    XLNETC_RETURN_IF_ERROR(verifyStepTypes(plan, s).withPrefix(where));
    return Status::ok();
  }

  /// The tensors step `i` writes: a view of the arena, or for a returned
  /// buffer a tensor of its own or a donated input's storage when the step
  /// may write over it and nothing reads it later; `in` follows a donation.
  std::vector<Tensor *> outputsOf(size_t i, std::vector<const Tensor *> &in) {
    const Step &s = plan.steps[i];
    const std::vector<int> &writes = s.out;
    const std::vector<int> &lastUse = ws.fusions().lastReader;
    const MemoryPlan &memory = ws.memory();
    std::vector<Tensor *> out;
    for (size_t k = 0; k < writes.size(); ++k) {
      const int id = writes[k];
      const Buffer &b = plan.buffers[id];
      size_t inIndex = 0;
      if (!b.outputs.empty()) {
        // Returned: a tensor of its own, or a donated input's storage when
        // the step may write over it and nothing reads it later.
        // (A kernel that sums its init itself may also take the init's:
        // gradient accumulation's sum, updated in place.)
        int src = -1;
        bool overInit = false;
        if (const int from = inPlaceInput(s, k); from >= 0) {
          inIndex = size_t(from);
          src = s.in[inIndex];
        } else if (k == 0 && opts.fuse && kernelTakesInit(s) && s.initOf(0) >= 0) {
          src = s.initOf(0);
          overInit = true;
        }
        if (src >= 0 && donor[src] && lastUse[src] == int(i) &&
            donor[src]->shape == b.shape && donor[src]->dtype == b.dtype &&
            !donor[src]->viewData) {
          temps[id] = std::move(*donor[src]);
          donor[src] = nullptr;
          bound[src] = &temps[id];
          if (!overInit)
            in[inIndex] = &temps[id];
        } else {
          temps[id] = Tensor::zeros(b.dtype, b.shape);
        }
      } else {
        temps[id] = Tensor::view(b.dtype, b.shape, ws.arena() + memory.offset[id]);
        if (opts.poisonTemps)
          std::memset(temps[id].bytes(), 0xff, temps[id].nbytes()); // NaN, -1
      }
      out.push_back(&temps[id]);
    }
    return out;
  }

  /// 2. Step `i`: its kernel, with its inits summed in or added after it.
  Status runOne(size_t i) {
    const Step &s = plan.steps[i];
    const std::string where = stepPrefix(i, s);
    XLNETC_RETURN_IF_ERROR(checkStep(s, where));
    std::vector<const Tensor *> in;
    for (int id : s.in)
      in.push_back(bound[id]);
    std::vector<Tensor *> out = outputsOf(i, in);
    if (opts.observer)
      XLNETC_RETURN_IF_ERROR(opts.observer->beforeStep(i, s).withPrefix(where));
    const int probs = ws.fusions().keptProbs[i];
    // Inits: summed by the kernel where it can (kernelTakesInit, unless
    // opts.fuse is off), otherwise added after it, as the add would.
    const bool kernelInit = opts.fuse && kernelTakesInit(s) && s.initOf(0) >= 0;
    XLNETC_RETURN_IF_ERROR(runStep(s, in, out, opts,
                                   kernelInit ? bound[s.initOf(0)] : nullptr,
                                   probs >= 0 ? ws.keptProbs(probs) : nullptr)
                               .withPrefix(where));
    for (size_t k = 0; k < out.size(); ++k)
      if (s.initOf(k) >= 0 && !(kernelInit && k == 0))
        host::add(*bound[s.initOf(k)], *out[k], *out[k]);
    if (opts.observer)
      XLNETC_RETURN_IF_ERROR(opts.observer->afterStep(i, s, out).withPrefix(where));
    for (int id : s.out) {
      bound[id] = &temps[id];
      written[id] = true;
    }
    return Status::ok();
  }

  /// 3. Return the outputs (a temp with one name is moved, otherwise
  ///    copied; returned buffers are never arena views); `live`: the
  ///    buffers computed (planLiveness).
  Status returnOutputs(TensorMap &outputs, const std::vector<char> &live) {
    TensorMap result;
    for (const Buffer &b : plan.buffers) {
      if (b.outputs.empty() || !live[size_t(b.id)])
        continue;
      if (!bound[b.id])
        return Status::error(fmt::format(
            "buffer {} is returned as '{}' but no step wrote it", b.id,
            b.outputs.front()));
      for (size_t k = 0; k < b.outputs.size(); ++k) {
        // Not `move ? std::move(temp) : *bound`: a conditional with a const
        // lvalue operand is a copy either way.
        if (b.role == Buffer::Temp && k + 1 == b.outputs.size())
          result[b.outputs[k]] = std::move(temps[b.id]);
        else
          result[b.outputs[k]] = *bound[b.id];
      }
    }
    for (auto &[name, t] : result)
      outputs[name] = std::move(t);
    return Status::ok();
  }
};

} // namespace

Status executeHost(const Plan &plan, const TensorMap &bindings,
                   TensorMap &outputs, const ExecOptions &opts,
                   HostWorkspace *workspace, TensorMap *donated) {
  HostThreadScope threads(opts.threads);
  const host::VecKernels *vec = nullptr;
  XLNETC_RETURN_IF_ERROR(host::selectVecKernels(vec));
  // The host executor is the fp32 reference: a plan compiled with
  // --precision bf16 runs on a device (cuda or emu).
  for (const Buffer &b : plan.buffers)
    if (b.dtype == DType::BF16)
      return Status::error(fmt::format(
          "this plan stores bf16 (buffer {}, {}): it was compiled with "
          "--precision bf16, which runs on --device cuda or emu; the host "
          "executor runs fp32 plans only",
          b.id, bufferType(b)));
  HostWorkspace local;
  HostWorkspace &ws = workspace ? *workspace : local;
  HostRun run(plan, opts, ws);
  XLNETC_RETURN_IF_ERROR(run.bindInputs(bindings, donated));
  // The temps' memory, once the bindings are known good: the workspace's
  // arena, placed by the memory plan (kept from step to step), or one
  // allocation per temp without one. Kept probabilities change no step's
  // operands.
  ws.prepare(plan, opts.fuse);
  // The steps the wanted outputs need (all of them when none are named).
  const PlanLiveness live = planLiveness(
      plan, std::set<std::string>(opts.wanted.begin(), opts.wanted.end()));
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (live.step[i])
      XLNETC_RETURN_IF_ERROR(run.runOne(i));
  return run.returnOutputs(outputs, live.buffer);
}

} // namespace xlnetc::rt
