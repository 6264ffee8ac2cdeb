//===- TestUtil.h - Helpers shared by the runtime unit tests ---*- C++ -*-===//

#ifndef XLNETC_TEST_RUNTIME_TESTUTIL_H
#define XLNETC_TEST_RUNTIME_TESTUTIL_H

#include "runtime/plan/Plan.h"
#include "runtime/Tensor.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace xlnetc::rt::test {

/// Builds plan JSON text buffer by buffer and step by step.
class PlanBuilder {
public:
  /// Adds a buffer and returns its id.
  int buffer(const std::string &dtype, std::vector<int64_t> shape,
             const std::string &role, const std::string &name = "",
             std::vector<std::string> outputs = {}) {
    nlohmann::json b = {{"id", int(buffers_.size())},
                        {"dtype", dtype},
                        {"shape", shape},
                        {"role", role}};
    if (!name.empty())
      b["name"] = name;
    if (!outputs.empty())
      b["outputs"] = outputs;
    buffers_.push_back(b);
    return int(buffers_.size()) - 1;
  }
  /// Adds a step; `init` (empty: none) has one entry per output, -1 or
  /// the buffer it starts from (docs/Plan.md "Fused forms").
  void step(const std::string &op, std::vector<int> in, std::vector<int> out,
            nlohmann::json attrs = nlohmann::json::object(),
            const std::string &loc = "test", std::vector<int> init = {}) {
    nlohmann::json s = {{"op", op}, {"in", in}, {"out", out}, {"attrs", attrs}, {"loc", loc}};
    if (!init.empty())
      s["init"] = init;
    steps_.push_back(s);
  }
  /// The plan document; tests may edit it before dumping.
  nlohmann::json doc() const {
    return {{"format", "xlnetc-plan"},
            {"version", kSupportedPlanVersion},
            {"function", "forward"},
            {"buffers", buffers_},
            {"steps", steps_}};
  }
  std::string text() const { return doc().dump(); }

private:
  nlohmann::json buffers_ = nlohmann::json::array();
  nlohmann::json steps_ = nlohmann::json::array();
};

/// The values of an f32 tensor.
inline std::vector<float> values(const Tensor &t) {
  return std::vector<float>(t.f32(), t.f32() + t.numel());
}
inline std::vector<int64_t> valuesI64(const Tensor &t) {
  return std::vector<int64_t>(t.i64(), t.i64() + t.numel());
}
inline std::vector<uint8_t> valuesBool(const Tensor &t) {
  return std::vector<uint8_t>(t.b8(), t.b8() + t.numel());
}

} // namespace xlnetc::rt::test

#endif // XLNETC_TEST_RUNTIME_TESTUTIL_H
