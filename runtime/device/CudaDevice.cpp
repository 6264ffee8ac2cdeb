//===- CudaDevice.cpp - The real GPU through the CUDA driver -------------===//
//
// The `cuda` device: the driver API loaded with dlopen (CudaApi.h), one
// primary context, one stream; modules are NVRTC-compiled CUBINs for the
// GPU's own architecture, through the on-disk kernel cache. Every driver
// error names the call and `where` (the plan step and its location).
//
//===----------------------------------------------------------------------===//

#include "runtime/device/CudaDevice.h"

#include "runtime/device/CudaApi.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"

#include <fmt/format.h>

#include <iostream>
#include <map>

namespace xlnetc::rt::dev {

namespace {

using namespace xlnetc::rt::cuda;

class CudaModule : public Module {
public:
  CudaModule(const Driver &drv, CUmodule mod) : drv_(drv), mod_(mod) {}
  ~CudaModule() override { drv_.cuModuleUnload(mod_); }
  CUmodule get() const { return mod_; }

private:
  const Driver &drv_;
  CUmodule mod_;
};

/// An instantiated CUDA graph and the graph it came from.
class CudaGraph : public Graph {
public:
  CudaGraph(const Driver &drv, CUgraph graph, CUgraphExec exec)
      : drv_(drv), graph_(graph), exec_(exec) {}
  ~CudaGraph() override {
    drv_.cuGraphExecDestroy(exec_);
    drv_.cuGraphDestroy(graph_);
  }
  CUgraphExec exec() const { return exec_; }

private:
  const Driver &drv_;
  CUgraph graph_;
  CUgraphExec exec_;
};

namespace { // the cuBLASLt helpers' namespace, below
struct LtCall;
} // namespace

class CudaDevice : public Device {
public:
  CudaDevice(const Driver &drv, DeviceInfo info, const DeviceOptions &options)
      : drv_(drv), info_(std::move(info)),
        cache_(options.kernelCache ? KernelCache::openDefault()
                                   : KernelCache::disabled()) {}
  ~CudaDevice() override {
    if (ltHandle_)
      lt_->cublasLtDestroy(ltHandle_);
    if (workspace_)
      drv_.cuMemFree(workspace_);
    for (CUevent e : {mainDone_, sideDone_})
      if (e)
        drv_.cuEventDestroy(e);
    for (CUstream s : {side_, stream_})
      if (s)
        drv_.cuStreamDestroy(s);
    (void)closeDevice(drv_, info_);
  }

  Status init() {
    const std::string at = "opening " + info_.name;
    XLNETC_CU_RETURN_IF_ERROR(drv_, at, cuStreamCreate(&stream_, 0));
    XLNETC_CU_RETURN_IF_ERROR(drv_, at, cuStreamCreate(&side_, 0));
    XLNETC_CU_RETURN_IF_ERROR(drv_, at, cuEventCreate(&mainDone_, CU_EVENT_DISABLE_TIMING));
    return XLNETC_CU_CHECK(drv_, at, cuEventCreate(&sideDone_, CU_EVENT_DISABLE_TIMING));
  }

  DeviceKind kind() const override { return DeviceKind::Cuda; }
  std::string description() const override {
    return fmt::format("{} ({}, {} SMs, {:.1f} GiB, {} KiB shared memory per block with "
                       "opt-in)",
                       info_.name, info_.arch, info_.smCount,
                       double(info_.totalMemory) / (1ull << 30),
                       info_.maxSharedPerBlockOptin / 1024);
  }
  std::string arch() const override { return info_.arch; }
  size_t maxSharedMemoryPerBlock() const override {
    return size_t(info_.maxSharedPerBlockOptin);
  }
  std::string physicalId() const override { return "GPU " + info_.pciAddress; }

