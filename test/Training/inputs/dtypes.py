"""Prints the dtypes of the tensors of a safetensors file: `dtypes: F32` when
every tensor is F32 (a checkpoint's parameters and Adam moments whatever the
training precision), else each dtype with a tensor that has it."""
import json
import struct
import sys

with open(sys.argv[1], "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
found = {}
for name, t in header.items():
    if name != "__metadata__":
        found.setdefault(t["dtype"], name)
print("dtypes: " + ", ".join(f"{d}" if len(found) == 1 else f"{d} ({n})"
                             for d, n in sorted(found.items())))
