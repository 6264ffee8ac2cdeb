#!/usr/bin/env bash
# The sgemm libraries xlnetc's host GEMM could use, side by side on this CPU
# (docs/Training.md, "GEMM kernels"): Debian's OpenBLAS under each kernel
# set this CPU runs, BLIS and oneDNN (Debian: apt-get install libblis-dev
# libdnnl-dev), and a newer OpenBLAS where one is given (the
# scipy-openblas32 wheel's libscipy_openblas.so: pip download
# scipy-openblas32, unzip). Each is timed in the CPU's own setting and as on
# an AVX2-only CPU (OpenBLAS: Haswell kernels; oneDNN: ONEDNN_MAX_CPU_ISA=AVX2;
# BLIS: its BLIS_ARCH_TYPE, where the build honours it). Missing libraries
# are skipped and said so. Run it on a quiet machine; with --rounds R it
# also prints each column's best over the rounds.
#
# usage: scripts/gemm_libraries.sh [--newer-openblas LIB] [--threads N] [--rounds R]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
newer="" threads=$(nproc) rounds=1
while [ $# -gt 0 ]; do
  case "$1" in
    --newer-openblas) newer=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--newer-openblas LIB] [--threads N] [--rounds R]" >&2; exit 2 ;;
  esac
done
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
gcc -O2 -fopenmp "$root/bench/cpu/gemm_libraries.c" -o "$tmp/gemm_libraries" -ldl -lm
lib=/usr/lib/x86_64-linux-gnu
openblas=$lib/openblas-pthread/libopenblas.so.0 blis=$lib/blis-openmp/libblis.so.4
onednn=$lib/libdnnl.so.2
cores=$("$root/build/bin/xlnetc" devices 2>/dev/null | awk '$1 == "gemm-cores" && $2 == "yes" {
  for (i = 3; i <= NF && $i !~ /^\(/; i++) printf "%s ", $i }') || true

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $threads threads; $(date -u '+%Y-%m-%d %H:%M UTC')"
printf "%-9s %-15s %-12s %8s %8s %8s %8s %8s\n" setting library kernels "own 1024" \
  "1024^3" "FFN in" "FFN out" "LM head"
row() { # SETTING ENV... -- KIND LIB
  local setting=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  if [ ! -e "$2" ]; then printf "%-9s %-15s (not installed: %s)\n" "$setting" "$1" "$2"; return; fi
  local out
  if out=$(env "${envs[@]}" OMP_WAIT_POLICY=passive GB_THREADS="$threads" \
             "$tmp/gemm_libraries" "$1" "$2" 2>&1); then
    printf "%-9s %s\n" "$setting" "$out" | tee -a "$tmp/rows"
  else
    printf "%-9s %-15s failed: %s\n" "$setting" "$1" "$(echo "$out" | grep -v '^$' | tail -n 1)"
  fi
}
for r in $(seq "$rounds"); do
  row native -- openblas "$openblas"
  for core in $cores Prescott; do row native "OPENBLAS_CORETYPE=$core" -- openblas "$openblas"; done
  [ -n "$newer" ] && row native -- scipy-openblas "$newer"
  row native -- blis "$blis"
  row native -- onednn "$onednn"
  if [[ " $cores " == *" Haswell "* ]]; then
    row avx2 OPENBLAS_CORETYPE=Haswell -- openblas "$openblas"
    [ -n "$newer" ] && row avx2 OPENBLAS_CORETYPE=Haswell -- scipy-openblas "$newer"
    row avx2 BLIS_ARCH_TYPE=haswell -- blis "$blis"
    row avx2 ONEDNN_MAX_CPU_ISA=AVX2 -- onednn "$onednn"
  fi
done
if [ "$rounds" -gt 1 ]; then
  echo "best of the $rounds rounds, per column:"
  awk '{ key = $1 " " $2 " " $3; if (!(key in seen)) { order[n++] = key; seen[key] = 1 }
         for (i = 4; i <= 8; i++) if ($i > best[key, i]) best[key, i] = $i }
       END { for (j = 0; j < n; j++) { split(order[j], k, " ")
               printf "%-9s %-15s %-12s", k[1], k[2], k[3]
               for (i = 4; i <= 8; i++) printf " %8.1f", best[order[j], i]; printf "\n" } }' \
    "$tmp/rows"
fi
echo "GFLOP/s. own 1024: the library's threads on 1024^3; the rest as the host executor"
echo "calls it: OpenMP splits the rows (the columns where more), one single-threaded sgemm per thread (FFN in:"
echo "1024x1024x256, FFN out: 1024x256x1024, LM head: 160x8000x256, xlnet-small's shapes)"
