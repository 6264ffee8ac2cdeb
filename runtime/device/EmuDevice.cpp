//===- EmuDevice.cpp - The emulated device -------------------------------===//
//
// The device the CUDA executor runs on where there is no GPU (design/cuda.md
// §1): "device" memory is host memory, and a module is the very kernel source
// that NVRTC compiles for the GPU, compiled instead by the host C++ compiler
// into a shared object against the same-source prelude, whose host half is a
// fiber SIMT emulator (runtime/device/prelude/xlnetc_emu.cuh). Each kernel
// marked XL_EXPORT(k) exports a C launcher (xlnetc_emu_abi.h) that runs the
// whole grid before it returns, so launches are synchronous and errors (a
// deadlocked barrier) come back from the launch itself.
//
// Memory is checked: every copy must lie inside one live allocation, so an
// executor bug is a clear error here rather than a corrupted heap.
//
//===----------------------------------------------------------------------===//

#include "runtime/device/EmuDevice.h"

#include "runtime/device/KernelCache.h"
#include "runtime/exec/MemoryCheck.h"
#include "runtime/device/prelude/xlnetc_emu_abi.h"

#include <fmt/format.h>

#include <atomic>
#include <functional>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <fstream>
#include <map>
#include <mutex>
#include <spawn.h>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace xlnetc::rt::dev {

namespace {

//===----------------------------------------------------------------------===//
// Host compiler
//===----------------------------------------------------------------------===//

/// Flags every emulated module is compiled with. -O2: the emulator's
/// per-thread code must be optimised to be usable; -fvisibility=hidden keeps
/// everything but the XL_EXPORT launchers private to the object.
const char *const kEmuFlags[] = {"-std=c++17", "-O2",       "-fPIC",
                                 "-shared",    "-pthread",  "-fvisibility=hidden",
                                 "-w"};

/// The host compiler: $XLNETC_EMU_CXX, else "c++".
std::string hostCompiler() {
  const char *cxx = std::getenv("XLNETC_EMU_CXX");
  return cxx && *cxx ? cxx : "c++";
}

/// Runs argv[0] (searched in PATH) with stdout and stderr to `logPath`;
/// returns its exit status in `exitCode` (-1 when it could not start).
Status runProcess(const std::vector<std::string> &argv,
                  const std::string &logPath, int &exitCode) {
  std::vector<char *> cargv;
  for (const std::string &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, logPath.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid;
  int rc = posix_spawnp(&pid, cargv[0], &actions, nullptr, cargv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    exitCode = -1;
    return Status::error(fmt::format("cannot run the host compiler '{}': {} "
                                     "(set XLNETC_EMU_CXX)",
                                     argv[0], std::strerror(rc)));
  }
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0)
    if (errno != EINTR)
      return Status::error(fmt::format("waitpid: {}", std::strerror(errno)));
  exitCode = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
  return Status::ok();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status writeFile(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out)
    return Status::error(fmt::format("cannot write {}", path));
  return Status::ok();
}

/// The compiler's identity for the cache key: the first line of
/// `CXX --version` (computed once per process and compiler).
Status compilerIdentity(const std::string &cxx, const std::string &dir,
                        std::string &out) {
  static std::mutex mu;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = known.find(cxx); it != known.end()) {
    out = it->second;
    return Status::ok();
  }
  std::string log = dir + "/version.txt";
  int code = 0;
  XLNETC_RETURN_IF_ERROR(runProcess({cxx, "--version"}, log, code));
  std::string text = readFile(log);
  if (code != 0)
    return Status::error(fmt::format("'{} --version' failed (exit {}): {}",
                                     cxx, code, text));
  out = known[cxx] = text.substr(0, text.find('\n'));
  return Status::ok();
}

/// The file name the source is written under: the module name's last
/// component, restricted to [A-Za-z0-9._-], ending in .cu.
std::string sourceFileName(const std::string &moduleName) {
  std::string base = moduleName.substr(moduleName.find_last_of('/') + 1);
  std::string out;
  for (char c : base)
    out += std::isalnum((unsigned char)c) || c == '.' || c == '_' || c == '-' ? c : '_';
  if (out.empty() || out[0] == '.')
    out = "module" + out;
  if (out.size() < 3 || out.compare(out.size() - 3, 3, ".cu") != 0)
    out += ".cu";
  return out;
}

