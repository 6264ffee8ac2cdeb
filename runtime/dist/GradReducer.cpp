//===- GradReducer.cpp - The data-parallel gradient all-reduce ------------===//

#include "runtime/dist/GradReducer.h"

#include "runtime/dist/NcclComm.h"
#include "runtime/plan/PlanDataflow.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace xlnetc::rt::dist {

Status GradReducer::create(const Plan &plan, Transport &transport, int64_t bucketBytes,
                           GradReducer &out) {
  GradReducer r;
  r.transport_ = &transport;
  r.plan_ = &plan;
  // 1. The gradients: the global_norm step's inputs.
  const Step *norm = nullptr;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (plan.steps[i].kind == OpKind::GlobalNorm) {
      if (norm)
        return Status::error("data-parallel training: the plan has two global_norm steps");
      norm = &plan.steps[i];
      r.normStep_ = i;
    }
  if (!norm)
    return Status::error("data-parallel training needs a training step (the plan has no "
                         "global_norm step whose inputs are the gradients)");
  // 2. Who writes each gradient, and that nothing reads one before the norm.
  const size_t n = plan.buffers.size();
  const PlanDataflow df = planDataflow(plan);
  std::vector<bool> isGrad(n, false);
  for (int id : norm->in) {
    if (plan.buffers[size_t(id)].dtype != DType::F32)
      return Status::error(fmt::format("data-parallel training: gradient buffer {} is not "
                                       "f32",
                                       id));
    isGrad[size_t(id)] = true;
  }
  size_t early = r.normStep_, earlyId = 0; // the first step reading a gradient early
  for (size_t id = 0; id < n; ++id)
    if (isGrad[id] && !df.readers[id].empty() && df.readers[id].front() < early)
      early = df.readers[id].front(), earlyId = id;
  if (early < r.normStep_)
    return Status::error(fmt::format(
        "data-parallel training: step {} ({}) reads gradient buffer {} before the all-reduce",
        early, plan.steps[early].op, earlyId));
  const std::vector<int> &writer = df.writer;
  std::vector<int> grads(norm->in.begin(), norm->in.end());
  for (int id : grads)
    if (writer[size_t(id)] < 0)
      return Status::error(fmt::format("data-parallel training: gradient buffer {} is not "
                                       "written by a step",
                                       id));
  // 3. Buckets in the order the backward finishes the gradients.
  std::stable_sort(grads.begin(), grads.end(),
                   [&](int a, int b) { return writer[size_t(a)] < writer[size_t(b)]; });
  grads.erase(std::unique(grads.begin(), grads.end()), grads.end());
  const int64_t cap = std::max<int64_t>(1, bucketBytes / int64_t(sizeof(float)));
  for (int id : grads) {
    const int64_t floats = numelOf(plan.buffers[size_t(id)].shape);
    if (r.buckets_.empty() || r.buckets_.back().floats + floats > cap)
      r.buckets_.emplace_back();
    Bucket &b = r.buckets_.back();
    b.buffers.push_back(id);
    b.floats += floats;
    b.readyAfter = size_t(writer[size_t(id)]);
  }
  r.written_.assign(n, nullptr);
  r.reduced_.assign(r.buckets_.size(), false);
  r.weights_.assign(size_t(transport.size()), 1.0 / transport.size());
  out = std::move(r);
  return Status::ok();
}

void GradReducer::startStep() {
  std::fill(written_.begin(), written_.end(), nullptr);
  std::fill(reduced_.begin(), reduced_.end(), false);
  reducedOrder_.clear();
}

Status GradReducer::checkAllReduced() const {
  for (size_t b = 0; b < buckets_.size(); ++b)
    if (!reduced_[b])
      return Status::error(fmt::format("internal error: gradient bucket {} was not reduced "
                                       "before the optimizer",
                                       b));
  return Status::ok();
}

Status GradReducer::beforeStep(size_t index, const Step &) {
  if (index == 0)
    startStep();
  return index == normStep_ ? checkAllReduced() : Status::ok();
}

Status GradReducer::afterStep(size_t index, const Step &step,
                              const std::vector<Tensor *> &out) {
  for (size_t k = 0; k < step.out.size(); ++k)
    written_[size_t(step.out[k])] = out[k];
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket &bucket = buckets_[b];
    if (reduced_[b] || bucket.readyAfter != index)
      continue;
    std::vector<Tensor *> grads;
    for (int id : bucket.buffers)
      grads.push_back(written_[size_t(id)]);
    XLNETC_RETURN_IF_ERROR(reduceTensors(grads));
    reduced_[b] = true;
    reducedOrder_.push_back(b);
  }
  return Status::ok();
}

Status GradReducer::useDeviceProgram(const DeviceProgram &program) {
  if (program.steps.size() != plan_->steps.size())
    return Status::error("internal error: the device program does not match the plan");
  // The last step before the norm at which a launch touches each buffer;
  // a multi-tensor table (its buffers are not listed) touches them all.
  std::vector<int64_t> last(plan_->buffers.size(), -1);
  const auto touch = [&](int id, size_t step) {
    if (id >= 0 && size_t(id) < last.size())
      last[size_t(id)] = int64_t(step);
  };
  for (size_t step = 0; step < normStep_; ++step)
    for (const DeviceLaunch &l : program.steps[step].launches) {
      for (int id : {l.a, l.b, l.bias, l.d, l.aux, l.c})
        touch(id, step);
      for (const auto &[a, d] : l.batchMembers)
        touch(a, step), touch(d, step);
      for (const KernelArg &arg : l.args) {
        if (arg.kind == KernelArg::Buffer)
          touch(arg.index, step);
        if (arg.kind == KernelArg::Table)
          for (int64_t &t : last)
            t = int64_t(step);
      }
    }
  deviceReady_.clear();
  for (const Bucket &b : buckets_) {
    size_t ready = 0;
    for (int id : b.buffers) {
      if (last[size_t(id)] < 0)
        return Status::error(fmt::format("data-parallel training: no launch before the "
                                         "global_norm step writes gradient buffer {}",
                                         id));
      ready = std::max(ready, size_t(last[size_t(id)]));
    }
    deviceReady_.push_back(ready);
  }
  return Status::ok();
}

