//===- DeviceProgramJson.cpp - A device program as JSON -------------------===//

#include "runtime/plan/DeviceProgramJson.h"

#include "runtime/plan/MemoryPlan.h"
#include "runtime/plan/Plan.h"
#include "runtime/device/Sha256.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <set>
#include <tuple>

namespace xlnetc::rt {

using nlohmann::json;

namespace {

const char *const kArgKinds[] = {"buffer", "null", "workspace", "status",
                                 "seed", "table", "immediate"};
const dev::GemmEpilogue kEpilogues[] = {
    dev::GemmEpilogue::Default,  dev::GemmEpilogue::Bias,
    dev::GemmEpilogue::ReluBias, dev::GemmEpilogue::GeluBias,
    dev::GemmEpilogue::GeluAuxBias, dev::GemmEpilogue::DGeluBGrad};

json gemmJson(const dev::GemmDesc &g) {
  return {{"trans_a", g.transA}, {"trans_b", g.transB}, {"m", g.m}, {"n", g.n},
          {"k", g.k}, {"lda", g.lda}, {"ldb", g.ldb}, {"ldc", g.ldc},
          {"batch", g.batch}, {"stride_a", g.strideA}, {"stride_b", g.strideB},
          {"stride_c", g.strideC}, {"alpha", g.alpha}, {"beta", g.beta},
          {"epilogue", dev::gemmEpilogueName(g.epilogue)},
          {"ab", dev::gemmTypeName(g.ab)}, {"cd", dev::gemmTypeName(g.cd)}};
}

/// Reads JSON values with one error naming where (the first problem wins).
class Reader {
public:
  explicit Reader(std::string where) : where_(std::move(where)) {}
  const std::string &error() const { return error_; }
  bool ok() const { return error_.empty(); }

