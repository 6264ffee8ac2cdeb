//===- DeviceTestUtil.h - Helpers shared by the device tests ---*- C++ -*-===//

#ifndef XLNETC_TEST_DEVICE_DEVICETESTUTIL_H
#define XLNETC_TEST_DEVICE_DEVICETESTUTIL_H

#include "runtime/Tensor.h"
#include "runtime/device/Device.h"
#include "runtime/device/FloatBits.h"
#include "runtime/device/Nvrtc.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace xlnetc::rt::dev {
/// test/Device/kernels/*.cu by file name, embedded at build time
/// (cmake/EmbedFiles.cmake), so the tests read no file of the source tree.
const std::vector<SourceFile> &embeddedTestKernels();
} // namespace xlnetc::rt::dev

namespace xlnetc::rt::testing {

/// A device that forwards every call to another (`inner`); tests derive
/// from it to record or count what the executor asks of a device, or to
/// fail a call, overriding those calls alone.
class ForwardingDevice : public dev::Device {
public:
  explicit ForwardingDevice(dev::Device &inner) : d_(inner) {}

  dev::DeviceKind kind() const override { return d_.kind(); }
  std::string description() const override { return d_.description(); }
  std::string arch() const override { return d_.arch(); }
  std::string physicalId() const override { return d_.physicalId(); }
  size_t maxSharedMemoryPerBlock() const override { return d_.maxSharedMemoryPerBlock(); }
  Status alloc(size_t bytes, dev::DevPtr &out) override { return d_.alloc(bytes, out); }
  void free(dev::DevPtr ptr) override { d_.free(ptr); }
  Status memoryInUse(size_t &bytes) override { return d_.memoryInUse(bytes); }
  Status memoryFree(size_t &bytes) override { return d_.memoryFree(bytes); }
  void *nativeStream() override { return d_.nativeStream(); }
  Status upload(dev::DevPtr dst, const void *src, size_t n) override {
    return d_.upload(dst, src, n);
  }
  Status download(void *dst, dev::DevPtr src, size_t n) override {
    return d_.download(dst, src, n);
  }
  Status copy(dev::DevPtr dst, dev::DevPtr src, size_t n) override { return d_.copy(dst, src, n); }
  Status memset(dev::DevPtr dst, int value, size_t n) override { return d_.memset(dst, value, n); }
  Status allocHost(size_t bytes, void *&out) override { return d_.allocHost(bytes, out); }
  void freeHost(void *ptr) override { d_.freeHost(ptr); }
  Status downloadAsync(void *dst, dev::DevPtr src, size_t n) override {
    return d_.downloadAsync(dst, src, n);
  }
  Status loadModule(const dev::ModuleSource &src, std::unique_ptr<dev::Module> &out) override {
    return d_.loadModule(src, out);
  }
  Status loadCubin(const std::string &name, const std::string &image,
                   std::unique_ptr<dev::Module> &out) override {
    return d_.loadCubin(name, image, out);
  }
  Status getKernel(dev::Module &m, const std::string &name, dev::Kernel &out) override {
    return d_.getKernel(m, name, out);
  }
  Status launch(const dev::Kernel &k, const dev::LaunchDims &dims, void **params,
                const std::string &where) override {
    return d_.launch(k, dims, params, where);
  }
  Status gemm(const dev::GemmDesc &desc, const dev::GemmOperands &ops,
              const std::string &where) override {
    return d_.gemm(desc, ops, where);
  }
  Status gemmSupported(const dev::GemmDesc &desc, const dev::GemmOperands &ops,
                       const std::string &where, bool &supported, std::string &why) override {
    return d_.gemmSupported(desc, ops, where, supported, why);
  }
  Status synchronize(const std::string &where) override { return d_.synchronize(where); }
  Status beginCapture(const std::string &where) override { return d_.beginCapture(where); }
  Status endCapture(std::unique_ptr<dev::Graph> &out, const std::string &where) override {
    return d_.endCapture(out, where);
  }
  Status launchGraph(dev::Graph &g, const std::string &where) override {
    return d_.launchGraph(g, where);
  }
  Status sideWaitsForMain(const std::string &where) override { return d_.sideWaitsForMain(where); }
  Status mainWaitsForSide(const std::string &where) override { return d_.mainWaitsForSide(where); }
  void *nativeSideStream() override { return d_.nativeSideStream(); }
  Status hostWorkOnSide(std::function<Status()> work, const std::string &where) override {
    return d_.hostWorkOnSide(std::move(work), where);
  }
  void abandonSide() override { d_.abandonSide(); }

private:
  dev::Device &d_;
};

/// The whole-step plans compiled at build time: $XLNETC_TEST_PLANS (ctest
/// sets it to the build's test/Device/plans; the GPU package to its own
/// copy). No path of the build machine is compiled into the tests.
inline std::string testPlansDir() {
  const char *env = std::getenv("XLNETC_TEST_PLANS");
  if (!env || !*env)
    ADD_FAILURE() << "XLNETC_TEST_PLANS is not set: it names the directory of the "
                     "plans the build compiled (build/test/Device/plans)";
  return env ? env : "";
}

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

using dev::doubleBits;
using dev::floatBits;

/// A tensor of seeded uniform floats in [lo, hi).
inline Tensor randomF32(std::vector<int64_t> shape, uint32_t seed, float lo,
                        float hi) {
  Tensor t = Tensor::zeros(DType::F32, std::move(shape));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.f32()[i] = u(gen);
  return t;
}

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

/// A fixture whose suite shares one emulated device and one module: `Suite`
/// provides `static dev::ModuleSource suiteModule()` and `static constexpr
/// uint64_t kSeed`. Outputs are allocated with kGuardBytes of zeros after
/// their end, which get() checks are still zero (no write past the end).
template <class Suite> class EmuModuleSuite : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Status st = dev::openDevice(dev::DeviceKind::Emu, {}, dev_);
    ASSERT_TRUE(st.isOk()) << st.message();
    st = dev_->loadModule(Suite::suiteModule(), mod_);
    ASSERT_TRUE(st.isOk()) << st.message();
  }
  static void TearDownTestSuite() {
    for (dev::DevPtr p : live_)
      dev_->free(p);
    live_.clear();
    guarded_.clear();
    mod_.reset();
    dev_.reset();
  }
  void SetUp() override { ASSERT_TRUE(dev_ && mod_) << "module failed to load"; }

  /// A device copy of `bytes` bytes of `src`, or (src null) a zeroed output.
  static dev::DevPtr put(const void *src, size_t bytes) {
    dev::DevPtr p = 0;
    size_t size = std::max<size_t>(bytes, 4) + (src ? 0 : kGuardBytes);
    EXPECT_TRUE(dev_->alloc(size, p).isOk());
    if (src) {
      EXPECT_TRUE(dev_->upload(p, src, bytes).isOk());
    } else {
      EXPECT_TRUE(dev_->memset(p, 0, size).isOk());
      guarded_.push_back(p);
    }
    live_.push_back(p);
    return p;
  }
  static dev::DevPtr put(const Tensor &t) { return put(t.bytes(), t.nbytes()); }
  /// A zeroed f32 output of n elements.
  static dev::DevPtr zerosF32(int64_t n) { return put(nullptr, size_t(n) * 4); }

  /// The first n elements of `p`; checks an output's guard bytes.
  template <class T> static std::vector<T> get(dev::DevPtr p, int64_t n) {
    std::vector<T> v(static_cast<size_t>(n));
    EXPECT_TRUE(dev_->download(v.data(), p, size_t(n) * sizeof(T)).isOk());
    if (std::find(guarded_.begin(), guarded_.end(), p) != guarded_.end()) {
      std::vector<unsigned char> guard(kGuardBytes);
      EXPECT_TRUE(
          dev_->download(guard.data(), p + size_t(n) * sizeof(T), kGuardBytes)
              .isOk());
      EXPECT_EQ(std::count(guard.begin(), guard.end(), 0), int(kGuardBytes))
          << "a kernel wrote past the end of an output";
    }
    return v;
  }

  /// Launches kernel `name` on `grid` blocks of `block` threads; `args` are
  /// the device pointers in order, then the seed.
  static void launch(const std::string &name, unsigned grid, unsigned block,
                     std::vector<dev::DevPtr> args,
                     uint64_t seed = Suite::kSeed, size_t dynSmem = 0) {
    dev::Kernel k;
    Status st = dev_->getKernel(*mod_, name, k);
    ASSERT_TRUE(st.isOk()) << st.message();
    std::vector<void *> params;
    for (dev::DevPtr &a : args)
      params.push_back(&a);
    unsigned long long sd = seed;
    params.push_back(&sd);
    dev::LaunchDims dims;
    dims.grid[0] = grid;
    dims.block[0] = block;
    dims.dynSmem = dynSmem;
    st = dev_->launch(k, dims, params.data(), name);
    ASSERT_TRUE(st.isOk()) << st.message();
    ASSERT_TRUE(dev_->synchronize(name).isOk());
  }

  static constexpr size_t kGuardBytes = 256;
  static inline std::unique_ptr<dev::Device> dev_;
  static inline std::unique_ptr<dev::Module> mod_;
  static inline std::vector<dev::DevPtr> live_;
  static inline std::vector<dev::DevPtr> guarded_;
};

} // namespace xlnetc::rt::testing

#endif // XLNETC_TEST_DEVICE_DEVICETESTUTIL_H
