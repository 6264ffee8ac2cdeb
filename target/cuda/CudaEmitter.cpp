//===- CudaEmitter.cpp - A plan as CUDA C++ and launches ------------------===//
//
// One function per plan op below (emit<Op>) decides the template, its
// compile-time arguments, the kernel parameters in the template's order
// (xlnetc_k_common.cuh: inputs, outputs, [workspace], [status], seed) and
// the launch geometry; Emitter::kernel writes the wrapper and records the
// launch. The templates' results never depend on the grid size (their
// contract), so the grid is only a performance choice: enough blocks to
// cover the work, at most kMaxGrid.
//
//===----------------------------------------------------------------------===//

#include "target/cuda/CudaEmitter.h"

#include "runtime/plan/MemoryPlan.h"
#include "runtime/PermMask.h"
#include "runtime/plan/PlanDataflow.h"
#include "target/cuda/AttentionTc.h"
#include "runtime/device/FloatBits.h"
#include "target/cuda/GemmLowering.h"
#include "runtime/device/Sha256.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace xlnetc::cuda {

using namespace xlnetc::rt;

namespace {

/// The most blocks a launch asks for: grid-stride loops cover the rest.
constexpr int64_t kMaxGrid = 1024;
/// Threads per block of the element-wise and copy kernels.
constexpr int kElemBlock = 256;
/// Rows per partial sum of bias_grad and add_layer_norm_grad (32 is the
/// host's partition of the LayerNorm gradient, Backward.cpp kBlockRows).
constexpr int kRowsPerPart = 32;
/// Elements per chunk of the multi-tensor global_norm and adam_update.
constexpr int64_t kChunk = 2048;
/// Threads per block of the multi-tensor ops and the vocabulary rows.
constexpr int kWideBlock = 256;
/// Threads per block of the attention kernels (one block per query row).
constexpr int kAttnBlock = 128;

std::string f32Arg(double v) { return fmt::format("{}u", dev::floatBits(v)); }
std::string f64Arg(double v) {
  return fmt::format("{}ull", dev::doubleBits(v));
}

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
uint32_t gridFor(int64_t units) {
  return static_cast<uint32_t>(std::clamp<int64_t>(units, 1, kMaxGrid));
}
/// Threads per block of a row-wise op over rows of `d` columns: about four
/// columns per thread, a multiple of 32 in [32, 256].
int rowBlock(int64_t d) {
  int64_t t = ceilDiv(ceilDiv(d, 4), 32) * 32;
  return static_cast<int>(std::clamp<int64_t>(t, 32, 256));
}

const char *ctype(DType t) {
  switch (t) {
  case DType::F32:
    return "float";
  case DType::I64:
    return "xl_i64";
  case DType::Bool:
    return "unsigned char";
  case DType::BF16:
    return "xl_bf16";
  }
  return "void";
}

std::string shapeText(const Buffer &b) {
  std::string s = std::string(dtypeName(b.dtype)) + "[";
  for (size_t i = 0; i < b.shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(b.shape[i]);
  return s + "]";
}

/// The attributes a step's template receives as bit patterns, readable
/// ("rate 0.1"); empty for ops without such attributes.
std::string attrsText(const Step &step) {
  const StepAttrs &a = step.attrs;
  switch (step.kind) {
  case OpKind::Dropout:
    return fmt::format("rate {}, site {}{}", a.rate, a.dropoutSite,
                       a.batchShared ? ", shared by every batch row" : "");
  case OpKind::RelAttention:
  case OpKind::RelAttentionGrad:
    return fmt::format("scale {}, dropatt {}, site {}", a.scale, a.dropatt,
                       a.dropoutSite);
  case OpKind::AddLayerNorm:
  case OpKind::AddLayerNormGrad: {
    // The fused dropouts (docs/Plan.md "Fused forms").
    std::string text = fmt::format("eps {}", a.eps);
    if (a.xDropout)
      text += fmt::format(", x dropped (rate {}, site {})", a.xDropoutRate, a.xDropoutSite);
    if (a.dsumDropout)
      text += fmt::format(", output 3 = dsum dropped (rate {}, site {})", a.dsumDropoutRate,
                          a.dsumDropoutSite);
    return text;
  }
  case OpKind::LrSchedule:
    return fmt::format("learning_rate {}, warmup {}, train {}, min_lr_ratio {}, "
                       "decay {}",
                       a.learningRate, a.warmupSteps, a.trainSteps,
                       a.minLrRatio, lrDecayName(a.decay));
  case OpKind::AdamUpdate:
    return fmt::format("beta1 {}, beta2 {}, epsilon {}, clip {}, weight_decay "
                       "{}, bias_correction {}",
                       a.beta1, a.beta2, a.epsilon, a.clip, a.weightDecay,
                       a.biasCorrection);
  default:
    return "";
  }
}

/// One parameter of a kernel wrapper: what the executor binds, its C type
/// and its name in the wrapper.
struct Param {
  KernelArg arg;
  std::string type;
  std::string name;
  /// How the wrapper passes it to the template ("*seed"); empty: the name.
  std::string deref = {};
};

class Emitter {
public:
  Emitter(const Plan &plan, DeviceProgram &prog) : plan_(plan), prog_(prog) {}

  Status run(const CudaEmitOptions &options);

private:
  // Plan access for the current step.
  const Buffer &buf(int id) const { return plan_.buffers[id]; }
  const std::vector<int64_t> &shapeOf(int id) const { return buf(id).shape; }
  int64_t numel(int id) const { return numelOf(buf(id).shape); }
  int in(size_t i) const { return step_->in[i]; }
  int out(size_t i) const { return step_->out[i]; }
  int64_t inDim(size_t i, size_t d) const { return shapeOf(in(i))[d]; }
  int64_t outDim(size_t i, size_t d) const { return shapeOf(out(i))[d]; }

  // Kernel parameters.
  Param bufIn(int id) const {
    return {{KernelArg::Buffer, id, 0},
            fmt::format("const {} *", ctype(buf(id).dtype)),
            fmt::format("b{}", id)};
  }
  Param bufOut(int id) const {
    return {{KernelArg::Buffer, id, 0},
            fmt::format("{} *", ctype(buf(id).dtype)),
            fmt::format("b{}", id)};
  }
  Param inP(size_t i) const { return bufIn(in(i)); }
  Param outP(size_t i) const { return bufOut(out(i)); }
  static Param null(const char *type) {
    return {{KernelArg::Null, -1, 0}, type, "absent"};
  }
  static Param workspace(const char *type, int64_t offset = 0) {
    return {{KernelArg::Workspace, -1, offset}, type, "workspace"};
  }
  Param status() {
    cur_->status = true;
    return {{KernelArg::Status, -1, 0}, "int *", "status"};
  }
  static Param site(int64_t value) {
    return {{KernelArg::Immediate, -1, value}, "xl_i64", "site"};
  }
  /// The step's XlStepRandom (its seed and rows), read from device memory:
  /// every launch's arguments stay the same from step to step (the step's
  /// CUDA graph is recorded once).
  static Param seed() {
    return {{KernelArg::Seed, -1, 0}, "const XlStepRandom *", "rnd", "*"};
  }
  /// The elements of a batch row of buffer `id` (its outer dimension the
  /// batch): a dropout's index map (xl_drop_key).
  std::string rowElems(int id) const {
    const std::vector<int64_t> &shape = shapeOf(id);
    return std::to_string(shape.empty() || shape[0] == 0 ? 0 : numel(id) / shape[0]);
  }
  Param table(int index) const {
    bool adam = prog_.tables[index].kind == DeviceTable::Adam;
    return {{KernelArg::Table, index, 0},
            adam ? "const XlAdamEntry *" : "const XlNormEntry *",
            fmt::format("table{}", index)};
  }

  /// Writes one kernel wrapper calling `tmpl<targs>(params)` and records its
  /// launch on the current step.
  void kernel(const std::string &suffix, const std::string &tmpl,
              const std::vector<std::string> &targs,
              const std::vector<Param> &params, uint32_t grid, int block,
              uint32_t dynSmem = 0);
  /// Records a GEMM launch and describes it in the source.
  void gemm(const dev::GemmStepCall &call);
  void needWorkspace(int64_t bytes) {
    cur_->workspaceBytes = std::max(cur_->workspaceBytes, bytes);
  }

  Status emitStep();
  /// emitStep by family.
  Status emitInputStep();
  Status emitComputeStep();
  Status emitUpdateStep();
  Status emitGemm();
  Status emitRelAttention(bool grad);
  Status emitAddLayerNorm();
  Status emitAddLayerNormGrad();
  void emitTcAttentionGrad(const std::vector<std::string> &targs,
                           const std::vector<Param> &params, const std::string &maskBits,
                           int warps, int64_t B, int64_t T, int64_t N, int64_t H, int64_t K,
                           int64_t P, int64_t R);
  Status emitFusedRelAttention(bool grad, std::vector<std::string> targs,
                             std::vector<Param> params, int64_t B, int64_t T,
                             int64_t N, int64_t H, int64_t K, int64_t P,
                             int64_t R);
  void emitAdamRun();
  /// Whether output `out` of step `own`, done by the launch at the current
  /// step, may take input `in`'s memory: `in` is a parameter or an input of
  /// the same type and size, and no step reads it after the launch but
  /// `own`, which reads each element before writing it (adam_update's
  /// element-wise update; a GEMM summing `in` as its C, cuBLASLt's C == D).
  bool canUpdateInPlace(int in, int out, size_t own) const {
    const Buffer &bi = buf(in), &bo = buf(out);
    if ((bi.role != Buffer::Param && bi.role != Buffer::Input) || bo.role != Buffer::Temp ||
        bi.dtype != bo.dtype || numel(in) != numel(out))
      return false;
    for (size_t step : dataflow_.readers[size_t(in)])
      if (step >= index_ && step != own)
        return false;
    return true;
  }
  void emitGlobalNorm();

  const Plan &plan_;
  DeviceProgram &prog_;
  rt::dev::GpuTarget target_; ///< the GPU the launches are made for
  std::string body_;
  size_t index_ = 0;
  const Step *step_ = nullptr;
  DeviceStep *cur_ = nullptr;
  std::string stepHeader_; ///< written before the step's first launch
  /// Written before the next kernel's wrapper, in its own source too (a
  /// static_assert on the template's geometry); cleared by kernel().
  std::string wrapperPrefix_;
  int kernels_ = 0, launches_ = 0, gemms_ = 0;
  /// The kernel emitted for each instantiation (template, arguments and
  /// parameter types), by its text.
  std::map<std::string, std::string> kernelBySignature_;
  /// The last step of the current adam_update run (size_t(-1): none).
  size_t adamCovered_ = size_t(-1);

  /// The plan's dataflow, for the layout choices below (set by run()).
  PlanDataflow dataflow_;
  std::map<size_t, std::string> doneElsewhere_; ///< GEMM step -> the batched GEMM doing it
  /// The init of the current step's output `o` (docs/Plan.md "Fused
  /// forms"; a null pointer when it has none): the kernel writes
  /// out = init + its result.
  Param initP(size_t o = 0);
  /// Whether an attention step runs the tensor-core kernels: bf16, compact
  /// masks, a head size they take.
  bool tcAttention(const Step &s) const {
    const size_t o = s.kind == OpKind::RelAttentionGrad ? 1 : 0;
    return s.in.size() > o + 8 && buf(s.in[o + 8]).dtype == DType::I64 &&
           buf(s.in[o]).dtype == DType::BF16 && dev::attnTcSupports(buf(s.in[o]).shape[3]);
  }
  /// One GEMM doing the products of several steps that share B
  /// (findBatchedGemms): entry e's A and D, strides in elements.
  struct BatchedGemm {
    std::vector<std::pair<int, int>> entries; ///< (A, D), entry 0 first
    std::vector<size_t> steps;                ///< in plan order
    int64_t strideA = 0, strideC = 0;
  };
  void findBatchedGemms();
  std::map<size_t, BatchedGemm> batched_; ///< by its first step
};

void Emitter::kernel(const std::string &suffix, const std::string &tmpl,
                     const std::vector<std::string> &targs,
                     const std::vector<Param> &params, uint32_t grid,
                     int block, uint32_t dynSmem) {
  DeviceLaunch l;
  l.kind = DeviceLaunch::Kernel;
  l.grid = grid;
  l.block = static_cast<uint32_t>(block);
  l.dynSmem = dynSmem;
  std::string decl, call, types;
  std::map<std::string, int> seen; // a buffer passed twice gets two names
  for (const Param &p : params) {
    l.args.push_back(p.arg);
    int n = seen[p.name]++;
    std::string name = n ? fmt::format("{}_{}", p.name, n) : p.name;
    decl += (decl.empty() ? "" : ", ") + p.type +
            (p.type.back() == '*' ? "" : " ") + name;
    call += (call.empty() ? "" : ", ") + p.deref + name;
    types += p.type + ";";
  }
  std::string targList;
  for (const std::string &t : targs)
    targList += (targList.empty() ? "" : ", ") + t;
  body_ += stepHeader_;
  stepHeader_.clear();
  std::string launchLine = fmt::format(
      "grid {}, block {}, dynamic smem {} B{}", grid, block, dynSmem,
      cur_->workspaceBytes
          ? fmt::format(", workspace {} B", cur_->workspaceBytes)
          : std::string());
  // Layers of one shape instantiate the same templates with the same
  // arguments: one kernel serves them all (NVRTC's time grows with the
  // number of kernels).
  std::string signature = tmpl + "<" + targList + ">(" + types + ")";
  auto [it, fresh] = kernelBySignature_.emplace(
      signature, fmt::format("s{}_{}", index_, suffix));
  l.kernel = it->second;
  if (fresh) {
    body_ += "// launch: " + launchLine + "\n";
    std::string wrapper = wrapperPrefix_ +
                          fmt::format("XL_KERNEL void {}({}) {{\n  {}<{}>({});\n}}\n"
                                      "XL_EXPORT({})\n",
                                      l.kernel, decl, tmpl, targList, call, l.kernel);
    body_ += wrapper + "\n";
    prog_.kernelSources.emplace_back(l.kernel, std::move(wrapper));
    ++kernels_;
  } else {
    body_ += fmt::format("// launch: {} ({}), {}\n\n", l.kernel, call,
                         launchLine);
  }
  wrapperPrefix_.clear();
  cur_->launches.push_back(std::move(l));
  ++launches_;
}

void Emitter::gemm(const dev::GemmStepCall &call) {
  DeviceLaunch l;
  l.kind = DeviceLaunch::Gemm;
  l.gemm = call.desc;
  l.a = call.a;
  l.b = call.b;
  l.bias = call.bias;
  l.d = call.out;
  l.aux = call.aux;
  l.c = call.c;
  std::string fused;
  if (l.c >= 0)
    fused = fmt::format(", D = b{} + the product (beta 1)", l.c);
  else if (l.aux >= 0)
    fused = fmt::format(", aux b{}", l.aux);
  if (auto bg = batched_.find(index_); bg != batched_.end()) {
    const BatchedGemm &b = bg->second;
    l.a = b.entries[0].first;
    l.d = b.entries[0].second;
    l.gemm.batch = int64_t(b.entries.size());
    l.gemm.strideA = b.strideA;
    l.gemm.strideB = 0;
    l.gemm.strideC = b.strideC;
    l.batchMembers.assign(b.entries.begin() + 1, b.entries.end());
    fused = ", batched over steps";
    for (size_t j : b.steps)
      fused += fmt::format(" {}", j);
    fused += " (entries: A/D";
    for (const auto &[a, d] : b.entries)
      fused += fmt::format(" b{}/b{}", a, d);
    fused += fmt::format(", strides {}/0/{})", b.strideA, b.strideC);
  }
  const dev::GemmDesc &g = l.gemm;
  body_ += stepHeader_;
  stepHeader_.clear();
  body_ += fmt::format(
      "// cuBLASLt (column-major): D[{}x{}] = op(A=b{}){} . op(B=b{}){}, k {}, "
      "ld {}/{}/{}, batch {}, {} in, {} out, epilogue {}{}{}\n\n",
      g.m, g.n, l.a, g.transA ? "^T" : "", l.b, g.transB ? "^T" : "", g.k,
      g.lda, g.ldb, g.ldc, g.batch, dev::gemmTypeName(g.ab), dev::gemmTypeName(g.cd),
      dev::gemmEpilogueName(g.epilogue),
      l.bias >= 0 ? fmt::format(" (bias b{})", l.bias) : std::string(), fused);
  cur_->launches.push_back(std::move(l));
  ++gemms_;
}

/// Plain GEMMs that share their B operand and their descriptor run as one
/// batched GEMM (B at stride 0) when their A and D operands can lie side by
/// side: the k and v projections of the content stream (B: the memory
/// concatenated with h) and their weight gradients (B: the same
/// concatenation), and q, k, v together where no memory separates q's
/// input from theirs. A operands that are parameters must already be side
/// by side in the input block at one stride (planInputBlock: k's and v's
/// weights are); A operands that are temps (bf16 copies of the weights, the
/// gradients dk and dv) and every D become a DeviceProgram group, which the
/// memory plan places side by side. The batched GEMM runs at the first
/// step; every A is written before it and every D is written by its own
/// step only, so doing the later products early changes nothing: bitwise
/// the separate GEMMs' results (each batch entry is the same product).
void Emitter::findBatchedGemms() {
  std::vector<int64_t> inputOffset;
  rt::planInputBlock(plan_, inputOffset);
  auto slot = [&](int id) { return rt::memorySlotBytes(buf(id)); };
  std::set<int> grouped;
  std::map<std::string, std::vector<std::pair<size_t, dev::GemmStepCall>>> byKey;
  for (size_t g = 0; g < plan_.steps.size(); ++g) {
    const Step &s = plan_.steps[g];
    if ((s.kind != OpKind::Gemm && s.kind != OpKind::GemmWgrad) || doneElsewhere_.count(g))
      continue;
    dev::GemmStepCall call;
    if (!dev::lowerGemmStep(plan_, s, call) || call.bias >= 0 || call.c >= 0 ||
        call.followUp != Activation::None || call.desc.epilogue != dev::GemmEpilogue::Default)
      continue;
    const dev::GemmDesc &d = call.desc;
    byKey[fmt::format("{} ld {}/{}/{} b{}", dev::describeGemm(d), d.lda, d.ldb, d.ldc,
                      call.b)]
        .emplace_back(g, call);
  }
  for (auto &[key, calls] : byKey) {
    if (calls.size() < 2)
      continue;
    const size_t firstStep = calls.front().first;
    std::vector<std::pair<int, int>> entries;
    std::vector<size_t> steps;
    for (const auto &[g, call] : calls) {
      entries.emplace_back(call.a, call.out);
      steps.push_back(g);
    }
    bool paramA = true, tempA = true, ok = true;
    for (const auto &[a, d] : entries) {
      const Buffer &ab = buf(a), &db = buf(d);
      paramA = paramA && ab.role == Buffer::Param;
      const int w = dataflow_.writer[size_t(a)];
      tempA = tempA && ab.role == Buffer::Temp && !grouped.count(a) && w >= 0 &&
              size_t(w) < firstStep;
      ok = ok && db.role == Buffer::Temp && !grouped.count(d) && a != d;
    }
    if (!ok || (!paramA && !tempA))
      continue;
    BatchedGemm b;
    if (paramA) {
      // Entry order: the weights' order in the input block, at one stride.
      std::sort(entries.begin(), entries.end(), [&](const auto &x, const auto &y) {
        return inputOffset[size_t(x.first)] < inputOffset[size_t(y.first)];
      });
      const int64_t step = inputOffset[size_t(entries[1].first)] -
                           inputOffset[size_t(entries[0].first)];
      for (size_t e = 1; e < entries.size(); ++e)
        ok = ok && inputOffset[size_t(entries[e].first)] -
                           inputOffset[size_t(entries[e - 1].first)] ==
                       step;
      const int64_t size = int64_t(dtypeSize(buf(entries[0].first).dtype));
      if (!ok || step <= 0 || step % size != 0)
        continue;
      b.strideA = step / size;
    } else {
      b.strideA = slot(entries[0].first) / int64_t(dtypeSize(buf(entries[0].first).dtype));
      std::vector<int> as;
      for (const auto &[a, d] : entries)
        as.push_back(a), grouped.insert(a);
      prog_.groups.push_back(as);
    }
    b.strideC = slot(entries[0].second) / int64_t(dtypeSize(buf(entries[0].second).dtype));
    std::vector<int> ds;
    for (const auto &[a, d] : entries)
      ds.push_back(d), grouped.insert(d);
    prog_.groups.push_back(ds);
    b.entries = entries;
    b.steps = steps;
    for (size_t j = 1; j < steps.size(); ++j)
      doneElsewhere_[steps[j]] = fmt::format("in the batched GEMM of step {}", firstStep);
    batched_[firstStep] = std::move(b);
  }
}

Param Emitter::initP(size_t o) {
  const int init = step_->initOf(o);
  if (init < 0)
    return null(buf(out(o)).dtype == DType::BF16 ? "const xl_bf16 *" : "const float *");
  return bufIn(init);
}

Status Emitter::emitGemm() {
  dev::GemmStepCall call;
  XLNETC_RETURN_IF_ERROR(dev::lowerGemmStep(plan_, *step_, call));
  gemm(call);
  // A GEMM summing an input (beta 1: C) that nothing reads after it writes
  // over it (cuBLASLt's in-place C == D): gradient accumulation's sum.
  if (const int init = step_->initOf(0);
      init >= 0 && buf(init).role == Buffer::Input && canUpdateInPlace(init, out(0), index_))
    prog_.inPlace.emplace_back(out(0), init);
  if (call.followUp != Activation::None) {
    int64_t n = numel(call.out);
    kernel("act", "xl_activation_inplace",
           {std::to_string(n), std::to_string(int(call.followUp)),
            std::to_string(kElemBlock)},
           {bufOut(call.out), seed()}, gridFor(ceilDiv(n, kElemBlock)),
           kElemBlock);
  }
  return Status::ok();
}

/// rel_attention and rel_attention_grad (xlnetc_k_attention.cuh).
Status Emitter::emitRelAttention(bool grad) {
  const StepAttrs &a = step_->attrs;
  size_t o = grad ? 1 : 0; // rel_attention's operands start here
  int64_t B = inDim(o + 0, 0), T = inDim(o + 0, 1), N = inDim(o + 0, 2),
          H = inDim(o + 0, 3), K = inDim(o + 1, 1), S = inDim(o + 8, 1),
          P = inDim(o + 3, 0), R = inDim(o + 3, 1);
  bool hasRows = step_->in.size() == o + 11;
  std::vector<std::string> targs = {
      std::to_string(B),       std::to_string(T),
      std::to_string(N),       std::to_string(H),
      std::to_string(K),       std::to_string(S),
      std::to_string(P),       std::to_string(R),
      hasRows ? "1" : "0",     f64Arg(a.scale),
      f32Arg(a.dropatt)};
  std::vector<Param> params;
  for (size_t i = 0; i < o + 10; ++i)
    params.push_back(inP(i));
  params.push_back(hasRows ? inP(o + 10) : null("const xl_i64 *"));
  for (size_t i = 0; i < step_->out.size(); ++i)
    params.push_back(outP(i));
  int64_t rows = B * T * N;
  if (buf(in(o + 8)).dtype == DType::I64)
    return emitFusedRelAttention(grad, targs, params, B, T, N, H, K, P, R);
  uint32_t rowSmem = static_cast<uint32_t>(K * 8);
  if (!grad) {
    params.push_back(status());
    params.push_back(site(a.dropoutSite));
    params.push_back(seed());
    targs.push_back(std::to_string(kAttnBlock));
    kernel("rel_attention", "xl_rel_attention", targs, params, gridFor(rows),
           kAttnBlock, rowSmem);
    return Status::ok();
  }
  needWorkspace(8 * rows * (2 * H + 2 + K));
  params.push_back(workspace("double *"));
  params.push_back(status());
  params.push_back(site(a.dropoutSite));
  params.push_back(seed());
  // Phase 1 covers dk/dv elements, then dk_r's, then the bias columns.
  int64_t phase1 = B * K * N * H + P * R * N * H + N * H;
  for (int phase = 0; phase < 2; ++phase) {
    std::vector<std::string> t = targs;
    t.push_back(std::to_string(phase));
    t.push_back(std::to_string(kAttnBlock));
    kernel(fmt::format("rel_attention_grad_p{}", phase),
           "xl_rel_attention_grad", t, params,
           phase == 0 ? gridFor(rows) : gridFor(ceilDiv(phase1, kAttnBlock)),
           kAttnBlock, phase == 0 ? 2 * rowSmem : 0);
  }
  return Status::ok();
}

/// rel_attention(_grad) with compact masks: the fused kernels of
/// xlnetc_k_attention_fused.cuh (`targs` and `params` are the operands and
/// shapes the simple kernels take, up to the outputs).
Status Emitter::emitFusedRelAttention(bool grad, std::vector<std::string> targs,
                                    std::vector<Param> params, int64_t B,
                                    int64_t T, int64_t N, int64_t H, int64_t K,
                                    int64_t P, int64_t R) {
  const StepAttrs &a = step_->attrs;
  const int bk = 32;
  // The backward's static shared memory (xlnetc_k_attention_fused.cuh):
  // staged rows, a tile's entries and a key tile, an upper bound (38720
  // bytes for BQ 16, H 64, where ptxas reports 38016); it must fit in 48 KiB.
  auto gradSmem = [&](int64_t bq) {
    return 84 * bq + 12 * bq * H + 17 * bk * bq + 8 * bk * H;
  };
  int bq = H <= 64 ? 16 : 4;
  if (gradSmem(bq) > 48 * 1024)
    return Status::error(fmt::format(
        "d_head {} is too large for the fused attention: its backward would "
        "need {} bytes of static shared memory per block, over 48 KiB "
        "(heads up to 153 fit)",
        H, gradSmem(bq)));
  targs.push_back(std::to_string(bq));
  // The permutation mask's form (runtime/PermMask.h): ranks or bits.
  const std::vector<int64_t> &mask = buf(in(grad ? 10 : 9)).shape;
  const std::string maskBits =
      isPermRankShape(mask[1], mask[2], /*S=*/R - K) ? "0" : "1";
  const int64_t qTiles = B * N * ceilDiv(T, bq);
  // The tensor-core kernels' configuration (WARPS): the most warps whose
  // shared memory fits the target's block.
  const int warps = tcAttention(*step_) ? dev::attnTcWarps(H, grad, target_.smemPerBlock) : 0;
  if (tcAttention(*step_) && warps == 0)
    return Status::error(fmt::format(
        "the tensor-core attention at d_head {} needs {} bytes of shared memory per block "
        "even with one warp; {} allows {}",
        H, dev::attnTcSmemBytes(H, 1, grad), target_.arch, target_.smemPerBlock));
  // bf16 queries: the forward on tensor cores (xlnetc_k_attention_tc.cuh),
  // for every head size it takes; others run the f32 kernel below.
  if (!grad && tcAttention(*step_)) {
    params.push_back(null("float *")); // the log-sum-exp is not kept
    params.push_back(status());
    params.push_back(site(a.dropoutSite));
    params.push_back(seed());
    targs.pop_back(); // the f32 kernel's BQ
    targs.push_back(maskBits);
    targs.push_back(std::to_string(warps));
    const int64_t smem = dev::attnTcSmemBytes(H, warps);
    wrapperPrefix_ = fmt::format("static_assert(XlAttnTcSmem<{0}, {1}>::kBytes == {2}, "
                                 "\"AttentionTc.h and the kernel disagree\");\n",
                                 H, warps, smem);
    kernel("rel_attention_tc", "xl_rel_attention_tc", targs, params,
           gridFor(B * N * ceilDiv(T, dev::attnTcRows(warps))), dev::attnTcBlock(warps),
           static_cast<uint32_t>(smem));
    return Status::ok();
  }
  if (!grad) {
    params.push_back(null("float *")); // the log-sum-exp is not kept
    params.push_back(status());
    params.push_back(site(a.dropoutSite));
    params.push_back(seed());
    targs.push_back(std::to_string(bk));
    targs.push_back(std::to_string(kAttnBlock));
    targs.push_back(maskBits);
    uint32_t smem = static_cast<uint32_t>(8 * (bq * H + bq * bk + 7 * bq) +
                                          4 * (2 * bq * H + 2 * bk * H));
    kernel("rel_attention_fused", "xl_rel_attention_fused", targs, params,
           gridFor(qTiles), kAttnBlock, smem);
    return Status::ok();
  }
  needWorkspace(8 * B * T * N * (2 * H + 4));
  params.push_back(workspace("double *"));
  params.push_back(status());
  params.push_back(site(a.dropoutSite));
  params.push_back(seed());
  const int64_t grids[5] = {qTiles, qTiles, B * N * ceilDiv(K, bk),
                            P * N * ceilDiv(R, bk),
                            ceilDiv(N * H, kAttnBlock)};
  // bf16 gradients: on tensor cores.
  if (tcAttention(*step_)) {
    emitTcAttentionGrad(targs, params, maskBits, warps, B, T, N, H, K, P, R);
    return Status::ok();
  }
  for (int phase = 0; phase < 5; ++phase) {
    std::vector<std::string> t = targs;
    t.push_back(std::to_string(phase));
    t.push_back(std::to_string(kAttnBlock));
    t.push_back(maskBits);
    kernel(fmt::format("rel_attention_fused_grad_p{}", phase),
           "xl_rel_attention_fused_grad", t, params, gridFor(grids[phase]),
           kAttnBlock);
  }
  return Status::ok();
}

/// The tensor-core backward of a bf16 rel_attention_grad: PHASE 0..3 on
/// tensor cores, then the bias columns (PHASE 4, the f32 kernel's code),
/// which read the same row statistics. `targs` and `params` are the f32
/// kernel's (emitFusedRelAttention).
void Emitter::emitTcAttentionGrad(const std::vector<std::string> &targs,
                                  const std::vector<Param> &params, const std::string &maskBits,
                                  int warps, int64_t B, int64_t T, int64_t N, int64_t H,
                                  int64_t K, int64_t P, int64_t R) {
  // The f32 kernel's operands with the seven inits after `rows` (a
  // gradient but dq may start from one: docs/Plan.md "Fused forms").
  const size_t ins = 1 + 10 + 1; // dout, rel_attention's ten operands, rows (or null)
  const size_t outs = step_->out.size();
  std::vector<Param> tcParams(params.begin(), params.begin() + ins);
  for (size_t o = 1; o < outs; ++o)
    tcParams.push_back(initP(o));
  for (size_t o = 0; o < outs; ++o)
    tcParams.push_back(outP(o));
  tcParams.insert(tcParams.end(), params.begin() + ins + outs, params.end());
  // Query tiles (PHASE 0, 1), key tiles (2) and k_r tiles (3) of `rows`.
  const int64_t rows = dev::attnTcRows(warps);
  const int64_t tcGrids[4] = {B * N * ceilDiv(T, rows), B * N * ceilDiv(T, rows),
                              B * N * ceilDiv(K, rows), P * N * ceilDiv(R, rows)};
  const int64_t smem = dev::attnTcSmemBytes(H, warps, /*grad=*/true);
  std::vector<std::string> tcArgs = targs;
  tcArgs.pop_back(); // the f32 kernel's BQ
  for (int phase = 0; phase < 5; ++phase) {
    std::vector<std::string> t = tcArgs;
    t.push_back(std::to_string(phase));
    t.push_back(maskBits);
    t.push_back(std::to_string(warps));
    const bool columns = phase == 4; // no shared memory, any block
    if (!columns)
      wrapperPrefix_ = fmt::format("static_assert(XlAttnTcSmem<{0}, {1}>::kGradBytes == {2}, "
                                   "\"AttentionTc.h and the kernel disagree\");\n",
                                   H, warps, smem);
    kernel(fmt::format("rel_attention_tc_grad_p{}", phase),
           "xl_rel_attention_tc_grad", t, tcParams,
           gridFor(columns ? ceilDiv(N * H, dev::kAttnTcColumnsBlock) : tcGrids[phase]),
           columns ? dev::kAttnTcColumnsBlock : dev::attnTcBlock(warps),
           columns ? 0u : static_cast<uint32_t>(smem));
  }
}


void Emitter::emitGlobalNorm() {
  DeviceTable t;
  t.kind = DeviceTable::Norm;
  int64_t chunks = 0;
  for (int id : step_->in) {
    DeviceTable::Entry e;
    e.buffers = {id};
    e.count = numel(id);
    e.chunkBegin = chunks;
    chunks += ceilDiv(e.count, kChunk);
    t.entries.push_back(std::move(e));
  }
  prog_.tables.push_back(std::move(t));
  int index = static_cast<int>(prog_.tables.size()) - 1;
  needWorkspace(8 * std::max<int64_t>(chunks, 1));
  std::vector<Param> params = {table(index), outP(0), workspace("double *"),
                               seed()};
  for (int phase = 0; phase < 2; ++phase)
    kernel(fmt::format("global_norm_p{}", phase), "xl_global_norm",
           {std::to_string(step_->in.size()), std::to_string(chunks),
            std::to_string(kChunk), std::to_string(phase),
            std::to_string(kWideBlock)},
           params, phase == 0 ? gridFor(chunks) : 1, kWideBlock);
}

/// The key under which consecutive adam_update steps share one launch: the
/// same scalar inputs and attributes (the weight decay may be 0 on some).
using AdamKey = std::tuple<int, int, int, double, double, double, double, bool>;
AdamKey adamKey(const Step &s) {
  const StepAttrs &a = s.attrs;
  return {s.in[4], s.in[5], s.in[6], a.beta1, a.beta2, a.epsilon, a.clip,
          a.biasCorrection};
}

/// One multi-tensor launch for the run of adam_update steps starting at the
/// current one; the other steps of the run get no launch of their own.
void Emitter::emitAdamRun() {
  const StepAttrs &a = step_->attrs;
  AdamKey key = adamKey(*step_);
  double wd = 0.0;
  DeviceTable t;
  t.kind = DeviceTable::Adam;
  int64_t chunks = 0;
  size_t last = index_;
  std::set<int> runOutputs;
  for (size_t j = index_; j < plan_.steps.size(); ++j) {
    const Step &s = plan_.steps[j];
    if (s.kind != OpKind::AdamUpdate || adamKey(s) != key)
      break;
    double w = s.attrs.weightDecay;
    if (w != 0.0 && wd != 0.0 && w != wd)
      break; // one decay rate per launch
    bool readsRun = false; // the entries of one launch run concurrently
    for (int id : s.in)
      readsRun = readsRun || runOutputs.count(id);
    if (readsRun)
      break;
    runOutputs.insert(s.out.begin(), s.out.end());
    if (w != 0.0)
      wd = w;
    DeviceTable::Entry e;
    e.buffers = {s.in[0], s.in[1], s.in[2], s.in[3],
                 s.out[0], s.out[1], s.out[2]};
    // The new parameter and moments over the old ones where this launch is
    // the last to read them: each element is read, then written, by one
    // thread (xl_adam_element).
    for (size_t o = 0; o < s.out.size(); ++o)
      if (const int i = inPlaceInput(s, o); i >= 0 && canUpdateInPlace(s.in[size_t(i)], s.out[o], j))
        prog_.inPlace.emplace_back(s.out[o], s.in[size_t(i)]);
    e.count = numel(s.in[0]);
    e.chunkBegin = chunks;
    e.decay = w != 0.0;
    chunks += ceilDiv(e.count, kChunk);
    t.entries.push_back(std::move(e));
    last = j;
  }
  prog_.tables.push_back(std::move(t));
  int index = static_cast<int>(prog_.tables.size()) - 1;
  stepHeader_ += fmt::format("// adam_update of steps {} to {} ({} parameters) "
                             "in one multi-tensor launch\n",
                             index_, last, last - index_ + 1);
  kernel("adam_update", "xl_adam_update_multi",
         {std::to_string(last - index_ + 1), std::to_string(chunks),
          std::to_string(kChunk), f64Arg(a.beta1), f64Arg(a.beta2),
          f64Arg(a.epsilon), f64Arg(a.clip), f64Arg(wd),
          a.biasCorrection ? "true" : "false", std::to_string(kWideBlock)},
         {table(index), inP(4), inP(5), inP(6), status(), seed()},
         gridFor(chunks), kWideBlock);
  adamCovered_ = last;
}

Status Emitter::emitStep() {
  // A plan built in memory may not have been through parsePlan: the step's
  // types and fused forms first (an init the kernels below would not read
  // is an error, not a dropped sum).
  XLNETC_RETURN_IF_ERROR(verifyStepTypes(plan_, *step_));
  // The f32 attention backward writes its gradients alone; only the
  // tensor-core kernels sum into inits (--xlnet-fuse-kernels'
  // attention-grad-init=tensor-core, the default, makes no others).
  if (step_->kind == OpKind::RelAttentionGrad && !tcAttention(*step_))
    for (size_t o = 0; o < step_->out.size(); ++o)
      if (step_->initOf(o) >= 0)
        return Status::error(fmt::format(
            "output {} of this rel_attention_grad starts from an init, which the CUDA "
            "backend's f32 attention backward does not take (only its bf16 tensor-core "
            "kernels do); compile with --xlnet-fuse-kernels attention-grad-init=tensor-core",
            o));
  if (auto it = doneElsewhere_.find(index_); it != doneElsewhere_.end()) {
    body_ += fmt::format("// step {}: {} (loc '{}'): {}\n\n", index_, step_->op,
                         step_->loc, it->second);
    stepHeader_.clear();
    return Status::ok();
  }
  // By family; the switch names every kind (-Werror=switch).
  switch (step_->kind) {
  case OpKind::Embedding:
  case OpKind::MaskEmbedding:
  case OpKind::RelPosEncoding:
  case OpKind::RelSegment:
  case OpKind::AttnMask:
  case OpKind::TargetPositions:
  case OpKind::MemConcat:
  case OpKind::MemCache:
    return emitInputStep();
  case OpKind::Gemm:
  case OpKind::GemmWgrad:
  case OpKind::RelAttention:
  case OpKind::RelAttentionGrad:
  case OpKind::AddLayerNorm:
  case OpKind::AddLayerNormGrad:
  case OpKind::Dropout:
  case OpKind::LmLoss:
  case OpKind::LmLossGrad:
    return emitComputeStep();
  case OpKind::EmbeddingGrad:
  case OpKind::MaskEmbeddingGrad:
  case OpKind::MemConcatGrad:
  case OpKind::ActivationOp:
  case OpKind::ActivationGrad:
  case OpKind::BiasGrad:
  case OpKind::Add:
  case OpKind::Cast:
  case OpKind::LrSchedule:
  case OpKind::GlobalNorm:
  case OpKind::AdamUpdate:
    return emitUpdateStep();
  }
  return Status::error("no device lowering for op '" + step_->op + "'");
}

/// The embeddings, positions, masks and memory.
Status Emitter::emitInputStep() {
  const StepAttrs &a = step_->attrs;
  auto elems = [&](int64_t n) { return gridFor(ceilDiv(n, kElemBlock)); };
  auto s = [](int64_t v) { return std::to_string(v); };
  const std::string eb = s(kElemBlock);
  switch (step_->kind) {
  case OpKind::Embedding: {
    int64_t B = inDim(0, 0), S = inDim(0, 1), V = inDim(1, 0), D = inDim(1, 1);
    kernel("embedding", "xl_embedding", {s(B), s(S), s(V), s(D), eb},
           {inP(0), inP(1), outP(0), status(), seed()}, elems(B * S * D),
           kElemBlock);
    return Status::ok();
  }
  case OpKind::MaskEmbedding: {
    int64_t D = inDim(0, 2), rows = numel(out(0)) / std::max<int64_t>(D, 1);
    kernel("mask_embedding", "xl_mask_embedding", {s(rows), s(D), eb},
           {inP(0), outP(0), seed()}, elems(rows * D), kElemBlock);
    return Status::ok();
  }
  case OpKind::RelPosEncoding:
    kernel("rel_pos_encoding", "xl_rel_pos_encoding",
           {s(outDim(0, 0)), s(outDim(0, 1)), s(outDim(0, 2)), s(a.klen),
            s(a.clampLen), eb},
           {outP(0), seed()}, elems(numel(out(0))), kElemBlock);
    return Status::ok();
  case OpKind::RelSegment:
    kernel("rel_segment", "xl_rel_segment",
           {s(inDim(0, 0)), s(inDim(0, 1)), s(a.mlen), eb},
           {inP(0), outP(0), seed()}, elems(numel(out(0))), kElemBlock);
    return Status::ok();
  case OpKind::AttnMask:
    kernel("attn_mask", "xl_attn_mask",
           {s(inDim(0, 0)), s(inDim(0, 1)), s(a.mlen),
            a.stream == MaskStream::Content ? "1" : "0", eb},
           {inP(0), outP(0), seed()}, elems(numel(out(0))), kElemBlock);
    return Status::ok();
  case OpKind::TargetPositions: {
    int64_t B = inDim(0, 0), NP = inDim(0, 1), S = inDim(0, 2);
    kernel("target_positions", "xl_target_positions",
           {s(B), s(NP), s(S), s(kAttnBlock)},
           {inP(0), outP(0), status(), seed()}, gridFor(B * NP), kAttnBlock);
    return Status::ok();
  }
  case OpKind::MemConcat: {
    int64_t M = inDim(0, 0), B = inDim(1, 0), S = inDim(1, 1), D = inDim(1, 2);
    kernel("mem_concat", "xl_mem_concat", {s(M), s(B), s(S), s(D), eb},
           {inP(0), inP(1), outP(0), seed()}, elems(numel(out(0))),
           kElemBlock);
    return Status::ok();
  }
  case OpKind::MemCache: {
    bool hasMems = step_->in.size() == 2;
    int h = hasMems ? 1 : 0;
    int64_t M = hasMems ? inDim(0, 0) : 0, B = inDim(h, 0), S = inDim(h, 1),
            D = inDim(h, 2), L = outDim(0, 0);
    kernel("mem_cache", "xl_mem_cache",
           {s(M), s(B), s(S), s(D), s(a.reuseLen), s(L), eb},
           {hasMems ? inP(0) : null("const float *"), inP(h), outP(0),
            seed()},
           elems(numel(out(0))), kElemBlock);
    return Status::ok();
  }
  default:
    break;
  }
  return Status::error("no device lowering for op '" + step_->op + "'");
}

/// add_layer_norm, or with x's dropout fused.
Status Emitter::emitAddLayerNorm() {
  const StepAttrs &a = step_->attrs;
  auto s = [](int64_t v) { return std::to_string(v); };
  int64_t D = shapeOf(in(0)).back();
  if (D <= 0)
    return Status::error("add_layer_norm over an empty last dimension");
  int64_t rows = numel(in(0)) / D;
  int block = rowBlock(D);
  // The fused dropout of x (docs/Plan.md "Fused forms"): recomputed from
  // the hash, rounded to x's type, so the dropped x is never stored.
  if (a.xDropout) {
    kernel("dropout_add_layer_norm", "xl_dropout_add_layer_norm",
           {s(rows), s(D), f64Arg(a.eps), s(block), f32Arg(a.xDropoutRate),
            buf(in(0)).dtype == DType::BF16 ? "1" : "0", rowElems(in(0))},
           {inP(0), inP(1), inP(2), inP(3), outP(0), site(a.xDropoutSite), seed()},
           gridFor(rows), block);
    return Status::ok();
  }
  kernel("add_layer_norm", "xl_add_layer_norm",
         {s(rows), s(D), f64Arg(a.eps), s(block)},
         {inP(0), inP(1), inP(2), inP(3), outP(0), seed()}, gridFor(rows),
         block);
  return Status::ok();
}

/// add_layer_norm_grad in two phases (per-part sums of the gains'
/// gradients, then their reduction), plain or with its fused forms.
Status Emitter::emitAddLayerNormGrad() {
  const StepAttrs &a = step_->attrs;
  auto s = [](int64_t v) { return std::to_string(v); };
  int64_t D = shapeOf(in(0)).back();
  if (D <= 0)
    return Status::error("add_layer_norm_grad over an empty last dimension");
  int64_t rows = numel(in(0)) / D;
  int64_t parts = ceilDiv(rows, kRowsPerPart);
  int block = rowBlock(D);
  needWorkspace(8 * parts * 2 * D);
  // The fused forms: the gains' inits, x's dropout recomputed, dsum's
  // dropout written as output 3 (docs/Plan.md "Fused forms").
  if (a.xDropout || a.dsumDropout || !step_->init.empty()) {
    std::vector<Param> params = {
        inP(0), inP(1), inP(2), inP(3), initP(1), initP(2), outP(0),
        a.dsumDropout ? outP(3) : null("float *"), outP(1), outP(2), workspace("double *"),
        site(a.xDropoutSite), site(a.dsumDropoutSite), seed()};
    for (int phase = 0; phase < 2; ++phase)
      kernel(fmt::format("add_layer_norm_grad_fused_p{}", phase),
             "xl_add_layer_norm_grad_fused",
             {s(rows), s(D), f64Arg(a.eps), s(kRowsPerPart), s(phase), s(block),
              a.xDropout ? "1" : "0", f32Arg(a.xDropoutRate),
              buf(in(1)).dtype == DType::BF16 ? "1" : "0", a.dsumDropout ? "1" : "0",
              f32Arg(a.dsumDropoutRate), rowElems(in(1))},
             params, phase == 0 ? gridFor(parts) : gridFor(ceilDiv(D, block)), block);
    return Status::ok();
  }
  std::vector<Param> params = {inP(0),  inP(1),  inP(2),
                               inP(3),  outP(0), outP(1),
                               outP(2), workspace("double *"), seed()};
  for (int phase = 0; phase < 2; ++phase)
    kernel(fmt::format("add_layer_norm_grad_p{}", phase),
           "xl_add_layer_norm_grad",
           {s(rows), s(D), f64Arg(a.eps), s(kRowsPerPart), s(phase),
            s(block)},
           params, phase == 0 ? gridFor(parts) : gridFor(ceilDiv(D, block)),
           block);
  return Status::ok();
}

/// GEMMs, attention, LayerNorm, dropout and the loss, forward and backward.
Status Emitter::emitComputeStep() {
  const StepAttrs &a = step_->attrs;
  auto elems = [&](int64_t n) { return gridFor(ceilDiv(n, kElemBlock)); };
  auto s = [](int64_t v) { return std::to_string(v); };
  const std::string eb = s(kElemBlock);
  switch (step_->kind) {
  case OpKind::Gemm:
  case OpKind::GemmWgrad:
    return emitGemm();
  case OpKind::RelAttention:
    return emitRelAttention(false);
  case OpKind::RelAttentionGrad:
    return emitRelAttention(true);
  case OpKind::AddLayerNorm:
    return emitAddLayerNorm();
  case OpKind::AddLayerNormGrad:
    return emitAddLayerNormGrad();
  case OpKind::Dropout:
    kernel("dropout", "xl_dropout",
           {s(numel(in(0))), f32Arg(a.rate), eb, a.batchShared ? "0" : rowElems(in(0))},
           {inP(0), outP(0), site(a.dropoutSite), seed()},
           elems(numel(in(0))), kElemBlock);
    return Status::ok();
  case OpKind::LmLoss: {
    int64_t B = inDim(0, 0), NP = inDim(0, 1), V = inDim(0, 2);
    needWorkspace(8 * std::max<int64_t>(B * NP, 1));
    std::vector<Param> params = {inP(0),  inP(1), inP(2),
                                 outP(0), outP(1), workspace("double *"),
                                 status(), seed()};
    for (int phase = 0; phase < 2; ++phase)
      kernel(fmt::format("lm_loss_p{}", phase), "xl_lm_loss",
             {s(B), s(NP), s(V), s(phase), s(kWideBlock)}, params,
             phase == 0 ? gridFor(B * NP) : 1, kWideBlock);
    return Status::ok();
  }
  case OpKind::LmLossGrad: {
    int64_t B = inDim(0, 0), NP = inDim(0, 1), V = inDim(0, 2);
    kernel("lm_loss_grad", "xl_lm_loss_grad",
           {s(B), s(NP), s(V), s(kWideBlock)},
           {inP(0), inP(1), inP(2), step_->in.size() > 3 ? inP(3) : null("const float *"),
            outP(0), status(), seed()},
           gridFor(B * NP), kWideBlock);
    return Status::ok();
  }
  default:
    break;
  }
  return Status::error("no device lowering for op '" + step_->op + "'");
}

/// The other gradients, the cast and the optimizer.
Status Emitter::emitUpdateStep() {
  const StepAttrs &a = step_->attrs;
  auto elems = [&](int64_t n) { return gridFor(ceilDiv(n, kElemBlock)); };
  auto s = [](int64_t v) { return std::to_string(v); };
  const std::string eb = s(kElemBlock);
  switch (step_->kind) {
  case OpKind::EmbeddingGrad: {
    int64_t B = inDim(0, 0), S = inDim(0, 1), V = outDim(0, 0),
            D = outDim(0, 1);
    needWorkspace(4 * (2 * V + 1 + B * S));
    std::vector<Param> params = {inP(0), inP(1), initP(), outP(0),
                                 workspace("int *"), status(), seed()};
    int block = rowBlock(D);
    for (int phase = 0; phase < 2; ++phase)
      kernel(fmt::format("embedding_grad_p{}", phase), "xl_embedding_grad",
             {s(B), s(S), s(V), s(D), s(phase),
              s(phase == 0 ? kWideBlock : block)},
             params, phase == 0 ? 1 : gridFor(V),
             phase == 0 ? kWideBlock : block);
    return Status::ok();
  }
  case OpKind::MaskEmbeddingGrad: {
    int64_t D = outDim(0, 2), rows = numel(in(0)) / std::max<int64_t>(D, 1);
    kernel("mask_embedding_grad", "xl_mask_embedding_grad",
           {s(rows), s(D), s(kAttnBlock)}, {inP(0), outP(0), seed()},
           gridFor(ceilDiv(D, kAttnBlock)), kAttnBlock);
    return Status::ok();
  }
  case OpKind::MemConcatGrad: {
    int64_t B = inDim(0, 0), K = inDim(0, 1), S = outDim(0, 1),
            D = outDim(0, 2);
    kernel("mem_concat_grad", "xl_mem_concat_grad",
           {s(B), s(K), s(S), s(D), eb}, {inP(0), initP(0), outP(0), seed()},
           elems(numel(out(0))), kElemBlock);
    return Status::ok();
  }
  case OpKind::ActivationOp:
    kernel("activation", "xl_activation",
           {s(numel(in(0))), s(int(a.activation)), eb},
           {inP(0), outP(0), seed()}, elems(numel(in(0))), kElemBlock);
    return Status::ok();
  case OpKind::ActivationGrad:
    kernel("activation_grad", "xl_activation_grad",
           {s(numel(in(0))), s(int(a.activation)), eb},
           {inP(0), inP(1), outP(0), seed()}, elems(numel(in(0))),
           kElemBlock);
    return Status::ok();
  case OpKind::BiasGrad: {
    int64_t n = numel(out(0)), rows = n ? numel(in(0)) / n : 0;
    int64_t parts = ceilDiv(rows, kRowsPerPart);
    needWorkspace(8 * std::max<int64_t>(parts * n, 1));
    std::vector<Param> params = {inP(0), initP(), outP(0),
                                 workspace("double *"), seed()};
    for (int phase = 0; phase < 2; ++phase)
      kernel(fmt::format("bias_grad_p{}", phase), "xl_bias_grad",
             {s(rows), s(n), s(kRowsPerPart), s(phase), eb}, params,
             elems(phase == 0 ? parts * n : n), kElemBlock);
    return Status::ok();
  }
  case OpKind::Add:
    kernel("add", "xl_add", {s(numel(in(0))), eb},
           {inP(0), inP(1), outP(0), seed()}, elems(numel(in(0))),
           kElemBlock);
    return Status::ok();
  case OpKind::Cast:
    kernel("cast", "xl_cast", {s(numel(in(0))), eb},
           {inP(0), outP(0), seed()}, elems(numel(in(0))), kElemBlock);
    return Status::ok();
  case OpKind::LrSchedule:
    kernel("lr_schedule", "xl_lr_schedule",
           {f64Arg(a.learningRate), s(a.warmupSteps), s(a.trainSteps),
            f64Arg(a.minLrRatio), s(int(a.decay)), "32"},
           {inP(0), outP(0), status(), seed()}, 1, 32);
    return Status::ok();
  case OpKind::GlobalNorm:
    emitGlobalNorm();
    return Status::ok();
  case OpKind::AdamUpdate:
    if (adamCovered_ != size_t(-1) && index_ <= adamCovered_) {
      body_ += fmt::format("// step {}: adam_update (loc '{}'): in the "
                           "multi-tensor launch above\n\n",
                           index_, step_->loc);
      stepHeader_.clear();
      return Status::ok();
    }
    emitAdamRun();
    return Status::ok();
  default:
    break;
  }
  return Status::error("no device lowering for op '" + step_->op + "'");
}


Status Emitter::run(const CudaEmitOptions &options) {
  prog_ = DeviceProgram();
  target_ = options.target;
  prog_.moduleName = options.moduleName;
  prog_.steps.resize(plan_.steps.size());
  dataflow_ = planDataflow(plan_);
  findBatchedGemms();
  for (index_ = 0; index_ < plan_.steps.size(); ++index_) {
    step_ = &plan_.steps[index_];
    cur_ = &prog_.steps[index_];
    std::string ins, outs;
    for (int id : step_->in)
      ins += fmt::format("{}b{} {}", ins.empty() ? "" : ", ", id,
                         shapeText(buf(id)));
    for (int id : step_->out)
      outs += fmt::format("{}b{} {}", outs.empty() ? "" : ", ", id,
                          shapeText(buf(id)));
    std::string inits; // output k starts from init k (docs/Plan.md "Fused forms")
    for (size_t k = 0; k < step_->init.size(); ++k)
      if (step_->init[k] >= 0)
        inits += fmt::format("{}out {} from b{}", inits.empty() ? "" : ", ", k, step_->init[k]);
    stepHeader_ = fmt::format("// step {}: {} (loc '{}')\n//   in: {}\n"
                              "//   out: {}\n{}",
                              index_, step_->op, step_->loc,
                              ins.empty() ? "(none)" : ins, outs,
                              inits.empty() ? "" : "//   init: " + inits + "\n");
    if (std::string attrs = attrsText(*step_); !attrs.empty())
      stepHeader_ += "//   attrs: " + attrs + "\n";
    XLNETC_RETURN_IF_ERROR(emitStep().withPrefix(stepPrefix(index_, *step_)));
  }

  std::string &src = prog_.source;
  src = fmt::format(
      "// Generated by xlnetc{}: the device program of the plan.\n"
      "// {} plan steps -> {} kernel launches of {} kernels, {} cuBLASLt GEMMs.\n"
      "// Made for {}: {} bytes of shared memory per block.\n"
      "// Do not edit: `xlnetc compile --emit=cuda` writes it again. Each\n"
      "// kernel wraps a template of runtime/device/kernels/ with compile-time\n"
      "// shapes; steps of the same shapes share it (docs/Devices.md \"The\n"
      "// device program\").\n\n",
      options.origin.empty() ? "" : " from " + options.origin,
      plan_.steps.size(), launches_, kernels_, gemms_, target_.arch, target_.smemPerBlock);
  src += "#include \"xlnetc_prelude.cuh\"\n"
         "#include \"xlnetc_k_attention.cuh\"\n"
         "#include \"xlnetc_k_attention_fused.cuh\"\n"
         "#include \"xlnetc_k_attention_tc.cuh\"\n"
         "#include \"xlnetc_k_elementwise.cuh\"\n"
         "#include \"xlnetc_k_gather.cuh\"\n"
         "#include \"xlnetc_k_loss.cuh\"\n"
         "#include \"xlnetc_k_norm.cuh\"\n"
         "#include \"xlnetc_k_optim.cuh\"\n\n";
  prog_.sourceHead = src;
  src += body_;
  prog_.sourceDigest = Sha256::hexHash(src);
  return Status::ok();
}

} // namespace

Status emitDeviceProgram(const Plan &plan, const CudaEmitOptions &options,
                         DeviceProgram &out) {
  out.id = newDeviceProgramId();
  Emitter e(plan, out);
  XLNETC_RETURN_IF_ERROR(e.run(options));
  // The memory-plan pass: the arena of the temps from what each launch
  // touches.
  out.memory = planMemory(plan, &out);
  return Status::ok();
}

} // namespace xlnetc::cuda
