//===- HostFusion.cpp - Plan steps the host executor runs as one ----------===//

#include "runtime/host/HostFusion.h"

#include "runtime/Plan.h"
#include "runtime/Tensor.h"

#include <map>

namespace xlnetc::rt::host {

size_t HostFusions::absorbedCount() const {
  size_t n = 0;
  for (int g : absorbedBy)
    n += g >= 0;
  return n;
}

HostFusions findHostFusions(const Plan &plan) {
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

  for (size_t a = 0; a < steps.size(); ++a) {
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
      const Step &gemm = steps[size_t(g)];
      const bool plainGemm = gemm.kind == OpKind::Gemm && gemm.in.size() == 2 &&
                             gemm.attrs.activation == Activation::None;
      if ((!plainGemm && gemm.kind != OpKind::GemmWgrad) || gemm.out.size() != 1)
        continue;
      if (readers[size_t(y)].size() != 1 || !plainF32Temp(y))
        continue;
      // X must be there when the GEMM runs.
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
  return f;
}

} // namespace xlnetc::rt::host