  Status alloc(size_t bytes, DevPtr &out) override {
    CUdeviceptr p = 0;
    XLNETC_CU_RETURN_IF_ERROR(drv_, fmt::format("allocating {} bytes", bytes),
                              cuMemAlloc(&p, std::max<size_t>(bytes, 1)));
    out = p;
    return Status::ok();
  }
  void free(DevPtr ptr) override {
    if (ptr)
      drv_.cuMemFree(ptr);
  }
  Status memoryInUse(size_t &bytes) override {
    size_t freeBytes = 0, total = 0;
    XLNETC_CU_RETURN_IF_ERROR(drv_, "reading the device's memory", cuMemGetInfo(&freeBytes, &total));
    bytes = total - freeBytes;
    return Status::ok();
  }
  void *nativeStream() override { return stream_; }
  Status memoryFree(size_t &bytes) override {
    size_t total = 0;
    return XLNETC_CU_CHECK(drv_, "reading the device's free memory",
                           cuMemGetInfo(&bytes, &total));
  }
  Status upload(DevPtr dst, const void *src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("uploading {} bytes", bytes),
                           cuMemcpyHtoD(dst, src, bytes));
  }
  Status download(void *dst, DevPtr src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("downloading {} bytes", bytes),
                           cuMemcpyDtoH(dst, src, bytes));
  }
  Status copy(DevPtr dst, DevPtr src, size_t bytes) override {
    // On the stream, in order with the launches; the host does not wait.
    return XLNETC_CU_CHECK(drv_, fmt::format("copying {} bytes", bytes),
                           cuMemcpyDtoDAsync(dst, src, bytes, stream_));
  }
  Status allocHost(size_t bytes, void *&out) override {
    out = nullptr;
    return XLNETC_CU_CHECK(drv_, fmt::format("allocating {} bytes of page-locked host memory",
                                             bytes),
                           cuMemAllocHost(&out, bytes ? bytes : 1));
  }
  void freeHost(void *ptr) override {
    if (ptr)
      drv_.cuMemFreeHost(ptr);
  }
  Status downloadAsync(void *dst, DevPtr src, size_t bytes) override {
    return XLNETC_CU_CHECK(drv_, fmt::format("downloading {} bytes (asynchronously)", bytes),
                           cuMemcpyDtoHAsync(dst, src, bytes, stream_));
  }
  Status memset(DevPtr dst, int value, size_t bytes) override {
    // On the stream, in order with the launches (and capturable).
    return XLNETC_CU_CHECK(drv_, fmt::format("setting {} bytes", bytes),
                           cuMemsetD8Async(dst, (unsigned char)value, bytes, stream_));
  }

