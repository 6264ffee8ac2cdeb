#!/usr/bin/env bash
# The SIMT emulator as a shared-memory race detector: builds test/Device/
# EmuTest with -fsanitize=thread (each CUDA thread a TSan fiber, barriers as
# explicit happens-before edges) in a temporary directory and runs it twice:
#
#   1. every test except TsanOnly.*: must pass with no ThreadSanitizer report
#      (correct kernels, deadlock/fault tests and all);
#   2. TsanOnly.MissingSyncthreadsIsReportedAsARace alone: the kernel with the
#      missing __syncthreads must be reported as a data race on shared memory
#      between two lines of test/Device/kernels/block.cu.
#
# Exit status 0 when both hold. Needs g++ with libtsan and gtest; no GPU.
# Usage: scripts/tsan-kernel-tests.sh [extra g++ flags...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xlnetc-tsan.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

echo "== building EmuTest with -fsanitize=thread in $tmp"
g++ -std=c++17 -O1 -g -fsanitize=thread -fno-omit-frame-pointer \
  -I "$repo/runtime/device/prelude" "$@" \
  "$repo/test/Device/EmuTest.cpp" -o "$tmp/EmuTest.tsan" \
  -lgtest -lgtest_main -pthread

# halt_on_error=0: report everything; exitcode=66 marks "reports were made".
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 second_deadlock_stack=1"
# The schedule is part of the experiment: do not inherit an override.
unset XLNETC_EMU_SCHEDULE

status=0
echo "== 1. correct kernels: expect no report"
set +e
"$tmp/EmuTest.tsan" --gtest_filter='-TsanOnly.*' >"$tmp/clean.log" 2>&1
rc=$?
set -e
grep -E '^\[(==========|  PASSED  |  FAILED  |  SKIPPED )\]' "$tmp/clean.log" || true
reports=$(grep -c 'WARNING: ThreadSanitizer' "$tmp/clean.log" || true)
echo "exit status $rc, ThreadSanitizer reports: $reports"
if [[ $rc -ne 0 || $reports -ne 0 ]]; then
  echo "FAIL: the correct kernels must run clean under TSan; log:"
  cat "$tmp/clean.log"
  status=1
fi

echo "== 2. missing __syncthreads: expect a data race report"
set +e
"$tmp/EmuTest.tsan" --gtest_filter='TsanOnly.*' >"$tmp/race.log" 2>&1
rc=$?
set -e
# The heart of each report: the two conflicting accesses (innermost frame,
# a kernel source line) and the CUDA threads (fibers) that made them.
grep -E "WARNING: ThreadSanitizer|^  (Read|Write|Previous (read|write)) of|^    #0 .*kernels/|^  Location is|^  Thread T[0-9]+ '" \
  "$tmp/race.log" | sed 's/ created by .*//' | head -20 || true
races=$(grep -c 'WARNING: ThreadSanitizer: data race' "$tmp/race.log" || true)
inKernel=$(grep -c '#0 neighbor_sum .*kernels/block.cu:' "$tmp/race.log" || true)
echo "exit status $rc, data race reports: $races, frames in neighbor_sum: $inKernel"
if [[ $rc -ne 66 || $races -eq 0 || $inKernel -lt 2 ]]; then
  echo "FAIL: the missing __syncthreads was not reported as a race; log:"
  cat "$tmp/race.log"
  status=1
fi

if [[ $status -eq 0 ]]; then
  echo "== PASS: no report on correct kernels, the missing barrier is reported"
fi
exit $status
