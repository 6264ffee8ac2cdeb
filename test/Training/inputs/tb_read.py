"""Reads xlnetc's TensorBoard event files with TensorBoard's own reader and
checks them against metrics.jsonl (tensorboard.test).

  tb_read.py DIR METRICS   every step's train/loss, train/lr, train/grad_norm,
                           train/tokens_per_s and every evaluation's eval/loss
                           equal metrics.jsonl's (as float32), memory present
Prints what it compared; exits 1 on a difference.
"""
import glob
import json
import math
import sys

from tensorboard.backend.event_processing import event_file_loader


def main(argv):
    files = sorted(glob.glob(argv[1] + "/*tfevents*"))
    if not files:
        print(f"tb_read: no event files in {argv[1]}")
        return 1
    got = {}  # (tag, step) -> value
    versions = 0
    for f in files:
        # The raw loader checks each record's CRC32Cs and parses the Event.
        for event in event_file_loader.RawEventFileLoader(f).Load():
            from tensorboard.compat.proto import event_pb2
            e = event_pb2.Event.FromString(event)
            if e.file_version:
                versions += 1
            for v in e.summary.value:
                got[(v.tag, e.step)] = v.simple_value
    rows = [json.loads(line) for line in open(argv[2]) if line.strip()]
    want = {}
    for r in rows:
        if r.get("event") == "eval":
            want[("eval/loss", r["step"])] = r["eval_loss"]
        elif "event" not in r:
            for tag, key in [("train/loss", "loss"), ("train/lr", "lr"),
                             ("train/grad_norm", "grad_norm"),
                             ("train/tokens_per_s", "tokens_per_s")]:
                want[(tag, r["step"])] = r[key]
    bad = [k for k, v in want.items()
           if k not in got or got[k] != float(__import__("numpy").float32(v))]
    memory = sum(1 for (tag, _) in got if tag.startswith("memory/"))
    print(f"tb_read: {len(files)} file(s), {versions} file_version event(s), {len(got)} scalars; "
          f"{len(want)} compared with metrics.jsonl, {len(bad)} differ; {memory} memory scalars")
    for k in bad[:5]:
        print(f"  {k}: tensorboard {got.get(k)}, metrics {want[k]}")
    return 0 if not bad and memory > 0 and versions == len(files) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
