#!/usr/bin/env bash
# The CI's sanitizer job (docs/Testing.md "Sanitizers"): the unit tests of
# the code every hostile input reaches — the spec loaders, the data
# pipeline (corpus, tokenizer), checkpoints, run directories, the bundle
# reader and device program (every fuzz seed and kept reproducer,
# FuzzRegression.*), the exchanges between ranks — built with
# AddressSanitizer + UndefinedBehaviorSanitizer (the CMake preset
# "sanitize", build-asan/) and run. scripts/run-tests.sh calls it after the
# suite; the whole suite under the sanitizers is scripts/sanitize.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="${JOBS:-$(nproc)}"
tests=(xlnet-spec-tests xlnet-data-tests xlnet-train-tests)
start=$(date +%s)
cmake --preset sanitize >/dev/null
ninja -C build-asan -j "$jobs" "${tests[@]}"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:halt_on_error=1:detect_odr_violation=0:allow_user_poisoning=0"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
for t in "${tests[@]}"; do
  echo "sanitize-subset: $t"
  if ! "build-asan/bin/$t" --gtest_brief=1 --gtest_color=no; then
    echo "sanitize-subset: $t FAILED under ASan + UBSan" >&2
    failed=1
  fi
done
echo "sanitize-subset: ${tests[*]} in $(( $(date +%s) - start )) s, $([ $failed = 0 ] && echo clean || echo FAILED)"
exit $failed
