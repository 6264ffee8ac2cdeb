"""Checks on the metrics.jsonl files `xlnetc train` writes (used by the lit tests).

  metrics.py falls FILE MAX_RATIO      mean loss of the last 10% of steps over the
                                       first 10% must be <= MAX_RATIO
  metrics.py gap WITH WITHOUT MIN N    mean loss of the last N steps: WITHOUT - WITH >= MIN
  metrics.py same A B FIRST_STEP       the loss and grad_norm of every step >= FIRST_STEP
                                       are bit-identical in A and B
  metrics.py close A B RTOL            A and B have the same steps and every step's loss
                                       and gradient norm agree within RTOL relative
  metrics.py scaled A B STEP F         A's grad_norm at STEP is exactly F times B's
                                       (XLNETC_FAULT_REDUCE_SCALE, F a power of two)
  metrics.py tail A B RTOL             the mean loss of A's last 10% of steps is within
                                       RTOL relative of B's (bf16 against fp32)
  metrics.py evals A STEPS             A's eval events are at exactly STEPS (comma-separated),
                                       each with a finite eval_loss, eval_ppl = e^eval_loss,
                                       eval_bits_per_token = eval_loss / ln 2, tokens > 0
  metrics.py evalclose A B RTOL        A's and B's eval events are at the same steps with
                                       eval_loss within RTOL relative
Each check but evals/evalclose reads the step lines; event lines ({"event":
"override", ...}: a setting a resumed run changed; {"event": "eval", ...}: a
held-out evaluation) are skipped.
Prints what it measured; exits 1 when the check fails.
"""
import json
import sys


def load(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r for r in rows if "event" not in r]


def evals(path):
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return {r["step"]: r for r in rows if r.get("event") == "eval"}


def mean(xs):
    return sum(xs) / len(xs)


def main(argv):
    cmd = argv[1]
    if cmd == "falls":
        rows = load(argv[2])
        k = max(1, len(rows) // 10)
        first, last = mean([r["loss"] for r in rows[:k]]), mean([r["loss"] for r in rows[-k:]])
        ratio = last / first
        print(f"falls: first 10% mean {first:.4f}, last 10% mean {last:.4f}, ratio {ratio:.3f} "
              f"(max {argv[3]})")
        return 0 if ratio <= float(argv[3]) else 1
    if cmd == "gap":
        n = int(argv[5])
        with_mem = mean([r["loss"] for r in load(argv[2])[-n:]])
        without = mean([r["loss"] for r in load(argv[3])[-n:]])
        gap = without - with_mem
        print(f"gap: last {n} steps mean loss {with_mem:.4f} with memory, {without:.4f} "
              f"without, gap {gap:.4f} (min {argv[4]})")
        return 0 if gap >= float(argv[4]) else 1
    if cmd == "same":
        first = int(argv[4])
        a = {r["step"]: r for r in load(argv[2]) if r["step"] >= first}
        b = {r["step"]: r for r in load(argv[3]) if r["step"] >= first}
        if sorted(a) != sorted(b) or not a:
            print(f"same: steps differ: {sorted(a)} vs {sorted(b)}")
            return 1
        diff = [s for s in a if (a[s]["loss"], a[s]["grad_norm"]) != (b[s]["loss"], b[s]["grad_norm"])]
        print(f"same: {len(a)} steps from {first}, {len(diff)} differ")
        return 0 if not diff else 1
    if cmd == "scaled":
        step, factor = int(argv[4]), float(argv[5])
        a = {r["step"]: r["grad_norm"] for r in load(argv[2])}
        b = {r["step"]: r["grad_norm"] for r in load(argv[3])}
        if step not in a or step not in b:
            print(f"scaled: step {step} missing")
            return 1
        print(f"scaled: step {step} grad_norm {a[step]!r} vs {b[step]!r}, "
              f"ratio {a[step] / b[step]!r} (want exactly {factor!r})")
        return 0 if a[step] == factor * b[step] else 1
    if cmd == "tail":
        a, b = load(argv[2]), load(argv[3])
        k = max(1, len(b) // 10)
        if len(a) != len(b) or not a:
            print(f"tail: {len(a)} steps vs {len(b)}")
            return 1
        ma, mb = mean([r["loss"] for r in a[-k:]]), mean([r["loss"] for r in b[-k:]])
        rel = abs(ma - mb) / abs(mb)
        print(f"tail: last {k} steps mean loss {ma:.4f} vs {mb:.4f}, relative difference "
              f"{rel:.2e} (max {argv[4]})")
        return 0 if rel <= float(argv[4]) else 1
    if cmd == "close":
        a = {r["step"]: (r["loss"], r["grad_norm"]) for r in load(argv[2])}
        b = {r["step"]: (r["loss"], r["grad_norm"]) for r in load(argv[3])}
        if sorted(a) != sorted(b) or not a:
            print(f"close: steps differ: {sorted(a)} vs {sorted(b)}")
            return 1
        worst = max(abs(a[s][0] - b[s][0]) / abs(b[s][0]) for s in a)
        worst_norm = max(abs(a[s][1] - b[s][1]) / abs(b[s][1]) for s in a)
        print(f"close: {len(a)} steps, max relative loss difference {worst:.2e}, "
              f"gradient norm {worst_norm:.2e} (max {argv[4]})")
        return 0 if max(worst, worst_norm) <= float(argv[4]) else 1
    if cmd == "evals":
        import math
        got = evals(argv[2])
        want = [int(x) for x in argv[3].split(",")]
        if sorted(got) != want:
            print(f"evals: at steps {sorted(got)}, want {want}")
            return 1
        bad = [s for s, r in got.items()
               if not (r["eval_loss"] is not None and math.isfinite(r["eval_loss"])
                       and abs(r["eval_ppl"] - math.exp(r["eval_loss"])) <= 1e-9 * r["eval_ppl"]
                       and abs(r["eval_bits_per_token"] - r["eval_loss"] / math.log(2)) <= 1e-12
                       and r["eval_tokens"] > 0 and r["eval_batches"] > 0)]
        print(f"evals: {len(got)} at steps {sorted(got)}, {len(bad)} inconsistent")
        return 0 if not bad else 1
    if cmd == "evalclose":
        a, b = evals(argv[2]), evals(argv[3])
        if sorted(a) != sorted(b) or not a:
            print(f"evalclose: steps differ: {sorted(a)} vs {sorted(b)}")
            return 1
        worst = max(abs(a[s]["eval_loss"] - b[s]["eval_loss"]) / abs(b[s]["eval_loss"]) for s in a)
        print(f"evalclose: {len(a)} evaluations, max relative eval_loss difference {worst:.2e} "
              f"(max {argv[4]})")
        return 0 if worst <= float(argv[4]) else 1
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