bool GradReducer::wantsDeviceStep(size_t index) const {
  if (index == normStep_)
    return true;
  for (size_t ready : deviceReady_)
    if (ready + 1 == index)
      return true;
  return false;
}

Status GradReducer::beforeDeviceStep(size_t index, const Step &,
                                     const DeviceBuffers &buffers) {
  if (lastDeviceStep_ == SIZE_MAX || index <= lastDeviceStep_) // a new step
    startStep();
  lastDeviceStep_ = index;
  // Every bucket whose last launch is enqueued: its all-reduce goes on the
  // side stream after that launch, and the backward of the layers below
  // goes on meanwhile.
  bool forked = false;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    // Ready: its last launch ran (without a program: at the norm).
    const size_t ready = b < deviceReady_.size() ? deviceReady_[b] : normStep_ - 1;
    if (reduced_[b] || ready >= index)
      continue;
    if (!forked)
      XLNETC_RETURN_IF_ERROR(buffers.sideWaitsForMain());
    forked = true;
    const Bucket &bucket = buckets_[b];
    const std::string where = fmt::format("gradient bucket {}", b);
    if (nccl_) { // in device memory, with NCCL on the side stream
      std::vector<std::pair<uint64_t, int64_t>> regions;
      for (int id : bucket.buffers)
        regions.emplace_back(buffers.address(id), numelOf(plan_->buffers[size_t(id)].shape));
      XLNETC_RETURN_IF_ERROR(nccl_->allReduceWeighted(
          regions, float(weights_[size_t(transport_->rank())]), buffers.sideStream, where));
    } else { // host work on the side stream: host copies and the transport
      XLNETC_RETURN_IF_ERROR(buffers.onSide(
          [this, ids = bucket.buffers, read = buffers.read, write = buffers.write,
           where]() -> Status {
            std::vector<Tensor> grads(ids.size());
            std::vector<Tensor *> copies;
            for (size_t k = 0; k < ids.size(); ++k) {
              XLNETC_RETURN_IF_ERROR(read(ids[k], grads[k]));
              copies.push_back(&grads[k]);
            }
            XLNETC_RETURN_IF_ERROR(reduceTensors(copies).withPrefix(where + ": "));
            for (size_t k = 0; k < ids.size(); ++k)
              XLNETC_RETURN_IF_ERROR(write(ids[k], grads[k]));
            return Status::ok();
          }));
    }
    reduced_[b] = true; // enqueued; done when the side stream joins
    reducedOrder_.push_back(b);
  }
  // The norm reads every gradient: the step waits for the side stream.
  if (index == normStep_) {
    XLNETC_RETURN_IF_ERROR(checkAllReduced());
    XLNETC_RETURN_IF_ERROR(buffers.mainWaitsForSide());
  }
  return Status::ok();
}

Status GradReducer::reduceTensors(const std::vector<Tensor *> &tensors) {
  int64_t n = 0;
  for (const Tensor *t : tensors)
    n += t->numel();
  flat_.resize(size_t(n));
  int64_t at = 0;
  for (const Tensor *t : tensors) {
    std::memcpy(flat_.data() + at, t->f32(), t->nbytes());
    at += t->numel();
  }
  XLNETC_RETURN_IF_ERROR(reduce(flat_.data(), n));
  at = 0;
  for (Tensor *t : tensors) {
    std::memcpy(t->f32(), flat_.data() + at, t->nbytes());
    at += t->numel();
  }
  return Status::ok();
}

Status GradReducer::reduce(float *data, int64_t n) {
  const int size = transport_->size(), rank = transport_->rank();
  if (weights_.size() != size_t(size))
    return Status::error("internal error: the reducer's weights do not match the world");
  // Shard r: [offset[r], offset[r] + count[r]).
  std::vector<int64_t> count(static_cast<size_t>(size)), offset(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    offset[size_t(r)] = n * r / size;
    count[size_t(r)] = n * (r + 1) / size - offset[size_t(r)];
  }
  const int64_t mineCount = count[size_t(rank)];
  // Everyone's copy of my shard, rank by rank.
  pieces_.resize(size_t(mineCount * size));
  std::vector<int64_t> recvCount(static_cast<size_t>(size), mineCount),
      recvOffset(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    recvOffset[size_t(r)] = mineCount * r;
  XLNETC_RETURN_IF_ERROR(
      transport_->allToAll(data, count, offset, pieces_.data(), recvCount, recvOffset));
  mine_.resize(size_t(mineCount));
  for (int64_t j = 0; j < mineCount; ++j) {
    double sum = 0.0;
    for (int r = 0; r < size; ++r)
      sum += weights_[size_t(r)] * double(pieces_[size_t(mineCount * r + j)]);
    mine_[size_t(j)] = float(sum);
  }
  return transport_->allGather(mine_.data(), count, offset, data);
}

} // namespace xlnetc::rt::dist
