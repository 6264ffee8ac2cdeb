//===- ExchangeTest.cpp - The small exchanges between training ranks ------===//
//
// runtime/dist/RankProtocol.h: the tagged exchanges and the settings check.
// In one process (ctest) each rank agrees with itself; under mpirun with 2
// processes (test/Training/dist-unit.test) the ranks are put out of step
// and given different settings, and must say so, naming both sides.
//
//===----------------------------------------------------------------------===//

#include "runtime/dist/RankProtocol.h"

#include "runtime/dist/Transport.h"

#include <gtest/gtest.h>

#include <memory>

using namespace xlnetc;
using namespace xlnetc::rt::dist;

namespace {

rt::dist::Transport &world() {
  static std::unique_ptr<rt::dist::Transport> w = [] {
    std::unique_ptr<rt::dist::Transport> t;
    rt::Status st = rt::dist::openTransport(t);
    if (!st) {
      ADD_FAILURE() << st.message();
      t = rt::dist::singleProcess();
    }
    return t;
  }();
  return *w;
}

TEST(DistExchange, RanksInStepGetEveryValue) {
  std::vector<double> all;
  ASSERT_TRUE(gatherDoubles(world(), Exchange::Loss, 0.5 + world().rank(), all));
  ASSERT_EQ(all.size(), size_t(world().size()));
  for (int r = 0; r < world().size(); ++r)
    EXPECT_EQ(all[size_t(r)], 0.5 + r);
}

TEST(DistExchange, RanksOutOfStepNameBothExchanges) {
  if (world().size() < 2)
    GTEST_SKIP() << "needs 2 processes (dist-unit.test runs it under mpirun)";
  // Rank 1 checks the parameters while rank 0 exchanges its loss: the
  // loss is not read as a hash, nor the hash as a loss.
  std::vector<uint64_t> all;
  rt::Status st = exchange64(world(), world().rank() == 1 ? Exchange::ParameterCheck : Exchange::Loss,
                             42, all);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("the processes are out of step: rank 0 is in the loss exchange "
                              "(exchange "),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("but rank 1 in the parameter check"), std::string::npos)
      << st.message();
}

TEST(DistExchange, DifferentSettingsNameTheKeyAndBothValues) {
  std::vector<std::pair<std::string, std::string>> settings = {
      {"train.learning_rate", "0.001"}, {"--steps", "20"}, {"--checkpoint-every", "10"}};
  EXPECT_TRUE(checkSameSettings(world(), settings));
  if (world().size() < 2)
    GTEST_SKIP() << "needs 2 processes (dist-unit.test runs it under mpirun)";
  if (world().rank() == 1)
    settings[2].second = "20";
  rt::Status st = checkSameSettings(world(), settings);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.message(), "the processes do not run with the same settings: --checkpoint-every "
                          "is 10 on rank 0 but 20 on rank 1; start every process with the same "
                          "spec and flags");
  // A key only one rank has.
  if (world().rank() == 1)
    settings.emplace_back("--extra", "yes");
  else
    settings[2].second = "20";
  st = checkSameSettings(world(), settings);
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("--extra is (none) on rank 0 but yes on rank 1"), std::string::npos)
      << st.message();
}

} // namespace
