//===- Trainer.cpp - What a training run means, step to step --------------===//

#include "runtime/train/Trainer.h"

#include "runtime/host/DropoutHash.h"
#include "runtime/train/StateNames.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <random>
#include <thread>

namespace xlnetc::rt::train {

uint64_t stepSeed(uint64_t runSeed, int64_t step) {
  return host::splitmix64(runSeed ^ host::splitmix64(uint64_t(step)));
}


static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TensorMap initialParameters(const Plan &plan, double initRange, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, static_cast<float>(initRange));
  TensorMap params;
  for (const Buffer &buffer : plan.buffers) {
    if (buffer.role != Buffer::Role::Param)
      continue;
    Tensor t = Tensor::zeros(DType::F32, buffer.shape);
    const std::string &name = buffer.name;
    bool isLayerNorm = name.find("layer_norm") != std::string::npos;
    if (isLayerNorm && endsWith(name, ".weight"))
      std::fill(t.f32(), t.f32() + t.numel(), 1.0f);
    else if (!endsWith(name, ".bias")) // r_{w,r,s}_bias are drawn too
      for (int64_t i = 0; i < t.numel(); ++i)
        t.f32()[i] = normal(rng);
    params[name] = std::move(t);
  }
  return params;
}

double predictedTokens(const Tensor &targetMask) {
  double count = 0;
  for (int64_t i = 0; i < targetMask.numel(); ++i)
    count += targetMask.f32()[i];
  return count;
}

std::vector<double> rankWeights(const std::vector<double> &counts, double scale) {
  double total = 0;
  for (double c : counts)
    total += c;
  std::vector<double> weights;
  for (double c : counts)
    weights.push_back(scale * (total > 0 ? c / total : 1.0 / double(counts.size())));
  return weights;
}

double globalLoss(const std::vector<double> &losses, const std::vector<double> &counts) {
  double num = 0, den = 0;
  for (size_t r = 0; r < losses.size(); ++r)
    num += losses[r] * counts[r], den += counts[r];
  return num / den;
}

//===----------------------------------------------------------------------===//
// StepState
//===----------------------------------------------------------------------===//

StepState::StepState(ParamShapes shapes, int64_t nLayer, bool hasMems)
    : shapes_(std::move(shapes)), nLayer_(nLayer), hasMems_(hasMems) {
  for (const auto &[name, shape] : shapes_)
    for (const std::string &state : {name, names::adamM(name), names::adamV(name)})
      carry_.emplace_back(names::updated(state), state);
  for (int64_t l = 0; hasMems_ && l < nLayer_; ++l)
    carry_.emplace_back(names::newMems(l), names::mems(l));
}

void StepState::startFresh(TensorMap params, const std::vector<int64_t> &memShape) {
  for (auto &[name, t] : params) {
    map_[names::adamM(name)] = Tensor::zeros(DType::F32, t.shape);
    map_[names::adamV(name)] = Tensor::zeros(DType::F32, t.shape);
    map_[name] = std::move(t);
  }
  for (int64_t l = 0; hasMems_ && l < nLayer_; ++l)
    map_[names::mems(l)] = Tensor::zeros(DType::F32, memShape);
}

Status StepState::restore(
    TrainState &&ckpt,
    const std::function<Status(const Tensor &global, Tensor &local)> &localRows) {
  for (auto &[name, t] : ckpt.params)
    map_[name] = std::move(t);
  for (auto &[name, t] : ckpt.adamM)
    map_[names::adamM(name)] = std::move(t);
  for (auto &[name, t] : ckpt.adamV)
    map_[names::adamV(name)] = std::move(t);
  for (auto &[name, t] : ckpt.mems) // the global memory [mem_len, B, d_model]
    XLNETC_RETURN_IF_ERROR(localRows(t, map_[name]).withPrefix(name + ": "));
  return Status::ok();
}

void StepState::bindInputs(TensorMap batch, int64_t step) {
  for (auto &[name, t] : batch)
    if (!names::hasPrefix(name, "raw."))
      map_[name] = std::move(t);
  map_["step"] = Tensor::fromI64({}, {step});
}

