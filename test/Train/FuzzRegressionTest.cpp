//===- FuzzRegressionTest.cpp - Every kept fuzz input, in the suite -------===//
//
// The fuzz targets (fuzz/FuzzTargets.h) on their seeds (fuzz/corpus/<t>/)
// and on every input a fuzzer once broke them with (fuzz/reproducers/<t>/,
// kept after the fix): each must return normally — under the default build
// here, under ASan + UBSan in the sanitizer build (scripts/sanitize.sh).
//
//===----------------------------------------------------------------------===//

#include "fuzz/FuzzTargets.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

namespace fs = std::filesystem;

int runAll(const char *kind) {
  int inputs = 0;
  for (const xlnetc::fuzz::NamedTarget &t : xlnetc::fuzz::targets()) {
    const fs::path dir = fs::path(XLNETC_FUZZ_DIR) / kind / t.name;
    if (!fs::is_directory(dir))
      continue;
    for (const fs::directory_entry &e : fs::directory_iterator(dir)) {
      if (!e.is_regular_file() || e.path().filename() == ".keep")
        continue;
      std::ifstream in(e.path(), std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
      SCOPED_TRACE(e.path().string());
      t.run(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
      ++inputs;
    }
  }
  return inputs;
}

TEST(FuzzRegression, SeedsRun) {
  EXPECT_GE(runAll("corpus"), 8) << "every target has a seed";
}

TEST(FuzzRegression, KeptReproducersRun) {
  std::printf("%d kept reproducers ran\n", runAll("reproducers"));
}

} // namespace
