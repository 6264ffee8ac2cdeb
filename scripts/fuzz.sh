#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan, no MLIR) in build-fuzz/
# and runs each for a bounded time (docs/Testing.md "Fuzzing"). Not part of
# the default test suite.
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]     (default: 600 s, every target)
#
# Targets: safetensors toml_spec hf_config plan checkpoint raw_batch device_program bundle_manifest. Seeds
# come from fuzz/corpus/<target>/; the growing corpus lives in
# build-fuzz/corpus/<target>/. A crash, hang (10 s), leak or sanitizer report
# stops that target and leaves its input in build-fuzz/artifacts/<target>/:
# fix the bug, then keep the input in fuzz/reproducers/<target>/ — the
# regression test (FuzzRegression.*) runs every kept input. The last lines
# of each run (executions, coverage, corpus) are printed, and all of them
# go to build-fuzz/fuzz-report.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(safetensors toml_spec hf_config plan checkpoint raw_batch device_program bundle_manifest)
fi
cc="${CC:-clang}"
cxx="${CXX:-clang++}"
if ! command -v "$cxx" >/dev/null; then
  echo "fuzz: $cxx not found (apt-get install clang)" >&2
  exit 1
fi
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
# XLNETC_FUZZ_SKIP_BUILD=1: run what build-fuzz/ has (e.g. two runs side by
# side, each with its own XLNETC_FUZZ_REPORT).
if [ "${XLNETC_FUZZ_SKIP_BUILD:-0}" != 1 ]; then
  cmake -G Ninja -S . -B build-fuzz -DXLNETC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
  ninja -C build-fuzz $(printf 'fuzz-%s ' "${targets[@]}")
fi
report="${XLNETC_FUZZ_REPORT:-build-fuzz/fuzz-report.txt}"
: > "$report"
status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/artifacts/$t"
  echo "== fuzz-$t for ${seconds}s" | tee -a "$report"
  log="build-fuzz/fuzz-$t.log"
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     "build-fuzz/bin/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix="build-fuzz/artifacts/$t/" \
       "build-fuzz/corpus/$t" "fuzz/corpus/$t" > "$log" 2>&1; then
    :
  else
    status=1
    echo "fuzz-$t FOUND A PROBLEM: see $log and build-fuzz/artifacts/$t/" | tee -a "$report"
  fi
  # The last status line (#N DONE/pulse cov: ft: corp: exec/s) and the stats.
  grep -E "^#[0-9]+.*(DONE|pulse|NEW|REDUCE)" "$log" | tail -1 | tee -a "$report"
  grep -E "^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)" "$log" \
    | tee -a "$report"
done
exit $status
