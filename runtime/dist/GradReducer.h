//===- GradReducer.h - The data-parallel gradient all-reduce ---*- C++ -*-===//
//
// In a data-parallel training step every rank runs the same plan on its own
// rows; before clipping and Adam, each gradient becomes the gradient of the
// global batch's loss. The gradients are the inputs of the plan's
// global_norm step. They are grouped in buckets of about `bucketBytes`, in
// the order the backward finishes them (the last layer's first), and a
// bucket is reduced as soon as the step writing its last gradient has run
// (a StepObserver of the host executor), in place; the global_norm step
// checks that every bucket has been. On a device the reducer is called
// when the step after a bucket's last launch is about to be enqueued, and
// enqueues the bucket's all-reduce on the device's side stream after an
// event (NCCL on a GPU; on emu, host work on host copies through the
// transport), so the backward of the layers below goes on meanwhile; the
// norm's launches wait for the side stream (Device::mainWaitsForSide).
//
// The reduction is deterministic and identical on every rank: the bucket's
// floats are cut into one contiguous shard per rank; rank r receives every
// rank's copy of shard r (all-to-all), sums them in rank order in double,
// weighted, and every rank gathers every reduced shard (all-gather). The
// weights are w_r = count_r / Σ count, count_r the rank's predicted tokens
// (Σ target_mask): the loss is Σ ptl·mask / Σ mask over the rank's rows, so
// Σ_r w_r · grad_r is exactly the gradient of the global batch's loss, the
// loss a single process computes over all rows. With equal counts it is
// the official mean over towers, (1/N) Σ_r grad_r.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_GRADREDUCER_H
#define XLNETC_RUNTIME_DIST_GRADREDUCER_H

#include "runtime/plan/DeviceProgram.h"
#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/Plan.h"
#include "runtime/dist/Transport.h"

#include <cstdint>
#include <cstddef>
#include <string>
#include <vector>

namespace xlnetc::rt::dist {

/// DDP's default bucket size.
constexpr int64_t kDefaultBucketBytes = int64_t(25) << 20;

class GradReducer final : public StepObserver {
public:
  struct Bucket {
    std::vector<int> buffers; ///< gradient buffer ids, in the order they are written
    int64_t floats = 0;
    size_t readyAfter = 0; ///< the step that writes its last gradient
  };

  /// Finds `plan`'s gradients (its global_norm step's inputs) and buckets
  /// them; an error when the plan has no global_norm or reads a gradient
  /// before it (the reduced value would come too late).
  static Status create(const Plan &plan, Transport &transport, int64_t bucketBytes,
                       GradReducer &out);

  /// This step's weights, one per rank (they sum to 1).
  void setWeights(std::vector<double> weights) { weights_ = std::move(weights); }

  const std::vector<Bucket> &buckets() const { return buckets_; }
  /// The buckets in the order this step reduced them (for tests).
  const std::vector<size_t> &reducedOrder() const { return reducedOrder_; }

  Status beforeStep(size_t index, const Step &step) override;
  /// Device executors (emu, cuda): the buckets' readiness from `program`'s
  /// launches instead of the plan's steps (a fused launch may write a
  /// gradient at another step than the plan's own): the last step before
  /// the norm whose launches touch each gradient. An error when a gradient
  /// is touched by no launch before the norm.
  Status useDeviceProgram(const DeviceProgram &program);
  /// On a GPU: reduce in device memory with NCCL instead of host copies
  /// (null: host copies through the transport).
  void useNccl(class NcclComm *nccl) { nccl_ = nccl; }
  /// The steps before which a bucket became ready, and the norm's.
  bool wantsDeviceStep(size_t index) const override;
  /// Enqueues the ready buckets' all-reduces on the side stream, after the
  /// work so far; at the norm, the step's stream waits for them.
  Status beforeDeviceStep(size_t index, const Step &step,
                          const DeviceBuffers &buffers) override;
  Status afterStep(size_t index, const Step &step, const std::vector<Tensor *> &out) override;

  /// The weighted, deterministic all-reduce of `data` (n floats) in place,
  /// as a bucket's (exposed for tests).
  Status reduce(float *data, int64_t n);

private:
  /// Forgets the last step's progress.
  void startStep();
  /// An internal error naming a bucket not reduced (or enqueued) yet.
  Status checkAllReduced() const;
  /// One bucket's tensors packed, reduced and unpacked in place.
  Status reduceTensors(const std::vector<Tensor *> &tensors);

  Transport *transport_ = nullptr;
  const Plan *plan_ = nullptr;
  std::vector<Bucket> buckets_;
  size_t normStep_ = 0;
  std::vector<double> weights_;
  /// Per buffer id: the tensor a step wrote this step (null before).
  std::vector<Tensor *> written_;
  /// Per bucket: the last program step touching one of its gradients.
  std::vector<size_t> deviceReady_;
  size_t lastDeviceStep_ = SIZE_MAX;
  class NcclComm *nccl_ = nullptr;
  std::vector<bool> reduced_;
  std::vector<size_t> reducedOrder_;
  std::vector<float> flat_, mine_, pieces_;
};

} // namespace xlnetc::rt::dist

#endif // XLNETC_RUNTIME_DIST_GRADREDUCER_H
