#!/usr/bin/env python3
"""The data benchmark (issue 28): prepare-data and training on prepared data.

In one run, on this machine:

1. Tokenizer throughput per core on the same text (a generated corpus of
   --small-mib, default 20 MiB): xlnetc prepare-data with one thread (the
   whole pipeline: reading, preprocess_text, encoding, writing the shards),
   SentencePiece's own Python encode in batch mode (num_threads=1, the
   same model) and HuggingFace XLNetTokenizerFast batch encoding
   (RAYON_NUM_THREADS=1, the same model converted), each in MB of text a
   second. Then prepare-data on every core.
2. A large corpus (--large-mib, default 2048: copies of the small one, so
   its size, not its variety, is what is measured) prepared on every core.
3. xlnetc train (host, the tiny model with the tokenizer's vocabulary) for
   --steps steps on: the small corpus prepared, the large corpus prepared,
   and the small corpus read into memory (the text path): peak RSS (the
   process's maxrss) and the wall time of a 1-step run (start-up + one
   step).

Prints one table per part and writes --json. The HuggingFace side needs the
test virtualenv (scripts/hf-venv.sh; --python); without it those cells say
why.

usage: data_bench.py [--work DIR] [--small-mib 20] [--large-mib 2048] [--steps 20]
                     [--vocab 8000] [--python PY] [--build DIR] [--keep] [--json OUT]
"""

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """Runs cmd; returns its stdout. Fails loudly."""
    proc = subprocess.run(cmd, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"data_bench: {' '.join(cmd)} failed ({proc.returncode}):\n"
                 f"{proc.stderr.decode()[-2000:]}")
    return proc.stdout.decode()


def run_rss(cmd, env=None):
    """Runs cmd under /usr/bin/time -f %M: (seconds, max RSS MiB, stdout)."""
    start = time.monotonic()
    proc = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb %M"] + cmd, capture_output=True,
                          env=env)
    seconds = time.monotonic() - start
    err = proc.stderr.decode()
    if proc.returncode != 0:
        sys.exit(f"data_bench: {' '.join(cmd)} failed ({proc.returncode}):\n{err[-2000:]}")
    kb = int([l for l in err.splitlines() if l.startswith("maxrss_kb ")][-1].split()[1])
    return seconds, kb / 1024.0, proc.stdout.decode()


PY_TOKENIZE = r"""
import os, sys, time, json
kind, model, path = sys.argv[1:4]
lines = open(path, encoding="utf-8").read().split("\n")
lines = [l for l in lines if l.strip()]
nbytes = sum(len(l.encode()) + 1 for l in lines)
if kind == "sentencepiece":
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=model)
    start = time.monotonic()
    ids = sp.encode(lines, out_type=int, num_threads=1)
else:
    from transformers import XLNetTokenizerFast
    tok = XLNetTokenizerFast(vocab_file=model)
    start = time.monotonic()
    ids = tok(lines, add_special_tokens=False)["input_ids"]
seconds = time.monotonic() - start
print(json.dumps({"seconds": seconds, "bytes": nbytes, "tokens": sum(len(i) for i in ids)}))
"""


