#!/usr/bin/env bash
# Packs what a GPU machine needs to run the device tests, which link no MLIR:
# xlnet-device-tests, the shared libraries it needs that a bare CUDA image may
# lack (fmt, OpenBLAS and their runtime), and the whole-step plans compiled at
# build time. Writes DIR (default .gpu/, ignored by git); on the GPU machine
# run `bash DIR/run.sh` from the repository root (docs/Testing.md "On a GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu}
build=${BUILD_DIR:-build}
cmake --build "$build" --target xlnet-device-tests > /dev/null
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/plans"
cp "$build/bin/xlnet-device-tests" "$out/bin/"
cp "$build"/test/Device/plans/* "$out/plans/"
for lib in libfmt.so.9 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libgomp.so.1; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
  [ -n "$path" ] && cp -L "$path" "$out/lib/"
done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine: every device test (GPU tests run, none skips for want
# of a GPU), then compute-sanitizer memcheck and racecheck on the whole
# tiny training step. Output under $OUT when set.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export XLNETC_TEST_PLANS="$here/plans" XLNETC_KERNEL_CACHE=/tmp/xlnetc-kernels
log=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
"$here/bin/xlnet-device-tests" --gtest_output=xml:"$log/device-tests.xml" 2>&1 | tee "$log/device-tests.log" | grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran'
for tool in memcheck racecheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 \
    "$here/bin/xlnet-device-tests" --gtest_filter='WholeStep.TinyTrainingStep' \
    > "$log/sanitizer-$tool.log" 2>&1
  echo "compute-sanitizer $tool: exit $? ($(grep -c 'ERROR SUMMARY: 0 errors' "$log/sanitizer-$tool.log") clean summaries)"
done
RUN
chmod +x "$out/run.sh"
du -sh "$out"
