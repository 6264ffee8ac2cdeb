//===- GradCheck.cpp - `xlnetc gradcheck`: finite differences -------------===//
//
// Checks the compiled backward against the compiled forward: for every
// parameter tensor p, a random unit direction d over p's elements gives the
// analytic directional derivative <grad p, d> from the grads step and the
// central difference (L(p + eps d) - L(p - eps d)) / (2 eps) from two forward
// steps. Same step seed everywhere, so dropout masks are identical and their
// backward is checked too. The forward accumulates in double where it
// reduces, so fp32 finite differences are good to ~1e-3 relative.
//
//===----------------------------------------------------------------------===//

#include "xlnetc/Driver/Commands.h"

#include "xlnetc/Driver/CompiledPlan.h"
#include "xlnetc/Driver/MemoryFit.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Synthetic.h"

#include "runtime/train/StateNames.h"
#include "runtime/train/Trainer.h"

#include "runtime/exec/HostExecutor.h"
#include "runtime/plan/Plan.h"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <cmath>
#include <iostream>
#include <functional>
#include <random>

namespace xlnetc {

/// The direction of one parameter's check: the unit gradient plus a random
/// unit vector, normalised. Along the gradient the signal is as large as it
/// gets (a scaled or rotated gradient shows up as a mismatch); the random
/// part covers what the analytic gradient may have missed. `analytic`: the
/// gradient's component along it.
static std::vector<float> probeDirection(const rt::Tensor &g, std::mt19937_64 &rng,
                                         std::normal_distribution<float> &normal,
                                         double &analytic) {
  const size_t n = size_t(g.numel());
  std::vector<double> r(n);
  double gNorm = 0, rNorm = 0;
  for (size_t i = 0; i < n; ++i) {
    r[i] = normal(rng);
    rNorm += r[i] * r[i];
    gNorm += double(g.f32()[i]) * g.f32()[i];
  }
  gNorm = std::sqrt(gNorm);
  rNorm = std::sqrt(rNorm);
  std::vector<float> d(n);
  double dNorm = 0;
  std::vector<double> dd(n);
  for (size_t i = 0; i < n; ++i) {
    dd[i] = (gNorm > 0 ? g.f32()[i] / gNorm : 0.0) + r[i] / rNorm;
    dNorm += dd[i] * dd[i];
  }
  dNorm = std::sqrt(dNorm);
  analytic = 0;
  for (size_t i = 0; i < n; ++i) {
    d[i] = float(dd[i] / dNorm);
    analytic += double(g.f32()[i]) * d[i];
  }
  return d;
}

/// The loss at p + eps·d and p − eps·d (`lossAt` runs the forward step);
/// p is restored.
static rt::Status lossesAlong(rt::Tensor &p, const std::vector<float> &d, double eps,
                              const std::function<rt::Status(double &)> &lossAt,
                              double &plus, double &minus) {
  std::vector<float> saved(p.f32(), p.f32() + p.numel());
  for (size_t i = 0; i < d.size(); ++i)
    p.f32()[i] = float(saved[i] + eps * d[i]);
  rt::Status st = lossAt(plus);
  for (size_t i = 0; st && i < d.size(); ++i)
    p.f32()[i] = float(saved[i] - eps * d[i]);
  if (st)
    st = lossAt(minus);
  std::copy(saved.begin(), saved.end(), p.f32());
  return st;
}

/// What gradcheck runs at: the parameters (a wider init than training's
/// makes the attention scores, and so every gradient, far from zero), a
/// synthetic batch and non-zero memory (so the memory path is exercised).
static rt::Status checkBindings(const ModelSpec &spec, const StepShape &shape,
                                const rt::Plan &forward, const GradCheckArgs &args,
                                std::mt19937_64 &rng, std::normal_distribution<float> &normal,
                                rt::TensorMap &bindings) {
  bindings = rt::train::initialParameters(forward, args.initRange, args.seed);
  rt::TensorMap batch;
  XLNETC_RETURN_IF_ERROR(
      syntheticBatch(spec, shape, args.seed, batch).withPrefix("cannot build a synthetic batch: "));
  for (auto &[name, t] : batch)
    bindings[name] = std::move(t);
  for (auto &[name, t] : bindings)
    if (rt::train::names::hasPrefix(name, rt::train::names::kMems))
      for (int64_t i = 0; i < t.numel(); ++i)
        t.f32()[i] = normal(rng);
  return rt::Status::ok();
}

/// One parameter's verdict: the relative error (to the larger of the
/// two); within the tolerance; or passing only because the fp32 loss
/// resolves differences of a few ulp and this one is within that.
struct Verdict {
  double rel;
  bool withinTolerance, ok;
};

static Verdict judge(double analytic, double numeric, double loss0, const GradCheckArgs &args) {
  const double resolution = 8 * std::abs(loss0) * 0x1.0p-24 / (2 * args.eps);
  const double diff = std::abs(analytic - numeric);
  const double larger = std::max(std::abs(analytic), std::abs(numeric));
  Verdict v;
  v.rel = larger > 0 ? diff / larger : 0.0;
  v.withinTolerance = v.rel <= args.tolerance;
  v.ok = v.withinTolerance || diff <= resolution;
  return v;
}

int runGradCheck(const GradCheckArgs &args) {
  ModelSpec spec;
  std::string error;
  if (!loadSpec(args.spec, spec, error))
    return failDiagnostics(error);
  if (spec.fromHFConfig)
    return fail(args.spec + ": gradcheck needs a TOML spec (a config.json has no batch shape)");
  // The device first: a missing GPU is reported before any work.
  rt::Executor executor;
  if (!openExecutor(args.device, args.noKernelCache, /*threads=*/0, executor, error))
    return fail(error);
  StepShape shape = stepShapeFromSpec(spec);
  rt::Plan forward, grads;
  const std::optional<rt::dev::GpuTarget> device = deviceTarget(executor);
  if (!compilePlan(spec, shape, StepKind::Forward, forward, error, nullptr, device) ||
      !compilePlan(spec, shape, StepKind::Grads, grads, error, nullptr, device)) {
    std::cerr << error;
    return 1;
  }
  if (!checkStepFits(spec, shape, StepKind::Grads, grads, executor, /*keepsCopy=*/false,
                     args.memory, compilePlan, error))
    return fail(error);

  std::mt19937_64 rng(args.seed ^ 0x9e3779b97f4a7c15ull);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  rt::TensorMap bindings;
  if (rt::Status st = checkBindings(spec, shape, forward, args, rng, normal, bindings); !st)
    return fail(st.message());

  rt::ExecOptions exec;
  exec.seed = args.seed;
  rt::TensorMap outputs;
  if (rt::Status st = executor.execute(grads, bindings, outputs, exec); !st)
    return fail(st.message());
  const double loss0 = outputs.at("loss").f32()[0];
  auto lossAt = [&](double &loss) -> rt::Status {
    rt::TensorMap out;
    XLNETC_RETURN_IF_ERROR(executor.execute(forward, bindings, out, exec));
    loss = out.at("loss").f32()[0];
    return rt::Status::ok();
  };

  int numParams = 0;
  for (const rt::Buffer &b : forward.buffers)
    numParams += b.role == rt::Buffer::Param;
  std::cout << fmt::format("gradcheck {}: loss {:.6f}, eps {}, {} parameter tensors\n",
                           args.spec, loss0, args.eps, numParams);
  std::cout << fmt::format("{:<48} {:>13} {:>13} {:>10}\n", "parameter", "analytic",
                           "numeric", "rel err");
  int bad = 0;
  double worst = 0;
  int byResolution = 0; // rows that pass only because the loss cannot resolve them
  for (const rt::Buffer &b : forward.buffers) {
    if (b.role != rt::Buffer::Param)
      continue;
    rt::Tensor &p = bindings.at(b.name);
    const rt::Tensor &g = outputs.at("grad." + b.name);
    double analytic = 0;
    const std::vector<float> d = probeDirection(g, rng, normal, analytic);
    double plus = 0, minus = 0;
    if (rt::Status st = lossesAlong(p, d, args.eps, lossAt, plus, minus); !st)
      return fail(st.message());
    const double numeric = (plus - minus) / (2 * args.eps);
    const Verdict v = judge(analytic, numeric, loss0, args);
    if (v.withinTolerance || !v.ok) // the rows the tolerance judged
      worst = std::max(worst, v.rel);
    bad += !v.ok;
    byResolution += v.ok && !v.withinTolerance;
    std::cout << fmt::format("{:<48} {:>13.6e} {:>13.6e} {:>10.2e}{}\n", b.name, analytic,
                             numeric, v.rel,
                             !v.ok ? "  FAIL"
                                   : v.withinTolerance ? ""
                                                       : "  (within the fp32 loss's resolution)");
  }
  // worst: over the rows the tolerance judged, not those that passed only
  // because the loss cannot resolve their difference.
  std::cout << fmt::format("gradcheck: {} of {} parameters within {}", numParams - bad,
                           numParams, args.tolerance);
  std::vector<std::string> notes;
  if (byResolution < numParams)
    notes.push_back(fmt::format("worst {:.2e}", worst));
  if (byResolution)
    notes.push_back(fmt::format("{} only by the fp32 loss's resolution, {:.2e}", byResolution,
                                8 * std::abs(loss0) * 0x1.0p-24 / (2 * args.eps)));
  std::cout << " (" << fmt::format("{}", fmt::join(notes, "; ")) << ")\n";
  return bad == 0 ? 0 : 1;
}

} // namespace xlnetc
