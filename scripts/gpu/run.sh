#!/usr/bin/env bash
# The GPU package's runner (scripts/pack-gpu-tests.sh copies it into the
# package as run.sh; docs/Testing.md "On a GPU"). On the GPU machine, from
# anywhere:
#
#   bash .gpu/run.sh              every stage, in order of value
#   bash .gpu/run.sh STAGE...     only these (names below)
#
# Each stage runs under its own time limit and starts only when that limit
# fits what is left of the budget (GPU_BUDGET_S, default 540 s; a stage's
# limit is GPU_LIMIT_<stage> with '-' as '_'). Its result is appended to
# $OUT at once, so a call cut short still returns every stage before the cut:
#   results.md     one table row per stage: PASS, FAIL, TIMEOUT or SKIP, its
#                  seconds and its summary line
#   results.jsonl  the same as JSON, one object a line
#   stages.log     each stage's output (its last 256 KiB), in order
#   cublaslt.log   cuBLASLt's own log of errors and hints
#   tables.md, bench-results.tgz   the benchmark's tables, JSON and logs
# Exit status 1 when any stage failed or ran out of time, 2 when the
# preflight found the package unusable, else 0 (a stage skipped for want of
# budget is listed, not a failure).
#
# XLNETC_RUN_DEVICE (default cuda) is the device every stage runs on; the
# emulated dry run (test/Tools/gpu-package-dry-run.test) sets emu and puts
# stand-ins for nvidia-smi and compute-sanitizer first on PATH. Also:
# GPU_TESTS_FILTER (the gpu-tests stage's gtest filter), GPU_BENCH_COMPILE=0
# (no torch.compile item), GPU_HF_PYTHON (the Python of the HuggingFace
# side, default python3), GPU_WORK_DIR (scratch, default /tmp/xlnetc-gpu-work).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/xlnetc-gpu-out}
budget=${GPU_BUDGET_S:-540}
dev=${XLNETC_RUN_DEVICE:-cuda}
work=${GPU_WORK_DIR:-/tmp/xlnetc-gpu-work}
mkdir -p "$out" && rm -rf "$work" && mkdir -p "$work"
export here out dev work
# xlnetc's binaries find the libraries packed beside them; the Python side
# (HuggingFace, the table maker) keeps its own environment.
export XLNETC_TEST_PLANS="$here/plans" XLNETC_KERNEL_CACHE="$work/kernel-cache"
export CUBLASLT_LOG_MASK=${CUBLASLT_LOG_MASK:-5} CUBLASLT_LOG_FILE="$work/cublaslt-%i.log"
export lib="$work/lib"
mkdir -p "$lib" "$work/bin" && tar xJf "$here/lib.tar.xz" -C "$lib"
# xr (xlnetc-run) and xt (xlnet-device-tests): commands on PATH, so
# timeout can run them too, that set LD_LIBRARY_PATH for themselves alone.
for pair in xr:xlnetc-run xt:xlnet-device-tests; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
    "$lib" "$here/bin/${pair#*:}" > "$work/bin/${pair%%:*}"
  chmod +x "$work/bin/${pair%%:*}"
done
export PATH="$work/bin:$PATH"

#===----------------------------------------------------------------------===#
# The stages. Each is a function that prints what it did and exits non-zero
# when a check fails; its last line starting with "summary:" goes into the
# results table.
#===----------------------------------------------------------------------===#

# Every library resolves; where the driver, NVRTC, cuBLASLt and NCCL come
# from; the GPU, its compute capability, shared memory and driver.
stage_preflight() {
  local missing=0
  for bin in "$here"/bin/*; do
    if LD_LIBRARY_PATH="$lib" ldd "$bin" | grep 'not found'; then
      echo "preflight: $(basename "$bin") cannot load the libraries above"
      missing=1
    fi
  done
  [ $missing = 0 ] || { echo "summary: libraries missing (above)"; return 2; }
  nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv
  # Read whole before it is searched (a grep that stops early would kill
  # the writer with SIGPIPE, which pipefail turns into a failure).
  local devices
  devices=$(xr devices)
  echo "$devices"
  grep -q "^$dev .* yes" <<< "$devices" ||
    { echo "summary: xlnetc sees no $dev device (above)"; return 2; }
  echo "summary: $(awk -v d="$dev" '$1 == d { $1 = ""; $2 = ""; print }' <<< "$devices" | sed 's/^ *//')"
}

