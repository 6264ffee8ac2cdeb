//===- Compare.cpp - `compare`: two safetensors files, tensor by tensor ---===//

#include "xlnetc/Driver/Compare.h"
#include "xlnetc/Driver/RunStep.h"

#include "runtime/BFloat16.h"
#include "runtime/io/Safetensors.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <iostream>

namespace xlnetc {

/// `pattern` with an optional trailing '*' matches a prefix.
static bool matches(const std::string &pattern, const std::string &name) {
  if (!pattern.empty() && pattern.back() == '*')
    return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
  return pattern == name;
}

/// Element `i` of a tensor as double.
static double element(const rt::Tensor &t, int64_t i) {
  switch (t.dtype) {
  case rt::DType::F32:
    return t.f32()[i];
  case rt::DType::I64:
    return static_cast<double>(t.i64()[i]);
  case rt::DType::Bool:
    return t.b8()[i];
  case rt::DType::BF16:
    return rt::floatFromBf16(reinterpret_cast<const uint16_t *>(t.bytes())[i]);
  }
  return 0;
}

int runCompare(const CompareArgs &args) {
  rt::TensorMap got, ref;
  if (rt::Status st = rt::readSafetensors(args.got, got); !st)
    return fail(st.message());
  if (rt::Status st = rt::readSafetensors(args.ref, ref); !st)
    return fail(st.message());

  std::vector<std::string> names;
  for (const auto &[name, tensor] : ref)
    if (args.only.empty() ||
        std::any_of(args.only.begin(), args.only.end(),
                    [&](const std::string &p) { return matches(p, name); }))
      names.push_back(name);
  for (const std::string &p : args.only)
    if (std::none_of(names.begin(), names.end(),
                     [&](const std::string &n) { return matches(p, n); }))
      return fail(fmt::format("{}: no tensor matches '{}'", args.ref, p));

  int bad = 0;
  const bool byCosine = args.minCosine > 0;
  std::cout << fmt::format("{:<44} {:>14} {:>12} {:>12} {:>10}{}\n", "tensor", "shape",
                           "max|got-ref|", "max|ref|", "ratio", byCosine ? "     cosine" : "");
  for (const std::string &name : names) {
    const rt::Tensor &r = ref.at(name);
    auto it = got.find(name);
    if (it == got.end()) {
      std::cout << fmt::format("{:<44} missing from {}\n", name, args.got);
      ++bad;
      continue;
    }
    const rt::Tensor &g = it->second;
    if (g.shape != r.shape) {
      std::cout << fmt::format("{:<44} shape {} != reference {}\n", name,
                               rt::shapeStr(g.shape), rt::shapeStr(r.shape));
      ++bad;
      continue;
    }
    double maxDiff = 0, maxRef = 0, dot = 0, gg = 0, rr = 0;
    bool finite = true;
    for (int64_t i = 0, n = r.numel(); i < n; ++i) {
      double a = element(g, i), b = element(r, i);
      finite &= std::isfinite(a);
      maxDiff = std::max(maxDiff, std::fabs(a - b));
      maxRef = std::max(maxRef, std::fabs(b));
      dot += a * b, gg += a * a, rr += b * b;
    }
    double ratio = maxRef > 0 ? maxDiff / maxRef : maxDiff;
    // Two zero tensors agree; one zero tensor against another does not.
    double cosine = gg == 0 && rr == 0 ? 1.0 : dot / std::sqrt(gg * rr + 1e-300);
    bool ok = finite && (byCosine ? cosine >= args.minCosine : maxDiff <= args.rtol * maxRef);
    bad += !ok;
    std::cout << fmt::format("{:<44} {:>14} {:>12.3e} {:>12.3e} {:>10.2e}{} {}\n", name,
                             rt::shapeStr(r.shape), maxDiff, maxRef, ratio,
                             byCosine ? fmt::format(" {:>10.6f}", cosine) : std::string(),
                             ok ? "ok" : (finite ? "MISMATCH" : "NOT FINITE"));
  }
  std::cout << fmt::format("compare: {} of {} tensors within {}\n", names.size() - bad,
                           names.size(),
                           byCosine ? fmt::format("cosine >= {:g}", args.minCosine)
                                    : fmt::format("rtol {:g}", args.rtol));
  return bad == 0 ? 0 : 1;
}

} // namespace xlnetc
