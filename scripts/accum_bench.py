#!/usr/bin/env python3
"""The gradient-accumulation benchmark (issue 29): what micro-batches cost.

For each setting (a spec, a device, a batch of R rows) this runs, in one
process on this machine, `xlnetc train` for --steps steps:

  one batch       R rows a step, no accumulation;
  A x R/A rows    the same R rows a step as A micro-batches (--micro-batch),
                  for each A of --splits;
  plain R/A rows  R/A rows a step without accumulation (A of those steps
                  run the same rows as one step in micro-batches).

and reports each run's seconds a step over the steps after the first
(whose time includes compiling the step), the accumulation's cost over the
same rows in one batch ((A x R/A) / one batch - 1), and over A plain steps
of R/A rows (the loop, the summed gradients and the memory set aside,
without the effect of the smaller GEMMs). Each run is repeated --repeat
times and the fastest taken. (The memory of a split: `xlnetc compile SPEC
--emit=memory --batch-size R --micro-batch R/A`.)

Prints a table (Markdown) and writes --json.

usage: accum_bench.py [--steps 12] [--repeat 3] [--threads 2] [--json OUT]
                      [--setting SPEC:DEVICE:ROWS ...] [--splits 2,4]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"accum_bench: {' '.join(cmd)} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def seconds_per_step(xlnetc, spec, device, rows, micro, steps, threads, corpus, tokenizer, work):
    """Seconds a step after the first, from the run's metrics.jsonl."""
    out = os.path.join(work, "run")
    shutil.rmtree(out, ignore_errors=True)
    local = os.path.join(work, "spec.toml")
    with open(spec) as f:
        text = f.read()
    text = re.sub(r"^train_batch_size = .*$", f"train_batch_size = {rows}", text, flags=re.M)
    text = re.sub(r"^train_steps = .*$", f"train_steps = {max(steps, 100)}", text, flags=re.M)
    with open(local, "w") as f:
        f.write(text)
    cmd = [xlnetc, "train", local, "--data", corpus, "--tokenizer", tokenizer, "--out", out,
           "--steps", str(steps), "--no-plot", "--threads", str(threads), "--device", device,
           "--log-every", str(steps)]
    if micro:
        cmd += ["--micro-batch", str(micro)]
    run(cmd)
    rows_ = [json.loads(l) for l in open(os.path.join(out, "metrics.jsonl")) if l.strip()]
    rows_ = [r for r in rows_ if "event" not in r]
    first, last = rows_[0], rows_[-1]
    return (last["elapsed_s"] - first["elapsed_s"]) / (last["step"] - first["step"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--splits", default="2,4")
    ap.add_argument("--setting", action="append",
                    help="SPEC:DEVICE:ROWS (default: models/xlnet-small.toml:host:8 and "
                         "models/xlnet-tiny.toml:emu:8)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json")
    a = ap.parse_args()
    xlnetc = os.path.join(a.build, "bin", "xlnetc")
    settings = a.setting or [os.path.join(ROOT, "models/xlnet-small.toml") + ":host:8",
                             os.path.join(ROOT, "models/xlnet-tiny.toml") + ":emu:8"]
    splits = [int(s) for s in a.splits.split(",")]
    work = tempfile.mkdtemp(prefix="xlnetc-accum-bench-")
    corpus = os.path.join(work, "demo.txt")
    run([xlnetc, "make-corpus", "demo", corpus, "--lines", "20000"])
    tok_run = os.path.join(work, "tok")
    run([xlnetc, "train", os.path.join(ROOT, "models/xlnet-tiny.toml"), "--data", corpus,
         "--out", tok_run, "--steps", "1", "--no-plot", "--threads", str(a.threads)])
    tokenizer = os.path.join(tok_run, "spiece.model")
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    result = {"program": "scripts/accum_bench.py", "date": time.strftime("%Y-%m-%d"),
              "cpu": cpu, "threads": a.threads, "steps": a.steps, "repeat": a.repeat,
              "settings": []}

    def best(spec, device, rows, micro):
        return min(seconds_per_step(xlnetc, spec, device, rows, micro, a.steps, a.threads,
                                    corpus, tokenizer, work) for _ in range(a.repeat))

    print(f"gradient accumulation, {cpu}, {a.threads} threads, {a.steps} steps, "
          f"best of {a.repeat}\n")
    print("| model | device | rows a step | run | s/step | vs one batch | vs A plain steps of R/A |")
    print("|---|---|---|---|---|---|---|")
    for setting in settings:
        spec, device, rows = setting.rsplit(":", 2)
        rows = int(rows)
        name = os.path.basename(spec)
        one = best(spec, device, rows, 0)
        entry = {"spec": name, "device": device, "rows": rows, "one_batch_s": one, "splits": []}
        print(f"| {name} | {device} | {rows} | one batch | {one:.4f} | | |")
        for split in splits:
            micro = rows // split
            acc = best(spec, device, rows, micro)
            plain = best(spec, device, micro, 0)
            over_one = acc / one - 1
            over_plain = acc / (split * plain) - 1
            entry["splits"].append({"micro_batches": split, "micro_rows": micro,
                                    "accumulated_s": acc, "plain_micro_step_s": plain,
                                    "cost_vs_one_batch": over_one,
                                    "cost_vs_plain_steps": over_plain})
            print(f"| {name} | {device} | {rows} | {split} x {micro} rows | {acc:.4f} | "
                  f"{over_one * 100:+.1f}% | {over_plain * 100:+.1f}% "
                  f"({split} x {plain:.4f} s) |")
        result["settings"].append(entry)
    shutil.rmtree(work, ignore_errors=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
