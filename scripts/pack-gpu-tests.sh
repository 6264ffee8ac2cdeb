#!/usr/bin/env bash
# Packs what a GPU machine needs to run the device tests, train from bundles
# and run the benchmarks, none of which links MLIR: xlnet-device-tests,
# xlnetc-run, the shared libraries they need that a bare CUDA image may lack
# (fmt, OpenBLAS, SentencePiece, toml++ and their runtime), the whole-step
# plans compiled at build time, a training bundle of the tiny model (fp32,
# its kernels compiled ahead of time for sm_90), the benchmark bundles
# (XLNet-Base and -Large training steps in bf16 at several batch sizes,
# compressed; their kernels compile on the GPU machine), the HuggingFace
# side (scripts/hf_xlnet_bench.py), the table maker (scripts/bench_table.py)
# and a demo corpus. Writes DIR (default .gpu/, ignored by git); on the GPU
# machine run `bash DIR/run.sh tests` and `bash DIR/run.sh bench` from the
# repository root (docs/Testing.md "On a GPU", docs/Benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu}
build=${BUILD_DIR:-build}
cmake --build "$build" --target xlnet-device-tests xlnetc xlnetc-run > /dev/null
rm -rf "$out" && mkdir -p "$out/bin" "$out/lib" "$out/plans" "$out/bundles"
cp "$build/bin/xlnet-device-tests" "$build/bin/xlnetc-run" "$out/bin/"
cp "$build"/test/Device/plans/* "$out/plans/"
# A training bundle for xlnetc-run (docs/Bundles.md) and a corpus to feed it.
"$build/bin/xlnetc" compile models/xlnet-tiny.toml --arch sm_90 \
  -o "$out/bundles/tiny-train" > /dev/null
# The benchmark bundles: bf16 training steps of the paper's shapes (seq 512,
# mem 384, reuse 256, num_predict 85, bi_data) at batch sizes up to what the
# memory plan says an 80 GB GPU holds, and one past it (the largest batch
# that runs is measured, not assumed; docs/Benchmarks.md).
bench=$(mktemp -d)
for mb in base:16 base:32 base:64 base:128 base:256 large:8 large:16 large:32 large:64 large:96 large:128; do
  model=${mb%%:*} batch=${mb##*:}
  "$build/bin/xlnetc" compile "models/xlnet-$model.toml" --precision bf16 --batch-size "$batch" \
    -o "$bench/$model-b$batch" > /dev/null
done
tar czf "$out/bench-bundles.tgz" -C "$bench" .
rm -rf "$bench"
"$build/bin/xlnetc" make-corpus demo "$out/demo.txt" --lines 20000 > /dev/null
cp scripts/hf_xlnet_bench.py scripts/bench_table.py test/Training/inputs/metrics.py "$out/"
cp models/xlnet-base.toml models/xlnet-large.toml "$out/"
for lib in libfmt.so.9 libopenblas.so.0 libgfortran.so.5 libquadmath.so.0 libgomp.so.1 \
           libsentencepiece.so.0 libsentencepiece_train.so.0 libtomlplusplus.so.3; do
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
  [ -n "$path" ] && cp -L "$path" "$out/lib/"
done
cat > "$out/run.sh" <<'RUN'
#!/usr/bin/env bash
# On the GPU machine, from the repository root. Output under $OUT when set.
#   run.sh tests   every device test (GPU tests run, none skips for want of a
#                  GPU), 20 tiny training steps from a bundle, the same 20
#                  steps data parallel through NCCL (--data-parallel, one
#                  GPU) compared bit for bit and with its weights doubled
#                  (the first gradient norm exactly twice), then
#                  compute-sanitizer memcheck and racecheck on the whole tiny
#                  training step; exit 1 when any of them fails;
#   run.sh bench   the benchmarks, both sides (docs/Benchmarks.md): xlnetc's
#                  bf16 training step of XLNet-Base and -Large at each packed
#                  batch size, the fused attention kernels alone, HuggingFace
#                  XLNetLMHeadModel under bf16 autocast, eager and
#                  torch.compile, and its largest batch; then the tables.
#                  Within BENCH_BUDGET_S (480) seconds, most needed first.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export XLNETC_TEST_PLANS="$here/plans" XLNETC_KERNEL_CACHE=/tmp/xlnetc-kernels
log=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
case "${1:-tests}" in
tests)
  status=0
  "$here/bin/xlnet-device-tests" --gtest_output=xml:"$log/device-tests.xml" > "$log/device-tests.log" 2>&1 ||
    status=1
  grep -E '^\[  (FAILED|PASSED|SKIPPED) |tests ran' "$log/device-tests.log"
  rm -rf /tmp/run-tiny /tmp/run-tiny-dp
  "$here/bin/xlnetc-run" train "$here/bundles/tiny-train" --data "$here/demo.txt" \
    --out /tmp/run-tiny --steps 20 --no-plot --device cuda 2>&1 | tail -4
  # The data-parallel path on one GPU (docs/Distributed.md "One process"):
  # the same run in 18 gradient buckets, each all-reduced by NCCL on the
  # side stream (a world of one: a weight of 1), step by step rather than
  # from the CUDA graph; it must equal the run above bit for bit. NCCL is
  # the system's, else the one PyTorch's wheels bring.
  nccl=$(ldconfig -p | awk '$1 == "libnccl.so.2" { print $NF; exit }')
  [ -n "$nccl" ] || nccl=$(python3 -c 'import glob, site
print(next(iter(sorted(f for d in site.getsitepackages()
                       for f in glob.glob(d + "/nvidia/**/libnccl.so.2", recursive=True))), ""))')
  echo "NCCL: ${nccl:-none found}"
  [ -n "$nccl" ] && export LD_LIBRARY_PATH="$(dirname "$nccl"):$LD_LIBRARY_PATH"
  "$here/bin/xlnetc-run" train "$here/bundles/tiny-train" --data "$here/demo.txt" \
    --tokenizer /tmp/run-tiny/spiece.model --out /tmp/run-tiny-dp --steps 20 --no-plot \
    --device cuda --data-parallel --bucket-mib 0.02 2>&1 \
    | grep -E 'data parallel|all-reduce|^step 20/|^done|error' | tee "$log/nccl-one-gpu.log"
  if "$here/bin/xlnetc-run" compare /tmp/run-tiny-dp/checkpoint.safetensors \
       /tmp/run-tiny/checkpoint.safetensors --rtol 0 > "$log/nccl-compare.log" 2>&1; then
    echo "NCCL on one GPU: bit for bit the plain run ($(tail -1 "$log/nccl-compare.log"))"
  else
    echo "NCCL on one GPU: DIFFERS from the plain run or did not run ($log/nccl-compare.log)"
    status=1
  fi
  # The step reads what NCCL wrote: with every weight doubled (a test hook)
  # the first step's gradient norm is exactly twice the plain run's.
  rm -rf /tmp/run-tiny-dp2
  XLNETC_FAULT_REDUCE_SCALE=2 "$here/bin/xlnetc-run" train "$here/bundles/tiny-train" \
    --data "$here/demo.txt" --tokenizer /tmp/run-tiny/spiece.model --out /tmp/run-tiny-dp2 \
    --steps 1 --no-plot --device cuda --data-parallel --bucket-mib 0.02 > /dev/null 2>&1
  python3 "$here/metrics.py" scaled /tmp/run-tiny-dp2/metrics.jsonl /tmp/run-tiny/metrics.jsonl \
    1 2 || { echo "NCCL on one GPU: the doubled all-reduce did not double the norm"; status=1; }
  # Last, as the slowest: each under a time limit (124: it ran out), so a
  # slow one cannot take the call's time from the checks above.
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 \
      "$here/bin/xlnet-device-tests" --gtest_filter='WholeStep.TinyTrainingStep' \
      > "$log/sanitizer-$tool.log" 2>&1
    rc=$?
    echo "compute-sanitizer $tool: exit $rc ($(grep -c 'ERROR SUMMARY: 0 errors' "$log/sanitizer-$tool.log") clean summaries)"
    [ $rc = 0 ] || status=1
  done
  exit $status
  ;;
