//===- Nvrtc.cpp - CUDA C++ to CUBIN with NVRTC, cached -------------------===//

#include "runtime/device/Nvrtc.h"

#include "runtime/device/CudaApi.h"
#include "runtime/device/Device.h"
#include "runtime/device/KernelCache.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace xlnetc::rt {

using cuda::Nvrtc;
using cuda::nvrtcProgram;
using cuda::nvrtcResult;

namespace {

/// sm_<digits> with an optional 'a' or 'f' suffix (sm_90, sm_90a, sm_100f).
bool isRealArch(const std::string &arch) {
  if (arch.size() < 5 || arch.compare(0, 3, "sm_") != 0)
    return false;
  size_t end = arch.size();
  if (arch.back() == 'a' || arch.back() == 'f')
    --end;
  if (end <= 3)
    return false;
  for (size_t i = 3; i < end; ++i)
    if (!std::isdigit(static_cast<unsigned char>(arch[i])))
      return false;
  return true;
}

/// Destroys an NVRTC program when it goes out of scope.
class ProgramGuard {
public:
  explicit ProgramGuard(const Nvrtc &nvrtc) : nvrtc_(nvrtc) {}
  ~ProgramGuard() {
    if (program)
      (void)nvrtc_.nvrtcDestroyProgram(&program);
  }
  ProgramGuard(const ProgramGuard &) = delete;
  ProgramGuard &operator=(const ProgramGuard &) = delete;
  nvrtcProgram program = nullptr;

private:
  const Nvrtc &nvrtc_;
};

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The number written just before `suffix` in `line` ("1024 bytes smem"),
/// or false when `suffix` is not there.
bool numberBefore(const std::string &line, const char *suffix, int64_t &out) {
  size_t pos = line.find(suffix);
  if (pos == std::string::npos)
    return false;
  size_t end = pos;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1])))
    --begin;
  if (begin == end || end - begin > 18) // 18 digits cannot overflow
    return false;
  out = std::stoll(line.substr(begin, end - begin));
  return true;
}

/// The text between the first pair of single quotes after `from`.
std::string quoted(const std::string &line, size_t from) {
  size_t open = line.find('\'', from);
  if (open == std::string::npos)
    return "";
  size_t close = line.find('\'', open + 1);
  if (close == std::string::npos)
    return "";
  return line.substr(open + 1, close - open - 1);
}

} // namespace

std::vector<std::string> nvrtcCommandLine(const NvrtcOptions &opts) {
  std::vector<std::string> args = {"-arch=" + opts.arch, "-std=" + opts.std};
  if (opts.ptxasVerbose)
    args.push_back("--ptxas-options=-v");
  if (opts.lineinfo)
    args.push_back("-lineinfo");
  args.insert(args.end(), opts.extra.begin(), opts.extra.end());
  return args;
}

std::string cubinCacheKey(const NvrtcSource &src, const NvrtcOptions &opts,
                          const std::string &nvrtcFingerprint) {
  KeyBuilder key;
  key.add("kind", "nvrtc-cubin");
  key.add("name", src.name);
  key.add("source", src.text);
  key.add("headers", std::to_string(src.headers.size()));
  for (const NvrtcHeader &header : src.headers)
    key.add("header-name", header.name).add("header-text", header.text);
  for (const std::string &option : nvrtcCommandLine(opts))
    key.add("option", option);
  key.add("nvrtc", nvrtcFingerprint);
  key.add("arch", opts.arch);
  return key.hex();
}