void StepState::handedToExecutor() {
  for (const auto &[out, in] : carry())
    map_.erase(in);
}

Status StepState::get(Executor &executor, const std::string &name, Tensor &out) const {
  if (auto it = map_.find(name); it != map_.end()) {
    out = it->second;
    return Status::ok();
  }
  return executor.fetch(name, out);
}

Status StepState::parameters(Executor &executor, TensorMap &out) const {
  for (const auto &[name, shape] : shapes_)
    XLNETC_RETURN_IF_ERROR(get(executor, name, out[name]));
  return Status::ok();
}

Status StepState::snapshot(Executor &executor, TrainState &s) const {
  for (const auto &[name, shape] : shapes_) {
    XLNETC_RETURN_IF_ERROR(get(executor, name, s.params[name]));
    XLNETC_RETURN_IF_ERROR(get(executor, names::adamM(name), s.adamM[name]));
    XLNETC_RETURN_IF_ERROR(get(executor, names::adamV(name), s.adamV[name]));
  }
  for (int64_t l = 0; hasMems_ && l < nLayer_; ++l)
    XLNETC_RETURN_IF_ERROR(get(executor, names::mems(l), s.mems[names::mems(l)]));
  return Status::ok();
}

int64_t StepState::numParams() const {
  int64_t n = 0;
  for (const auto &[name, shape] : shapes_)
    n += numelOf(shape);
  return n;
}

//===----------------------------------------------------------------------===//
// FaultHooks
//===----------------------------------------------------------------------===//

namespace {

/// $name=N, or nullopt when unset.
std::optional<int64_t> stepFromEnv(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return std::nullopt;
  return std::strtoll(v, nullptr, 10);
}

/// $name="R:N", or none (-1, -1).
FaultHooks::RankStep rankStepFromEnv(const char *name) {
  FaultHooks::RankStep rs;
  const char *v = std::getenv(name);
  if (!v || !*v)
    return rs;
  char *end = nullptr;
  const long r = std::strtol(v, &end, 10);
  if (end && *end == ':') {
    rs.rank = int(r);
    rs.step = std::strtoll(end + 1, nullptr, 10);
  }
  return rs;
}

const char *const kMaskEmb = "transformer.mask_emb";

} // namespace

FaultHooks FaultHooks::fromEnvironment() {
  FaultHooks h;
  h.nanAtStep = stepFromEnv("XLNETC_FAULT_NAN_AT_STEP");
  h.sigintAtStep = stepFromEnv("XLNETC_FAULT_SIGINT_AT_STEP");
  h.kill = rankStepFromEnv("XLNETC_FAULT_KILL_RANK");
  h.hang = rankStepFromEnv("XLNETC_FAULT_HANG_RANK");
  h.desync = rankStepFromEnv("XLNETC_FAULT_DESYNC_RANK");
  h.badId = rankStepFromEnv("XLNETC_FAULT_BADID_RANK");
  if (const char *v = std::getenv("XLNETC_FAULT_REDUCE_SCALE"); v && *v)
    h.reduceScale = std::strtod(v, nullptr);
  return h;
}

Status FaultHooks::perturbInputs(StepState &state, Executor &executor, int rank,
                                 int64_t step, int64_t nToken) const {
  if (nanAtStep && *nanAtStep == step) {
    Tensor poisoned;
    XLNETC_RETURN_IF_ERROR(state.get(executor, kMaskEmb, poisoned));
    poisoned.f32()[0] = NAN;
    state.bind(kMaskEmb, std::move(poisoned));
  }
  if (badId.at(rank, step))
    state.bindings().at("input_k").i64()[0] = nToken;
  if (desync.at(rank, step)) {
    Tensor nudged;
    XLNETC_RETURN_IF_ERROR(state.get(executor, kMaskEmb, nudged));
    nudged.f32()[0] += 1e-3f;
    state.bind(kMaskEmb, std::move(nudged));
  }
  return Status::ok();
}

void FaultHooks::beforeStep(int rank, int64_t step) const {
  if (kill.at(rank, step))
    std::raise(SIGKILL);
  if (hang.at(rank, step))
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
}

} // namespace xlnetc::rt::train
