#!/usr/bin/env python3
"""The CPU benchmark: xlnetc's host training step beside PyTorch's, in one run.

For every spec it compiles the training step (`xlnetc compile`), times it on
the host executor (`xlnetc-run bench --device host`, which also measures the
fp32 sgemm rate of this machine through the host GEMM), then times
HuggingFace's XLNetLMHeadModel training step on the same shapes on the CPU
with PyTorch (scripts/hf_xlnet_bench.py --device cpu, OMP_WAIT_POLICY=passive,
the same thread count), and prints one table:

  model, d_model, layers, batch, xlnetc ms/step, PyTorch ms/step, speedup,
  xlnetc GFLOP/s and its share of the best sgemm rate measured in the run,
  the GEMMs' share of it, PyTorch GFLOP/s

ms/step is the median of the timed steps. GFLOP/s counts the same model
FLOPs for both (xlnetc's count: its GEMMs and the attention's products;
docs/Benchmarks.md), so the two rates compare the same work. Where PyTorch
or transformers is missing (or with --no-torch) the PyTorch columns say so
and xlnetc's are still measured.

usage: cpu_bench.py [SPEC ...] [--steps N] [--warmup N] [--threads T] [--rounds R]
                    [--isa native|avx2] [--torch-mode compile|eager] [--build DIR]
                    [--python PY] [--no-torch] [--json OUT]

PyTorch runs at its fastest setting by default: torch.compile (measured
2026-11-27 on xlnet-small, 2 threads: 435-464 ms a step against eager's
497), which compiles for about a minute the first time (inductor's cache
makes later runs start in seconds); --torch-mode eager for the eager model.
The xlnetc column "GEMMs" is the rate of the step's gemm and gemm_wgrad ops
alone (xlnetc-run bench --profile) as a share of the measured sgemm; the
xlnetc step times come from those profiled runs (two clock reads per op).

The header names the CPU, its features and the GEMM kernels xlnetc ran (and
why: chosen by OpenBLAS, corrected by xlnetc from the CPU's features, or
forced). --isa avx2 measures both sides as on an AVX2-only CPU: xlnetc with
OpenBLAS's Haswell kernels and its avx2 loops (OPENBLAS_CORETYPE=Haswell,
XLNETC_HOST_ISA=avx2), PyTorch with ATEN_CPU_CAPABILITY=avx2,
MKL_ENABLE_INSTRUCTIONS=AVX2 and ONEDNN_MAX_CPU_ISA=AVX2.

Defaults: models/xlnet-small.toml bench/cpu/d512.toml bench/cpu/base-width.toml,
10 timed steps after 2, all cores, 1 round, build/, this Python. On a shared
machine whose speed drifts, --rounds R times xlnetc and PyTorch alternately R
times and reports the medians and the range of the ratio.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The environment of each side per --isa setting.
ISA_ENV = {
    "native": ({}, {}),
    "avx2": ({"OPENBLAS_CORETYPE": "Haswell", "XLNETC_HOST_ISA": "avx2"},
             {"ATEN_CPU_CAPABILITY": "avx2", "MKL_ENABLE_INSTRUCTIONS": "AVX2",
              "ONEDNN_MAX_CPU_ISA": "AVX2"}),
}
DEFAULT_SPECS = ["models/xlnet-small.toml", "bench/cpu/d512.toml", "bench/cpu/base-width.toml"]


def run(cmd, env=None):
    """Runs cmd; on failure prints its output and exits with its status."""
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        sys.exit(f"cpu_bench: {' '.join(cmd)} failed (exit {proc.returncode})")
    return proc


def torch_available(python):
    probe = subprocess.run([python, "-c", "import torch, transformers"],
                           capture_output=True, text=True)
    if probe.returncode == 0:
        return True, ""
    last = (probe.stderr.strip().splitlines() or ["?"])[-1]
    return False, last


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("specs", nargs="*", default=DEFAULT_SPECS)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)) or 1)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--python", default=sys.executable,
                    help="the Python with torch and transformers")
    ap.add_argument("--no-torch", action="store_true", help="time xlnetc only")
    ap.add_argument("--rounds", type=int, default=1,
                    help="time xlnetc and PyTorch alternately this many times")
    ap.add_argument("--isa", choices=sorted(ISA_ENV), default="native",
                    help="native: what each side picks on this CPU; avx2: both as on an "
                         "AVX2-only CPU")
    ap.add_argument("--torch-mode", choices=["compile", "eager"], default="compile",
                    help="PyTorch's model under torch.compile (its fastest on the CPU) or eager")
    ap.add_argument("--json")
    args = ap.parse_args(argv[1:])
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")

    xlnetc = os.path.join(args.build, "bin", "xlnetc")
    runner = os.path.join(args.build, "bin", "xlnetc-run")
    for exe in (xlnetc, runner):
        if not os.access(exe, os.X_OK):
            sys.exit(f"cpu_bench: {exe} not found (build first: bash scripts/build.sh)")
    have_torch, why = (False, "--no-torch") if args.no_torch else torch_available(args.python)
    if not have_torch:
        print(f"PyTorch: not measured ({why})", flush=True)

    xlnetc_isa, torch_isa = ISA_ENV[args.isa]
    xenv = dict(os.environ, **xlnetc_isa)
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS=str(args.threads),
               **torch_isa)
    machine = None  # the CPU and GEMM kernels, from xlnetc-run bench's JSON
    rows = []
    with tempfile.TemporaryDirectory(prefix="xlnetc-cpu-bench-") as tmp:
        for spec in args.specs:
            name = os.path.splitext(os.path.basename(spec))[0]
            bundle = os.path.join(tmp, name)
            print(f"{name}: compiling", flush=True)
            run([xlnetc, "compile", spec, "-o", bundle])
            x_runs, t_runs, sgemm_runs, gemm_runs = [], [], [], []
            for rnd in range(args.rounds):
                # xlnetc, then PyTorch, in every round: a slow spell of a
                # shared machine falls on both sides of some round.
                tag = f" (round {rnd + 1} of {args.rounds})" if args.rounds > 1 else ""
                print(f"{name}: timing xlnetc ({args.warmup} + {args.steps} steps){tag}",
                      flush=True)
                xj = os.path.join(tmp, name + ".xlnetc.json")
                run([runner, "bench", bundle, "--device", "host", "--threads",
                     str(args.threads), "--steps", str(args.steps), "--warmup",
                     str(args.warmup), "--profile", "--json", xj], env=xenv)
                with open(xj) as f:
                    xres = json.load(f)
                machine = machine or {"cpu": xres["cpu"], "device": xres["device"],
                                      "gemm": xres["gemm_library"]}
                sgemm_runs.append(xres["gemm_reference"]["tflops"] * 1e3)
                xrow = xres["rows"][0]
                x_runs.append(statistics.median(xrow["step_ms"]))
                gemm_runs.append(xrow["gemm_gflops"])
                flops = xrow["model_flops_per_step"]
                if have_torch:
                    print(f"{name}: timing PyTorch{tag}", flush=True)
                    tj = os.path.join(tmp, name + ".torch.json")
                    run([args.python, os.path.join(ROOT, "scripts", "hf_xlnet_bench.py"), spec,
                         "--device", "cpu", "--dtype", "fp32", "--steps", str(args.steps),
                         "--warmup", str(args.warmup), "--json", tj]
                        + (["--compile"] if args.torch_mode == "compile" else []), env=env)
                    with open(tj) as f:
                        t_runs.append(statistics.median(json.load(f)["step_ms"]))
            x_ms = statistics.median(x_runs)
            t_ms = statistics.median(t_runs) if t_runs else None
            ratios = [t / x for x, t in zip(x_runs, t_runs)]
            rows.append({
                "model": spec, "d_model": xrow["d_model"], "n_layer": xrow["n_layer"],
                "batch": xrow["batch"], "seq_len": xrow["seq_len"], "mem_len": xrow["mem_len"],
                "num_predict": xrow["num_predict"], "model_flops_per_step": flops,
                "xlnetc_ms": x_ms, "xlnetc_gflops": flops / x_ms / 1e6,
                "sgemm_gflops": max(sgemm_runs), "gemm_gflops": statistics.median(gemm_runs),
                "torch_ms": t_ms,
                "torch_gflops": flops / t_ms / 1e6 if t_ms else None,
                "speedup": statistics.median(ratios) if ratios else None,
                "speedup_min": min(ratios) if ratios else None,
                "speedup_max": max(ratios) if ratios else None,
                "rounds": {"xlnetc_ms": x_runs, "torch_ms": t_runs, "sgemm_gflops": sgemm_runs},
            })

    # The shares are of the best sgemm measured in this run (every model's,
    # every round's): a slow spell of a shared machine lowers a measurement,
    # never raises it.
    best_sgemm = max((r["sgemm_gflops"] for r in rows), default=None)
    n_sgemm = sum(len(r["rounds"]["sgemm_gflops"]) for r in rows)
    for r in rows:
        r["xlnetc_sgemm_share"] = r["xlnetc_gflops"] / best_sgemm
        r["gemm_sgemm_share"] = r["gemm_gflops"] / best_sgemm

    torch_version = ""
    if have_torch:
        torch_version = run([args.python, "-c",
                             "import torch, transformers; "
                             "print(f'torch {torch.__version__}, transformers "
                             "{transformers.__version__}')"]).stdout.strip()
    print()
    if machine:
        gemm = machine["gemm"]
        print(f"CPU: {machine['cpu']['name']}; features: {machine['cpu']['features']}")
        print(f"setting: {args.isa}"
              + (f" (xlnetc: {', '.join(f'{k}={v}' for k, v in xlnetc_isa.items())}; PyTorch: "
                 f"{', '.join(f'{k}={v}' for k, v in torch_isa.items())})" if xlnetc_isa else "")
              + f"; GEMM kernels: {gemm['name']}, {gemm['kernels']} ({gemm['why']}"
              + (f"; {gemm['weaker_than']}" if gemm["weaker_than"] else "") + ")")
    threads = f"{args.threads} thread{'' if args.threads == 1 else 's'}"
    mode = "torch.compile" if args.torch_mode == "compile" else "eager"
    print(f"CPU training step, {threads}; fp32 sgemm (1024³, host GEMM, best of {n_sgemm}): "
          f"{best_sgemm:.1f} GFLOP/s; PyTorch: "
          f"{torch_version + f' (HF XLNetLMHeadModel, {mode}, OMP_WAIT_POLICY=passive)' if have_torch else 'not measured'}")
    head = (f"{'model':<16} {'d_model':>7} {'layers':>6} {'batch':>5} {'xlnetc ms':>10} "
            f"{'PyTorch ms':>10} {'speedup':>8} {'xlnetc GFLOP/s':>14} {'of sgemm':>8} {'GEMMs':>6} "
            f"{'PyTorch GFLOP/s':>15}" + (f" {'speedup range':>14}" if args.rounds > 1 else ""))
    print(head)
    for r in rows:
        name = os.path.splitext(os.path.basename(r["model"]))[0]
        t = f"{r['torch_ms']:.1f}" if r["torch_ms"] else "-"
        sp = f"{r['speedup']:.2f}x" if r["speedup"] else "-"
        tg = f"{r['torch_gflops']:.1f}" if r["torch_gflops"] else "-"
        print(f"{name:<16} {r['d_model']:>7} {r['n_layer']:>6} {r['batch']:>5} "
              f"{r['xlnetc_ms']:>10.1f} {t:>10} {sp:>8} {r['xlnetc_gflops']:>14.1f} "
              f"{100 * r['xlnetc_sgemm_share']:>7.1f}% {100 * r['gemm_sgemm_share']:>5.1f}% "
              f"{tg:>15}" +
              (f" {r['speedup_min']:>6.2f}-{r['speedup_max']:.2f}x" if args.rounds > 1 and
               r["speedup"] else ""))
    if args.rounds > 1:
        print(f"{args.rounds} rounds, each timing xlnetc then PyTorch; ms/step: the median over "
              f"the rounds of each round's median; speedup: the median of the rounds' ratios "
              f"(range: their least and greatest)")
    print(f"ms/step: median of {args.steps} steps after {args.warmup}; GFLOP/s: xlnetc's model "
          f"FLOPs per step (GEMMs and attention products) / step time, for both; GEMMs: the "
          f"rate of xlnetc's gemm and gemm_wgrad ops alone (bench --profile) / sgemm")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"program": "scripts/cpu_bench.py", "threads": args.threads,
                       "isa": args.isa, "machine": machine,
                       # the best of every row's; each row has its own best too
                       "sgemm_gflops": best_sgemm, "torch": torch_version or None,
                       "torch_mode": args.torch_mode if have_torch else None,
                       "steps": args.steps, "warmup": args.warmup, "rounds": args.rounds,
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
