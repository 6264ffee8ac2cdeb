//===- Bundle.cpp - Compiled bundles: a step a runtime can run alone ------===//

#include "xlnetc/Driver/Bundle.h"

#include "runtime/plan/DeviceProgramJson.h"
#include "runtime/io/InputFile.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"
#include "runtime/device/Nvrtc.h"
#include "runtime/device/Sha256.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace xlnetc {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char *kManifest = "manifest.json";
constexpr const char *kPlan = "plan.json";
constexpr const char *kProgram = "program.json";
constexpr const char *kSource = "kernels.cu";

rt::Status readFile(const fs::path &path, std::string &out) {
  return rt::readInputFile(path.string(), out);
}

rt::Status writeFile(const fs::path &path, const std::string &text) {
  std::ofstream os(path, std::ios::binary);
  if (!os || !(os << text) || !os.flush())
    return rt::Status::error(fmt::format("{}: cannot write", path.string()));
  return rt::Status::ok();
}

/// Whether a TOML spec's text sets hf_config (a file it reads beside it).
bool setsHfConfig(const std::string &toml) {
  std::istringstream in(toml);
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find_first_not_of(" \t");
    if (at == std::string::npos || line.compare(at, 9, "hf_config") != 0)
      continue;
    at = line.find_first_not_of(" \t", at + 9);
    if (at != std::string::npos && line[at] == '=')
      return true;
  }
  return false;
}

json shapeJson(const StepShape &s) {
  json j = {{"batch", s.batch},    {"seq_len", s.seqLen},     {"num_predict", s.numPredict},
            {"mlen", s.mlen},      {"reuse_len", s.reuseLen}, {"perm_mask", s.permBits ? "bits" : "ranks"}};
  if (s.accumulate) // a micro-batch of gradient accumulation
    j["accumulate"] = true;
  return j;
}

std::string shapeStr(StepKind step, const StepShape &s) {
  return fmt::format("the {} step for batch {}, seq_len {}, num_predict {}, mlen {}, "
                     "reuse_len {}, perm_mask {}, {}{}",
                     stepKindName(step), s.batch, s.seqLen, s.numPredict, s.mlen, s.reuseLen,
                     s.permBits ? "bits" : "ranks", precisionName(s.precision),
                     s.accumulate ? ", a micro-batch of gradient accumulation" : "");
}

/// The manifest of `dir` when it is an xlnetc bundle's, else null.
json readManifest(const fs::path &dir) {
  std::string text;
  if (!readFile(dir / kManifest, text))
    return nullptr;
  json m = json::parse(text, nullptr, false);
  if (!m.is_object() || !m.contains("format") || m["format"] != kBundleFormat)
    return nullptr;
  return m;
}

/// Whether `dir` holds a bundle and nothing else (the files its manifest
/// records): only then may a new bundle replace it.
bool isBundleOnly(const fs::path &dir) {
  json m = readManifest(dir);
  if (m.is_null() || !m.contains("sha256") || !m["sha256"].is_object())
    return false;
  std::error_code ec;
  for (const fs::directory_entry &e : fs::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name != kManifest && !m["sha256"].contains(name) &&
        !(name == "cubin" && m.contains("cubins")))
      return false;
  }
  return !ec;
}

} // namespace

rt::Status compileKernelCubins(const rt::DeviceProgram &program, const std::string &arch,
                               bool noCache, std::map<std::string, std::string> &out) {
  rt::KernelCache cache(rt::KernelCache::defaultDirectory(), !noCache);
  rt::NvrtcOptions opts;
  opts.arch = arch;
  auto start = std::chrono::steady_clock::now();
  std::vector<rt::CompiledCubin> cubins;
  size_t threads = 0;
  XLNETC_RETURN_IF_ERROR(rt::compileKernelsConcurrently(program.sourceHead,
                                                        program.kernelSources, opts, &cache,
                                                        cubins, &threads));
  size_t hits = 0;
  for (size_t i = 0; i < cubins.size(); ++i) {
    hits += cubins[i].fromCache ? 1 : 0;
    out[program.kernelSources[i].first] = std::move(cubins[i].cubin);
  }
  std::cout << fmt::format("compiled {} kernels for {} ahead of time in {:.1f} s ({} from the "
                           "kernel cache, {} thread{})\n",
                           cubins.size(), arch,
                           std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
                               .count(),
                           hits, threads, threads == 1 ? "" : "s");
  return rt::Status::ok();
}