/// A private scratch directory, removed with its files on destruction.
class ScratchDir {
public:
  Status create() {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") +
                          "/xlnetc-emu-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data()))
      return Status::error(fmt::format("cannot create a directory {}: {}",
                                       pattern, std::strerror(errno)));
    path_ = buf.data();
    return Status::ok();
  }
  ~ScratchDir() {
    if (path_.empty())
      return;
    for (const std::string &f : files_)
      ::unlink((path_ + "/" + f).c_str());
    ::rmdir(path_.c_str());
  }
  /// Notes a file created inside (removed with the directory).
  std::string file(const std::string &name) {
    files_.push_back(name);
    return path_ + "/" + name;
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  std::vector<std::string> files_;
};

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

/// Loads the shared object `bytes` (module `name`) from an anonymous
/// in-memory file (memfd): what runs are the very bytes the caller checked
/// or compiled, never a file someone could swap on disk in between. The
/// loader knows objects by the name they were opened by, and a descriptor's
/// number is reused once closed, so it is reached through a link of a
/// name used once per process, made in the private directory `scratch`.
Status dlopenBytes(const std::string &bytes, const std::string &name, const std::string &scratch,
                   void *&handle) {
  int fd = ::memfd_create("xlnetc-emulated-kernels", MFD_CLOEXEC); // a name of any length
  if (fd < 0)
    return Status::error(fmt::format("emulated device: cannot make an in-memory file for {}: {}",
                                     name, std::strerror(errno)));
  auto fail = [&](const std::string &what) {
    Status st = Status::error(
        fmt::format("emulated device: cannot {} {}: {}", what, name, std::strerror(errno)));
    ::close(fd);
    return st;
  };
  const char *p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return fail("write to memory");
    p += n;
    left -= size_t(n);
  }
  static std::atomic<uint64_t> loads{0};
  const std::string link = fmt::format("{}/module-{}-{}.so", scratch, ::getpid(), loads++);
  if (::symlink(fmt::format("/proc/self/fd/{}", fd).c_str(), link.c_str()) != 0)
    return fail("link");
  handle = dlopen(link.c_str(), RTLD_NOW | RTLD_LOCAL);
  const char *e = handle ? nullptr : dlerror();
  ::unlink(link.c_str());
  ::close(fd); // the mapping keeps the object
  if (!handle)
    return Status::error(fmt::format("emulated device: cannot load {}: {}", name, e ? e : "?"));
  return Status::ok();
}

/// A dlopen'd kernel object (loaded from memory: dlopenBytes).
class EmuModule : public Module {
public:
  EmuModule(void *handle, std::string name)
      : handle_(handle), name_(std::move(name)) {}
  ~EmuModule() override { dlclose(handle_); }
  void *handle() const { return handle_; }
  const std::string &name() const { return name_; }

private:
  void *handle_;
  std::string name_;
};

/// Shared memory per block of the emulated device: sm_90's, the most the
/// emulator takes (xlnetc_emu_core.h).
constexpr size_t kEmuMaxSmemPerBlock = 227 * 1024;

/// $XLNETC_EMU_SMEM_PER_BLOCK: a smaller per-block limit, in bytes, to run
/// a program as a GPU with less shared memory would (kEmuMaxSmemPerBlock
/// when unset).
Status emuSmemPerBlock(size_t &out) {
  out = kEmuMaxSmemPerBlock;
  const char *env = std::getenv("XLNETC_EMU_SMEM_PER_BLOCK");
  if (!env || !*env)
    return Status::ok();
  char *end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (errno || *end || !std::isdigit(static_cast<unsigned char>(*env)) || v == 0 ||
      v > kEmuMaxSmemPerBlock)
    return Status::error(fmt::format("emulated device: XLNETC_EMU_SMEM_PER_BLOCK is '{}'; it "
                                     "takes the bytes of shared memory a block may have, 1 to "
                                     "{} (sm_90's, the emulator's most)",
                                     env, kEmuMaxSmemPerBlock));
  out = size_t(v);
  return Status::ok();
}

