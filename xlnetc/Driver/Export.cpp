//===- Export.cpp - xlnetc export: a HuggingFace model directory ----------===//

#include "xlnetc/Driver/Export.h"

#include "runtime/io/Safetensors.h"
#include "runtime/train/WeightsSource.h"
#include "xlnetc/Driver/RunStep.h"
#include "xlnetc/Driver/Weights.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <filesystem>
#include <iostream>

namespace xlnetc {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

namespace {

/// transformers' name of the activation: "gelu" is its erf GELU,
/// "gelu_new" the tanh approximation (official XLNet's "gelu").
const char *hfActivation(Activation a) {
  switch (a) {
  case Activation::Relu:
    return "relu";
  case Activation::GeluTanh:
    return "gelu_new";
  case Activation::GeluErf:
    return "gelu";
  }
  return "gelu_new";
}

} // namespace

std::string hfConfigJson(const ModelSpec &spec) {
  ordered_json c;
  c["architectures"] = {"XLNetLMHeadModel"};
  c["model_type"] = "xlnet";
  c["vocab_size"] = spec.nToken;
  c["d_model"] = spec.dModel;
  c["n_layer"] = spec.nLayer;
  c["n_head"] = spec.nHead;
  c["d_head"] = spec.dHead;
  c["d_inner"] = spec.dInner;
  c["ff_activation"] = hfActivation(spec.ffActivation);
  c["untie_r"] = spec.untieR;
  c["attn_type"] = spec.attnType;
  c["initializer_range"] = spec.initRange;
  c["layer_norm_eps"] = spec.layerNormEps;
  c["dropout"] = spec.dropout;
  // transformers has one dropout rate; xlnetc's reader takes dropatt back.
  c["dropatt"] = spec.dropatt;
  c["mem_len"] = spec.memLen;
  c["reuse_len"] = spec.reuseLen > 0 ? ordered_json(spec.reuseLen) : ordered_json(nullptr);
  // Inference use: one direction (bi_data is a pretraining input pipeline).
  c["bi_data"] = false;
  c["clamp_len"] = spec.clampLen;
  c["same_length"] = spec.sameLength;
  c["use_mems_eval"] = true;
  c["use_mems_train"] = false;
  c["summary_type"] = "last";
  c["summary_use_proj"] = true;
  c["summary_activation"] = "tanh";
  c["summary_last_dropout"] = 0.1;
  c["start_n_top"] = 5;
  c["end_n_top"] = 5;
  c["bos_token_id"] = 1;
  c["eos_token_id"] = 2;
  c["pad_token_id"] = 5;
  c["torch_dtype"] = "float32";
  return c.dump(2) + "\n";
}

std::string hfTokenizerConfigJson(const ModelSpec &spec) {
  ordered_json t;
  t["tokenizer_class"] = "XLNetTokenizer";
  t["do_lower_case"] = false;
  t["remove_space"] = true;
  t["keep_accents"] = spec.keepAccents;
  t["bos_token"] = "<s>";
  t["eos_token"] = "</s>";
  t["unk_token"] = "<unk>";
  t["sep_token"] = "<sep>";
  t["pad_token"] = "<pad>";
  t["cls_token"] = "<cls>";
  t["mask_token"] = "<mask>";
  t["additional_special_tokens"] = {"<eop>", "<eod>"};
  t["padding_side"] = "left";
  t["model_max_length"] = 1000000000000000019LL;
  return t.dump(2) + "\n";
}

int runExport(const ExportArgs &args) {
  std::error_code ec;
  // 1. What to export: a run directory, or weights with --spec.
  ModelSource source;
  std::string error;
  if (!resolveModelSource(args.source, args.spec, args.tokenizer, "export", source, error))
    return fail(error);
  const std::string &weights = source.weights;
  std::string tokenizer = source.tokenizer;
  ModelSpec spec;
  if (!loadSpec(source.spec, spec, error))
    return failDiagnostics(error);

  // 2. The output directory: new, or empty; written beside it, then moved
  //    into place, so a failure leaves nothing half-written.
  const fs::path out(args.outDir);
  if (fs::exists(out) && !(fs::is_directory(out) && fs::is_empty(out)))
    return fail(fmt::format("{} exists and is not an empty directory; export writes a new "
                            "one and replaces nothing",
                            args.outDir));

  rt::TensorMap params;
  if (!loadModelWeights(spec, specParamShapes(spec), weights, "export", params, error))
    return fail(error);
  // transformers ties lm_loss.weight to the embedding; the file carries it
  // too, so no loader version reports it missing.
  params["lm_loss.weight"] = params.at("transformer.word_embedding.weight");

  const fs::path tmp = fs::path(out.string() + fmt::format(".tmp.{}", ::getpid()));
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec)
    return fail(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  auto abandon = [&](const std::string &message) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return fail(message);
  };
  if (rt::Status st = rt::writeSafetensors((tmp / "model.safetensors").string(), params,
                                           {{"format", "pt"}});
      !st)
    return abandon(st.message());
  if (!writeText((tmp / "config.json").string(), hfConfigJson(spec), error))
    return abandon(error);
  if (!tokenizer.empty()) {
    if (!fs::copy_file(tokenizer, tmp / "spiece.model", ec)) {
      // copy_file reports a full disk as an I/O error: say what it is.
      std::error_code ignored;
      const auto free = fs::space(tmp, ignored).available;
      const auto need = fs::file_size(tokenizer, ignored);
      return abandon(free < need ? fmt::format("cannot copy {} into {}: no space left on the "
                                               "device ({} bytes free, {} needed)",
                                               tokenizer, args.outDir, free, need)
                                 : fmt::format("cannot copy {}: {}", tokenizer, ec.message()));
    }
    if (!writeText((tmp / "tokenizer_config.json").string(), hfTokenizerConfigJson(spec), error))
      return abandon(error);
  }
  if (fs::exists(out))
    fs::remove(out, ec); // the empty directory checked above
  fs::rename(tmp, out, ec);
  if (ec)
    return abandon(fmt::format("cannot move the export into {}: {}", args.outDir, ec.message()));

  int64_t count = 0;
  for (const auto &[name, t] : params)
    count += name == "lm_loss.weight" ? 0 : t.numel();
  std::cout << fmt::format("exported {} ({} parameters, {:.1f} MiB) to {}: config.json, "
                           "model.safetensors{}\n",
                           weights, count, double(count) * 4 / (1024.0 * 1024.0),
                           args.outDir,
                           tokenizer.empty() ? "" : ", spiece.model, tokenizer_config.json");
  if (tokenizer.empty())
    std::cerr << "xlnetc: warning: no spiece.model (pass --tokenizer): the export has no "
                 "tokenizer\n";
  return 0;
}

} // namespace xlnetc