# The device tests that need a GPU: the driver, the smoke kernels, cuBLASLt
# in f32 and bf16 with every epilogue and a stride-0 batch, every epilogue
# unfused (the fallback for epilogues cuBLASLt cannot fuse), whole steps.
stage_gpu_tests() {
  local filter=${GPU_TESTS_FILTER:-CudaDriverTest.*:CudaDevice.*:GemmOnDevice.*:GemmFallback.*:WholeStep.*:NvrtcLoadTest.*:CublasLtLoadTest.*:NcclLoadTest.*}
  xt --gtest_filter="$filter" --gtest_brief=1
  local rc=$?
  echo "summary: $(xt --gtest_filter="$filter" --gtest_list_tests | grep -c '^  ') tests, exit $rc"
  return $rc
}

# The production path: xlnet-small's bf16 grads step (d_head 64, the
# tensor-core attention of XLNet-Large) against the fp32 host reference the
# pack computed: the loss within 1%, every gradient's cosine >= 0.99.
stage_bf16_small() {
  # The synthetic inputs of seed 0, drawn as the pack drew them: the batch
  # must be the reference's.
  xr run-step "$here/bundles/small-bf16-grads" --device "$dev" \
    --dump-batch "$work/small.batch.safetensors" --out "$work/small-bf16.safetensors" || return 1
  xr compare "$work/small.batch.safetensors" "$here/refs/small.batch.safetensors" --rtol 0 ||
    { echo "summary: the batch is not the reference's"; return 1; }
  xr compare "$work/small-bf16.safetensors" "$here/refs/small-fp32.safetensors" --rtol 0.01 \
    --only loss > "$work/small-loss.log"
  local lossRc=$?
  cat "$work/small-loss.log"
  xr compare "$work/small-bf16.safetensors" "$here/refs/small-fp32.safetensors" \
    --min-cosine 0.99 --only 'grad.*' > "$work/small-cosine.log"
  local rc=$?
  cat "$work/small-cosine.log"
  echo "summary: loss: $(tail -1 "$work/small-loss.log" | sed 's/compare: //'); gradients: $(tail -1 "$work/small-cosine.log" | sed 's/compare: //')"
  [ $lossRc = 0 ] && [ $rc = 0 ]
}

# A second run of the same step is bitwise the first.
stage_bitwise() {
  xr run-step "$here/bundles/small-bf16-grads" --device "$dev" \
    --out "$work/small-bf16-again.safetensors" || return 1
  [ -f "$work/small-bf16.safetensors" ] ||
    { echo "summary: no first run (stage bf16-small)"; return 1; }
  xr compare "$work/small-bf16-again.safetensors" "$work/small-bf16.safetensors" --rtol 0 \
    > "$work/bitwise.log"
  local rc=$?
  tail -3 "$work/bitwise.log"
  echo "summary: two runs: $(tail -1 "$work/bitwise.log")"
  return $rc
}

# The same step with every fused GEMM epilogue unfused (the fallback where
# cuBLASLt has no algorithm for one: XLNETC_FAULT_GEMM_EPILOGUE makes the
# device say so): the same tolerances against the reference.
stage_fallback() {
  XLNETC_FAULT_GEMM_EPILOGUE=unsupported xr run-step "$here/bundles/small-bf16-grads" \
    --device "$dev" --out "$work/small-unfused.safetensors" || return 1
  xr compare "$work/small-unfused.safetensors" "$here/refs/small-fp32.safetensors" --rtol 0.01 \
    --only loss > "$work/unfused-loss.log"
  local lossRc=$?
  xr compare "$work/small-unfused.safetensors" "$here/refs/small-fp32.safetensors" \
    --min-cosine 0.99 --only 'grad.*' > "$work/unfused-cosine.log"
  local rc=$?
  echo "summary: loss: $(tail -1 "$work/unfused-loss.log" | sed 's/compare: //'); gradients: $(tail -1 "$work/unfused-cosine.log" | sed 's/compare: //')"
  [ $lossRc = 0 ] && [ $rc = 0 ]
}

