//===- Trainer.h - What a training run means, step to step ------*- C++ -*-===//
//
// The semantics of pretraining that do not depend on where the step runs or
// who drives it: the state a step carries (parameters, Adam moments, the
// per-layer memory) and its names (StateNames.h), the parameters a fresh
// run starts from, each step's dropout seed, how ranks' losses and
// gradients are weighted in the global batch's, the checkpoint's snapshot,
// and the test hooks that break a run on purpose. `xlnetc train` and
// `xlnetc-run train` (xlnetc/Driver/Train.cpp) and the benchmarks
// (xlnetc/Driver/Bench.cpp) bind their steps through this.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_TRAIN_TRAINER_H
#define XLNETC_RUNTIME_TRAIN_TRAINER_H

#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"
#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/train/Checkpoint.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace xlnetc::rt::train {

/// The dropout seed of step `step` (0-based) of a run seeded `runSeed`: a
/// hash of both, so a resumed run draws the same masks as an uninterrupted
/// one.
uint64_t stepSeed(uint64_t runSeed, int64_t step);

/// The parameters `plan` binds as XLNet initialises them: LayerNorm weights
/// 1, biases 0 (the r_{w,r,s}_bias are drawn), everything else
/// N(0, initRange), drawn in name order from `seed`.
TensorMap initialParameters(const Plan &plan, double initRange, uint64_t seed);

/// The tokens a batch predicts: Σ target_mask (its loss's denominator).
double predictedTokens(const Tensor &targetMask);

/// Data parallel: each rank's weight in the global batch, from the number
/// of tokens each predicts (Σ target_mask): count / Σ counts (equal weights
/// when no rank predicts any), times `scale` (a test hook, FaultHooks).
std::vector<double> rankWeights(const std::vector<double> &counts, double scale = 1.0);
/// The global batch's loss from every rank's: Σ loss_r·count_r / Σ count_r.
double globalLoss(const std::vector<double> &losses, const std::vector<double> &counts);

/// The state a training step carries, bound by the names of docs/Plan.md's
/// `train` function: the parameters, their Adam moments and the per-layer
/// memory. The first step takes them from here; the executor then keeps
/// each step's results as the next step's inputs (carry()), so they are
/// read back (get()) only for a checkpoint or a check.
class StepState {
public:
  StepState(ParamShapes shapes, int64_t nLayer, bool hasMems);

  /// A fresh run: `params`, zero moments, zero memory of `memShape`
  /// ([mem_len, batch, d_model]; semantics.md §5).
  void startFresh(TensorMap params, const std::vector<int64_t> &memShape);
  /// A resumed run from `ckpt`; `localRows` takes each layer's global
  /// memory to this process's rows (the identity without data parallel).
  Status restore(TrainState &&ckpt,
                 const std::function<Status(const Tensor &global, Tensor &local)> &localRows);

  /// (output, input) pairs each step hands on (Executor::setCarry).
  const std::vector<std::pair<std::string, std::string>> &carry() const { return carry_; }
  /// Binds a step's inputs (a batch; names without "raw.") and its counter
  /// `step` (updates already applied).
  void bindInputs(TensorMap batch, int64_t step);
  /// Binds `name` to `t` for the next step, over what the executor keeps.
  void bind(const std::string &name, Tensor t) { map_[name] = std::move(t); }
  /// What the next Executor::start binds.
  const TensorMap &bindings() const { return map_; }
  TensorMap &bindings() { return map_; }
  /// After Executor::start: the carried state lives in the executor now.
  void handedToExecutor();

  /// Input `name`: bound here, or kept by the executor from the last step.
  Status get(Executor &executor, const std::string &name, Tensor &out) const;
  /// The parameters, by name (the ranks' parameter check).
  Status parameters(Executor &executor, TensorMap &out) const;
  /// A copy of the parameters, moments and memory into `s`: a checkpoint's
  /// snapshot (the caller sets the step, seed and data position).
  Status snapshot(Executor &executor, TrainState &s) const;

  const ParamShapes &shapes() const { return shapes_; }
  int64_t numParams() const;
  int64_t numLayers() const { return nLayer_; }
  bool hasMems() const { return hasMems_; }

private:
  ParamShapes shapes_;
  int64_t nLayer_;
  bool hasMems_;
  /// carry(), made once: handedToExecutor() runs every step.
  std::vector<std::pair<std::string, std::string>> carry_;
  TensorMap map_;
};

/// The test hooks that break a run on purpose, read from the environment
/// once (their use: docs/Distributed.md, test/Training). Steps are 1-based.
struct FaultHooks {
  /// Rank R before step N ("R:N").
  struct RankStep {
    int rank = -1;
    int64_t step = -1;
    bool at(int r, int64_t s) const { return rank >= 0 && rank == r && step == s; }
  };
  /// XLNETC_FAULT_NAN_AT_STEP=N: mask_emb poisoned before step N, the NaN
  /// guard tested end to end.
  std::optional<int64_t> nanAtStep;
  /// XLNETC_FAULT_SIGINT_AT_STEP=N: SIGINT while step N runs, after the
  /// next step's batch was drawn (the latest moment a stop can be asked).
  std::optional<int64_t> sigintAtStep;
  /// XLNETC_FAULT_KILL_RANK: the rank dies (SIGKILL); _HANG_RANK: it stops
  /// for good; _DESYNC_RANK: its mask_emb is nudged (ranks whose parameters
  /// part); _BADID_RANK: an id outside the vocabulary in its batch (a step
  /// that fails on one rank only).
  RankStep kill, hang, desync, badId;
  /// XLNETC_FAULT_REDUCE_SCALE=F: every all-reduce weight times F (with F a
  /// power of two the first grad_norm is exactly F times a plain run's).
  double reduceScale = 1.0;

  static FaultHooks fromEnvironment();
  /// Applies the hooks that change step `step`'s inputs on rank `rank`
  /// (NaN, desync, bad id) to `state`, whose vocabulary is `nToken`.
  Status perturbInputs(StepState &state, Executor &executor, int rank, int64_t step,
                       int64_t nToken) const;
  /// Kills or hangs rank `rank` before step `step` when asked to.
  void beforeStep(int rank, int64_t step) const;
};

} // namespace xlnetc::rt::train

#endif // XLNETC_RUNTIME_TRAIN_TRAINER_H
