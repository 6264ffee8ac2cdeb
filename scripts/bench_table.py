#!/usr/bin/env python3
"""Side-by-side tables from one benchmark run (docs/Benchmarks.md).

usage: bench_table.py DIR

Reads, from DIR, what scripts/pack-gpu-tests.sh's run.sh (or a run by hand)
left there:
  xlnetc-MODEL-bBATCH.json   `xlnetc-run bench` of one training bundle
  attn-MODEL.json            `xlnetc-run bench-attention` on MODEL's shapes
  hf-MODEL-bBATCH-eager.json and hf-MODEL-bBATCH-compile.json
                             scripts/hf_xlnet_bench.py, eager and torch.compile
  hf-MODEL-max-eager.json    scripts/hf_xlnet_bench.py --max-batch
and prints markdown: per model and batch, xlnetc's tokens/s, step time and
memory next to HuggingFace's (eager and torch.compile) with the ratios the
project aims at (issue 8: >= 5x eager, >= 2.5x torch.compile, memory <= 1/4
of HF's, a largest batch >= 4x HF's); the largest batch each fits; the
attention kernels' rate against the bf16 GEMM measured in the same run. A
missing file leaves its cells "-".
"""
import glob
import json
import os
import re
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(x, spec="{:.0f}"):
    return "-" if x is None else spec.format(x)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    d = argv[1]
    xl = {}  # (model, batch) -> row
    for path in glob.glob(os.path.join(d, "xlnetc-*-b*.json")):
        m = re.match(r"xlnetc-(.+)-b(\d+)\.json$", os.path.basename(path))
        j = load(path)
        if m and j and j.get("rows"):
            xl[(m.group(1), int(m.group(2)))] = dict(j["rows"][0], device=j.get("device"),
                                                     gemm=j["gemm_reference"]["tflops"])
    hf = {}  # (model, batch, mode) -> result
    for path in glob.glob(os.path.join(d, "hf-*-b*-*.json")):
        m = re.match(r"hf-(.+)-b(\d+)-(eager|compile)\.json$", os.path.basename(path))
        j = load(path)
        if m and j:
            hf[(m.group(1), int(m.group(2)), m.group(3))] = j
    models = sorted({k[0] for k in xl} | {k[0] for k in hf})
    out = []
    for model in models:
        batches = sorted({k[1] for k in xl if k[0] == model} |
                         {k[1] for k in hf if k[0] == model})
        out.append(f"### {model}\n")
        out.append("| batch | xlnetc tokens/s | HF eager | HF compile | vs eager (≥ 5×) | "
                   "vs compile (≥ 2.5×) | xlnetc step ms | xlnetc TFLOP/s | MFU | "
                   "xlnetc memory MiB (predicted) | HF peak MiB | memory ratio (≤ 0.25) |")
        out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for b in batches:
            x = xl.get((model, b))
            e = hf.get((model, b, "eager"))
            c = hf.get((model, b, "compile"))
            xt = x and x["tokens_per_s"]
            et = e and e.get("tokens_per_s")
            ct = c and c.get("tokens_per_s")
            xm = x and x["memory_measured_bytes"] / 2**20
            xp = x and x["memory_predicted_bytes"] / 2**20
            hm = e and e.get("peak_mem_bytes", 0) / 2**20
            out.append(
                f"| {b} | {fmt(xt)} | {fmt(et)} | {fmt(ct)} | {fmt(ratio(xt, et), '{:.2f}×')} | "
                f"{fmt(ratio(xt, ct), '{:.2f}×')} | {fmt(x and x['step_ms_median'], '{:.1f}')} | "
                f"{fmt(x and x['tflops'], '{:.1f}')} | {fmt(x and 100 * x['mfu'], '{:.1f}%')} | "
                f"{fmt(xm)} ({fmt(xp)}) | {fmt(hm)} | {fmt(ratio(xm, hm), '{:.2f}')} |")
        xmax = max([b for (mm, b) in xl if mm == model], default=None)
        hmax = load(os.path.join(d, f"hf-{model}-max-eager.json"))
        hb = hmax and hmax.get("max_batch")
        out.append("")
        out.append(f"Largest batch that ran: xlnetc {fmt(xmax)} (of the bundles tried), "
                   f"HF eager {fmt(hb)}; ratio {fmt(ratio(xmax, hb), '{:.2f}×')} (≥ 4×).\n")
        a = load(os.path.join(d, f"attn-{model}.json"))
        if a:
            s = a["shape"]
            out.append(f"Fused attention kernels, batch {s['batch']}, {s['heads']} heads × "
                       f"{s['d_head']}, seq {s['seq_len']}, mem {s['mem_len']}, num_predict "
                       f"{s['num_predict']} (bf16 GEMM reference "
                       f"{a['gemm_reference']['tflops']:.1f} TFLOP/s):\n")
            out.append("| stream | pass | ms | TFLOP/s | of the GEMM rate (≥ 35%) |")
            out.append("|---|---|---|---|---|")
            for k in a["kernels"]:
                out.append(f"| {k['stream']} | {k['pass']} | {k['ms']:.3f} | "
                           f"{k['tflops']:.1f} | {100 * k['fraction_of_gemm']:.1f}% |")
            t = a["total"]
            out.append(f"| both | forward + backward | {t['ms']:.3f} | {t['tflops']:.1f} | "
                       f"{100 * t['fraction_of_gemm']:.1f}% |\n")
    devices = {x["device"] for x in xl.values() if x.get("device")}
    gpus = {v.get("gpu") for v in hf.values() if v.get("gpu")}
    print(f"Devices: xlnetc on {', '.join(sorted(devices)) or '-'}; "
          f"HuggingFace on {', '.join(sorted(gpus)) or '-'}.\n")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
