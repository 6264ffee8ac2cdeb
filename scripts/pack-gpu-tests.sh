#!/usr/bin/env bash
# Packs everything a GPU machine needs to check and benchmark xlnetc in one
# device call, none of which links MLIR (docs/Testing.md "On a GPU"):
#   bin/        xlnet-device-tests and xlnetc-run
#   lib.tar.xz  every shared library they need (ldd) except the C/C++
#               runtime and the CUDA driver: the GPU image is another
#               distribution (ICU, fmt, OpenBLAS, SentencePiece differ);
#               compressed (75 MiB -> about 13), run.sh unpacks it
#   plans/      the whole-step plans the device tests run
#   bundles/    compiled steps, each with its kernels compiled ahead of time
#               for sm_90 (no NVRTC time on an H100/H200): the tiny training
#               step (fp32), the tiny and xlnet-small bf16 grads steps, the
#               golden cases' grads steps (fp32)
#   refs/       xlnet-small's batch and its fp32 gradients from the host
#               executor here, the reference of the bf16 step
#   golden/     ../shared/golden's cases
#   bench-bundles.tgz   XLNet-Large and -Base bf16 training steps (sm_90)
#   run.sh      scripts/gpu/run.sh: the staged, time-boxed runner
#   prepared-data.sh   scripts/gpu/prepared-data.sh: training from prepared
#               data on the GPU, after run.sh
#   accumulate.sh      scripts/gpu/accumulate.sh: gradient accumulation on
#               the GPU against one batch and the host, after run.sh
# Usage: scripts/pack-gpu-tests.sh [DIR] (default .gpu/, ignored by git);
# GPU_ARCH (sm_90; none), GPU_PACK_BENCH (below), BUILD_DIR and
# XLNETC_GOLDEN_DIR change what it packs; GPU_PACK_NO_BUILD=1 packs the
# build as it is (the dry-run test, inside a test run).
# Prints the package's size and the device call to make.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-.gpu}
build=${BUILD_DIR:-build}
golden=${XLNETC_GOLDEN_DIR:-../shared/golden}
arch=${GPU_ARCH:-sm_90} # "none": no CUBINs (the emulated dry run)
archArgs=()
[ "$arch" = none ] || archArgs=(--arch "$arch")
xlnetc=$build/bin/xlnetc
step() { echo "pack: $*" >&2; }

[ "${GPU_PACK_NO_BUILD:-0}" = 1 ] ||
  cmake --build "$build" --target xlnet-device-tests xlnetc xlnetc-run > /dev/null
rm -rf "$out" && mkdir -p "$out/bin" "$out/plans" "$out/bundles" "$out/refs" \
  "$out/golden"
cp "$build/bin/xlnet-device-tests" "$build/bin/xlnetc-run" "$out/bin/"
cp "$build"/test/Device/plans/* "$out/plans/"

# 1. The libraries: whatever ldd resolves, but the C/C++ runtime and the
#    CUDA driver (the GPU machine's own must be used). ldd's whole output is
#    read before it is parsed (no early exit into a pipe).
step "libraries"
libs=$(for bin in "$out"/bin/*; do ldd "$bin"; done)
if grep -q 'not found' <<< "$libs"; then
  grep 'not found' <<< "$libs" >&2
  echo "pack: a library of the binaries is missing here (above)" >&2
  exit 1
fi
skip='^(linux-vdso|ld-linux|libc|libm|libmvec|libstdc\+\+|libgcc_s|libpthread|libdl|librt|libcuda)\.so'
libdir=$(mktemp -d)
while read -r name path; do
  [[ $name =~ $skip ]] && continue
  cp -L "$path" "$libdir/$name"
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<< "$libs" | sort -u)
tar cf - -C "$libdir" . | xz -T0 -6 > "$out/lib.tar.xz"
step "$(ls "$libdir" | wc -l) libraries: $(ls "$libdir" | tr '\n' ' ')"
rm -rf "$libdir"

# 2. The bundles, each with CUBINs for $arch.
step "bundles$([ "$arch" = none ] || echo " (kernels for $arch)")"
bundle() { # bundle NAME SPEC ARGS...
  local name=$1 spec=$2
  shift 2
  "$xlnetc" compile "$spec" "${archArgs[@]}" -o "$out/bundles/$name" "$@" > /dev/null
}
# xlnet-small's layers (d_head 64: the tensor-core attention's geometry
# and shared memory are XLNet-Large's) without dropout, so the bf16 step and
# its fp32 reference see the same activations; 2 layers and 1000 tokens
# keep the reference's gradients small enough to carry (7 MiB).
specs=$(mktemp -d)
sed -E -e 's/^(dropout|dropatt) *=.*/\1 = 0.0/' -e 's/^n_layer *=.*/n_layer = 2/' \
  -e 's/^n_token *=.*/n_token = 1000/' models/xlnet-small.toml > "$specs/xlnet-small-nodrop.toml"