namespace {

/// Phase 1 of writeBundle: where the bundle goes (`target`, in `parent`)
/// and a fresh staging directory beside it (`tmp`). Refuses a target that
/// exists and is anything but a bundle alone or an empty directory.
rt::Status stageBundle(const std::string &dir, fs::path &target, fs::path &parent,
                       fs::path &tmp) {
  target = fs::path(dir);
  if (!target.has_filename()) // "out/"
    target = target.parent_path();
  std::error_code ec;
  if (fs::exists(target, ec) &&
      (!fs::is_directory(target, ec) ||
       (!fs::is_empty(target, ec) && !isBundleOnly(target))))
    return rt::Status::error(fmt::format(
        "{} exists and is not an xlnetc bundle alone (a {} of format '{}' and only the "
        "files it records): not overwriting it",
        dir, kManifest, kBundleFormat));
  parent = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  if (!fs::is_directory(parent, ec))
    return rt::Status::error(fmt::format("{}: no such directory", parent.string()));
  tmp = parent / fmt::format(".{}.partial-{}", target.filename().string(), getpid());
  fs::remove_all(tmp, ec);
  if (!fs::create_directory(tmp, ec))
    return rt::Status::error(fmt::format("cannot create {}: {}", tmp.string(), ec.message()));
  return rt::Status::ok();
}

/// Phase 3 of writeBundle: the manifest recording the files' SHA-256
/// (`files`) and, when there are CUBINs, theirs (`cubinSums`).
json bundleManifest(const std::string &specPath, const std::string &specName,
                    const ModelSpec &spec, const StepShape &shape, StepKind step,
                    const rt::DeviceProgram &program, const json &files,
                    const std::string &cubinArch, const json &cubinSums) {
  int kernels = 0;
  for (const rt::DeviceStep &s : program.steps)
    for (const rt::DeviceLaunch &l : s.launches)
      kernels += l.kind == rt::DeviceLaunch::Kernel;
  json manifest = {{"format", kBundleFormat},
                   {"version", kBundleVersion},
                   {"spec", {{"file", specName}, {"from", specPath},
                             {"fingerprint", specFingerprint(spec, shape)}}},
                   {"step", stepKindName(step)},
                   {"shape", shapeJson(shape)},
                   {"precision", precisionName(shape.precision)},
                   {"plan", kPlan},
                   {"program", kProgram},
                   {"source", kSource},
                   {"plan_steps", program.steps.size()},
                   {"kernel_launches", kernels},
                   {"sha256", files}};
  if (!cubinSums.empty()) {
    std::string nvrtc;
    if (!rt::nvrtcVersionString(nvrtc))
      nvrtc = "unknown";
    manifest["cubins"] = {{"arch", cubinArch},
                          {"dir", "cubin/" + cubinArch},
                          {"nvrtc", nvrtc},
                          {"sha256", cubinSums}};
  }
  return manifest;
}

/// Phase 4 of writeBundle: the complete staging directory `tmp` becomes
/// `target`; the old bundle (or empty directory) goes only once it has.
rt::Status swapInBundle(const std::string &dir, const fs::path &tmp, const fs::path &target,
                        const fs::path &parent) {
  std::error_code ec;
  const fs::path old = parent / fmt::format(".{}.old-{}", target.filename().string(), getpid());
  bool hadOld = fs::exists(target, ec);
  if (hadOld) {
    fs::rename(target, old, ec);
    if (ec)
      return rt::Status::error(
          fmt::format("cannot move the old bundle {} aside: {}", dir, ec.message()));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    if (hadOld)
      fs::rename(old, target, ignored);
    return rt::Status::error(fmt::format("cannot create {}: {}", dir, ec.message()));
  }
  if (hadOld)
    fs::remove_all(old, ec);
  return rt::Status::ok();
}

} // namespace

