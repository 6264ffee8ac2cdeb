"""Checks the relations between the rows of `xlnetc compile --emit=memory`
tables: Adam's two moments are twice the parameters, the arena is at least
its lower bound and the total is the sum of its parts, the returned outputs
hold no parameters or moments (the optimizer updates them in place), and the batch-
dependent rows grow with the batch while the parameters do not.

usage: memory_table.py SMALL_BATCH_TABLE LARGE_BATCH_TABLE
"""
import sys


def read(path):
    rows = {}
    for line in open(path):
        parts = line.split()
        for i, p in enumerate(parts):
            if p.isdigit():
                rows[" ".join(parts[:i])] = int(p)
                break
    return rows


small, large = (read(p) for p in sys.argv[1:3])
errors = []
for name, t in (("small", small), ("large", large)):
    if t["optimizer state (Adam m, v)"] != 2 * t["parameters"]:
        errors.append(f"{name}: the optimizer state is not twice the parameters")
    if t["arena (temporaries, liveness-planned)"] < t["lower bound (peak of live temporaries)"]:
        errors.append(f"{name}: the arena is below its lower bound")
    parts = ("parameters", "optimizer state (Adam m, v)", "inputs (batch, memory, step)",
             "arena (temporaries, liveness-planned)", "workspace (scratch, status words, tables)")
    if t["total"] != sum(t[p] for p in parts):
        errors.append(f"{name}: the total is not the sum of its parts")
    # The optimizer writes the new parameters and moments over the old ones.
    if not t["outputs (new mems, loss, ...)"] < t["parameters"]:
        errors.append(f"{name}: the outputs hold new parameters or moments")
if small["parameters"] != large["parameters"]:
    errors.append("the parameters depend on the batch")
for row in ("inputs (batch, memory, step)", "activations kept for the backward",
            "arena (temporaries, liveness-planned)"):
    if not large[row] > small[row]:
        errors.append(f"'{row}' does not grow with the batch")
print("\n".join(errors) if errors else "memory tables consistent")
sys.exit(1 if errors else 0)
