//===- Optimizer.cpp - Host kernels of the optimizer ops ------------------===//
//
// lr_schedule, global_norm and adam_update of docs/Plan.md, i.e. the
// official model_utils.get_train_op (semantics.md §8): linear warmup then
// poly or cosine decay, global-norm clipping, and Adam with bias correction
// (tf.train.AdamOptimizer) or without it and with decoupled weight decay
// (AdamWeightDecayOptimizer). Scalars and per-element updates are computed
// in double and stored in fp32.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Kernels.h"
#include "runtime/host/VecKernels.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace xlnetc::rt::host {

double scheduledLearningRate(int64_t step, const LrScheduleArgs &a) {
  const double eta = a.learningRate, floor = a.learningRate * a.minLrRatio;
  const int64_t W = a.warmupSteps, T = a.trainSteps;
  if (step < W)
    return double(step) / double(W) * eta;
  double t = T <= W ? 1.0 : double(std::min(step - W, T - W)) / double(T - W);
  switch (a.decay) {
  case LrDecay::Poly:
    return (eta - floor) * (1.0 - t) + floor;
  case LrDecay::Cos:
    return eta * ((1.0 - a.minLrRatio) * 0.5 * (1.0 + std::cos(M_PI * t)) +
                  a.minLrRatio);
  }
  return eta;
}

Status lrSchedule(const Tensor &step, const LrScheduleArgs &args, Tensor &out) {
  int64_t s = step.i64()[0];
  if (s < 0)
    return Status::error(fmt::format("step {} is negative", s));
  out.f32()[0] = float(scheduledLearningRate(s, args));
  return Status::ok();
}

void globalNorm(const std::vector<const Tensor *> &grads, Tensor &out) {
  // Fixed chunks of every tensor, each summed in double by one task, then
  // the chunk sums added in order: the same result for any thread count.
  constexpr int64_t kChunk = int64_t(1) << 15;
  struct Chunk {
    const float *data;
    int64_t size;
  };
  std::vector<Chunk> chunks;
  int64_t total = 0;
  for (const Tensor *g : grads) {
    int64_t n = g->numel();
    total += n;
    for (int64_t i = 0; i < n; i += kChunk)
      chunks.push_back({g->f32() + i, std::min(kChunk, n - i)});
  }
  std::vector<double> partial(chunks.size(), 0.0);
  const VecKernels &vec = vecKernels();
#pragma omp parallel for schedule(static) if (worthThreads(total))
  for (int64_t c = 0; c < int64_t(chunks.size()); ++c)
    partial[c] = vec.sumSquares(chunks[c].data, chunks[c].size);
  double sum = 0.0;
  for (double p : partial)
    sum += p;
  out.f32()[0] = float(std::sqrt(sum));
}

Status adamUpdate(const Tensor &param, const Tensor &grad, const Tensor &m,
                  const Tensor &v, const Tensor &lr, const Tensor &gradNorm,
                  const Tensor &step, const AdamArgs &a, Tensor &paramOut,
                  Tensor &mOut, Tensor &vOut) {
  int64_t s = step.i64()[0];
  if (s < 0)
    return Status::error(fmt::format("step {} is negative", s));
  const double rate = lr.f32()[0], norm = gradNorm.f32()[0];
  // tf.clip_by_global_norm: g · clip / max(norm, clip). A NaN norm gives NaN
  // (std::max keeps its first argument), as in TF.
  const double c = a.clip > 0.0 ? a.clip / std::max(norm, a.clip) : 1.0;
  const double b1 = a.beta1, b2 = a.beta2, eps = a.epsilon, wd = a.weightDecay;
  // Bias correction folded into the step size (tf.train.AdamOptimizer).
  const double t = double(s) + 1.0;
  const double lrT =
      a.biasCorrection
          ? rate * std::sqrt(1.0 - std::pow(b2, t)) / (1.0 - std::pow(b1, t))
          : rate;
  const int64_t n = param.numel();
  const VecKernels &vec = vecKernels();
  // Elementwise, so the outputs may be the inputs' own storage (the host
  // executor updates carried parameters and moments in place).
  forEachChunk(n, [&](int64_t i, int64_t len) {
    vec.adam(AdamChunk{param.f32() + i, grad.f32() + i, m.f32() + i, v.f32() + i,
                       paramOut.f32() + i, mOut.f32() + i, vOut.f32() + i, len, c, b1,
                       b2, eps, lrT, wd, a.biasCorrection});
  });
  return Status::ok();
}

} // namespace xlnetc::rt::host