rt::Status writeBundle(const std::string &dir, const std::string &specPath,
                       const ModelSpec &spec, const StepShape &shape, StepKind step,
                       const std::string &planText, const rt::DeviceProgram &program,
                       const std::string &cubinArch,
                       const std::map<std::string, std::string> &cubins) {
  // 1. A staging directory beside the target, removed on any failure.
  fs::path target, parent, tmp;
  XLNETC_RETURN_IF_ERROR(stageBundle(dir, target, parent, tmp));
  auto cleanup = [&](rt::Status st) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return st;
  };

  // 2. The files: the spec, the plan, the program, the source, the CUBINs.
  std::string specText;
  if (rt::Status st = readFile(specPath, specText); !st)
    return cleanup(st);
  const std::string specName = spec.fromHFConfig ? "config.json" : "spec.toml";
  // A bundle holds everything it reads: a spec that takes its [model] from
  // an hf_config file is written resolved (its model keys inline).
  if (!spec.fromHFConfig && setsHfConfig(specText))
    specText = writeSpecToml(spec, "the spec of " + specPath + ", its model keys written out");
  const std::string programText = rt::writeDeviceProgramJson(program);
  json files = json::object();
  for (auto [name, text] : {std::pair<std::string, const std::string *>{specName, &specText},
                            {kPlan, &planText},
                            {kProgram, &programText},
                            {kSource, &program.source}}) {
    if (rt::Status st = writeFile(tmp / name, *text); !st)
      return cleanup(st);
    files[name] = rt::Sha256::hexHash(*text);
  }
  json cubinSums = json::object();
  if (!cubins.empty()) {
    const fs::path cubinDir = tmp / "cubin" / cubinArch;
    std::error_code ec;
    fs::create_directories(cubinDir, ec);
    if (ec)
      return cleanup(rt::Status::error(
          fmt::format("cannot create {}: {}", cubinDir.string(), ec.message())));
    for (const auto &[name, image] : cubins) {
      if (rt::Status st = writeFile(cubinDir / (name + ".cubin"), image); !st)
        return cleanup(st);
      cubinSums[name] = rt::Sha256::hexHash(image);
    }
  }

  // 3. The manifest, last: a staging directory without one is no bundle.
  const json manifest = bundleManifest(specPath, specName, spec, shape, step, program, files,
                                       cubinArch, cubinSums);
  if (rt::Status st = writeFile(tmp / kManifest, manifest.dump(2) + "\n"); !st)
    return cleanup(st);

  // 4. Swap it in.
  if (rt::Status st = swapInBundle(dir, tmp, target, parent); !st)
    return cleanup(st);
  return rt::Status::ok();
}

namespace {

/// Reads a manifest's fields, naming each by its path ("spec.file") and the
/// type it should have when it is missing or of another type.
class ManifestReader {
public:
  explicit ManifestReader(std::string where) : where_(std::move(where)) {}

  /// Field `path` of `obj`: its name with its parents' before dots
  /// ("spec.file"), for messages; the last part is the key, so a key with a
  /// dot in it (a file name under "sha256") is not read this way.
  const json *field(const json &obj, const std::string &path) {
    const std::string key = path.substr(path.rfind('.') + 1);
    if (!obj.is_object() || !obj.contains(key)) {
      fail(fmt::format("has no '{}'", path));
      return nullptr;
    }
    return &obj[key];
  }
  const json *object(const json &obj, const std::string &path) {
    const json *v = field(obj, path);
    if (v && !v->is_object())
      return wrongType(path, "an object", *v), nullptr;
    return v;
  }
  std::string string(const json &obj, const std::string &path) {
    const json *v = field(obj, path);
    if (v && !v->is_string())
      return wrongType(path, "a string", *v), std::string();
    return v ? v->get<std::string>() : std::string();
  }
  int64_t integer(const json &obj, const std::string &path) {
    const json *v = field(obj, path);
    if (v && !v->is_number_integer())
      return wrongType(path, "an integer", *v), 0;
    return v ? v->get<int64_t>() : 0;
  }
  /// A file name the manifest gives: one plain name inside the bundle.
  std::string fileName(const json &obj, const std::string &path) {
    std::string name = string(obj, path);
    if (ok() && !rt::isPlainName(name))
      fail(fmt::format("'{}' is \"{}\", not a plain file name inside the bundle", path, name));
    return name;
  }

  void fail(const std::string &what) {
    if (error_.empty())
      error_ = fmt::format("{}: {}", where_, what);
  }
  bool ok() const { return error_.empty(); }
  rt::Status status() const { return ok() ? rt::Status::ok() : rt::Status::error(error_); }

private:
  void wrongType(const std::string &path, const char *want, const json &v) {
    fail(fmt::format("'{}' must be {}, not {}", path, want, v.type_name()));
  }
  std::string where_, error_;
};

} // namespace