/// The schedule named in messages. The emulator itself reads
/// $XLNETC_EMU_SCHEDULE (forward|reverse|random[:SEED]), which overrides the
/// launch's schedule (xlnetc_emu.cuh); launches ask for forward.
std::string scheduleName() {
  const char *env = std::getenv("XLNETC_EMU_SCHEDULE");
  return env && *env ? env : "forward";
}

//===----------------------------------------------------------------------===//
// Device
//===----------------------------------------------------------------------===//

/// A recorded sequence of the emulated device's work, run in order.
struct EmuGraph : Graph {
  explicit EmuGraph(std::vector<std::function<Status()>> recorded) : ops(std::move(recorded)) {}
  std::vector<std::function<Status()>> ops;
};

class EmuDevice : public Device {
public:
  EmuDevice(const DeviceOptions &options, size_t smemPerBlock)
      : cache_(options.kernelCache ? KernelCache::openDefault()
                                   : KernelCache::disabled()),
        smemPerBlock_(smemPerBlock) {
    threads_ = options.emuThreads > 0
                   ? options.emuThreads
                   : int(std::max(1u, std::thread::hardware_concurrency()));
    scheduleName_ = scheduleName();
    const char *side = std::getenv("XLNETC_EMU_SIDE_STREAM");
    const std::string mode = side ? side : "";
    sideEarly_ = mode == "early";
    if (!mode.empty() && mode != "early" && mode != "late")
      sideModeError_ = fmt::format("emulated device: XLNETC_EMU_SIDE_STREAM is '{}'; it takes "
                                   "early or late",
                                   mode);
  }
  ~EmuDevice() override {
    for (auto &[ptr, size] : allocations_)
      std::free(reinterpret_cast<void *>(ptr));
  }

  DeviceKind kind() const override { return DeviceKind::Emu; }
  std::string description() const override {
    return fmt::format("emulated device ({} thread{}, schedule {}{}{})", threads_,
                       threads_ == 1 ? "" : "s", scheduleName_,
                       sideEarly_ ? ", side stream early" : "",
                       smemPerBlock_ != kEmuMaxSmemPerBlock
                           ? fmt::format(", {} bytes of shared memory per block", smemPerBlock_)
                           : "");
  }
  std::string arch() const override { return "emu"; }
  size_t maxSharedMemoryPerBlock() const override { return smemPerBlock_; }

  Status alloc(size_t bytes, DevPtr &out) override {
    // 256-byte alignment, as cudaMalloc guarantees; never a null pointer.
    size_t rounded = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
    void *p = std::aligned_alloc(256, rounded);
    if (!p)
      return Status::error(fmt::format(
          "emulated device: out of memory allocating {} bytes", bytes));
    std::memset(p, 0, rounded);
    out = reinterpret_cast<DevPtr>(p);
    allocations_[out] = bytes;
    return Status::ok();
  }
  Status memoryInUse(size_t &bytes) override {
    bytes = 0;
    for (const auto &[ptr, size] : allocations_)
      bytes += size;
    return Status::ok();
  }
  Status memoryFree(size_t &bytes) override {
    int64_t available = 0;
    XLNETC_RETURN_IF_ERROR(hostMemoryAvailable(available));
    bytes = size_t(available);
    return Status::ok();
  }
  void free(DevPtr ptr) override {
    auto it = allocations_.find(ptr);
    if (it == allocations_.end())
      return;
    std::free(reinterpret_cast<void *>(ptr));
    allocations_.erase(it);
  }
  Status upload(DevPtr dst, const void *src, size_t bytes) override {
    XLNETC_RETURN_IF_ERROR(notCapturing("upload"));
    XLNETC_RETURN_IF_ERROR(checkRange(dst, bytes, "upload destination"));
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
    return Status::ok();
  }
  Status download(void *dst, DevPtr src, size_t bytes) override {
    XLNETC_RETURN_IF_ERROR(notCapturing("download"));
    XLNETC_RETURN_IF_ERROR(checkRange(src, bytes, "download source"));
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
    return Status::ok();
  }
  Status allocHost(size_t bytes, void *&out) override {
    out = std::malloc(bytes ? bytes : 1);
    return out ? Status::ok()
               : Status::error(fmt::format("emulated device: cannot allocate {} bytes of host "
                                           "memory",
                                           bytes));
  }
  void freeHost(void *ptr) override { std::free(ptr); }
  // Emulated launches finish before they return: the copy is done at once.
  Status downloadAsync(void *dst, DevPtr src, size_t bytes) override {
    return download(dst, src, bytes);
  }
  Status copy(DevPtr dst, DevPtr src, size_t bytes) override {
    XLNETC_RETURN_IF_ERROR(notCapturing("copy"));
    XLNETC_RETURN_IF_ERROR(checkRange(dst, bytes, "copy destination"));
    XLNETC_RETURN_IF_ERROR(checkRange(src, bytes, "copy source"));
    std::memmove(reinterpret_cast<void *>(dst),
                 reinterpret_cast<const void *>(src), bytes);
    return Status::ok();
  }
  Status memset(DevPtr dst, int value, size_t bytes) override {
    XLNETC_RETURN_IF_ERROR(checkRange(dst, bytes, "memset destination"));
    if (recording_) {
      recorded_.push_back([=] {
        std::memset(reinterpret_cast<void *>(dst), value, bytes);
        return Status::ok();
      });
      return Status::ok();
    }
    std::memset(reinterpret_cast<void *>(dst), value, bytes);
    return Status::ok();
  }