  void fail(const std::string &what) {
    if (error_.empty())
      error_ = where_ + what;
  }
  const json *get(const json &obj, const char *key) {
    if (!obj.is_object() || !obj.contains(key)) {
      fail(fmt::format("missing '{}'", key));
      return nullptr;
    }
    return &obj[key];
  }
  int64_t integer(const json &obj, const char *key, int64_t lo = INT64_MIN,
                  int64_t hi = INT64_MAX) {
    const json *v = get(obj, key);
    if (!v)
      return 0;
    if (!v->is_number_integer()) {
      fail(fmt::format("'{}' must be an integer", key));
      return 0;
    }
    int64_t x = v->get<int64_t>();
    if (x < lo || x > hi)
      fail(fmt::format("'{}' is {}, outside [{}, {}]", key, x, lo, hi));
    return x;
  }
  bool boolean(const json &obj, const char *key) {
    const json *v = get(obj, key);
    if (v && !v->is_boolean())
      fail(fmt::format("'{}' must be true or false", key));
    return v && v->is_boolean() && v->get<bool>();
  }
  float number(const json &obj, const char *key) {
    const json *v = get(obj, key);
    if (v && !v->is_number())
      fail(fmt::format("'{}' must be a number", key));
    return v && v->is_number() ? v->get<float>() : 0.0f;
  }
  std::string string(const json &obj, const char *key) {
    const json *v = get(obj, key);
    if (v && !v->is_string())
      fail(fmt::format("'{}' must be a string", key));
    return v && v->is_string() ? v->get<std::string>() : std::string();
  }
  const json &array(const json &obj, const char *key) {
    static const json empty = json::array();
    const json *v = get(obj, key);
    if (v && !v->is_array())
      fail(fmt::format("'{}' must be an array", key));
    return v && v->is_array() ? *v : empty;
  }

private:
  std::string where_, error_;
};

} // namespace

std::string writeDeviceProgramJson(const DeviceProgram &program) {
  json steps = json::array();
  for (const DeviceStep &s : program.steps) {
    json launches = json::array();
    for (const DeviceLaunch &l : s.launches) {
      if (l.kind == DeviceLaunch::Gemm) {
        json members = json::array();
        for (const auto &[a, d] : l.batchMembers)
          members.push_back({a, d});
        launches.push_back({{"gemm", gemmJson(l.gemm)}, {"a", l.a}, {"b", l.b},
                            {"bias", l.bias}, {"d", l.d}, {"aux", l.aux}, {"c", l.c},
                            {"batch_members", members}});
        continue;
      }
      json args = json::array();
      for (const KernelArg &a : l.args)
        args.push_back({{"kind", kArgKinds[a.kind]}, {"index", a.index}, {"value", a.value}});
      launches.push_back({{"kernel", l.kernel}, {"grid", l.grid}, {"block", l.block},
                          {"dyn_smem", l.dynSmem}, {"args", args}});
    }
    steps.push_back({{"workspace", s.workspaceBytes}, {"status", s.status},
                     {"launches", launches}});
  }
  json tables = json::array();
  for (const DeviceTable &t : program.tables) {
    json entries = json::array();
    for (const DeviceTable::Entry &e : t.entries)
      entries.push_back({{"buffers", e.buffers}, {"count", e.count},
                         {"chunk_begin", e.chunkBegin}, {"decay", e.decay}});
    tables.push_back({{"kind", t.kind == DeviceTable::Norm ? "norm" : "adam"},
                      {"entries", entries}});
  }
  json inPlace = json::array();
  for (const auto &[out, in] : program.inPlace)
    inPlace.push_back({out, in});
  json doc = {{"format", kDeviceProgramFormat}, {"version", kDeviceProgramVersion},
              {"module", program.moduleName}, {"source_sha256", program.sourceDigest},
              {"steps", steps}, {"tables", tables}, {"in_place", inPlace},
              {"groups", program.groups}};
  return doc.dump(1) + "\n";
}

namespace {

/// The multi-tensor tables: each entry's buffers of the plan, as many as
/// its kind takes, each holding the entry's elements.
Status parseTables(const json &tables, const Plan &plan, DeviceProgram &p) {
  const int64_t buffers = int64_t(plan.buffers.size());
  for (size_t t = 0; t < tables.size(); ++t) {
    Reader r(fmt::format("device program: table {}: ", t));
    DeviceTable table;
    std::string kind = r.string(tables[t], "kind");
    if (r.ok() && kind != "norm" && kind != "adam")
      r.fail(fmt::format("kind '{}' is not norm or adam", kind));
    table.kind = kind == "norm" ? DeviceTable::Norm : DeviceTable::Adam;
    for (const json &e : r.array(tables[t], "entries")) {
      DeviceTable::Entry entry;
      entry.count = r.integer(e, "count", 0);
      entry.chunkBegin = r.integer(e, "chunk_begin", 0);
      entry.decay = r.boolean(e, "decay");
      for (const json &b : r.array(e, "buffers")) {
        if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() >= buffers)
          r.fail(fmt::format("entry buffer {} is not a buffer of the plan", b.dump()));
        else
          entry.buffers.push_back(b.get<int>());
      }
      size_t want = table.kind == DeviceTable::Norm ? 1 : 7;
      if (r.ok() && entry.buffers.size() != want)
        r.fail(fmt::format("an entry has {} buffers, not {}", entry.buffers.size(), want));
      // The kernels touch `count` elements of every buffer of the entry.
      for (int b : entry.buffers)
        if (r.ok() && entry.count > numelOf(plan.buffers[size_t(b)].shape))
          r.fail(fmt::format("an entry of {} elements names buffer {} of {}", entry.count, b,
                             numelOf(plan.buffers[size_t(b)].shape)));
      table.entries.push_back(std::move(entry));
    }
    if (!r.ok())
      return Status::error(r.error());
    p.tables.push_back(std::move(table));
  }
  return Status::ok();
}

/// A GEMM launch: its descriptor, operands of the plan that hold what it
/// spans in its storage types, and batch members.
void parseGemmLaunch(Reader &r, const json &l, const Plan &plan, DeviceLaunch &launch) {
  const int64_t buffers = int64_t(plan.buffers.size());
  auto buffer = [&](const json &obj, const char *key, bool optional) {
    return int(r.integer(obj, key, optional ? -1 : 0, buffers - 1));
  };
  launch.kind = DeviceLaunch::Gemm;
  const json &g = l["gemm"];
  dev::GemmDesc &d = launch.gemm;
  d.transA = r.boolean(g, "trans_a");
  d.transB = r.boolean(g, "trans_b");
  d.m = r.integer(g, "m", 1), d.n = r.integer(g, "n", 1), d.k = r.integer(g, "k", 1);
  d.lda = r.integer(g, "lda", 1), d.ldb = r.integer(g, "ldb", 1);
  d.ldc = r.integer(g, "ldc", 1), d.batch = r.integer(g, "batch", 1);
  d.strideA = r.integer(g, "stride_a", 0), d.strideB = r.integer(g, "stride_b", 0);
  d.strideC = r.integer(g, "stride_c", 0);
  d.alpha = r.number(g, "alpha"), d.beta = r.number(g, "beta");
  std::string epilogue = r.string(g, "epilogue");
  bool known = false;
  for (dev::GemmEpilogue e : kEpilogues)
    if (epilogue == dev::gemmEpilogueName(e))
      d.epilogue = e, known = true;
  if (r.ok() && !known)
    r.fail(fmt::format("unknown GEMM epilogue '{}'", epilogue));
  for (auto [key, type] : {std::pair<const char *, dev::GemmType *>{"ab", &d.ab},
                           {"cd", &d.cd}}) {
    std::string t = r.string(g, key);
    if (t == "f32" || t == "bf16")
      *type = t == "bf16" ? dev::GemmType::BF16 : dev::GemmType::F32;
    else if (r.ok())
      r.fail(fmt::format("unknown GEMM {} type '{}' (expected f32 or bf16)", key, t));
  }
  launch.a = buffer(l, "a", false), launch.b = buffer(l, "b", false);
  launch.d = buffer(l, "d", false);
  launch.bias = buffer(l, "bias", true), launch.aux = buffer(l, "aux", true);
  launch.c = buffer(l, "c", true);
  for (const json &m : r.array(l, "batch_members")) {
    if (!m.is_array() || m.size() != 2 || !m[0].is_number_integer() ||
        !m[1].is_number_integer() || m[0].get<int64_t>() < 0 ||
        m[0].get<int64_t>() >= buffers || m[1].get<int64_t>() < 0 ||
        m[1].get<int64_t>() >= buffers) {
      r.fail(fmt::format("batch member {} is not a pair of buffers of the plan", m.dump()));
      break;
    }
    launch.batchMembers.emplace_back(m[0].get<int>(), m[1].get<int>());
  }
  // A batched GEMM over several steps' buffers: one entry per buffer
  // pair, B shared, no bias, aux or C.
  const bool batched = !launch.batchMembers.empty();
  if (r.ok() && batched &&
      (d.batch != int64_t(launch.batchMembers.size()) + 1 || d.strideB != 0 ||
       launch.bias >= 0 || launch.aux >= 0 || launch.c >= 0))
    r.fail(fmt::format("a GEMM with {} batch members needs batch {}, stride_b 0 and "
                       "no bias, aux or c",
                       launch.batchMembers.size(), launch.batchMembers.size() + 1));
  // Every operand holds what the descriptor spans (one entry's worth
  // when each entry is its own buffer).
  if (r.ok()) {
    dev::GemmDesc spanned = d;
    if (batched)
      spanned.batch = 1;
    const dev::GemmExtents e = dev::gemmExtents(spanned);
    std::vector<std::tuple<const char *, int, int64_t>> operands = {
        {"a", launch.a, e.a},       {"b", launch.b, e.b},
        {"d", launch.d, e.cd},      {"c", launch.c, e.cd},
        {"bias", launch.bias, e.bias}, {"aux", launch.aux, e.cd}};
    for (const auto &[a, dd] : launch.batchMembers) {
      operands.emplace_back("a", a, e.a);
      operands.emplace_back("d", dd, e.cd);
    }
    for (auto [name, id, need] : operands)
      if (id >= 0 && numelOf(plan.buffers[size_t(id)].shape) < need)
        r.fail(fmt::format("GEMM operand {} (buffer {}) has {} elements but the "
                           "descriptor spans {}",
                           name, id, numelOf(plan.buffers[size_t(id)].shape), need));
    // ... in the descriptor's storage types.
    auto dtypeOf = [](dev::GemmType t) {
      return t == dev::GemmType::BF16 ? DType::BF16 : DType::F32;
    };
    std::vector<std::tuple<const char *, int, DType>> typed = {
        {"a", launch.a, dtypeOf(d.ab)},      {"b", launch.b, dtypeOf(d.ab)},
        {"d", launch.d, dtypeOf(d.cd)},      {"c", launch.c, dtypeOf(d.cd)},
        {"bias", launch.bias, dtypeOf(d.cd)}, {"aux", launch.aux, dtypeOf(d.cd)}};
    for (const auto &[a, dd] : launch.batchMembers) {
      typed.emplace_back("a", a, dtypeOf(d.ab));
      typed.emplace_back("d", dd, dtypeOf(d.cd));
    }
    for (auto [name, id, want] : typed)
      if (r.ok() && id >= 0 && plan.buffers[size_t(id)].dtype != want)
        r.fail(fmt::format("GEMM operand {} (buffer {}) is {} but the descriptor "
                           "says {}",
                           name, id, dtypeName(plan.buffers[size_t(id)].dtype),
                           dtypeName(want)));
  }
}

/// A kernel launch of step `step`: CUDA's limits, every argument valid for
/// the step and the program's tables, a grid no larger than the step's
/// `work` (its largest buffer's elements; a multi-tensor launch's, its
/// tables').
void parseKernelLaunch(Reader &r, const json &l, const Plan &plan, const DeviceProgram &p,
                       const DeviceStep &step, int64_t work, DeviceLaunch &launch) {
  const int64_t buffers = int64_t(plan.buffers.size());
  launch.kernel = r.string(l, "kernel");
  // CUDA's limits: gridDim.x < 2^31, 1024 threads per block.
  launch.grid = uint32_t(r.integer(l, "grid", 1, INT32_MAX));
  launch.block = uint32_t(r.integer(l, "block", 1, 1024));
  launch.dynSmem = uint32_t(r.integer(l, "dyn_smem", 0, UINT32_MAX));
  for (const json &a : r.array(l, "args")) {
    KernelArg arg;
    std::string kind = r.string(a, "kind");
    int k = 0;
    while (k < int(std::size(kArgKinds)) && kind != kArgKinds[k])
      ++k;
    if (k == int(std::size(kArgKinds))) {
      r.fail(fmt::format("unknown kernel argument kind '{}'", kind));
      break;
    }
    arg.kind = KernelArg::Kind(k);
    arg.value = r.integer(a, "value");
    arg.index = int(r.integer(a, "index", -1, INT32_MAX));
    if (arg.kind == KernelArg::Buffer && (arg.index < 0 || arg.index >= buffers))
      r.fail(fmt::format("kernel argument buffer {} is not a buffer of the plan", arg.index));
    if (arg.kind == KernelArg::Table && (arg.index < 0 || size_t(arg.index) >= p.tables.size()))
      r.fail(fmt::format("kernel argument table {} does not exist", arg.index));
    if (arg.kind == KernelArg::Status && !step.status)
      r.fail("a kernel takes status words but the step has none ('status' false)");
    if (arg.kind == KernelArg::Workspace &&
        (step.workspaceBytes <= 0 || arg.value < 0 || arg.value >= step.workspaceBytes))
      r.fail(fmt::format("workspace offset {} is outside the step's {} bytes", arg.value,
                         step.workspaceBytes));
    launch.args.push_back(arg);
  }
  // A multi-tensor launch's work is its tables' elements.
  // (Saturated: a doctored table must not overflow the sum.)
  int64_t launchWork = work;
  for (const KernelArg &arg : launch.args)
    if (arg.kind == KernelArg::Table && arg.index >= 0 && size_t(arg.index) < p.tables.size())
      for (const DeviceTable::Entry &e : p.tables[size_t(arg.index)].entries)
        launchWork = std::min(launchWork, INT64_MAX / 2 - e.count) + e.count;
  if (r.ok() && int64_t(launch.grid) > launchWork)
    r.fail(fmt::format("kernel {} launches {} blocks for a step of {} elements (a grid "
                       "is never larger than its step's work)",
                       launch.kernel, launch.grid, launchWork));
}

/// The launches of every step, in plan order.
Status parseSteps(const json &steps, const Plan &plan, DeviceProgram &p) {
  const int64_t buffers = int64_t(plan.buffers.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    Reader r("device program: " + stepPrefix(i, plan.steps[i]));
    DeviceStep step;
    step.workspaceBytes = r.integer(steps[i], "workspace", 0);
    step.status = r.boolean(steps[i], "status");
    // The step's work: its largest buffer's elements. No generated grid has
    // more blocks (the templates cover their work with a grid-stride loop
    // and their results never depend on the grid), so a doctored grid is
    // refused here instead of running for hours.
    int64_t work = 1;
    for (const std::vector<int> *ids : {&plan.steps[i].in, &plan.steps[i].out})
      for (int id : *ids)
        if (id >= 0 && id < buffers)
          work = std::max(work, numelOf(plan.buffers[size_t(id)].shape));
    for (const json &l : r.array(steps[i], "launches")) {
      DeviceLaunch launch;
      if (l.is_object() && l.contains("gemm"))
        parseGemmLaunch(r, l, plan, launch);
      else
        parseKernelLaunch(r, l, plan, p, step, work, launch);
      step.launches.push_back(std::move(launch));
    }
    if (!r.ok())
      return Status::error(r.error());
    p.steps.push_back(std::move(step));
  }
  return Status::ok();
}

/// Outputs written in place of an input: a temp over a parameter or an
/// input of the same type and size, each output once.
Status parseInPlace(const json &inPlace, const Plan &plan, DeviceProgram &p) {
  const int64_t buffers = int64_t(plan.buffers.size());
  std::set<int> inPlaceOutputs;
  for (const json &pair : inPlace) {
    auto isBuffer = [&](const json &v) {
      return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() < buffers;
    };
    if (!pair.is_array() || pair.size() != 2 || !isBuffer(pair[0]) || !isBuffer(pair[1]))
      return Status::error(fmt::format("device program: in_place entry {} is not a pair of "
                                       "buffers of the plan",
                                       pair.dump()));
    const Buffer &o = plan.buffers[pair[0].get<size_t>()], &i = plan.buffers[pair[1].get<size_t>()];
    if (o.role != Buffer::Temp || (i.role != Buffer::Param && i.role != Buffer::Input) ||
        o.dtype != i.dtype || numelOf(o.shape) != numelOf(i.shape) ||
        !inPlaceOutputs.insert(o.id).second)
      return Status::error(fmt::format("device program: in_place entry {} does not write a "
                                       "step's result over an input of its type and size",
                                       pair.dump()));
    p.inPlace.emplace_back(o.id, i.id);
  }
  return Status::ok();
}

/// Groups: temps of the plan, each in one group at most.
Status parseGroups(const json &groups, const Plan &plan, DeviceProgram &p) {
  const int64_t buffers = int64_t(plan.buffers.size());
  std::set<int> grouped;
  for (const json &g : groups) {
    std::vector<int> members;
    bool ok = g.is_array() && g.size() >= 2;
    for (size_t k = 0; ok && k < g.size(); ++k) {
      ok = g[k].is_number_integer() && g[k].get<int64_t>() >= 0 &&
           g[k].get<int64_t>() < buffers &&
           plan.buffers[g[k].get<size_t>()].role == Buffer::Temp &&
           grouped.insert(g[k].get<int>()).second;
      if (ok)
        members.push_back(g[k].get<int>());
    }
    if (!ok)
      return Status::error(fmt::format("device program: group {} is not two or more "
                                       "temporaries of the plan, each in no other group",
                                       g.dump()));
    p.groups.push_back(std::move(members));
  }
  return Status::ok();
}

} // namespace