unsigned compileThreads() {
  if (const char *env = std::getenv("XLNETC_COMPILE_THREADS"); env && *env) {
    const int n = std::atoi(env);
    if (n > 0)
      return unsigned(n);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

Status compileKernelsConcurrently(const std::string &head,
                                  const std::vector<std::pair<std::string, std::string>> &kernels,
                                  const NvrtcOptions &opts, KernelCache *cache,
                                  std::vector<CompiledCubin> &out, size_t *threadsUsed) {
  const cuda::Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(cuda::loadNvrtc(nvrtc));
  std::vector<CompiledCubin> cubins(kernels.size());
  std::vector<Status> status(kernels.size(), Status::ok());
  // Each thread takes the next kernel until none is left.
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < kernels.size(); i = next++) {
      NvrtcSource src;
      src.name = kernels[i].first + ".cu";
      src.text = head + kernels[i].second;
      for (const dev::SourceFile &h : dev::embeddedDeviceFiles())
        src.headers.push_back({h.name, h.text});
      status[i] = compileCubin(*nvrtc, src, opts, cache, cubins[i])
                      .withPrefix("kernel " + kernels[i].first + " for " + opts.arch + ": ");
    }
  };
  const size_t threads = std::min<size_t>(compileThreads(), kernels.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  for (const Status &st : status)
    XLNETC_RETURN_IF_ERROR(st);
  out = std::move(cubins);
  if (threadsUsed)
    *threadsUsed = threads;
  return Status::ok();
}

Status compileCubin(const NvrtcSource &src, const NvrtcOptions &opts,
                    KernelCache *cache, CompiledCubin &out) {
  const Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(loadNvrtc(nvrtc));
  return compileCubin(*nvrtc, src, opts, cache, out);
}

Status compileCubin(const Nvrtc &nvrtc, const NvrtcSource &src,
                    const NvrtcOptions &opts, KernelCache *cache,
                    CompiledCubin &out) {
  const std::string failed =
      "NVRTC failed to compile " + src.name + " for " + opts.arch + ": ";
  if (!isRealArch(opts.arch))
    return Status::error(failed + "'" + opts.arch +
                         "' is not a GPU architecture of the form sm_XY "
                         "(a CUBIN is compiled for a real GPU, not PTX)");
  auto start = std::chrono::steady_clock::now();
  CompiledCubin result;

  // 1. The cache.
  result.key = cubinCacheKey(src, opts, nvrtc.fingerprint());
  if (cache && cache->lookup(result.key, "cubin", result.cubin, &result.log)) {
    result.fromCache = true;
    result.cachePath = cache->path(result.key, "cubin");
    result.compileMs = millisecondsSince(start);
    out = std::move(result);
    return Status::ok();
  }

  // 2. Compile, headers from memory.
  const std::string where = "compiling " + src.name + " for " + opts.arch;
  std::vector<const char *> headerTexts, headerNames;
  for (const NvrtcHeader &header : src.headers) {
    headerTexts.push_back(header.text.c_str());
    headerNames.push_back(header.name.c_str());
  }
  ProgramGuard guard(nvrtc);
  XLNETC_NVRTC_RETURN_IF_ERROR(
      nvrtc, where,
      nvrtcCreateProgram(&guard.program, src.text.c_str(), src.name.c_str(),
                         int(headerTexts.size()), headerTexts.data(),
                         headerNames.data()));
  std::vector<std::string> args = nvrtcCommandLine(opts);
  std::vector<const char *> argv;
  for (const std::string &arg : args)
    argv.push_back(arg.c_str());
  nvrtcResult compiled =
      nvrtc.nvrtcCompileProgram(guard.program, int(argv.size()), argv.data());

  // 3. The log travels with success and failure alike.
  size_t logSize = 0;
  XLNETC_NVRTC_RETURN_IF_ERROR(nvrtc, where,
                               nvrtcGetProgramLogSize(guard.program, &logSize));
  result.log.assign(logSize, '\0');
  if (logSize > 0)
    XLNETC_NVRTC_RETURN_IF_ERROR(
        nvrtc, where, nvrtcGetProgramLog(guard.program, result.log.data()));
  while (!result.log.empty() && result.log.back() == '\0')
    result.log.pop_back();
  if (compiled != cuda::NVRTC_SUCCESS) {
    const char *what = nvrtc.nvrtcGetErrorString(compiled);
    std::string message =
        failed + (what ? what : "nvrtcResult " + std::to_string(compiled));
    if (!result.log.empty())
      message += "\n" + result.log;
    return Status::error(message);
  }

  // 4. The CUBIN.
  size_t cubinSize = 0;
  XLNETC_NVRTC_RETURN_IF_ERROR(nvrtc, where,
                               nvrtcGetCUBINSize(guard.program, &cubinSize));
  if (cubinSize == 0)
    return Status::error(failed + "NVRTC produced no CUBIN");
  result.cubin.assign(cubinSize, '\0');
  XLNETC_NVRTC_RETURN_IF_ERROR(
      nvrtc, where, nvrtcGetCUBIN(guard.program, result.cubin.data()));
  if (!isElf(result.cubin))
    return Status::error(failed + "NVRTC's CUBIN is not an ELF file");
  result.compileMs = millisecondsSince(start);

  // 5. Into the cache; a failure there only costs the next run a compile.
  if (cache) {
    Status stored = cache->store(result.key, "cubin", result.cubin,
                                 &result.cachePath, result.log);
    if (!stored)
      result.cacheError = stored.message();
  }
  out = std::move(result);
  return Status::ok();
}

Status nvrtcVersionString(std::string &out) {
  const Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(cuda::loadNvrtc(nvrtc));
  out = nvrtc->version();
  return Status::ok();
}

Status supportedArchs(std::vector<int> &out) {
  const Nvrtc *nvrtc = nullptr;
  XLNETC_RETURN_IF_ERROR(cuda::loadNvrtc(nvrtc));
  int count = 0;
  XLNETC_NVRTC_RETURN_IF_ERROR(*nvrtc, "", nvrtcGetNumSupportedArchs(&count));
  std::vector<int> archs(size_t(std::max(count, 0)));
  if (count > 0)
    XLNETC_NVRTC_RETURN_IF_ERROR(*nvrtc, "",
                                 nvrtcGetSupportedArchs(archs.data()));
  out = std::move(archs);
  return Status::ok();
}

Status checkDriverForNvrtc(int driverVersion, int nvrtcMajor, int nvrtcMinor) {
  if (driverVersion / 1000 >= nvrtcMajor)
    return Status::ok();
  std::string nvrtc =
      std::to_string(nvrtcMajor) + "." + std::to_string(nvrtcMinor);
  return Status::error("CUDA driver " + cuda::versionString(driverVersion) +
                       " cannot load CUBINs from NVRTC " + nvrtc +
                       ": install a driver for CUDA " +
                       std::to_string(nvrtcMajor) + ".0 or newer" +
                       (nvrtcMajor == 13 ? " (NVIDIA 580+)" : "") +
                       ", or set XLNETC_CUDA_HOME to a CUDA " +
                       std::to_string(driverVersion / 1000) + " toolkit");
}

std::vector<KernelResourceUsage> parsePtxasLog(const std::string &log) {
  std::vector<KernelResourceUsage> out;
  auto record = [&](const std::string &name) -> KernelResourceUsage & {
    for (KernelResourceUsage &usage : out)
      if (usage.kernel == name)
        return usage;
    out.push_back(KernelResourceUsage());
    out.back().kernel = name;
    return out.back();
  };
  std::string entry;      // the entry function of "Used N registers"
  std::string properties; // the function of "N bytes stack frame"

  size_t begin = 0;
  while (begin < log.size()) {
    size_t end = log.find('\n', begin);
    if (end == std::string::npos)
      end = log.size();
    std::string line = log.substr(begin, end - begin);
    begin = end + 1;
    // CUDA 13 prefixes every line with "ptxas"; older versions print the
    // stack/spill line of "Function properties" indented, without it.
    bool ptxasLine = line.compare(0, 5, "ptxas") == 0;
    bool indented = !line.empty() && (line[0] == ' ' || line[0] == '\t');
    if (!ptxasLine &&
        !(indented && line.find("bytes stack frame") != std::string::npos))
      continue;

    int64_t value = 0;
    if (size_t at = line.find("Compiling entry function");
        at != std::string::npos) {
      // Compiling entry function 'k' for 'sm_90'
      entry = quoted(line, at);
      KernelResourceUsage &usage = record(entry);
      usage.entry = true;
      size_t forAt = line.find(" for ", at);
      if (forAt != std::string::npos)
        usage.arch = quoted(line, forAt);
    } else if (size_t at = line.find("Function properties for ");
               at != std::string::npos) {
      properties = line.substr(at + std::strlen("Function properties for "));
      while (!properties.empty() &&
             std::isspace(static_cast<unsigned char>(properties.back())))
        properties.pop_back();
      record(properties);
    } else if (line.find("bytes stack frame") != std::string::npos) {
      if (properties.empty())
        continue;
      KernelResourceUsage &usage = record(properties);
      if (numberBefore(line, "bytes stack frame", value))
        usage.stackBytes = value;
      if (numberBefore(line, "bytes spill stores", value))
        usage.spillStores = value;
      if (numberBefore(line, "bytes spill loads", value))
        usage.spillLoads = value;
    } else if (line.find("Used ") != std::string::npos &&
               numberBefore(line, "registers", value)) {
      if (entry.empty())
        continue;
      KernelResourceUsage &usage = record(entry);
      usage.registers = int(value);
      if (numberBefore(line, "barriers", value))
        usage.barriers = int(value);
      if (numberBefore(line, "bytes smem", value))
        usage.smemBytes = value;
    }
  }
  return out;
}

} // namespace xlnetc::rt