  Status loadModule(const ModuleSource &source,
                    std::unique_ptr<Module> &out) override;
  Status loadCubin(const std::string &name, const std::string &,
                   std::unique_ptr<Module> &) override {
    return Status::error(fmt::format(
        "emulated device: cannot load the CUBIN {} (it runs kernel sources)", name));
  }
  Status getKernel(Module &module, const std::string &name,
                   Kernel &out) override {
    auto &m = static_cast<EmuModule &>(module);
    std::string symbol = XLNETC_EMU_LAUNCH_PREFIX + name;
    void *fn = dlsym(m.handle(), symbol.c_str());
    if (!fn)
      return Status::error(fmt::format(
          "emulated module {} has no kernel '{}' (no exported {}; is it "
          "marked XL_EXPORT?)",
          m.name(), name, symbol));
    out.name = name;
    out.handle = fn;
    return Status::ok();
  }
  Status launch(const Kernel &kernel, const LaunchDims &dims, void **params,
                const std::string &where) override {
    if (recording_) { // the parameters are read at every replay
      recorded_.push_back(
          [this, kernel, dims, params, where] { return launch(kernel, dims, params, where); });
      return Status::ok();
    }
    // As a GPU refuses a launch over its limit (the emulator's own is
    // sm_90's).
    if (dims.dynSmem > smemPerBlock_)
      return Status::error(fmt::format(
          "{}kernel '{}': {} bytes of dynamic shared memory exceed the emulated device's {} "
          "bytes per block (XLNETC_EMU_SMEM_PER_BLOCK)",
          where.empty() ? "" : where + ": ", kernel.name, dims.dynSmem, smemPerBlock_));
    char err[1024] = {0};
    xlnetc_emu_launch cfg{};
    cfg.abi_version = XLNETC_EMU_ABI_VERSION;
    for (int i = 0; i < 3; ++i) {
      cfg.grid[i] = dims.grid[i];
      cfg.block[i] = dims.block[i];
    }
    cfg.dyn_smem = dims.dynSmem;
    cfg.schedule = XLNETC_EMU_FORWARD;
    cfg.seed = 0;
    cfg.threads = threads_;
    cfg.err = err;
    cfg.err_len = sizeof(err);
    auto fn = reinterpret_cast<xlnetc_emu_launch_fn>(kernel.handle);
    if (fn(&cfg, params) != 0)
      return Status::error(fmt::format("{}{}", where.empty() ? "" : where + ": ",
                                       err[0] ? err : "emulated launch failed"));
    return Status::ok();
  }
  Status gemm(const GemmDesc &desc, const GemmOperands &ops,
              const std::string &where) override {
    if (recording_) {
      recorded_.push_back([this, desc, ops, where] { return gemm(desc, ops, where); });
      return Status::ok();
    }
    std::string at = where.empty() ? "" : where + ": ";
    GemmPointers p = gemmPointers(ops);
    XLNETC_RETURN_IF_ERROR(validateGemm(desc, p).withPrefix(at));
    // Every operand inside one allocation, as cuBLASLt would need.
    GemmExtents e = gemmExtents(desc);
    const int64_t ab = gemmTypeSize(desc.ab), cd = gemmTypeSize(desc.cd);
    XLNETC_RETURN_IF_ERROR(checkRange(ops.a, e.a * ab, "GEMM operand A").withPrefix(at));
    XLNETC_RETURN_IF_ERROR(checkRange(ops.b, e.b * ab, "GEMM operand B").withPrefix(at));
    XLNETC_RETURN_IF_ERROR(checkRange(ops.d, e.cd * cd, "GEMM operand D").withPrefix(at));
    if (desc.beta != 0.0f)
      XLNETC_RETURN_IF_ERROR(checkRange(ops.c, e.cd * cd, "GEMM operand C").withPrefix(at));
    if (ops.aux)
      XLNETC_RETURN_IF_ERROR(checkRange(ops.aux, e.cd * cd, "GEMM aux").withPrefix(at));
    if (e.bias)
      XLNETC_RETURN_IF_ERROR(checkRange(ops.bias, e.bias * cd, "GEMM bias").withPrefix(at));
    return gemmReference(desc, p).withPrefix(at);
  }
  // OpenBLAS plus the reference epilogues run every descriptor; only the
  // test hook says otherwise.
  Status gemmSupported(const GemmDesc &desc, const GemmOperands &ops, const std::string &where,
                       bool &supported, std::string &why) override {
    const std::string at = where.empty() ? "" : where + ": ";
    XLNETC_RETURN_IF_ERROR(validateGemm(desc, gemmPointers(ops)).withPrefix(at));
    bool fault = false;
    XLNETC_RETURN_IF_ERROR(gemmEpilogueFault(fault).withPrefix(at));
    supported = !(fault && desc.epilogue != GemmEpilogue::Default);
    why = supported ? "" : "XLNETC_FAULT_GEMM_EPILOGUE=unsupported (a test hook)";
    return Status::ok();
  }
  Status synchronize(const std::string &) override { return runSide(); }