Status parseDeviceProgramJson(const std::string &text, const Plan &plan,
                              std::string source, DeviceProgram &out) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return Status::error("the device program is not a JSON object");
  Reader top("device program: ");
  if (top.string(doc, "format") != kDeviceProgramFormat && top.ok())
    top.fail(fmt::format("format is not '{}'", kDeviceProgramFormat));
  int64_t version = top.integer(doc, "version");
  if (top.ok() && version != kDeviceProgramVersion)
    top.fail(fmt::format("version {} (this runtime reads {})", version, kDeviceProgramVersion));
  DeviceProgram p;
  p.moduleName = top.string(doc, "module");
  p.sourceDigest = top.string(doc, "source_sha256");
  const json &steps = top.array(doc, "steps");
  const json &tables = top.array(doc, "tables");
  const json &inPlace = top.array(doc, "in_place");
  const json &groups = top.array(doc, "groups");
  if (!top.ok())
    return Status::error(top.error());
  if (steps.size() != plan.steps.size())
    return Status::error(fmt::format("device program: {} steps for a plan of {}",
                                     steps.size(), plan.steps.size()));
  if (Sha256::hexHash(source) != p.sourceDigest)
    return Status::error("device program: the kernel source's SHA-256 is not the one "
                         "recorded (the source was changed after compilation)");
  p.source = std::move(source);
  XLNETC_RETURN_IF_ERROR(parseTables(tables, plan, p));
  XLNETC_RETURN_IF_ERROR(parseSteps(steps, plan, p));
  XLNETC_RETURN_IF_ERROR(parseInPlace(inPlace, plan, p));
  XLNETC_RETURN_IF_ERROR(parseGroups(groups, plan, p));
  p.memory = planMemory(plan, &p);
  p.id = newDeviceProgramId();
  out = std::move(p);
  return Status::ok();
}

} // namespace xlnetc::rt