# Every golden case in fp32: forward within 1e-5, gradients within 1e-4.
stage_golden() {
  local status=0 line=""
  for case in tiny tiny-nomem small; do
    xr run-step "$here/bundles/golden-$case" --device "$dev" \
      --weights "$here/golden/$case.weights.safetensors" \
      --batch "$here/golden/$case.batch.safetensors" --out "$work/golden-$case.safetensors" ||
      { status=1; line+=" $case: did not run;"; continue; }
    xr compare "$work/golden-$case.safetensors" "$here/golden/$case.expected.safetensors" \
      --rtol 1e-5 --only loss per_token_loss logits hidden 'new_mems.*' > "$work/g-$case-fwd.log" ||
      status=1
    xr compare "$work/golden-$case.safetensors" "$here/golden/$case.expected.safetensors" \
      --rtol 1e-4 --only 'grad.*' > "$work/g-$case-grad.log" || status=1
    grep -E 'MISMATCH|missing' "$work/g-$case-fwd.log" "$work/g-$case-grad.log"
    line+=" $case: $(tail -1 "$work/g-$case-fwd.log" | sed 's/compare: //'), $(tail -1 "$work/g-$case-grad.log" | sed 's/compare: //');"
  done
  echo "summary:$line"
  return $status
}

# 20 training steps of the tiny model on the GPU against the host's.
stage_tiny_train() {
  rm -rf "$work/run-host" "$work/run-dev"
  xr train "$here/bundles/tiny-train" --data "$here/demo.txt" --out "$work/run-host" \
    --steps 20 --no-plot --device host | tail -2 || return 1
  xr train "$here/bundles/tiny-train" --data "$here/demo.txt" --out "$work/run-dev" \
    --tokenizer "$work/run-host/spiece.model" --steps 20 --no-plot --device "$dev" | tail -3 ||
    return 1
  local close
  close=$(python3 "$here/metrics.py" close "$work/run-dev/metrics.jsonl" \
            "$work/run-host/metrics.jsonl" 1e-3)
  local rc=$?
  echo "$close"
  echo "summary: $dev against host, $close"
  return $rc
}

# The data-parallel path on one GPU (docs/Distributed.md "One process"):
# the same 20 steps in 18 gradient buckets, each all-reduced by NCCL on the
# side stream, bit for bit the plain run; with every weight doubled (a test
# hook) the first gradient norm exactly twice the plain run's.
stage_nccl() {
  [ -f "$work/run-dev/checkpoint.safetensors" ] ||
    { echo "summary: no plain run (stage tiny-train)"; return 1; }
  rm -rf "$work/run-dp" "$work/run-dp2"
  xr train "$here/bundles/tiny-train" --data "$here/demo.txt" \
    --tokenizer "$work/run-host/spiece.model" --out "$work/run-dp" --steps 20 --no-plot \
    --device "$dev" --data-parallel --bucket-mib 0.02 2>&1 |
    grep -E 'data parallel|all-reduce|^step 20/|^done|error'
  xr compare "$work/run-dp/checkpoint.safetensors" "$work/run-dev/checkpoint.safetensors" \
    --rtol 0 > "$work/nccl-compare.log"
  local same=$?
  tail -1 "$work/nccl-compare.log"
  XLNETC_FAULT_REDUCE_SCALE=2 xr train "$here/bundles/tiny-train" --data "$here/demo.txt" \
    --tokenizer "$work/run-host/spiece.model" --out "$work/run-dp2" --steps 1 --no-plot \
    --device "$dev" --data-parallel --bucket-mib 0.02 > /dev/null 2>&1
  local scaled
  scaled=$(python3 "$here/metrics.py" scaled "$work/run-dp2/metrics.jsonl" \
             "$work/run-dev/metrics.jsonl" 1 2)
  local scaledRc=$?
  echo "$scaled"
  echo "summary: bit for bit: $([ $same = 0 ] && echo yes || echo NO); $scaled"
  [ $same = 0 ] && [ $scaledRc = 0 ]
}

