//===- Plan.cpp - Parsing the xlnetc plan JSON ----------------------------===//
//
// Reads the plan JSON into Plan and checks its structure: format and version,
// buffer ids and roles, known ops and their arities and attributes, and that
// every temp is written by exactly one step before it is read. The dtype and
// shape rule of each op lives in PlanVerify.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/plan/Plan.h"
#include "runtime/plan/PlanAttrs.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xlnetc::rt {

using nlohmann::json;

namespace {

/// maxIn of a variadic op (global_norm).
constexpr int kVariadic = -1;

/// Static description of an op: its name and arity (runtime/plan/PlanOps.def).
struct OpInfo {
  const char *name;
  OpKind kind;
  int minIn, maxIn, minOut, maxOut;
  /// The outputs that may start from an init (a bit per output).
  unsigned initOutputs = 0;
};

constexpr OpInfo kOps[] = {
#define XLNETC_PLAN_OP(Kind, name, minIn, maxIn, minOut, maxOut, initOutputs)                 \
  {name, OpKind::Kind, minIn, maxIn, minOut, maxOut, initOutputs},
#include "runtime/plan/PlanOps.def"
};

// The table is OpKind's order: opInfo(kind) is kOps[kind].
constexpr bool tableInKindOrder() {
  for (size_t i = 0; i < sizeof(kOps) / sizeof(kOps[0]); ++i)
    if (size_t(kOps[i].kind) != i)
      return false;
  return true;
}
static_assert(tableInKindOrder(), "kOps follows runtime/plan/PlanOps.def, as OpKind does");

const OpInfo *findOp(const std::string &name) {
  for (const OpInfo &info : kOps)
    if (name == info.name)
      return &info;
  return nullptr;
}

const OpInfo &opInfo(OpKind kind) { return kOps[size_t(kind)]; }

Status parseIdList(const json &obj, const char *key, std::vector<int> &ids,
                   size_t numBuffers) {
  auto it = obj.find(key);
  if (it == obj.end())
    return Status::error(fmt::format("missing '{}'", key));
  if (!it->is_array())
    return Status::error(fmt::format("'{}' must be an array of buffer ids",
                                     key));
  for (const json &v : *it) {
    if (!v.is_number_integer())
      return Status::error(
          fmt::format("'{}' holds {}, not a buffer id", key, v.dump()));
    int64_t id = v.get<int64_t>();
    if (id < 0 || uint64_t(id) >= numBuffers)
      return Status::error(fmt::format(
          "'{}' names buffer {}, but the plan has buffers 0..{}", key, id,
          int64_t(numBuffers) - 1));
    ids.push_back(int(id));
  }
  return Status::ok();
}

Status parseBuffer(const json &j, size_t index, Buffer &b) {
  if (!j.is_object())
    return Status::error("not an object");
  auto id = j.find("id");
  if (id == j.end() || !id->is_number_integer() ||
      id->get<int64_t>() != int64_t(index))
    return Status::error(fmt::format(
        "'id' must be {} (ids are 0..n-1 in order), got {}", index,
        id == j.end() ? "nothing" : id->dump()));
  b.id = int(index);
  auto dt = j.find("dtype");
  std::optional<DType> dtype;
  if (dt != j.end() && dt->is_string())
    dtype = parseDTypeName(dt->get<std::string>());
  if (!dtype)
    return Status::error(fmt::format(
        "'dtype' must be \"f32\", \"i64\" or \"bool\", got {}",
        dt == j.end() ? "nothing" : dt->dump()));
  b.dtype = *dtype;
  auto shape = j.find("shape");
  if (shape == j.end() || !shape->is_array())
    return Status::error("missing or non-array 'shape'");
  for (const json &d : *shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return Status::error(fmt::format(
          "shape entry {} is not a non-negative integer", d.dump()));
    b.shape.push_back(d.get<int64_t>());
  }
  auto role = j.find("role");
  std::string roleStr = role != j.end() && role->is_string()
                            ? role->get<std::string>()
                            : std::string();
  if (roleStr == "input")
    b.role = Buffer::Input;
  else if (roleStr == "param")
    b.role = Buffer::Param;
  else if (roleStr == "temp")
    b.role = Buffer::Temp;
  else
    return Status::error(fmt::format(
        "'role' must be \"input\", \"param\" or \"temp\", got {}",
        role == j.end() ? "nothing" : role->dump()));
  auto name = j.find("name");
  if (name != j.end()) {
    if (!name->is_string())
      return Status::error("'name' must be a string");
    b.name = name->get<std::string>();
  }
  if (b.role != Buffer::Temp && b.name.empty())
    return Status::error(fmt::format("{} buffer needs a 'name'", roleStr));
  auto outs = j.find("outputs");
  if (outs != j.end()) {
    if (!outs->is_array())
      return Status::error("'outputs' must be an array of names");
    for (const json &o : *outs) {
      if (!o.is_string() || o.get<std::string>().empty())
        return Status::error(
            fmt::format("'outputs' entry {} is not a name", o.dump()));
      b.outputs.push_back(o.get<std::string>());
    }
  }
  return Status::ok();
}

/// The optional 'init': one entry per output, -1 or a buffer id (which
/// outputs may take one, and of what type, is verifyStepTypes's rule).
Status parseInit(const json &j, size_t numBuffers, Step &s) {
  auto it = j.find("init");
  if (it == j.end())
    return Status::ok();
  if (!it->is_array() || it->size() != s.out.size())
    return Status::error(fmt::format("'init' must be an array of {} entries (one per "
                                     "output, -1 for none), got {}",
                                     s.out.size(), it->dump()));
  for (size_t k = 0; k < it->size(); ++k) {
    const json &v = (*it)[k];
    if (!v.is_number_integer() || v.get<int64_t>() < -1 ||
        v.get<int64_t>() >= int64_t(numBuffers))
      return Status::error(fmt::format("'init' entry {} is {}: -1 or a buffer id 0..{}", k,
                                       v.dump(), int64_t(numBuffers) - 1));
    s.init.push_back(int(v.get<int64_t>()));
  }
  return Status::ok();
}

Status parseStep(const json &j, size_t numBuffers, Step &s) {
  if (!j.is_object())
    return Status::error("not an object");
  auto loc = j.find("loc");
  if (loc != j.end() && loc->is_string())
    s.loc = loc->get<std::string>();
  auto op = j.find("op");
  if (op == j.end() || !op->is_string())
    return Status::error("missing or non-string 'op'");
  s.op = op->get<std::string>();
  const OpInfo *info = findOp(s.op);
  if (!info)
    return Status::error(fmt::format("unknown op '{}'", s.op));
  s.kind = info->kind;
  XLNETC_RETURN_IF_ERROR(parseIdList(j, "in", s.in, numBuffers));
  XLNETC_RETURN_IF_ERROR(parseIdList(j, "out", s.out, numBuffers));
  if (info->maxIn == kVariadic) {
    if (int(s.in.size()) < info->minIn)
      return Status::error(fmt::format("takes at least {} input{}, got {}",
                                       info->minIn, info->minIn == 1 ? "" : "s",
                                       s.in.size()));
  } else if (int(s.in.size()) < info->minIn || int(s.in.size()) > info->maxIn)
    return Status::error(
        info->minIn == info->maxIn
            ? fmt::format("takes {} inputs, got {}", info->minIn, s.in.size())
            : fmt::format("takes {} to {} inputs, got {}", info->minIn,
                          info->maxIn, s.in.size()));
  if (int(s.out.size()) < info->minOut || int(s.out.size()) > info->maxOut)
    return Status::error(
        info->minOut == info->maxOut
            ? fmt::format("has {} outputs, got {}", info->minOut, s.out.size())
            : fmt::format("has {} to {} outputs, got {}", info->minOut, info->maxOut,
                          s.out.size()));
  XLNETC_RETURN_IF_ERROR(parseInit(j, numBuffers, s));
  auto attrs = j.find("attrs");
  return detail::parseStepAttrs(attrs == j.end() ? json() : *attrs, s);
}

/// Every temp is written by exactly one step, before any step reads it.
Status checkDataflow(const Plan &plan) {
  std::vector<int> writer(plan.buffers.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &s = plan.steps[i];
    for (size_t k = 0; k < s.in.size(); ++k) {
      const Buffer &b = plan.buffers[s.in[k]];
      if (b.role == Buffer::Temp && writer[b.id] < 0)
        return Status::error(fmt::format(
            "{}input {} reads temp buffer {} before any step writes it",
            stepPrefix(i, s), k, b.id));
    }
    for (size_t k = 0; k < s.init.size(); ++k)
      if (s.init[k] >= 0 && plan.buffers[s.init[k]].role == Buffer::Temp &&
          writer[s.init[k]] < 0)
        return Status::error(fmt::format(
            "{}the init of output {} is temp buffer {}, which no step wrote before",
            stepPrefix(i, s), k, s.init[k]));
    for (size_t k = 0; k < s.out.size(); ++k) {
      const Buffer &b = plan.buffers[s.out[k]];
      if (b.role != Buffer::Temp)
        return Status::error(
            fmt::format("{}output {} writes {} buffer {} ('{}'); only temps "
                        "are written",
                        stepPrefix(i, s), k,
                        b.role == Buffer::Input ? "input" : "param", b.id,
                        b.name));
      if (writer[b.id] >= 0)
        return Status::error(fmt::format(
            "{}output {} writes temp buffer {}, already written by step {}",
            stepPrefix(i, s), k, b.id, writer[b.id]));
      writer[b.id] = int(i);
    }
  }
  for (const Buffer &b : plan.buffers)
    if (b.role == Buffer::Temp && !b.outputs.empty() && writer[b.id] < 0)
      return Status::error(fmt::format(
          "buffer {} is returned as '{}' but no step writes it", b.id,
          b.outputs.front()));
  return Status::ok();
}

Status parseImpl(const json &doc, Plan &plan) {
  if (!doc.is_object())
    return Status::error("plan: top level is not a JSON object");
  auto format = doc.find("format");
  if (format == doc.end() || *format != "xlnetc-plan")
    return Status::error(fmt::format(
        "plan: 'format' must be \"xlnetc-plan\", got {}",
        format == doc.end() ? "nothing" : format->dump()));
  auto version = doc.find("version");
  if (version == doc.end() || *version != kSupportedPlanVersion)
    return Status::error(fmt::format(
        "plan: unsupported version {} (this runtime reads version {})",
        version == doc.end() ? "(missing)" : version->dump(),
        kSupportedPlanVersion));
  plan.version = kSupportedPlanVersion;
  auto fn = doc.find("function");
  if (fn != doc.end() && fn->is_string())
    plan.function = fn->get<std::string>();
  auto buffers = doc.find("buffers");
  auto steps = doc.find("steps");
  if (buffers == doc.end() || !buffers->is_array())
    return Status::error("plan: missing or non-array 'buffers'");
  if (steps == doc.end() || !steps->is_array())
    return Status::error("plan: missing or non-array 'steps'");

  std::map<std::string, int> bound, returned;
  for (size_t i = 0; i < buffers->size(); ++i) {
    Buffer b;
    XLNETC_RETURN_IF_ERROR(parseBuffer((*buffers)[i], i, b)
                               .withPrefix(fmt::format("buffer {}: ", i)));
    if (b.role != Buffer::Temp && !bound.emplace(b.name, b.id).second)
      return Status::error(fmt::format(
          "buffer {}: name '{}' is already bound by buffer {}", i, b.name,
          bound[b.name]));
    for (const std::string &o : b.outputs)
      if (!returned.emplace(o, b.id).second)
        return Status::error(fmt::format(
            "buffer {}: output name '{}' is already used by buffer {}", i, o,
            returned[o]));
    plan.buffers.push_back(std::move(b));
  }
  for (size_t i = 0; i < steps->size(); ++i) {
    Step s;
    const json &j = (*steps)[i];
    Status st = parseStep(j, plan.buffers.size(), s);
    if (!st) {
      // The op and loc may be known even when the rest is broken.
      return st.withPrefix(s.op.empty() ? fmt::format("step {}: ", i)
                                        : stepPrefix(i, s));
    }
    XLNETC_RETURN_IF_ERROR(
        verifyStepTypes(plan, s).withPrefix(stepPrefix(i, s)));
    plan.steps.push_back(std::move(s));
  }
  return checkDataflow(plan);
}

} // namespace

