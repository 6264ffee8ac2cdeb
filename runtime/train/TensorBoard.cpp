//===- TensorBoard.cpp - Scalars for TensorBoard --------------------------===//

#include "runtime/train/TensorBoard.h"

#include "runtime/io/PluginPath.h"
#include "runtime/train/tensorboard/Plugin.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

namespace xlnetc::rt::train {

struct TensorBoardWriter::Api {
  void *handle = nullptr;
  int (*version)() = nullptr;
  int (*begin)(int, double) = nullptr;
  int (*scalars)(int, long long, double, const char *const *, const float *, int) = nullptr;
  ~Api() {
    if (handle)
      dlclose(handle);
  }
};

namespace {

constexpr const char *kPlugin = "libxlnetc-tensorboard.so";

double wallTime() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

Status TensorBoardWriter::open(const std::string &dir, std::unique_ptr<TensorBoardWriter> &out) {
  auto api = std::make_unique<Api>();
  std::string tried;
  for (const std::string &path : pluginCandidates("XLNETC_TENSORBOARD_PLUGIN", kPlugin)) {
    // DEEPBIND: libsentencepiece exports a protobuf-lite of its own, which
    // must not stand in for the plugin's libprotobuf.
    api->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (api->handle)
      break;
    tried += fmt::format("\n  {}: {}", path, dlerror());
  }
  if (!api->handle)
    return Status::error(fmt::format(
        "--tensorboard needs the plugin {} (built when CMake finds protobuf and ISA-L: "
        "install libprotobuf-dev protobuf-compiler libisal-dev and rebuild; "
        "$XLNETC_TENSORBOARD_PLUGIN names it), which could not be loaded:{}",
        kPlugin, tried));
  const auto sym = [&](const char *name, auto &fn) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(api->handle, name));
    return fn != nullptr;
  };
  if (!sym("xlnetc_tb_version", api->version) || !sym("xlnetc_tb_begin", api->begin) ||
      !sym("xlnetc_tb_scalars", api->scalars))
    return Status::error(fmt::format("{} lacks a function of the plugin interface", kPlugin));
  if (api->version() != XLNETC_TB_PLUGIN_VERSION)
    return Status::error(fmt::format("{} has interface version {}; this xlnetc needs {} "
                                     "(rebuild them together)",
                                     kPlugin, api->version(), XLNETC_TB_PLUGIN_VERSION));
  // The directory: made when missing; never reached through a link.
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(dir, ec)))
    std::filesystem::create_directories(dir, ec);
  const int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirFd < 0)
    return Status::error(fmt::format(
        "--tensorboard {}: {}", dir,
        errno == ELOOP || errno == ENOTDIR
            ? "not a directory (or a symbolic link: xlnetc does not write through one)"
            : std::strerror(errno)));
  char host[64] = {};
  if (gethostname(host, sizeof host - 1) != 0)
    std::snprintf(host, sizeof host, "host");
  auto w = std::unique_ptr<TensorBoardWriter>(new TensorBoardWriter());
  const double now = wallTime();
  // TensorBoard reads every file whose name holds "tfevents"; a new one
  // each time, never an existing one.
  const std::string name = fmt::format("events.out.tfevents.{}.{}.{}.xlnetc",
                                       int64_t(now), host, int64_t(::getpid()));
  w->fd_ = ::openat(dirFd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0644);
  const int openErrno = errno;
  ::close(dirFd);
  w->path_ = (std::filesystem::path(dir) / name).string();
  if (w->fd_ < 0)
    return Status::error(
        fmt::format("--tensorboard: cannot create {}: {}", w->path_, std::strerror(openErrno)));
  w->api_ = std::move(api);
  if (int rc = w->api_->begin(w->fd_, now); rc != 0)
    return Status::error(
        fmt::format("--tensorboard: cannot write {}: {}", w->path_, std::strerror(rc)));
  out = std::move(w);
  return Status::ok();
}

TensorBoardWriter::~TensorBoardWriter() {
  if (fd_ >= 0)
    ::close(fd_);
}

Status TensorBoardWriter::write(int64_t step,
                                const std::vector<std::pair<std::string, double>> &scalars) {
  std::vector<const char *> tags;
  std::vector<float> values;
  for (const auto &[tag, value] : scalars) {
    tags.push_back(tag.c_str());
    values.push_back(float(value));
  }
  if (int rc = api_->scalars(fd_, step, wallTime(), tags.data(), values.data(),
                             int(scalars.size()));
      rc != 0)
    return Status::error(fmt::format("--tensorboard: cannot write {}: {}", path_,
                                     std::strerror(rc)));
  return Status::ok();
}

} // namespace xlnetc::rt::train
