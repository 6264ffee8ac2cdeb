//===- DeviceTestUtil.h - Helpers shared by the device tests ---*- C++ -*-===//

#ifndef XLNETC_TEST_DEVICE_DEVICETESTUTIL_H
#define XLNETC_TEST_DEVICE_DEVICETESTUTIL_H

#include "runtime/device/Device.h"
#include "runtime/device/Nvrtc.h"

#include <cstdlib>
#include <optional>
#include <string>

namespace xlnetc::rt::testing {

/// Sets (or, with a null value, unsets) an environment variable for the life
/// of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = std::string(old);
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::optional<std::string> old_;
};

/// Compiles `text` with NVRTC for sm_90 against the embedded prelude (and
/// device templates), ptxas's report in out.log, without a cache.
inline Status compileForSm90(const std::string &name, const std::string &text,
                             CompiledCubin &out) {
  NvrtcSource src;
  src.name = name;
  src.text = text;
  for (const dev::SourceFile &h : dev::embeddedDeviceFiles())
    src.headers.push_back({h.name, h.text});
  NvrtcOptions opts;
  opts.arch = "sm_90";
  opts.ptxasVerbose = true;
  return compileCubin(src, opts, nullptr, out);
}

} // namespace xlnetc::rt::testing

#endif // XLNETC_TEST_DEVICE_DEVICETESTUTIL_H
