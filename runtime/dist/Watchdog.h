//===- Watchdog.h - A rank that waits too long for the others --*- C++ -*-===//
//
// --rank-timeout (docs/Distributed.md "Failures"): while a rank waits for
// the others (an MPI collective, joining NCCL, a GPU step's all-reduces)
// for longer than the timeout, one of them stopped responding. MPI may
// only be called from the main thread, so the watchdog, a thread of its
// own, does not abort through MPI: it prints one line and ends the process
// (_Exit(1)), and the launcher ends the other ranks.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_RUNTIME_DIST_WATCHDOG_H
#define XLNETC_RUNTIME_DIST_WATCHDOG_H

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace xlnetc::rt::dist {

class Watchdog {
public:
  /// What happens when a wait passes its deadline: `what` names the wait,
  /// `seconds` the timeout. The default prints the line and ends the
  /// process; tests pass their own. It runs on the watchdog's thread with
  /// its lock held: it must be quick, must not call the watchdog and must
  /// not throw.
  using Expired = std::function<void(int rank, double seconds, const char *what)>;
  explicit Watchdog(int rank, Expired expired = endProcess);
  ~Watchdog();
  Watchdog(const Watchdog &) = delete;
  Watchdog &operator=(const Watchdog &) = delete;

  /// 0 (or beyond a year, past what a deadline can hold): no limit, the
  /// default.
  void setTimeout(double seconds);
  /// A wait for the other ranks begins (`what`: a string literal): the
  /// deadline is the timeout from now. Nested: inside a wait (a phase that
  /// makes exchanges of its own), the outer deadline holds.
  void arm(const char *what);
  /// The wait that arm() began ends.
  void disarm();

  /// "xlnetc: error: rank R waited S s in WHAT for the other processes: ..."
  /// on stderr, then _Exit(1).
  static void endProcess(int rank, double seconds, const char *what);

private:
  void run();

  const int rank_;
  const Expired expired_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false, armed_ = false;
  int depth_ = 0; ///< arm() calls not yet disarmed
  double timeout_ = 0;
  const char *what_ = "";
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_; // last: starts once the rest is initialized
};

} // namespace xlnetc::rt::dist

#endif // XLNETC_RUNTIME_DIST_WATCHDOG_H