# compute-sanitizer TOOL on the bf16 tiny grads step (the tensor-core
# attention: every phase, both streams, at a small shape) and on two fp32
# training steps of the tiny model.
sanitize() {
  local tool=$1 status=0 errors=""
  local -a runs=("run-step $here/bundles/tiny-bf16-grads --device $dev")
  [ -f "$work/run-host/spiece.model" ] && runs+=(
    "train $here/bundles/tiny-train --data $here/demo.txt --tokenizer $work/run-host/spiece.model --out $work/run-san-$tool --steps 2 --no-plot --device $dev")
  for args in "${runs[@]}"; do
    rm -rf "$work/run-san-$tool"
    # shellcheck disable=SC2086 # the arguments above hold no spaces
    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      compute-sanitizer --tool "$tool" --error-exitcode 9 --print-limit 20 \
      "$here/bin/xlnetc-run" $args > "$work/san.log" 2>&1
    local rc=$?
    tail -25 "$work/san.log"
    # memcheck and synccheck print "ERROR SUMMARY: N errors", racecheck
    # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)".
    errors+=" $(grep -o '[A-Z]* SUMMARY: .*' "$work/san.log" | tail -1);"
    [ $rc = 0 ] || status=1
  done
  echo "summary: $tool:$errors"
  return $status
}
stage_memcheck() { sanitize memcheck; }
# Kernels compiled with -lineinfo, so a hazard names its source line.
stage_racecheck() { XLNETC_CUDA_LINEINFO=1 sanitize racecheck; }
stage_synccheck() { sanitize synccheck; }

