//===- RunStep.cpp - One step from a spec (or a bundle) and a batch -------===//

#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/MemoryFit.h"
#include "xlnetc/Driver/Weights.h"

#include "xlnetc/Driver/Synthetic.h"

#include "runtime/train/StateNames.h"
#include "runtime/train/Trainer.h"

#include "runtime/exec/Executor.h"
#include "runtime/plan/Plan.h"
#include "runtime/io/Safetensors.h"
#include "runtime/data/Batch.h"

#include <fmt/core.h>

#include <chrono>
#include <iostream>

namespace xlnetc {

//===----------------------------------------------------------------------===//
// run-step
//===----------------------------------------------------------------------===//

/// Step shape from a batch file: B and S from input_k, NP from
/// target_mapping, M from mems.0 (absent: no memory), reuse_len from the
/// metadata when present.
bool shapeFromBatch(const rt::TensorMap &batch,
                           const std::map<std::string, std::string> &meta,
                           const std::string &path, StepShape &shape,
                           std::string &error) {
  auto need = [&](const char *name, size_t rank) -> const rt::Tensor * {
    auto it = batch.find(name);
    if (it == batch.end()) {
      error = fmt::format("{}: missing tensor '{}'", path, name);
      return nullptr;
    }
    if (it->second.shape.size() != rank) {
      error = fmt::format("{}: tensor '{}' must have rank {}, got shape {}", path,
                          name, rank, rt::shapeStr(it->second.shape));
      return nullptr;
    }
    return &it->second;
  };
  // The dense form's input_k and target_mapping, or the raw form's
  // raw.input with num_predict from the metadata or the spec.
  const bool raw = !batch.count("input_k") && batch.count("raw.input");
  const rt::Tensor *tokens = need(raw ? "raw.input" : "input_k", 2);
  if (!tokens)
    return false;
  shape.batch = tokens->shape[0];
  shape.seqLen = tokens->shape[1];
  if (batch.count("target_mapping")) {
    const rt::Tensor *mapping = need("target_mapping", 3);
    if (!mapping)
      return false;
    shape.numPredict = mapping->shape[1];
  } else if (auto np = meta.find("num_predict"); np != meta.end()) {
    try {
      shape.numPredict = std::stoll(np->second);
    } catch (...) {
      error = fmt::format("{}: metadata num_predict '{}' is not an integer", path, np->second);
      return false;
    }
  } else if (!raw) {
    error = fmt::format("{}: missing tensor 'target_mapping'", path);
    return false;
  } else if (shape.numPredict <= 0) {
    error = fmt::format("{}: a raw-form batch without target_mapping needs num_predict: in "
                        "its metadata or in the spec's [data] section",
                        path);
    return false;
  }
  shape.mlen = 0;
  if (auto it = batch.find(rt::train::names::mems(0)); it != batch.end()) {
    if (it->second.shape.size() != 3) {
      error = fmt::format("{}: tensor 'mems.0' must be [mlen, batch, d_model], got {}",
                          path, rt::shapeStr(it->second.shape));
      return false;
    }
    shape.mlen = it->second.shape[0];
  }
  if (auto it = meta.find("reuse_len"); it != meta.end()) {
    try {
      shape.reuseLen = std::stoll(it->second);
    } catch (...) {
      error = fmt::format("{}: metadata reuse_len '{}' is not an integer", path, it->second);
      return false;
    }
  }
  return true;
}

/// 1. The batch decides the step's shapes (`shape`); without one, the spec
///    does and a synthetic batch is built. Its perm_mask in the compact form
///    the step reads. 0 or the exit code.
static int prepareBatch(const RunStepArgs &args, const ModelSpec &spec,
                        const rt::Executor &executor, StepShape &shape, rt::TensorMap &batch) {
  shape = args.defaultShape ? *args.defaultShape : stepShapeFromSpec(spec);
  std::string error;
  if (!args.batch.empty()) {
    std::map<std::string, std::string> meta;
    if (rt::Status st = rt::readSafetensors(args.batch, batch, &meta); !st)
      return fail(st.message());
    // reuse_len: the batch's metadata when present, else the spec's.
    if (!shapeFromBatch(batch, meta, args.batch, shape, error))
      return fail(error);
  } else if (spec.fromHFConfig && !args.defaultShape) {
    return fail(args.model + ": a HuggingFace config.json has no batch shape; pass --batch");
  }
  if (!checkShape(spec, shape, args.batch.empty() ? args.model : args.batch, error))
    return fail(error);
  if (!applyPrecision(args.precision, executor, shape, error))
    return fail(error);
  if (!args.batch.empty() &&
      (args.fromRaw || (!batch.count("perm_mask") && !batch.count("perm_rank") &&
                        !batch.count("perm_bits")))) {
    // The raw form: build the masks and targets with our own pipeline.
    rt::TensorMap derived;
    int64_t reuseLen = shape.reuseLen > 0 ? shape.reuseLen : shape.seqLen;
    if (rt::Status st = rt::data::deriveBatchFromRaw(batch, reuseLen, shape.numPredict, derived);
        !st)
      return fail(args.batch + ": " + st.message());
    batch.erase("perm_bits"); // the derived perm_rank replaces any given mask
    for (auto &[name, tensor] : derived)
      batch[name] = std::move(tensor);
    std::cerr << "xlnetc: derived input_k, perm_mask, perm_rank, target_mapping, target, target_mask "
                 "from the raw.* tensors\n";
  }

  if (args.batch.empty()) {
    if (rt::Status st = syntheticBatch(spec, shape, args.seed, batch); !st)
      return fail("cannot build a synthetic batch: " + st.message());
    std::cerr << fmt::format("xlnetc: no --batch: synthetic batch (B={} S={} NP={} M={}, seed {})\n",
                             shape.batch, shape.seqLen, shape.numPredict, shape.mlen,
                             args.seed);
  }
  // The step reads a compact form of perm_mask (docs/DataPipeline.md): the
  // ranks, or the packed bits of a mask without them.
  rt::data::PermMaskForm maskForm;
  int64_t withoutRanks = -1;
  if (rt::Status st = rt::data::compactPermMask(batch, maskForm, &withoutRanks); !st)
    return fail((args.batch.empty() ? std::string("synthetic batch") : args.batch) + ": " +
                st.message());
  shape.permBits = maskForm == rt::data::PermMaskForm::Bits;
  if (withoutRanks >= 0)
    std::cerr << fmt::format("xlnetc: perm_mask row b={} has no rank form (its rows' masked "
                             "keys are not nested): the step reads the mask bit-packed "
                             "(perm_bits)\n",
                             withoutRanks);
  return 0;
}

/// 3. The parameters (--weights, or the initialisation of a fresh run) and
///    the batch, bound by name. 0 or the exit code.
static int bindInputs(const RunStepArgs &args, const ModelSpec &spec, const rt::Plan &plan,
                      rt::TensorMap &batch, rt::TensorMap &bindings) {
  std::string error;
  if (!args.weights.empty()) {
    if (!loadModelWeights(spec, planParamShapes(plan), args.weights, "--weights", bindings,
                          error))
      return fail(error);
  } else {
    bindings = rt::train::initialParameters(plan, spec.initRange, args.seed);
    std::cerr << "xlnetc: no --weights: random init (normal, std " << spec.initRange
              << ", seed " << args.seed << ")\n";
  }
  if (!args.dumpBatch.empty()) {
    rt::TensorMap derived;
    for (const char *name : {"input_k", "seg_id", "perm_mask", "perm_rank", "perm_bits",
                             "target_mapping", "target", "target_mask"})
      if (auto it = batch.find(name); it != batch.end())
        derived[name] = it->second;
    if (rt::Status st = rt::writeSafetensors(args.dumpBatch, derived); !st)
      return fail(st.message());
    std::cerr << "xlnetc: wrote the batch tensors to " << args.dumpBatch << "\n";
  }
  for (auto &[name, tensor] : batch)
    bindings[name] = std::move(tensor);
  return 0;
}

int runRunStep(const RunStepArgs &args, const StepCompiler &compile) {
  ModelSpec spec;
  std::string error;
  if (!loadSpec(args.model, spec, error))
    return failDiagnostics(error);
  if (args.eval && args.trainMode)
    return fail("--eval and --train-mode exclude each other");
  // Evaluation mode: no dropout, as transformers' model.eval(). A bundle's
  // plan has its rates compiled in: it cannot switch.
  const bool eval = args.eval || (spec.fromHFConfig && !args.trainMode && !args.defaultShape);
  if (eval && (spec.dropout != 0 || spec.dropatt != 0)) {
    if (args.defaultShape)
      return fail(fmt::format("--eval: the bundle was compiled with dropout {} and dropatt {}; "
                              "compile one from a spec with both 0 for evaluation",
                              spec.dropout, spec.dropatt));
    std::cerr << fmt::format("xlnetc: evaluation mode: dropout {} and dropatt {} off{}\n",
                             spec.dropout, spec.dropatt,
                             args.eval ? "" : " (the default for a config.json model; "
                                              "--train-mode keeps them)");
    spec.dropout = spec.dropatt = 0;
  }
  // The device first: a missing GPU is reported before any work.
  rt::Executor executor;
  if (!openExecutor(args.device, args.noKernelCache, args.threads, executor, error))
    return fail(error);

  // 1. The batch decides the step's shapes; without one, the spec does.
  rt::TensorMap batch;
  StepShape shape;
  if (int rc = prepareBatch(args, spec, executor, shape, batch))
    return rc;

  // 2. Compile to a plan and hand it to the runtime as text.
  std::string planText;
  rt::Plan plan;
  if (!compile(spec, shape, args.grads ? StepKind::Grads : StepKind::Forward, plan,
               error, &planText, deviceTarget(executor)))
    return failDiagnostics(error);
  if (!args.dumpPlan.empty() && !writeText(args.dumpPlan, planText, error))
    return fail(error);
  // Before the parameters and inputs take any memory.
  if (!checkStepFits(spec, shape, args.grads ? StepKind::Grads : StepKind::Forward, plan,
                     executor, /*keepsCopy=*/false, args.memory, compile, error))
    return fail(error);

  // 3. Parameters and inputs.
  rt::TensorMap bindings;
  if (int rc = bindInputs(args, spec, plan, batch, bindings))
    return rc;

  // 4. Execute on the chosen device.
  rt::ExecOptions exec;
  exec.seed = args.seed;
  exec.threads = args.threads;
  rt::TensorMap outputs;
  auto start = std::chrono::steady_clock::now();
  if (rt::Status st = executor.execute(plan, bindings, outputs, exec); !st)
    return fail(st.message());
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start).count();

  const rt::Tensor &loss = outputs.at("loss");
  std::cout << fmt::format("loss = {:.6f}  ({} executor, {} steps, {:.1f} ms)\n",
                           loss.f32()[0], rt::dev::deviceKindName(executor.kind()),
                           plan.steps.size(), ms);
  if (!args.output.empty()) {
    if (rt::Status st = rt::writeSafetensors(args.output, outputs); !st)
      return fail(st.message());
    std::cout << "wrote " << outputs.size() << " tensors to " << args.output << "\n";
  }
  return 0;
}

} // namespace xlnetc
