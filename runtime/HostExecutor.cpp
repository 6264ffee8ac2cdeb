//===- HostExecutor.cpp - Runs a plan on the CPU in fp32 ------------------===//

#include "runtime/HostExecutor.h"

#include "runtime/host/Kernels.h"

#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

namespace xlnetc::rt {

namespace {

/// Sets the thread counts for one execution: OpenMP gets `threads` (0: its
/// default, all cores), OpenBLAS gets 1. The kernels parallelise with OpenMP
/// only (GEMMs split rows across OpenMP threads); a multi-threaded OpenBLAS
/// beside it spins against OpenMP's idle threads and, measured on 2 cores,
/// made the tiny model's step 10x slower than one thread.
class ThreadScope {
public:
  explicit ThreadScope(int threads)
      : savedOmp_(omp_get_max_threads()), savedBlas_(openblas_get_num_threads()) {
    if (threads > 0)
      omp_set_num_threads(threads);
    openblas_set_num_threads(1);
  }
  ~ThreadScope() {
    omp_set_num_threads(savedOmp_);
    openblas_set_num_threads(savedBlas_);
  }

private:
  int savedOmp_, savedBlas_;
};

/// Runs one verified step on resolved operands (`out` holds one zero-filled
/// tensor per output; multi-output ops write all of them).
Status runStep(const Step &s, const std::vector<const Tensor *> &in,
               std::vector<Tensor *> &out, uint64_t seed) {
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
    host::gemm(*in[0], *in[1], in.size() == 3 ? in[2] : nullptr, a.kRank,
               a.transposeW, a.activation, *out[0]);
    return Status::ok();
  case OpKind::RelAttention: {
    host::RelAttentionArgs args{in[0], in[1], in[2], in[3],
                                in[4], in[5], in[6], in[7],
                                in[8], in[9], in.size() == 11 ? in[10] : nullptr};
    args.scale = a.scale;
    args.dropatt = a.dropatt;
    args.dropoutSite = a.dropoutSite;
    args.seed = seed;
    return host::relAttention(args, *out[0]);
  }
  case OpKind::AddLayerNorm:
    host::addLayerNorm(*in[0], *in[1], *in[2], *in[3], a.eps, *out[0]);
    return Status::ok();
  case OpKind::Dropout:
    host::dropout(*in[0], a.rate, a.dropoutSite, seed, *out[0]);
    return Status::ok();
  case OpKind::LmLoss:
    return host::lmLoss(*in[0], *in[1], *in[2], *out[0], *out[1]);
  case OpKind::EmbeddingGrad:
    return host::embeddingGrad(*in[0], *in[1], *out[0]);
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
    host::gemmWgrad(*in[0], *in[1], a.kRank, a.transposeW, *out[0]);
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
    args.seed = seed;
    host::RelAttentionGrads grads{out[0], out[1], out[2], out[3],
                                  out[4], out[5], out[6], out[7]};
    return host::relAttentionGrad(*in[0], args, grads);
  }
  case OpKind::AddLayerNormGrad:
    host::addLayerNormGrad(*in[0], *in[1], *in[2], *in[3], a.eps, *out[0],
                           *out[1], *out[2]);
    return Status::ok();
  case OpKind::LmLossGrad:
    return host::lmLossGrad(*in[0], *in[1], *in[2], *out[0]);
  case OpKind::Add:
    host::add(*in[0], *in[1], *out[0]);
    return Status::ok();
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
  }
  return Status::error("unhandled op");
}

} // namespace

static std::string bufferType(const Buffer &b) {
  return std::string(dtypeName(b.dtype)) + shapeStr(b.shape);
}

Status checkBinding(const Buffer &b, const TensorMap &bindings,
                    const Tensor *&bound) {
  const char *role = b.role == Buffer::Input ? "input" : "param";
  auto it = bindings.find(b.name);
  if (it == bindings.end())
    return Status::error(fmt::format("missing {} '{}' (buffer {}, expected {})",
                                     role, b.name, b.id, bufferType(b)));
  const Tensor &t = it->second;
  if (t.dtype != b.dtype || t.shape != b.shape)
    return Status::error(fmt::format("{} '{}' (buffer {}): expected {}, got {}",
                                     role, b.name, b.id, bufferType(b),
                                     t.typeStr()));
  if (t.storage.size() * 8 < t.nbytes())
    return Status::error(fmt::format(
        "{} '{}' (buffer {}): tensor holds {} bytes but {} needs {}", role,
        b.name, b.id, t.storage.size() * 8, t.typeStr(), t.nbytes()));
  bound = &t;
  return Status::ok();
}

Status executeHost(const Plan &plan, const TensorMap &bindings,
                   TensorMap &outputs, const ExecOptions &opts) {
  ThreadScope threads(opts.threads);
  size_t n = plan.buffers.size();
  // The host executor is the fp32 reference: a plan compiled with
  // --precision bf16 runs on a device (cuda or emu).
  for (const Buffer &b : plan.buffers)
    if (b.dtype == DType::BF16)
      return Status::error(fmt::format(
          "this plan stores bf16 (buffer {}, {}): it was compiled with "
          "--precision bf16, which runs on --device cuda or emu; the host "
          "executor runs fp32 plans only",
          b.id, bufferType(b)));

  // 1. Bind inputs and params; find the last reader of every temp so its
  //    memory can be released early.
  std::vector<const Tensor *> bound(n, nullptr);
  for (const Buffer &b : plan.buffers)
    if (b.role != Buffer::Temp)
      XLNETC_RETURN_IF_ERROR(checkBinding(b, bindings, bound[b.id]));
  std::vector<size_t> lastUse(n, 0);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int id : plan.steps[i].in)
      if (id >= 0 && size_t(id) < n)
        lastUse[id] = i;

  // 2. Run the steps in order. Plans built in memory may skip parsePlan, so
  //    each step's ids and types are re-checked (cheap next to the kernels).
  std::vector<Tensor> temps(n);
  std::vector<bool> written(n, false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    std::string where = stepPrefix(i, s);
    for (int id : s.in)
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

    std::vector<const Tensor *> in;
    for (int id : s.in)
      in.push_back(bound[id]);
    std::vector<Tensor *> out;
    for (int id : s.out) {
      const Buffer &b = plan.buffers[id];
      temps[id] = Tensor::zeros(b.dtype, b.shape);
      out.push_back(&temps[id]);
    }
    XLNETC_RETURN_IF_ERROR(runStep(s, in, out, opts.seed).withPrefix(where));
    for (int id : s.out) {
      bound[id] = &temps[id];
      written[id] = true;
    }
    // Release temps nobody reads later and nobody returns.
    for (int id : s.in)
      if (plan.buffers[id].role == Buffer::Temp && lastUse[id] == i &&
          plan.buffers[id].outputs.empty()) {
        temps[id] = Tensor();
        bound[id] = nullptr;
      }
  }

  // 3. Return the outputs (a temp with one name is moved, otherwise copied).
  TensorMap result;
  for (const Buffer &b : plan.buffers) {
    if (b.outputs.empty())
      continue;
    if (!bound[b.id])
      return Status::error(fmt::format(
          "buffer {} is returned as '{}' but no step wrote it", b.id,
          b.outputs.front()));
    for (size_t k = 0; k < b.outputs.size(); ++k) {
      bool move = b.role == Buffer::Temp && k + 1 == b.outputs.size();
      result[b.outputs[k]] = move ? std::move(temps[b.id]) : *bound[b.id];
    }
  }
  for (auto &[name, t] : result)
    outputs[name] = std::move(t);
  return Status::ok();
}

} // namespace xlnetc::rt