const char *opName(OpKind kind) { return opInfo(kind).name; }

bool outputTakesInit(OpKind kind, size_t out) {
  return out < 32 && (opInfo(kind).initOutputs >> out & 1u);
}

int inPlaceInput(const Step &step, size_t out) {
  static const int kAdamIn[3] = {0, 2, 3}; // param, m, v -> outputs 0, 1, 2
  return step.kind == OpKind::AdamUpdate && out < 3 ? kAdamIn[out] : -1;
}

std::vector<int> Step::reads() const {
  std::vector<int> ids = in;
  for (int id : init)
    if (id >= 0)
      ids.push_back(id);
  return ids;
}

const char *activationName(Activation act) {
  switch (act) {
  case Activation::None:
    return "none";
  case Activation::Relu:
    return "relu";
  case Activation::GeluTanh:
    return "gelu_tanh";
  case Activation::GeluErf:
    return "gelu_erf";
  }
  return "?";
}

const char *lrDecayName(LrDecay decay) {
  switch (decay) {
  case LrDecay::Poly:
    return "poly";
  case LrDecay::Cos:
    return "cos";
  }
  return "?";
}

std::string stepPrefix(size_t index, const Step &step) {
  return fmt::format("step {} ({}, loc '{}'): ", index, step.op, step.loc);
}

Status parsePlan(const std::string &jsonText, Plan &out) {
  json doc = json::parse(jsonText, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Status::error("plan: not valid JSON");
  Plan plan;
  Status st = Status::ok();
  try {
    st = parseImpl(doc, plan);
  } catch (const std::exception &e) {
    // Defensive: a JSON type error we did not anticipate.
    st = Status::error(std::string("plan: malformed: ") + e.what());
  }
  if (st)
    out = std::move(plan);
  return st;
}

} // namespace xlnetc::rt