  Status beginCapture(const std::string &where) override {
    if (recording_)
      return Status::error(where + ": a graph capture is already under way");
    recording_ = true;
    recorded_.clear();
    return Status::ok();
  }
  Status endCapture(std::unique_ptr<Graph> &out, const std::string &where) override {
    out.reset();
    if (!recording_)
      return Status::error(where + ": no graph capture is under way");
    recording_ = false;
    out = std::make_unique<EmuGraph>(std::move(recorded_));
    recorded_.clear();
    return Status::ok();
  }
  Status launchGraph(Graph &graph, const std::string &where) override {
    if (recording_)
      return Status::error(where + ": cannot launch a graph while capturing one");
    for (const std::function<Status()> &op : static_cast<EmuGraph &>(graph).ops)
      XLNETC_RETURN_IF_ERROR(op());
    return Status::ok();
  }

  // The side stream. The step's work has finished when its calls return,
  // so the side's next work always follows it; the side's host work runs
  // at once (early) or at the next join (late, the default: as late as
  // the events allow, so a missing join shows in the numbers).
  Status sideWaitsForMain(const std::string &) override { return Status::ok(); }
  Status mainWaitsForSide(const std::string &) override { return runSide(); }
  Status hostWorkOnSide(std::function<Status()> work, const std::string &where) override {
    if (!sideModeError_.empty())
      return Status::error(sideModeError_);
    if (recording_)
      return Status::error(where + ": host work on the side stream during a graph capture");
    if (sideEarly_)
      return work().withPrefix(where.empty() ? "" : where + ": ");
    side_.emplace_back(std::move(work), where);
    return Status::ok();
  }
  void abandonSide() override { side_.clear(); }

private:
  /// Runs the side stream's queued host work, in order.
  Status runSide() {
    std::vector<std::pair<std::function<Status()>, std::string>> queued;
    queued.swap(side_);
    for (auto &[work, at] : queued)
      XLNETC_RETURN_IF_ERROR(work().withPrefix(at.empty() ? "" : at + ": "));
    return Status::ok();
  }

