//===- Compiler.cpp - spec to IR or plan ----------------------------------===//

#include "xlnetc/Driver/Compiler.h"

#include "passes/Passes.h"
#include "target/cuda/CudaEmitter.h"
#include "passes/Target/Plan/PlanEmitter.h"
#include "xlnetc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

using namespace mlir;

namespace xlnetc {

std::optional<Emit> parseEmit(const std::string &name) {
  if (name == "mlir")
    return Emit::Mlir;
  if (name == "decomposed")
    return Emit::Decomposed;
  if (name == "kernels")
    return Emit::Kernels;
  if (name == "grads")
    return Emit::Grads;
  if (name == "train")
    return Emit::Train;
  if (name == "fused")
    return Emit::Fused;
  if (name == "plan")
    return Emit::Plan;
  if (name == "cuda")
    return Emit::Cuda;
  if (name == "memory")
    return Emit::Memory;
  return std::nullopt;
}

static xlnet::Stage stageFor(const CompileOptions &options) {
  switch (options.emit) {
  case Emit::Mlir:
    return xlnet::Stage::Model;
  case Emit::Decomposed:
    return xlnet::Stage::Decomposed;
  case Emit::Kernels:
    return xlnet::Stage::Kernels;
  case Emit::Grads:
    return xlnet::Stage::Differentiated;
  case Emit::Train:
    return xlnet::Stage::Optimized;
  case Emit::Fused:
  case Emit::Plan:
  case Emit::Cuda:
  case Emit::Memory:
    break;
  }
  switch (options.step) {
  case StepKind::Forward:
    return xlnet::Stage::Kernels;
  case StepKind::Grads:
    return xlnet::Stage::Differentiated;
  case StepKind::Train:
    return xlnet::Stage::Optimized;
  }
  return xlnet::Stage::Kernels;
}

/// The optimizer pass options from the spec's [train] section.
static xlnet::ApplyOptimizerPassOptions optimizerOptions(const ModelSpec &spec) {
  xlnet::ApplyOptimizerPassOptions o;
  o.learningRate = spec.learningRate;
  o.warmupSteps = spec.warmupSteps;
  o.trainSteps = std::max<int64_t>(spec.trainSteps, 1);
  o.minLrRatio = spec.minLrRatio;
  o.decay = spec.decayMethod;
  o.adamEpsilon = spec.adamEpsilon;
  o.weightDecay = spec.weightDecay;
  o.clip = spec.clip;
  return o;
}

bool compileStep(const ModelSpec &spec, const StepShape &shape,
                 const CompileOptions &options, std::string &out,
                 std::string &error) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext ctx(registry);
  // Collect diagnostics as "loc: error: message" lines.
  llvm::raw_string_ostream errors(error);
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    errors << diag.getLocation() << ": "
           << (diag.getSeverity() == DiagnosticSeverity::Error ? "error: " : "note: ")
           << diag << "\n";
    for (Diagnostic &note : diag.getNotes())
      errors << note.getLocation() << ": note: " << note << "\n";
    return success();
  });

  OwningOpRef<ModuleOp> module = buildForwardModule(ctx, spec, shape);
  if (failed(verify(*module))) {
    errors << "internal error: the module built from " << spec.sourcePath
           << " does not verify\n";
    return false;
  }

  PassManager pm(&ctx);
  if (options.printIrAfterAll) {
    ctx.disableMultithreading();
    std::function<bool(Pass *, Operation *)> never = [](Pass *, Operation *) {
      return false;
    };
    std::function<bool(Pass *, Operation *)> always = [](Pass *, Operation *) {
      return true;
    };
    // After every pass, also one that changed nothing (as mlir-opt's
    // --mlir-print-ir-after-all; MLIR's default prints only on change).
    pm.enableIRPrinting(/*shouldPrintBeforePass=*/never,
                        /*shouldPrintAfterPass=*/always, /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false);
  }
  // Every plan is made from the fused IR (--emit=fused prints it), with
  // the limits of the strictest executor a bundle may run on, the CUDA one
  // (FuseKernelsPassOptions' defaults): the host runs every fused form.
  const bool planned = options.emit == Emit::Plan || options.emit == Emit::Cuda ||
                       options.emit == Emit::Memory;
  const xlnet::FuseKernelsPassOptions fuse;
  xlnet::buildLoweringPipeline(pm, stageFor(options), optimizerOptions(spec),
                               shape.precision == Precision::BF16,
                               planned || options.emit == Emit::Fused ? &fuse : nullptr,
                               shape.accumulate);
  if (failed(pm.run(*module)))
    return false;

  llvm::raw_string_ostream os(out);
  if (!planned) {
    module->print(os);
    os << "\n"; // as mlir-opt prints it
    return true;
  }
  auto func = module->lookupSymbol<func::FuncOp>("forward");
  if (options.emit == Emit::Plan)
    return succeeded(xlnet::emitPlan(func, os));

  // --emit=cuda and --emit=memory: the plan, then its device program's
  // source or memory plan.
  std::string planText;
  llvm::raw_string_ostream planOs(planText);
  if (failed(xlnet::emitPlan(func, planOs)))
    return false;
  rt::Plan plan;
  rt::DeviceProgram program;
  if (rt::Status st = rt::parsePlan(planText, plan); !st) {
    errors << "internal error: the compiled plan does not parse: "
           << st.message() << "\n";
    return false;
  }
  if (rt::Status st = cuda::emitDeviceProgram(
          plan, deviceEmitOptions(spec, options.step, options.target), program);
      !st) {
    errors << "error: " << st.message() << "\n";
    return false;
  }
  if (options.emit == Emit::Cuda) {
    os << program.source;
    return true;
  }
  const char *stepName = stepKindName(options.step);
  os << fmt::format("{} step of {}: batch {}, seq {}, mem {}, num_predict {}, {}; "
                    "{} plan steps, {} temporaries\n",
                    stepName, spec.sourcePath, shape.batch, shape.seqLen, shape.mlen,
                    shape.numPredict, precisionName(shape.precision), plan.steps.size(),
                    std::count_if(plan.buffers.begin(), plan.buffers.end(),
                                  [](const rt::Buffer &b) { return b.role == rt::Buffer::Temp; }))
     << rt::formatMemoryPlan(program.memory, shape.batch);
  if (shape.accumulate && options.processRows > shape.batch) {
    // Every micro-batch's memory waits beside the step between its runs.
    const int64_t aside = memoryBytesOfRows(spec, options.processRows);
    const int64_t total = program.memory.totalBytes() + aside;
    os << fmt::format("gradient accumulation: {} micro-batches of {} rows ({} rows a step)\n",
                      options.processRows / shape.batch, shape.batch, options.processRows)
       << fmt::format("{:<44} {:>16} {:>12.2f}\n", "memory of every micro-batch, set aside",
                      aside, double(aside) / 1048576.0)
       << fmt::format("{:<44} {:>16} {:>12.2f}\n", "total with accumulation", total,
                      double(total) / 1048576.0)
       << fmt::format("(train --micro-memory host keeps the memory set aside in host RAM: "
                      "then the device holds the step's {:.2f} MiB)\n",
                      double(program.memory.totalBytes()) / 1048576.0);
  }
  return true;
}

cuda::CudaEmitOptions deviceEmitOptions(const ModelSpec &spec, StepKind step,
                                        const rt::dev::GpuTarget &target) {
  cuda::CudaEmitOptions o;
  o.target = target;
  const char *name = stepKindName(step);
  std::string base = spec.sourcePath;
  if (size_t slash = base.find_last_of('/'); slash != std::string::npos)
    base = base.substr(slash + 1);
  o.moduleName = fmt::format("{}.{}.cu", base.empty() ? "xlnet" : base, name);
  o.origin = fmt::format("{}, step {}", base, name);
  return o;
}

} // namespace xlnetc
