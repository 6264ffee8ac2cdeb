//===- HostFusion.cpp - Plan steps the host executor runs as one ----------===//

#include "runtime/host/HostFusion.h"

#include "runtime/MemoryPlan.h"
#include "runtime/Plan.h"
#include "runtime/Tensor.h"

namespace xlnetc::rt::host {

size_t HostFusions::absorbedCount() const {
  size_t n = 0;
  for (int g : absorbedBy)
    n += g >= 0;
  return n;
}

int64_t HostFusions::keptProbsBytes() const {
  int64_t floats = 0;
  for (int64_t n : keptProbsFloats)
    floats += n;
  return floats * int64_t(sizeof(float));
}

HostFusions findHostFusions(const Plan &plan, bool accumulate, bool keepProbs) {
  const std::vector<Step> &steps = plan.steps;
  const size_t n = plan.buffers.size();
  HostFusions f;
  f.absorbedBy.assign(steps.size(), -1);
  f.accumulate.assign(steps.size(), {});
  std::vector<int> writer(n, -1);
  std::vector<std::vector<size_t>> readers(n);
  for (size_t i = 0; i < steps.size(); ++i) {
    for (int id : steps[i].in)
      if (id >= 0 && size_t(id) < n)
        readers[size_t(id)].push_back(i);
    for (int id : steps[i].out)
      if (id >= 0 && size_t(id) < n)
        writer[size_t(id)] = int(i);
  }
  auto buf = [&](int id) -> const Buffer & { return plan.buffers[size_t(id)]; };
  auto plainF32Temp = [&](int id) {
    return buf(id).role == Buffer::Temp && buf(id).outputs.empty() &&
           buf(id).dtype == DType::F32;
  };

  for (size_t a = 0; accumulate && a < steps.size(); ++a) {
    const Step &add = steps[a];
    if (add.kind != OpKind::Add || add.in.size() != 2 || add.out.size() != 1)
      continue;
    const int z = add.out[0];
    if (z < 0 || size_t(z) >= n || !plainF32Temp(z))
      continue;
    for (int u = 0; u < 2; ++u) {
      const int y = add.in[size_t(u)], x = add.in[size_t(1 - u)];
      if (y < 0 || x < 0 || size_t(y) >= n || size_t(x) >= n || x == y)
        continue;
      const int g = writer[size_t(y)];
      if (g < 0 || f.accumulate[size_t(g)].into >= 0)
        continue;
      const Step &producer = steps[size_t(g)];
      const bool plainGemm = producer.kind == OpKind::Gemm && producer.in.size() == 2 &&
                             producer.attrs.activation == Activation::None;
      if ((!plainGemm && producer.kind != OpKind::GemmWgrad &&
           producer.kind != OpKind::EmbeddingGrad) ||
          producer.out.size() != 1)
        continue;
      if (readers[size_t(y)].size() != 1 || !plainF32Temp(y))
        continue;
      // X must be there when the producer runs.
      if (buf(x).role == Buffer::Temp && !(writer[size_t(x)] >= 0 && writer[size_t(x)] < g))
        continue;
      if (buf(x).dtype != DType::F32 || numelOf(buf(x).shape) != numelOf(buf(y).shape) ||
          numelOf(buf(z).shape) != numelOf(buf(y).shape))
        continue;
      f.accumulate[size_t(g)] = {x, z, a};
      f.absorbedBy[a] = g;
      break;
    }
  }

  f.touched.assign(steps.size(), {});
  for (size_t i = 0; i < steps.size(); ++i) {
    if (f.absorbedBy[i] >= 0)
      continue;
    std::vector<int> &t = f.touched[i];
    t = steps[i].in;
    if (const HostFusions::Accumulate &acc = f.accumulate[i]; acc.into >= 0) {
      t.push_back(acc.init);
      t.push_back(acc.into);
    } else {
      t.insert(t.end(), steps[i].out.begin(), steps[i].out.end());
    }
  }

  // A rel_attention_grad and the rel_attention of its operands: in[0] of
  // the gradient is dout, the rest are the forward's operands. The
  // probabilities grow with seq_len × klen, the arena (the step's other
  // temporaries) with seq_len: they are kept, in plan order, while all kept
  // together take no more than the arena, so the step's memory at most
  // doubles; longer sequences recompute.
  f.memory = planMemory(plan, f.touched);
  f.keptProbs.assign(steps.size(), -1);
  const int64_t budget = f.memory.arenaBytes;
  int64_t keptBytes = 0;
  for (size_t g = 0; keepProbs && g < steps.size(); ++g) {
    const Step &grad = steps[g];
    if (grad.kind != OpKind::RelAttentionGrad || grad.in.empty())
      continue;
    const std::vector<int> operands(grad.in.begin() + 1, grad.in.end());
    for (size_t fw = 0; fw < g; ++fw) {
      const Step &forward = steps[fw];
      if (forward.kind != OpKind::RelAttention || forward.in != operands ||
          forward.attrs.scale != grad.attrs.scale || f.keptProbs[fw] >= 0)
        continue;
      // q [B, T, N, H], k [B, K, N, H]: B·T·N·K probabilities.
      const std::vector<int64_t> &q = buf(forward.in[0]).shape, &k = buf(forward.in[1]).shape;
      if (q.size() != 4 || k.size() != 4)
        break;
      const int64_t floats = q[0] * q[1] * q[2] * k[1];
      if (keptBytes + floats * int64_t(sizeof(float)) > budget)
        break;
      keptBytes += floats * int64_t(sizeof(float));
      f.keptProbs[fw] = f.keptProbs[g] = int(f.keptProbsFloats.size());
      f.keptProbsFloats.push_back(floats);
      break;
    }
  }
  return f;
}

} // namespace xlnetc::rt::host