bench)
  # One device call may run 10 minutes: the items run in the order of what
  # the tables need most, each under its own time limit, and none starts
  # once BENCH_BUDGET_S (default 480) seconds have gone; skipped ones are
  # named. The JSON files come back as one archive (a device call returns
  # at most 8 files), the tables as tables.md and on stdout.
  budget=${BENCH_BUDGET_S:-480}
  work=/tmp/xlnetc-bench && rm -rf "$work" && mkdir -p "$work"
  mkdir -p /tmp/bench-bundles && tar xzf "$here/bench-bundles.tgz" -C /tmp/bench-bundles
  item() {  # item NAME SECONDS CMD...: CMD under a limit, unless the budget is spent
    local name=$1 limit=$2; shift 2
    if [ "$SECONDS" -ge "$budget" ]; then echo "$name: skipped (time budget of ${budget} s spent)"; return; fi
    timeout "$limit" "$@" > "$work/$name.log" 2>&1
    local rc=$?
    tail -2 "$work/$name.log"
    [ $rc = 0 ] || echo "$name: exit $rc$([ $rc = 124 ] && echo " (ran past ${limit} s)")"
  }
  ours() {  # ours MODEL-bBATCH: xlnetc-run bench of one bundle
    item "xlnetc-$1" 150 "$here/bin/xlnetc-run" bench "/tmp/bench-bundles/$1" --device cuda \
      --steps 5 --warmup 2 --json "$work/xlnetc-$1.json"
  }
  hf() {  # hf MODEL BATCH eager|compile
    item "hf-$1-b$2-$3" "$([ "$3" = compile ] && echo 240 || echo 120)" python3 \
      "$here/hf_xlnet_bench.py" "$here/xlnet-$1.toml" --batch "$2" --steps 5 --dtype bf16 \
      --warmup "$([ "$3" = compile ] && echo 3 || echo 2)" $([ "$3" = compile ] && echo --compile) \
      --json "$work/hf-$1-b$2-$3.json"
  }
  # 1. Both sides at the batches they share.
  for mb in base:16 large:16 base:32 large:32; do
    ours "${mb%%:*}-b${mb##*:}"; hf "${mb%%:*}" "${mb##*:}" eager
  done
  # 2. The attention kernels, then torch.compile.
  item attn-base 120 "$here/bin/xlnetc-run" bench-attention --device cuda --batch 16 --heads 12 \
    --d-head 64 --json "$work/attn-base.json"
  item attn-large 120 "$here/bin/xlnetc-run" bench-attention --device cuda --batch 16 --heads 16 \
    --d-head 64 --json "$work/attn-large.json"
  hf base 16 compile; hf large 16 compile
  # 3. The largest batches: xlnetc's packed sizes, HuggingFace's search.
  for b in /tmp/bench-bundles/*-b*; do
    name=$(basename "$b")
    [ -f "$work/xlnetc-$name.json" ] || [ -f "$work/xlnetc-$name.log" ] || ours "$name"
  done
  for model in base large; do
    item "hf-$model-max-eager" 180 python3 "$here/hf_xlnet_bench.py" "$here/xlnet-$model.toml" \
      --batch 4 --dtype bf16 --max-batch --json "$work/hf-$model-max-eager.json"
  done
  python3 "$here/bench_table.py" "$work" | tee "$log/tables.md"
  tar czf "$log/bench-results.tgz" -C "$work" .
  echo "bench: ${SECONDS} s; JSON and logs in $log/bench-results.tgz"
  ;;
*)
  echo "usage: run.sh tests|bench" >&2
  exit 2
  ;;
esac
RUN
chmod +x "$out/run.sh"
du -sh "$out"
