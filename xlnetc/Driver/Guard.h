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

} // namespace xlnetc

#endif // XLNETC_XLNETC_DRIVER_GUARD_H