  Status loadModule(const ModuleSource &source,
                    std::unique_ptr<Module> &out) override {
    NvrtcSource src;
    src.name = source.name;
    src.text = source.text;
    for (const SourceFile &h : embeddedDeviceFiles())
      src.headers.push_back({h.name, h.text});
    for (const SourceFile &h : source.headers)
      src.headers.push_back({h.name, h.text});
    NvrtcOptions opts;
    opts.arch = info_.arch;
    opts.lineinfo = lineInfoRequested();
    CompiledCubin cubin;
    XLNETC_RETURN_IF_ERROR(compileCubin(src, opts, &cache_, cubin));
    CUmodule mod = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(drv_, "loading " + source.name,
                              cuModuleLoadData(&mod, cubin.cubin.data()));
    out = std::make_unique<CudaModule>(drv_, mod);
    return Status::ok();
  }
  Status loadCubin(const std::string &name, const std::string &image,
                   std::unique_ptr<Module> &out) override {
    CUmodule mod = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(drv_, "loading the CUBIN " + name,
                              cuModuleLoadData(&mod, image.data()));
    out = std::make_unique<CudaModule>(drv_, mod);
    return Status::ok();
  }
  Status getKernel(Module &module, const std::string &name,
                   Kernel &out) override {
    CUfunction fn = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(
        drv_, "kernel '" + name + "'",
        cuModuleGetFunction(&fn, static_cast<CudaModule &>(module).get(),
                            name.c_str()));
    int staticSmem = 0;
    XLNETC_CU_RETURN_IF_ERROR(
        drv_, "kernel '" + name + "': its static shared memory",
        cuFuncGetAttribute(&staticSmem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    out.name = name;
    out.handle = fn;
    out.staticSmem = size_t(staticSmem);
    return Status::ok();
  }
  Status launch(const Kernel &kernel, const LaunchDims &d, void **params,
                const std::string &where) override {
    auto fn = static_cast<CUfunction>(kernel.handle);
    std::string at = where.empty() ? "kernel '" + kernel.name + "'"
                                   : where + ", kernel '" + kernel.name + "'";
    // More than 48 KiB of dynamic shared memory must be opted into.
    if (d.dynSmem > 48 * 1024)
      XLNETC_CU_RETURN_IF_ERROR(
          drv_, at,
          cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             int(d.dynSmem)));
    return XLNETC_CU_CHECK(drv_, at,
                           cuLaunchKernel(fn, d.grid[0], d.grid[1], d.grid[2],
                                          d.block[0], d.block[1], d.block[2],
                                          unsigned(d.dynSmem), stream_, params,
                                          nullptr));
  }
  Status gemm(const GemmDesc &desc, const GemmOperands &ops,
              const std::string &where) override;
  Status gemmSupported(const GemmDesc &desc, const GemmOperands &ops, const std::string &where,
                       bool &supported, std::string &why) override;
  Status synchronize(const std::string &where) override {
    XLNETC_CU_RETURN_IF_ERROR(drv_, where, cuStreamSynchronize(side_));
    return XLNETC_CU_CHECK(drv_, where, cuStreamSynchronize(stream_));
  }

  // The side stream: one event per direction. A wait reads the event's
  // latest record when it is enqueued, so re-recording it later is safe.
  Status sideWaitsForMain(const std::string &where) override {
    XLNETC_CU_RETURN_IF_ERROR(drv_, where, cuEventRecord(mainDone_, stream_));
    return XLNETC_CU_CHECK(drv_, where, cuStreamWaitEvent(side_, mainDone_, 0));
  }
  Status mainWaitsForSide(const std::string &where) override {
    XLNETC_CU_RETURN_IF_ERROR(drv_, where, cuEventRecord(sideDone_, side_));
    return XLNETC_CU_CHECK(drv_, where, cuStreamWaitEvent(stream_, sideDone_, 0));
  }
  void *nativeSideStream() override { return side_; }
  Status hostWorkOnSide(std::function<Status()>, const std::string &where) override {
    return Status::error(where + ": the CUDA device runs no host work on its side stream "
                                 "(a GPU's host functions may not call CUDA; the "
                                 "data-parallel all-reduce there is NCCL's)");
  }

  Status beginCapture(const std::string &where) override {
    return XLNETC_CU_CHECK(drv_, where + ": capturing the step's graph",
                           cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
  }
  Status endCapture(std::unique_ptr<Graph> &out, const std::string &where) override {
    out.reset();
    CUgraph graph = nullptr;
    XLNETC_CU_RETURN_IF_ERROR(drv_, where + ": ending the step's graph capture",
                              cuStreamEndCapture(stream_, &graph));
    CUgraphExec exec = nullptr;
    if (Status st = XLNETC_CU_CHECK(drv_, where + ": instantiating the step's graph",
                                    cuGraphInstantiateWithFlags(&exec, graph, 0));
        !st) {
      drv_.cuGraphDestroy(graph);
      return st;
    }
    out = std::make_unique<CudaGraph>(drv_, graph, exec);
    return Status::ok();
  }
  Status launchGraph(Graph &graph, const std::string &where) override {
    return XLNETC_CU_CHECK(drv_, where + ": launching the step's graph",
                           cuGraphLaunch(static_cast<CudaGraph &>(graph).exec(), stream_));
  }

private:
  const Driver &drv_;
  DeviceInfo info_;
  /// Loads cuBLASLt, creates the handle and the workspace (once).
  Status ensureCublas(const std::string &where);
  /// The cuBLASLt descriptors of `d` on `p` (what every call builds).
  Status describeCall(const GemmDesc &d, const GemmPointers &p, const std::string &at,
                      LtCall &call);
  /// The algorithm for `d` on `p` (described by `call`): chosen at the first
  /// ask per descriptor and operand alignment and kept, like a "none"
  /// answer, in which case `algo` is null and `why` says so.
  Status algorithmFor(const GemmDesc &d, const GemmPointers &p, LtCall &call,
                      const std::string &at, const cublasLtMatmulAlgo_t *&algo,
                      std::string &why);
  /// cuBLASLt's first algorithm for `call` with operands aligned to
  /// `align` (A, B, C, D bytes); `found` false when it has none.
  Status chooseAlgorithm(LtCall &call, const uint32_t align[4], const std::string &at,
                         bool &found, cublasLtMatmulHeuristicResult_t &out);

  KernelCache cache_;
  CUstream stream_ = nullptr;
  /// The side stream and the events ordering it against the step's.
  CUstream side_ = nullptr;
  CUevent mainDone_ = nullptr, sideDone_ = nullptr;
  const CublasLt *lt_ = nullptr;
  cublasLtHandle_t ltHandle_ = nullptr;
  CUdeviceptr workspace_ = 0;
  /// What chooseAlgorithm found for each descriptor and alignment: an
  /// algorithm, or none (and why not).
  struct Chosen {
    bool found = false;
    cublasLtMatmulAlgo_t algo{};
    std::string why;
  };
  std::map<std::string, Chosen> algorithms_;
};

/// cuBLASLt's workspace: 32 MiB, what NVIDIA recommends for Hopper.
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

Status CudaDevice::ensureCublas(const std::string &where) {
  if (ltHandle_)
    return Status::ok();
  // The workspace first: the handle says the setup is complete.
  XLNETC_RETURN_IF_ERROR(loadCublasLt(lt_));
  if (!workspace_)
    XLNETC_CU_RETURN_IF_ERROR(drv_, "cuBLASLt workspace",
                              cuMemAlloc(&workspace_, kCublasWorkspaceBytes));
  cublasLtHandle_t handle = nullptr;
  XLNETC_CUBLAS_RETURN_IF_ERROR(*lt_, where, cublasLtCreate(&handle));
  ltHandle_ = handle;
  return Status::ok();
}

namespace {

/// Owns the cuBLASLt descriptors of one call.
struct LtCall {
  const CublasLt &lt;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  explicit LtCall(const CublasLt &lt) : lt(lt) {}
  ~LtCall() {
    if (pref)
      lt.cublasLtMatmulPreferenceDestroy(pref);
    for (cublasLtMatrixLayout_t l : {a, b, c})
      if (l)
        lt.cublasLtMatrixLayoutDestroy(l);
    if (op)
      lt.cublasLtMatmulDescDestroy(op);
  }
};

cublasLtEpilogue_t ltEpilogue(GemmEpilogue e) {
  switch (e) {
  case GemmEpilogue::Default:
    return CUBLASLT_EPILOGUE_DEFAULT;
  case GemmEpilogue::Bias:
    return CUBLASLT_EPILOGUE_BIAS;
  case GemmEpilogue::ReluBias:
    return CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS; // RELU_BIAS
  case GemmEpilogue::GeluBias:
    return CUBLASLT_EPILOGUE_GELU_BIAS;
  case GemmEpilogue::GeluAuxBias:
    return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
  case GemmEpilogue::DGeluBGrad:
    return CUBLASLT_EPILOGUE_DGELU_BGRAD;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

/// The alignment cuBLASLt may assume of an operand: the largest power of
/// two up to 256 bytes that divides its address and, when batched, its
/// batch stride in bytes (every entry's address).
uint32_t operandAlignment(const void *ptr, int64_t stride, GemmType type, int64_t batch) {
  uint64_t bits = reinterpret_cast<uint64_t>(ptr) | 256;
  if (batch > 1 && stride != 0)
    bits |= uint64_t(stride) * uint64_t(gemmTypeSize(type));
  return uint32_t(bits & (~bits + 1)); // the lowest set bit
}

} // namespace

Status CudaDevice::chooseAlgorithm(LtCall &call, const uint32_t align[4],
                                   const std::string &at, bool &found,
                                   cublasLtMatmulHeuristicResult_t &out) {
  const CublasLt &lt = *lt_;
  XLNETC_CUBLAS_RETURN_IF_ERROR(lt, at, cublasLtMatmulPreferenceCreate(&call.pref));
  auto pref = [&](cublasLtMatmulPreferenceAttributes_t attr, const void *v, size_t n) {
    return XLNETC_CUBLAS_CHECK(lt, at,
                               cublasLtMatmulPreferenceSetAttribute(call.pref, attr, v, n));
  };
  size_t ws = kCublasWorkspaceBytes;
  XLNETC_RETURN_IF_ERROR(pref(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // What the operands' addresses allow (the default, 256, would pick
  // algorithms that fail on an operand inside the arena).
  const cublasLtMatmulPreferenceAttributes_t alignAttr[4] = {
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
      CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
  for (int i = 0; i < 4; ++i)
    XLNETC_RETURN_IF_ERROR(pref(alignAttr[i], &align[i], sizeof(align[i])));
  // No split-K reduction schemes (CUBLASLT_REDUCTION_SCHEME_NONE = 0) first:
  // a step must be bitwise reproducible. Where none exists, the default
  // mask (every scheme; cuBLASLt keeps their order fixed through counters
  // in the workspace) with one warning.
  for (uint32_t mask : {0u, 7u}) {
    XLNETC_RETURN_IF_ERROR(pref(CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)));
    // The heuristic answers a configuration it has nothing for (an
    // epilogue this GPU, type or alignment lacks) with NOT_SUPPORTED or
    // with no result: both are "none".
    int count = 0;
    const cublasStatus_t st =
        lt.cublasLtMatmulAlgoGetHeuristic(ltHandle_, call.op, call.a, call.b, call.c, call.c,
                                          call.pref, 1, &out, &count);
    if (st != CUBLAS_STATUS_NOT_SUPPORTED)
      XLNETC_RETURN_IF_ERROR(checkCublas(lt, st, "cublasLtMatmulAlgoGetHeuristic", at,
                                         __FILE__, __LINE__));
    if (st == CUBLAS_STATUS_SUCCESS && count > 0) {
      if (mask != 0)
        std::cerr << "xlnetc: warning: cuBLASLt has no algorithm without split-K reduction "
                     "for "
                  << at << "; using one with it\n";
      found = true;
      return Status::ok();
    }
  }
  found = false;
  return Status::ok();
}

Status CudaDevice::describeCall(const GemmDesc &d, const GemmPointers &p,
                                const std::string &at, LtCall &call) {
  const CublasLt &lt = *lt_;
  XLNETC_CUBLAS_RETURN_IF_ERROR(
      lt, at, cublasLtMatmulDescCreate(&call.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  auto setOp = [&](cublasLtMatmulDescAttributes_t attr, const void *v,
                   size_t n) {
    return XLNETC_CUBLAS_CHECK(lt, at,
                               cublasLtMatmulDescSetAttribute(call.op, attr, v, n));
  };
  cublasOperation_t ta = d.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = d.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epi = ltEpilogue(d.epilogue);
  XLNETC_RETURN_IF_ERROR(setOp(CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  XLNETC_RETURN_IF_ERROR(setOp(CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  XLNETC_RETURN_IF_ERROR(setOp(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)));
  // The bias (or bias gradient) has D's type, cuBLASLt's default.
  if (d.epilogue != GemmEpilogue::Default)
    XLNETC_RETURN_IF_ERROR(
        setOp(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &p.bias, sizeof(p.bias)));
  if (p.aux) {
    int64_t auxLd = d.ldc;
    XLNETC_RETURN_IF_ERROR(
        setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &p.aux, sizeof(p.aux)));
    XLNETC_RETURN_IF_ERROR(
        setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &auxLd, sizeof(auxLd)));
    // Batched, each entry's aux lies where its D does (default 0: every
    // entry on the same matrix, which cuBLASLt refuses as overlapping
    // outputs; seen on an H200, 2026-11-27).
    if (d.batch > 1) {
      int64_t auxStride = d.strideC;
      XLNETC_RETURN_IF_ERROR(setOp(CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, &auxStride,
                                   sizeof(auxStride)));
    }
  }
  // Column-major layouts; batched through the strided-batch attributes.
  auto layout = [&](cublasLtMatrixLayout_t &l, GemmType type, int64_t rows, int64_t cols,
                    int64_t ld, int64_t stride) -> Status {
    cudaDataType_t t = type == GemmType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
    XLNETC_CUBLAS_RETURN_IF_ERROR(lt, at, cublasLtMatrixLayoutCreate(&l, t, rows, cols, ld));
    if (d.batch > 1) {
      int32_t count = int32_t(d.batch);
      XLNETC_CUBLAS_RETURN_IF_ERROR(
          lt, at,
          cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                           &count, sizeof(count)));
      XLNETC_CUBLAS_RETURN_IF_ERROR(
          lt, at,
          cublasLtMatrixLayoutSetAttribute(
              l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
              sizeof(stride)));
    }
    return Status::ok();
  };
  XLNETC_RETURN_IF_ERROR(layout(call.a, d.ab, d.transA ? d.k : d.m,
                                d.transA ? d.m : d.k, d.lda, d.strideA));
  XLNETC_RETURN_IF_ERROR(layout(call.b, d.ab, d.transB ? d.n : d.k,
                                d.transB ? d.k : d.n, d.ldb, d.strideB));
  return layout(call.c, d.cd, d.m, d.n, d.ldc, d.strideC);
}

Status CudaDevice::algorithmFor(const GemmDesc &d, const GemmPointers &p, LtCall &call,
                                const std::string &at, const cublasLtMatmulAlgo_t *&algo,
                                std::string &why) {
  // Chosen once per descriptor and operand alignment: when the executor
  // prepares the program (gemmSupported), else at the first call (the
  // executor's first step runs outside a graph).
  const uint32_t align[4] = {operandAlignment(p.a, d.strideA, d.ab, d.batch),
                             operandAlignment(p.b, d.strideB, d.ab, d.batch),
                             operandAlignment(d.beta != 0.0f ? p.c : p.d, d.strideC, d.cd,
                                              d.batch),
                             operandAlignment(p.d, d.strideC, d.cd, d.batch)};
  const std::string key = fmt::format("{} lda={} ldb={} ldc={} sA={} sB={} sC={} beta={} "
                                      "ab={} cd={} align={},{},{},{}",
                                      describeGemm(d), d.lda, d.ldb, d.ldc, d.strideA,
                                      d.strideB, d.strideC, d.beta != 0.0f, int(d.ab),
                                      int(d.cd), align[0], align[1], align[2], align[3]);
  auto chosen = algorithms_.find(key);
  if (chosen == algorithms_.end()) {
    Chosen c;
    cublasLtMatmulHeuristicResult_t heuristic{};
    XLNETC_RETURN_IF_ERROR(chooseAlgorithm(call, align, at, c.found, heuristic));
    if (c.found)
      c.algo = heuristic.algo;
    else
      c.why = fmt::format("cuBLASLt has no algorithm for it (operand alignments {}, {}, {}, "
                          "{} bytes; with and without split-K reduction)",
                          align[0], align[1], align[2], align[3]);
    chosen = algorithms_.emplace(key, std::move(c)).first;
  }
  algo = chosen->second.found ? &chosen->second.algo : nullptr;
  why = chosen->second.why;
  return Status::ok();
}

Status CudaDevice::gemmSupported(const GemmDesc &d, const GemmOperands &ops,
                                 const std::string &where, bool &supported, std::string &why) {
  std::string at = (where.empty() ? "" : where + ", ") + describeGemm(d);
  GemmPointers p = gemmPointers(ops);
  XLNETC_RETURN_IF_ERROR(validateGemm(d, p));
  bool fault = false;
  XLNETC_RETURN_IF_ERROR(gemmEpilogueFault(fault).withPrefix(at + ": "));
  if (fault && d.epilogue != GemmEpilogue::Default) {
    supported = false;
    why = "XLNETC_FAULT_GEMM_EPILOGUE=unsupported (a test hook)";
    return Status::ok();
  }
  XLNETC_RETURN_IF_ERROR(ensureCublas(at));
  LtCall call(*lt_);
  XLNETC_RETURN_IF_ERROR(describeCall(d, p, at, call));
  const cublasLtMatmulAlgo_t *algo = nullptr;
  XLNETC_RETURN_IF_ERROR(algorithmFor(d, p, call, at, algo, why));
  supported = algo != nullptr;
  return Status::ok();
}

Status CudaDevice::gemm(const GemmDesc &d, const GemmOperands &ops,
                        const std::string &where) {
  std::string at = (where.empty() ? "" : where + ", ") + describeGemm(d);
  GemmPointers p = gemmPointers(ops);
  XLNETC_RETURN_IF_ERROR(validateGemm(d, p));
  XLNETC_RETURN_IF_ERROR(ensureCublas(at));
  const CublasLt &lt = *lt_;
  // The descriptors are built per call for now; the executor will build them
  // once per plan step (design/cuda.md §4: fixed before graph capture).
  LtCall call(lt);
  XLNETC_RETURN_IF_ERROR(describeCall(d, p, at, call));
  const cublasLtMatmulAlgo_t *algo = nullptr;
  std::string why;
  XLNETC_RETURN_IF_ERROR(algorithmFor(d, p, call, at, algo, why));
  if (!algo)
    return Status::error(fmt::format("{}: {}", at, why));
  const void *c = d.beta != 0.0f ? p.c : p.d;
  return XLNETC_CUBLAS_CHECK(
      lt, at,
      cublasLtMatmul(ltHandle_, call.op, &d.alpha, p.a, call.a, p.b, call.b,
                     &d.beta, c, call.c, p.d, call.c, algo,
                     reinterpret_cast<void *>(workspace_), kCublasWorkspaceBytes,
                     stream_));
}

} // namespace

Status createCudaDevice(const DeviceOptions &options,
                        std::unique_ptr<Device> &out) {
  const Driver *drv = nullptr;
  XLNETC_RETURN_IF_ERROR(loadDriver(drv));
  // Kernels are NVRTC-compiled CUBINs: NVRTC must load, and the driver must
  // be new enough to load what it writes.
  const Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(loadNvrtc(nvrtc));
  XLNETC_RETURN_IF_ERROR(
      checkDriverForNvrtc(drv->version, nvrtc->major, nvrtc->minor));
  int ordinal = options.ordinal;
  if (options.localRank >= 0)
    XLNETC_RETURN_IF_ERROR(processGpu(*drv, options.localRank, ordinal));
  DeviceInfo info;
  XLNETC_RETURN_IF_ERROR(openDevice(*drv, ordinal, info));
  auto dev = std::make_unique<CudaDevice>(*drv, std::move(info), options);
  XLNETC_RETURN_IF_ERROR(dev->init());
  out = std::move(dev);
  return Status::ok();
}

bool cudaDeviceAvailable(std::string *why) {
  // Cached: auto may ask more than once, and cuInit is not free.
  static const std::pair<bool, std::string> answer = [] {
    const Driver *drv = nullptr;
    Status st = loadDriver(drv);
    int count = 0;
    if (st)
      st = XLNETC_CU_CHECK(*drv, "", cuInit(0));
    if (st)
      st = XLNETC_CU_CHECK(*drv, "", cuDeviceGetCount(&count));
    if (st && count == 0)
      st = Status::error(
          "CUDA driver found but no GPU: cuDeviceGetCount returned 0");
    return std::make_pair(st.isOk(), st.message());
  }();
  if (!answer.first && why)
    *why = answer.second;
  return answer.first;
}

} // namespace xlnetc::rt::dev