def python_tokenize(python, kind, model, path):
    env = dict(os.environ, RAYON_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false",
               OMP_NUM_THREADS="1")
    proc = subprocess.run([python, "-c", PY_TOKENIZE, kind, model, path], capture_output=True,
                          env=env)
    if proc.returncode != 0:
        return {"error": proc.stderr.decode().strip().splitlines()[-1][:200]}
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", default="/tmp/xlnetc-data-bench")
    ap.add_argument("--small-mib", type=float, default=20)
    ap.add_argument("--large-mib", type=float, default=2048)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--python", default=os.path.expanduser("~/.cache/xlnetc/hf-venv/bin/python"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--json")
    a = ap.parse_args()
    xlnetc = os.path.join(a.build, "bin", "xlnetc")
    w = a.work
    if os.path.exists(w):
        shutil.rmtree(w)
    os.makedirs(w)
    cores = os.cpu_count()
    result = {"program": "scripts/data_bench.py", "date": time.strftime("%Y-%m-%d"),
              "cpu": platform.processor() or platform.machine(), "cores": cores}
    try:
        with open("/proc/cpuinfo") as f:
            result["cpu"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass

    # The corpora and the tokenizer.
    small = os.path.join(w, "small.txt")
    lines = int(a.small_mib * 1048576 / 46.7)
    run([xlnetc, "make-corpus", "demo", small, "--lines", str(lines), "--seed", "1"])
    sys.stderr.write(f"data_bench: training a {a.vocab}-piece tokenizer on {small}\n")
    run([xlnetc, "prepare-data", small, "-o", os.path.join(w, "tok"), "--vocab-size",
         str(a.vocab), "--sample-mib", str(a.small_mib), "--unit-mib", "1024"])
    model = os.path.join(w, "tok", "spiece.model")
    small_bytes = os.path.getsize(small)

    # 1. Throughput per core on the small corpus.
    def prepare(inputs, out, threads, unit_mib=8):
        secs, rss, _ = run_rss([xlnetc, "prepare-data"] + inputs + [
            "-o", out, "--tokenizer", model, "--threads", str(threads), "--unit-mib",
            str(unit_mib)])
        return secs, rss
    one, one_rss = prepare([small], os.path.join(w, "p1"), 1)
    allc, _ = prepare([small], os.path.join(w, "pall"), cores, unit_mib=max(1, a.small_mib / (4 * cores)))
    sp = python_tokenize(a.python, "sentencepiece", model, small)
    hf = python_tokenize(a.python, "hf", model, small)
    mbs = lambda b, s: b / s / 1e6
    throughput = {
        "xlnetc_prepare_1_thread": {"seconds": one, "mb_s": mbs(small_bytes, one), "peak_rss_mib": one_rss},
        "xlnetc_prepare_all_cores": {"seconds": allc, "mb_s": mbs(small_bytes, allc), "threads": cores},
        "sentencepiece_python_batch": dict(sp, **({"mb_s": mbs(sp["bytes"], sp["seconds"])} if "seconds" in sp else {})),
        "hf_xlnet_tokenizer_fast": dict(hf, **({"mb_s": mbs(hf["bytes"], hf["seconds"])} if "seconds" in hf else {})),
    }
    result["throughput"] = throughput
    result["small_corpus_bytes"] = small_bytes

    # 2. The large corpus: copies of the small one.
    large = os.path.join(w, "large.txt")
    copies = max(1, int(round(a.large_mib * 1048576 / small_bytes)))
    with open(large, "wb") as out, open(small, "rb") as src:
        data = src.read()
        for _ in range(copies):
            out.write(data)
    large_bytes = os.path.getsize(large)
    sys.stderr.write(f"data_bench: preparing {large_bytes / 2**30:.2f} GiB on {cores} threads\n")
    big, big_rss = prepare([large], os.path.join(w, "plarge"), cores, unit_mib=32)
    result["large"] = {"bytes": large_bytes, "copies": copies, "prepare_seconds": big,
                       "prepare_mb_s": mbs(large_bytes, big), "prepare_peak_rss_mib": big_rss}

    # 3. Training on each: peak RSS over --steps steps, and a 1-step run.
    spec = os.path.join(w, "tiny.toml")
    with open(os.path.join(ROOT, "models", "xlnet-tiny.toml")) as f:
        text = f.read()
    text = re.sub(r"(?m)^n_token = .*$", f"n_token = {a.vocab}", text)
    with open(spec, "w") as f:
        f.write(text)
    train = {}
    for name, data in [("small prepared", os.path.join(w, "p1")),
                       ("large prepared", os.path.join(w, "plarge")),
                       ("small text (in memory)", small)]:
        row = {}
        for steps, key in [(a.steps, "steps"), (1, "one_step")]:
            out = os.path.join(w, "run-" + key + "-" + name.split()[0] + name.split()[1])
            cmd = [xlnetc, "train", spec, "--data", data, "--out", out, "--steps", str(steps),
                   "--no-plot", "--tokenizer", model, "--device", "host"]
            secs, rss, _ = run_rss(cmd)
            row[key] = {"seconds": secs, "peak_rss_mib": rss}
        train[name] = row
    result["train"] = train

    # The tables.
    print(f"Data benchmark, {result['date']}, {result['cpu']}, {cores} cores\n")
    print(f"Tokenizing {small_bytes / 1e6:.1f} MB of text (vocabulary {a.vocab}), per core:\n")
    print("| tokenizer | MB/s | seconds |")
    print("|---|---|---|")
    for label, key in [("xlnetc prepare-data, 1 thread (read, preprocess, encode, write)", "xlnetc_prepare_1_thread"),
                       ("SentencePiece Python `encode` batch, num_threads=1", "sentencepiece_python_batch"),
                       ("HF `XLNetTokenizerFast` batch, RAYON_NUM_THREADS=1", "hf_xlnet_tokenizer_fast")]:
        r = throughput[key]
        if "error" in r:
            print(f"| {label} | - | {r['error']} |")
        else:
            print(f"| {label} | {r['mb_s']:.2f} | {r['seconds']:.2f} |")
    r = throughput["xlnetc_prepare_all_cores"]
    print(f"| xlnetc prepare-data, {cores} threads | {r['mb_s']:.2f} | {r['seconds']:.2f} |\n")
    L = result["large"]
    print(f"Preparing {L['bytes'] / 2**30:.2f} GiB ({L['copies']} copies): {L['prepare_seconds']:.0f} s, "
          f"{L['prepare_mb_s']:.1f} MB/s on {cores} threads, peak RSS {L['prepare_peak_rss_mib']:.0f} MiB\n")
    print(f"xlnetc train, tiny model (n_token {a.vocab}), host:\n")
    print(f"| corpus | peak RSS MiB ({a.steps} steps) | {a.steps} steps s | 1-step run s | peak RSS MiB (1 step) |")
    print("|---|---|---|---|---|")
    for name, row in train.items():
        print(f"| {name} | {row['steps']['peak_rss_mib']:.0f} | {row['steps']['seconds']:.2f} | "
              f"{row['one_step']['seconds']:.2f} | {row['one_step']['peak_rss_mib']:.0f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    if not a.keep:
        shutil.rmtree(w)


if __name__ == "__main__":
    main()