bundle tiny-train models/xlnet-tiny.toml
# Gradient accumulation (accumulate.sh): the tiny step without dropout at a
# batch of 4, in one batch and in micro-batches of 2, fp32 and bf16.
bundle accum-plain test/Training/inputs/dp-tiny.toml
bundle accum-micro2 test/Training/inputs/dp-tiny.toml --micro-batch 2
bundle accum-plain-bf16 test/Training/inputs/dp-tiny.toml --precision bf16
bundle accum-micro2-bf16 test/Training/inputs/dp-tiny.toml --precision bf16 --micro-batch 2
bundle tiny-bf16-grads models/xlnet-tiny.toml --step grads --precision bf16
bundle small-bf16-grads "$specs/xlnet-small-nodrop.toml" --step grads --precision bf16
# The golden cases' shapes (../shared/golden/README.md): batch, seq_len,
# num_predict, incoming memory.
for shape in tiny:2:16:5:8 tiny-nomem:2:16:5:0 small:4:32:8:24; do
  IFS=: read -r case batch seq np mlen <<< "$shape"
  bundle "golden-$case" "$golden/$case.config.json" --step grads --batch-size "$batch" \
    --seq-len "$seq" --num-predict "$np" --mlen "$mlen"
  cp "$golden/$case".{weights,batch,expected}.safetensors "$out/golden/"
done

# 3. The bf16 step's reference: the same step in fp32 on the host executor,
#    with the same synthetic inputs (random init, batch and memory of seed
#    0, which the GPU run draws again; its batch is compared with this one).
step "xlnet-small's fp32 host reference"
"$xlnetc" compile "$specs/xlnet-small-nodrop.toml" --step grads -o "$specs/small-fp32-grads" \
  > /dev/null
"$build/bin/xlnetc-run" run-step "$specs/small-fp32-grads" --device host \
  --dump-batch "$out/refs/small.batch.safetensors" --out "$out/refs/small-fp32.safetensors" \
  > /dev/null
rm -rf "$specs"

# 4. The benchmark's bundles: bf16 training steps of the paper's shapes
#    (seq 512, mem 384, reuse 256, num_predict 85, bi_data), compressed, in
#    the order run.sh runs them (bench-order.txt); the HuggingFace side and
#    the table maker. GPU_PACK_BENCH="MODEL:BATCH ..." packs others (the
#    emulated dry run packs the tiny model).
step "benchmark bundles"
bench=$(mktemp -d)
order=${GPU_PACK_BENCH:-large:16 base:16 large:32}
for mb in $order; do
  model=${mb%%:*} batch=${mb##*:}
  "$xlnetc" compile "models/xlnet-$model.toml" --precision bf16 --batch-size "$batch" \
    "${archArgs[@]}" -o "$bench/$model-b$batch" > /dev/null
  cp "models/xlnet-$model.toml" "$out/"
done
echo "$order" > "$out/bench-order.txt"
tar czf "$out/bench-bundles.tgz" -C "$bench" .
rm -rf "$bench"

"$xlnetc" make-corpus demo "$out/demo.txt" --lines 20000 > /dev/null
cp scripts/hf_xlnet_bench.py scripts/bench_table.py test/Training/inputs/metrics.py "$out/"
cp scripts/gpu/run.sh "$out/run.sh"
cp scripts/gpu/prepared-data.sh "$out/prepared-data.sh"
cp scripts/gpu/accumulate.sh "$out/accumulate.sh"
chmod +x "$out/run.sh" "$out/prepared-data.sh" "$out/accumulate.sh"

size=$(du -sm "$out" | cut -f1)
echo "pack: $out is ${size} MiB (a device call carries at most 64 MiB with the working tree)"
[ "$size" -lt 56 ] || echo "pack: warning: ${size} MiB leaves little room for the working tree" >&2
cat <<EOF
Run it on the GPU machine in one device call, from the repository root:
  run(command="bash $out/run.sh", carry=["$out"], timeout_s=600)
(GPU_BUDGET_S, default 540, bounds the stages; results stream into \$OUT.)
EOF
