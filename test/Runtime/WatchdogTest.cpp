//===- WatchdogTest.cpp - --rank-timeout's watchdog -----------------------===//
//
// The watchdog with a recording action instead of ending the process: a
// wait that passes its deadline fires once, naming it; a wait that ends in
// time does not; inside a wait, a nested one (an MPI exchange within
// joining NCCL) neither resets nor ends the outer deadline.
//
//===----------------------------------------------------------------------===//

#include "runtime/dist/Watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace xlnetc::rt::dist;
using namespace std::chrono_literals;

namespace {

struct Fired {
  std::mutex mutex;
  std::vector<std::string> waits;
  Watchdog::Expired action() {
    return [this](int rank, double seconds, const char *what) {
      std::lock_guard<std::mutex> lock(mutex);
      waits.push_back(std::to_string(rank) + " " + std::to_string(int(seconds * 1000)) + "ms " +
                      what);
    };
  }
  std::vector<std::string> get() {
    std::lock_guard<std::mutex> lock(mutex);
    return waits;
  }
  /// Waits up to 5 s for a first entry (a loaded machine may be late).
  std::vector<std::string> awaitOne() {
    for (int i = 0; i < 500 && get().empty(); ++i)
      std::this_thread::sleep_for(10ms);
    return get();
  }
};

} // namespace

TEST(Watchdog, AWaitPastItsDeadlineFiresOnceNamingIt) {
  Fired fired;
  Watchdog w(3, fired.action());
  w.setTimeout(0.1);
  w.arm("MPI all-gather");
  EXPECT_EQ(fired.awaitOne(), (std::vector<std::string>{"3 100ms MPI all-gather"}));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(fired.get().size(), 1u); // once per wait
  w.disarm();
}

TEST(Watchdog, AWaitThatEndsInTimeOrWithoutALimitDoesNotFire) {
  Fired fired;
  Watchdog w(0, fired.action());
  w.arm("no limit yet"); // the default: no timeout
  std::this_thread::sleep_for(150ms);
  w.disarm();
  w.setTimeout(0.2);
  for (int i = 0; i < 3; ++i) { // each wait gets the whole timeout anew
    w.arm("MPI broadcast");
    std::this_thread::sleep_for(20ms);
    w.disarm();
  }
  std::this_thread::sleep_for(400ms);
  EXPECT_TRUE(fired.get().empty());
  w.setTimeout(0); // 0: no limit again
  w.arm("MPI broadcast");
  std::this_thread::sleep_for(300ms);
  w.disarm();
  EXPECT_TRUE(fired.get().empty());
}

TEST(Watchdog, ANestedWaitKeepsTheOuterDeadline) {
  Fired fired;
  Watchdog w(1, fired.action());
  w.setTimeout(0.3);
  const auto begin = std::chrono::steady_clock::now();
  w.arm("joining NCCL");
  std::this_thread::sleep_for(100ms);
  w.arm("MPI broadcast"); // does not move the deadline to 0.4 s
  w.disarm();             // nor end the outer wait
  EXPECT_EQ(fired.awaitOne(), (std::vector<std::string>{"1 300ms joining NCCL"}));
  // Fired at the outer deadline (0.3 s), not the inner one's (0.4 s):
  // checked from below only, since a loaded machine may be late.
  EXPECT_GE(std::chrono::steady_clock::now() - begin, 300ms);
  w.disarm();
  // After the outer wait ends, nothing is armed.
  std::this_thread::sleep_for(400ms);
  EXPECT_EQ(fired.get().size(), 1u);
}
