//===- Guard.h - The CLI boundary of xlnetc and xlnetc-run ------*- C++ -*-===//
//
// Nothing a command throws may end the process in an abort: the commands
// report errors as Status and messages, and this last line of defence turns
// any exception that still escapes (std::bad_alloc above all, when a user
// skipped the memory check) into one "error:" line and exit code 1.
//
//===----------------------------------------------------------------------===//

#ifndef XLNETC_XLNETC_DRIVER_GUARD_H
#define XLNETC_XLNETC_DRIVER_GUARD_H

#include <exception>
#include <iostream>
#include <new>

namespace xlnetc {

/// Runs `body` (a command's main) and returns its exit code, or 1 with one
/// line on stderr when it throws.
template <typename Body>
int runGuarded(const char *tool, Body &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    std::cerr << tool
              << ": error: out of memory: an allocation failed (the step or its "
                 "data is larger than this machine can hold; the memory check "
                 "refuses such steps unless --no-memory-check is given)\n";
  } catch (const std::exception &e) {
    std::cerr << tool << ": error: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << tool << ": error: internal error: an unknown exception\n";
  }
  return 1;
}

/// Runs `body()` on one rank of a job of several processes (train, eval):
/// rank 0 alone prints to stdout, every rank reports its errors, and a rank
/// that fails — an exception included: unwinding past the transport would
/// finalize MPI while the others wait — ends the job (`world.abort`), so no
/// rank waits for it in a collective. `endedTogether(rc)`: a failure code
/// every rank returns at the same point (no abort).
template <typename World, typename Body, typename EndedTogether>
int runOnEveryRank(World &world, Body &&body, EndedTogether &&endedTogether) {
  std::ostream null(nullptr);
  std::streambuf *saved = world.rank() == 0 ? nullptr : std::cout.rdbuf(null.rdbuf());
  const int rc = runGuarded("xlnetc", body);
  if (saved)
    std::cout.rdbuf(saved);
  if (rc != 0 && !endedTogether(rc))
    world.abort(rc);
  return rc;
}

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_GUARD_H