namespace {

/// Phase 1 of readBundle: the manifest of the bundle in `rootDir`, parsed,
/// of this format and version.
rt::Status readManifest(const std::string &dir, const std::string &rootDir,
                        const std::string &where, json &m) {
  // Every file is read inside the bundle (a plain name, no link followed)
  // and only if it is a regular file.
  std::string text;
  XLNETC_RETURN_IF_ERROR(rt::readFileInside(rootDir, kManifest, text)
                             .withPrefix(fmt::format("{}: not a bundle: ", dir)));
  m = json::parse(text, nullptr, false);
  if (!m.is_object() || !m.contains("format") || m["format"] != kBundleFormat)
    return rt::Status::error(fmt::format("{}: not an xlnetc bundle manifest (format '{}')",
                                         where, kBundleFormat));
  if (!m.contains("version") || m["version"] != kBundleVersion)
    return rt::Status::error(fmt::format("{}: bundle version {} (this runtime reads {})", where,
                                         m.contains("version") ? m["version"].dump() : "none",
                                         kBundleVersion));
  return rt::Status::ok();
}

/// Phase 2 of readBundle: the step, its shape and precision, the spec's
/// file name and fingerprint.
rt::Status readHeader(ManifestReader &r, const json &m, const fs::path &root,
                      const std::string &where, Bundle &b, std::string &specFile) {
  const json *spec = r.object(m, "spec");
  const json *shape = r.object(m, "shape");
  if (!r.ok())
    return r.status();
  specFile = r.fileName(*spec, "spec.file");
  b.specPath = (root / specFile).string();
  b.fingerprint = r.string(*spec, "spec.fingerprint");
  const std::string step = r.string(m, "step");
  b.shape.batch = r.integer(*shape, "shape.batch");
  b.shape.seqLen = r.integer(*shape, "shape.seq_len");
  b.shape.numPredict = r.integer(*shape, "shape.num_predict");
  b.shape.mlen = r.integer(*shape, "shape.mlen");
  b.shape.reuseLen = r.integer(*shape, "shape.reuse_len");
  b.shape.permBits = r.string(*shape, "shape.perm_mask") == "bits";
  if (const auto it = shape->find("accumulate"); it != shape->end()) {
    if (!it->is_boolean())
      return rt::Status::error(fmt::format("{}: shape.accumulate must be true or false", where));
    b.shape.accumulate = it->get<bool>();
  }
  b.precision = r.string(m, "precision");
  if (!r.ok())
    return r.status();
  std::optional<StepKind> kind = parseStepKind(step);
  if (!kind)
    return rt::Status::error(fmt::format("{}: unknown step '{}'", where, step));
  b.step = *kind;
  if (std::optional<Precision> p = parsePrecision(b.precision))
    b.shape.precision = *p;
  else
    return rt::Status::error(fmt::format("{}: unknown precision '{}' (expected fp32 or bf16)",
                                         where, b.precision));
  return rt::Status::ok();
}

/// Reads a bundle's files whole, each checked against the SHA-256 its
/// manifest records.
class CheckedFiles {
public:
  CheckedFiles(std::string rootDir, std::string where, ManifestReader &r, const json &m)
      : rootDir_(std::move(rootDir)), where_(std::move(where)), r_(r),
        sums_(r.object(m, "sha256")) {}

  /// File `relative` against the sum `sum`.
  rt::Status read(const std::string &relative, const std::string &sum, std::string &content) {
    XLNETC_RETURN_IF_ERROR(rt::readFileInside(rootDir_, relative, content));
    if (rt::Sha256::hexHash(content) != sum)
      return rt::Status::error(fmt::format(
          "{}/{}: its SHA-256 is not the one {} records (the file was changed or damaged)",
          rootDir_, relative, where_));
    return rt::Status::ok();
  }
  /// File `name` against the sum under 'sha256'.
  rt::Status read(const std::string &name, std::string &content) {
    XLNETC_RETURN_IF_ERROR(r_.status());
    if (!sums_->contains(name) || !(*sums_)[name].is_string()) {
      r_.fail(fmt::format("'sha256' has no SHA-256 string for \"{}\"", name));
      return r_.status();
    }
    return read(name, (*sums_)[name].get<std::string>(), content);
  }

private:
  std::string rootDir_, where_;
  ManifestReader &r_;
  const json *sums_;
};

/// Phase 3 of readBundle: the CUBINs compiled ahead of time, if any.
rt::Status readCubins(ManifestReader &r, const json &m, const std::string &where,
                      CheckedFiles &files, Bundle &b) {
  if (!m.contains("cubins"))
    return rt::Status::ok();
  const json *c = r.object(m, "cubins");
  XLNETC_RETURN_IF_ERROR(r.status());
  b.cubinArch = r.fileName(*c, "cubins.arch");
  const std::string cubinDir = r.string(*c, "cubins.dir");
  const json *cubinSums = r.object(*c, "cubins.sha256");
  if (r.ok() && cubinDir != "cubin/" + b.cubinArch)
    r.fail(fmt::format("'cubins.dir' is \"{}\", not \"cubin/{}\"", cubinDir, b.cubinArch));
  XLNETC_RETURN_IF_ERROR(r.status());
  for (const auto &[name, sum] : cubinSums->items()) {
    if (!rt::isPlainName(name) || !sum.is_string())
      return rt::Status::error(fmt::format(
          "{}: 'cubins.sha256' entry \"{}\" is not a kernel name with a SHA-256 string", where,
          name));
    XLNETC_RETURN_IF_ERROR(
        files.read(cubinDir + "/" + name + ".cubin", sum.get<std::string>(), b.cubins[name]));
  }
  return rt::Status::ok();
}

} // namespace

