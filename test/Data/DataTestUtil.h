//===- DataTestUtil.h - Helpers shared by the data pipeline tests -*- C++
//-*-===//

#ifndef XLNETC_TEST_DATA_DATATESTUTIL_H
#define XLNETC_TEST_DATA_DATATESTUTIL_H

#include "runtime/io/Safetensors.h"
#include "runtime/Tensor.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace xlnetc::rt::test {

/// A fresh directory under the system temp dir, removed at destruction.
class TempDir {
public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("xlnet-data-tests-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  /// `name` inside the directory.
  std::string file(const std::string &name) const {
    return (path_ / name).string();
  }

private:
  std::filesystem::path path_;
};

/// Writes `text` to `path`.
inline void writeText(const std::string &path, const std::string &text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

/// The whole file as a string.
inline std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Same dtype, shape and bytes.
inline bool sameTensor(const Tensor &a, const Tensor &b) {
  return a.dtype == b.dtype && a.shape == b.shape &&
         std::memcmp(a.bytes(), b.bytes(), a.nbytes()) == 0;
}

/// Row b of a [B, S] i64 tensor, positions [from, to).
inline std::vector<int64_t> rowSlice(const Tensor &t, int64_t b, int64_t from,
                                     int64_t to) {
  const int64_t *p = t.i64() + b * t.shape[1];
  return std::vector<int64_t>(p + from, p + to);
}

/// Path of a golden batch file; empty when ../shared/golden lacks it.
inline std::string goldenBatchPath(const std::string &name) {
  std::string path =
      std::string(XLNETC_GOLDEN_DIR) + "/" + name + ".batch.safetensors";
  return std::filesystem::exists(path) ? path : std::string();
}

} // namespace xlnetc::rt::test

#endif // XLNETC_TEST_DATA_DATATESTUTIL_H
