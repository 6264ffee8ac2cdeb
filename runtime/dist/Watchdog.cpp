//===- Watchdog.cpp - A rank that waits too long for the others -----------===//

#include "runtime/dist/Watchdog.h"

#include <cstdio>
#include <cstdlib>

namespace xlnetc::rt::dist {

Watchdog::Watchdog(int rank, Expired expired)
    : rank_(rank), expired_(std::move(expired)), thread_([this] { run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void Watchdog::setTimeout(double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  timeout_ = seconds > 0 && seconds < 3.2e7 ? seconds : 0;
}

void Watchdog::arm(const char *what) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (depth_++ > 0 || timeout_ <= 0)
    return;
  what_ = what;
  deadline_ = std::chrono::steady_clock::now() +
              std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(timeout_));
  armed_ = true;
  wake_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (depth_ > 0 && --depth_ == 0)
    armed_ = false;
}

void Watchdog::endProcess(int rank, double seconds, const char *what) {
  std::fprintf(stderr,
               "xlnetc: error: rank %d waited %.0f s in %s for the other processes: one of "
               "them stopped responding; ending this process (--rank-timeout)\n",
               rank, seconds, what);
  std::fflush(stderr);
  std::_Exit(1);
}

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    if (wake_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      armed_ = false; // once per wait (a test's action returns)
      expired_(rank_, timeout_, what_);
    }
  }
}

} // namespace xlnetc::rt::dist