rt::Status readBundle(const std::string &dir, Bundle &out) {
  const fs::path root(dir);
  const std::string rootDir = root.has_filename() ? dir : root.parent_path().string();
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    return rt::Status::error(fmt::format("{}: not a bundle directory (it does not exist)", dir));
  // 1. The manifest.
  const std::string where = (root / kManifest).string();
  json m;
  XLNETC_RETURN_IF_ERROR(readManifest(dir, rootDir, where, m));

  // 2. What it says the step is.
  ManifestReader r(where);
  Bundle b;
  b.dir = rootDir;
  std::string specFile;
  XLNETC_RETURN_IF_ERROR(readHeader(r, m, root, where, b, specFile));

  // 3. Every file it records, checked against its SHA-256.
  CheckedFiles files(rootDir, where, r, m);
  for (auto [key, content] : {std::pair<const char *, std::string *>{"plan", &b.planText},
                              {"program", &b.programText},
                              {"source", &b.source}}) {
    std::string name = r.fileName(m, key);
    XLNETC_RETURN_IF_ERROR(files.read(name, *content));
  }
  XLNETC_RETURN_IF_ERROR(readCubins(r, m, where, files, b));

  // 4. The spec, which must hold its model keys itself.
  std::string specText;
  XLNETC_RETURN_IF_ERROR(files.read(specFile, specText));
  if (specFile != "config.json" && setsHfConfig(specText))
    return rt::Status::error(fmt::format(
        "{}/{}: sets hf_config, a file outside what the manifest records: a bundle's spec "
        "holds its model keys itself (xlnetc compile writes them so)",
        rootDir, specFile));
  out = std::move(b);
  return rt::Status::ok();
}

StepCompiler bundleCompiler(const Bundle &bundle) {
  return [bundle](const ModelSpec &spec, const StepShape &shape, StepKind step, rt::Plan &plan,
                  std::string &error, std::string *planText,
                  const std::optional<rt::dev::GpuTarget> &) {
    // A bundle always carries its device program, made for the --arch it
    // was compiled with (the executor checks it against the device).
    StepShape want = shape;
    if (want.reuseLen <= 0)
      want.reuseLen = want.seqLen;
    StepShape have = bundle.shape;
    if (have.reuseLen <= 0)
      have.reuseLen = have.seqLen;
    if (step != bundle.step || want.batch != have.batch || want.seqLen != have.seqLen ||
        want.numPredict != have.numPredict || want.mlen != have.mlen ||
        want.reuseLen != have.reuseLen || want.permBits != have.permBits ||
        want.precision != have.precision || want.accumulate != have.accumulate ||
        specFingerprint(spec, bundle.shape) != bundle.fingerprint) {
      error = fmt::format("xlnetc: error: bundle {} holds {}; this run needs {} (compile a "
                          "bundle for it with xlnetc compile --step ... --batch-size ... "
                          "--seq-len ... --num-predict ... --mlen ... --precision ... "
                          "--micro-batch ...)\n",
                          bundle.dir, shapeStr(bundle.step, bundle.shape), shapeStr(step, shape));
      return false;
    }
    if (rt::Status st = rt::parsePlan(bundle.planText, plan); !st) {
      error = fmt::format("xlnetc: error: {}/plan.json: {}\n", bundle.dir, st.message());
      return false;
    }
    auto program = std::make_shared<rt::DeviceProgram>();
    if (rt::Status st = rt::parseDeviceProgramJson(bundle.programText, plan, bundle.source,
                                                   *program);
        !st) {
      error = fmt::format("xlnetc: error: {}/program.json: {}\n", bundle.dir, st.message());
      return false;
    }
    program->cubinArch = bundle.cubinArch;
    program->cubins = bundle.cubins;
    plan.device = std::move(program);
    if (planText)
      *planText = bundle.planText;
    return true;
  };
}

} // namespace xlnetc