# The benchmarks (docs/Benchmarks.md): the fused attention kernels, then
# xlnetc's bf16 training step of XLNet-Large and -Base beside HuggingFace
# (eager, then torch.compile), each item under its own limit inside the
# stage's; the tables and the JSON come back.
stage_bench() {
  local b="$work/bench" items=0 skipped=""
  # Items start only while they fit before the stage's own limit (less 20 s
  # for the tables), so the tables are always written.
  local deadline=$((SECONDS + ${STAGE_LIMIT:-400} - 20))
  mkdir -p "$b" "$work/bench-bundles"
  tar xzf "$here/bench-bundles.tgz" -C "$work/bench-bundles"
  local failed=""
  item() { # item NAME SECONDS CMD...
    local name=$1 limit=$2; shift 2
    if [ $((SECONDS + limit)) -gt $deadline ]; then skipped+=" $name"; return; fi
    timeout -k 5 "$limit" "$@" > "$b/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc; $(tail -1 "$b/$name.log")"
    items=$((items + 1))
    [ $rc = 0 ] || failed+=" $name (exit $rc)"
  }
  hf() { # hf MODEL BATCH eager|compile
    item "hf-$1-b$2-$3" "$([ "$3" = compile ] && echo 240 || echo 90)" "${GPU_HF_PYTHON:-python3}" \
      "$here/hf_xlnet_bench.py" "$here/xlnet-$1.toml" --batch "$2" --steps 5 --dtype bf16 \
      --warmup "$([ "$3" = compile ] && echo 3 || echo 2)" $([ "$3" = compile ] && echo --compile) \
      --json "$b/hf-$1-b$2-$3.json"
  }
  ours() { # ours MODEL BATCH
    item "xlnetc-$1-b$2" 90 xr bench "$work/bench-bundles/$1-b$2" --device "$dev" --steps 5 \
      --warmup 2 --json "$b/xlnetc-$1-b$2.json"
  }
  # Most needed first (bench-order.txt, the pack's order: XLNet-Large at
  # batch 16 first): xlnetc beside HuggingFace eager, then for the first
  # model the attention kernels and torch.compile.
  local first=1 mb model batch
  for mb in $(cat "$here/bench-order.txt"); do
    model=${mb%%:*} batch=${mb##*:}
    ours "$model" "$batch"
    hf "$model" "$batch" eager
    if [ $first = 1 ]; then
      key() { awk -F'[= ]+' -v k="$1" '$1 == k { print $2 }' "$here/xlnet-$model.toml"; }
      item "attn-$model" 60 xr bench-attention --device "$dev" --batch "$batch" \
        --heads "$(key n_head)" --d-head "$(key d_head)" --seq-len "$(key seq_len)" \
        --mem-len "$(key mem_len)" --num-predict "$(key num_predict)" --json "$b/attn-$model.json"
      # torch.compile takes minutes on XLNet-Large: GPU_BENCH_COMPILE=0 leaves it out.
      [ "${GPU_BENCH_COMPILE:-1}" = 0 ] || hf "$model" "$batch" compile
      first=0
    fi
  done
  python3 "$here/bench_table.py" "$b" > "$out/tables.md"
  cat "$out/tables.md"
  tar czf "$out/bench-results.tgz" -C "$b" .
  echo "summary: $items items run${failed:+, failed:$failed}${skipped:+, skipped for time:$skipped}; tables.md, bench-results.tgz"
  [ -z "$failed" ] && [ $items -gt 0 ]
}
export -f stage_preflight stage_gpu_tests stage_bf16_small stage_bitwise stage_fallback stage_golden \
  stage_tiny_train stage_nccl sanitize stage_memcheck stage_racecheck stage_synccheck stage_bench

#===----------------------------------------------------------------------===#
# The driver.
#===----------------------------------------------------------------------===#

# name:limit, in order of value.
all=(preflight:60 gpu-tests:120 bf16-small:60 bitwise:45 fallback:45 golden:60 tiny-train:60 nccl:45
     memcheck:90 racecheck:120 synccheck:60 bench:400)
selected=("$@")
failed=0
echo "| stage | result | seconds | summary |" > "$out/results.md"
echo "|---|---|---|---|" >> "$out/results.md"
: > "$out/results.jsonl"
: > "$out/stages.log"
: > "$out/cublaslt.log"

record() { # record NAME RESULT SECONDS SUMMARY
  local summary=${4//|/\\|}
  echo "| $1 | $2 | $3 | $summary |" >> "$out/results.md"
  python3 -c 'import json, sys
print(json.dumps({"stage": sys.argv[1], "result": sys.argv[2], "seconds": int(sys.argv[3]),
                  "summary": sys.argv[4]}))' "$1" "$2" "$3" "$4" >> "$out/results.jsonl"
  printf '%-11s %-7s %4s s  %s\n' "$1" "$2" "$3" "$4"
}

stagePid=
trap '[ -n "$stagePid" ] && kill -TERM $stagePid 2> /dev/null; exit 143' TERM INT
for entry in "${all[@]}"; do
  name=${entry%%:*} limit=${entry##*:}
  if [ ${#selected[@]} -gt 0 ] && ! printf '%s\n' "${selected[@]}" | grep -qx "$name"; then
    continue
  fi
  var="GPU_LIMIT_${name//-/_}"
  limit=${!var:-$limit}
  left=$((budget - SECONDS))
  if [ "$limit" -gt "$left" ]; then
    record "$name" SKIP 0 "its limit of $limit s does not fit the $left s left of the budget"
    continue
  fi
  start=$SECONDS
  # In the background, so a TERM or INT to run.sh (a call cut short) ends
  # the stage too: timeout passes the signal on to the stage's processes.
  STAGE_LIMIT=$limit timeout -k 5 "$limit" bash -o pipefail -c "stage_${name//-/_}" \
    > "$work/$name.log" 2>&1 &
  stagePid=$!
  wait $stagePid
  rc=$?
  took=$((SECONDS - start))
  summary=$(grep '^summary: ' "$work/$name.log" | tail -1 | sed 's/^summary: //')
  [ -n "$summary" ] || summary=$(tail -1 "$work/$name.log")
  if [ $rc = 0 ]; then
    result=PASS
  elif [ $rc = 124 ] || [ $rc = 137 ]; then
    result=TIMEOUT summary="cut at its limit of $limit s; $summary"
  else
    result=FAIL summary="exit $rc; $summary"
  fi
  { echo "===== $name: $result ($took s)"; tail -c 262144 "$work/$name.log"; } >> "$out/stages.log"
  for f in "$work"/cublaslt-*.log; do
    [ -s "$f" ] && { echo "===== $name: $(basename "$f")"; tail -c 65536 "$f"; } >> "$out/cublaslt.log"
    rm -f "$f"
  done
  record "$name" "$result" "$took" "$summary"
  [ "$result" = PASS ] || failed=1
  if [ "$name" = preflight ] && [ "$result" != PASS ]; then
    echo "preflight failed: the package cannot run here (stages.log); nothing else was run"
    exit 2
  fi
done
echo "run.sh: ${SECONDS} s of a ${budget} s budget; results in $out/results.md"
exit $failed