  /// Upload, download and copy are not stream work a graph can hold.
  Status notCapturing(const char *what) const {
    if (recording_)
      return Status::error(fmt::format("emulated device: {} during a graph capture", what));
    return Status::ok();
  }
  Status checkRange(DevPtr p, size_t bytes, const char *what) const {
    auto it = allocations_.upper_bound(p);
    if (it != allocations_.begin()) {
      --it;
      if (p >= it->first && p + bytes <= it->first + it->second)
        return Status::ok();
    }
    return Status::error(fmt::format(
        "emulated device: {} [0x{:x}, +{}) is not inside one allocation", what,
        p, bytes));
  }

  KernelCache cache_;
  size_t smemPerBlock_; ///< maxSharedMemoryPerBlock
  int threads_ = 1;
  std::string scheduleName_;
  /// Between beginCapture and endCapture: the recorded work.
  bool recording_ = false;
  std::vector<std::function<Status()>> recorded_;
  std::map<DevPtr, size_t> allocations_;
  /// The side stream's host work not run yet, and where it was enqueued.
  std::vector<std::pair<std::function<Status()>, std::string>> side_;
  bool sideEarly_ = false;
  std::string sideModeError_; ///< a bad XLNETC_EMU_SIDE_STREAM, said at first use
};

Status EmuDevice::loadModule(const ModuleSource &source,
                             std::unique_ptr<Module> &out) {
  std::string cxx = hostCompiler();
  ScratchDir dir;
  XLNETC_RETURN_IF_ERROR(dir.create());
  std::string identity;
  XLNETC_RETURN_IF_ERROR(
      compilerIdentity(cxx, dir.path(), identity).withPrefix("emulated device: "));
  dir.file("version.txt");

  // 1. The cache key: the source, every header, the compiler and its flags.
  std::vector<SourceFile> headers = embeddedDeviceFiles();
  headers.insert(headers.end(), source.headers.begin(), source.headers.end());
  KeyBuilder key;
  key.add("kind", "emu-shared-object").add("source", source.text);
  for (const SourceFile &h : headers)
    key.add("header:" + h.name, h.text);
  key.add("compiler", identity);
  std::string flags;
  for (const char *f : kEmuFlags)
    flags += std::string(f) + " ";
  key.add("flags", flags).add("abi", std::to_string(XLNETC_EMU_ABI_VERSION));
  std::string hash = key.hex();

  // 2. A cached shared object: its bytes as checked (KernelCache::lookup).
  std::string bytes;
  if (!cache_.lookup(hash, "so", bytes)) {
    // 3. Compile in the scratch directory: the source and headers by name.
    for (const SourceFile &h : headers)
      XLNETC_RETURN_IF_ERROR(writeFile(dir.file(h.name), h.text));
    // Named after the module, so the emulator's messages (which quote
    // __FILE__:__LINE__ of a barrier) point at it.
    std::string srcPath = dir.file(sourceFileName(source.name));
    XLNETC_RETURN_IF_ERROR(writeFile(srcPath, source.text));
    std::string built = dir.file("module.so");
    std::vector<std::string> argv = {cxx};
    for (const char *f : kEmuFlags)
      argv.push_back(f);
    argv.insert(argv.end(), {"-I", dir.path(), "-x", "c++", srcPath, "-o", built});
    std::string logPath = dir.file("compile.log");
    int code = 0;
    XLNETC_RETURN_IF_ERROR(runProcess(argv, logPath, code));
    if (code != 0)
      return Status::error(fmt::format(
          "emulated device: {} failed to compile {} (exit {}):\n{}", cxx,
          source.name, code, readFile(logPath)));
    bytes = readFile(built);
    // 4. Into the cache; a cache that cannot take it only costs the next
    //    run a compile.
    (void)cache_.store(hash, "so", bytes);
  }
  void *handle = nullptr;
  XLNETC_RETURN_IF_ERROR(dlopenBytes(bytes, source.name, dir.path(), handle));
  out = std::make_unique<EmuModule>(handle, source.name);
  return Status::ok();
}

} // namespace

Status createEmuDevice(const DeviceOptions &options, std::unique_ptr<Device> &out) {
  size_t smemPerBlock = 0;
  XLNETC_RETURN_IF_ERROR(emuSmemPerBlock(smemPerBlock));
  out = std::make_unique<EmuDevice>(options, smemPerBlock);
  return Status::ok();
}

} // namespace xlnetc::rt::dev
