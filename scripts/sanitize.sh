#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer
# (docs/Testing.md "Sanitizers"): configures build-asan/ with the CMake
# preset "sanitize" (GCC, -fsanitize=address,undefined, no recovery from
# undefined behaviour), builds everything and runs ctest there. Extra
# arguments go to ctest (e.g. -R lit.Numerics). Slow: a full build plus a
# suite about three times slower than the plain one.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-$(nproc)}"
cmake --preset sanitize >/dev/null
ninja -C build-asan -j "$jobs"
# Leaks: LeakSanitizer reports what the process still holds at exit; the
# suppressions file names the one-time allocations of third-party
# libraries (none of xlnetc's own are suppressed).
# allow_user_poisoning=0: LLVM's headers poison BumpPtrAllocator slabs when
# they are compiled with ASan, but libMLIR.so is not, so the slabs it
# unpoisons never are; without this every MLIR parse reports a false
# use-after-poison.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_odr_violation=0:allow_user_poisoning=0"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
ctest --test-dir build-asan -j "$jobs" --output-on-failure "$@"
