"""Exits 0 when tensor NAME_A of safetensors file A equals tensor NAME_B of B
bit for bit (same dtype, shape and bytes); prints what it compared.

  same_tensor.py A NAME_A B NAME_B
"""
import json
import struct
import sys


def read(path, name):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    entry = header[name]
    begin, end = entry["data_offsets"]
    return entry["dtype"], entry["shape"], data[8 + n + begin:8 + n + end]


a = read(sys.argv[1], sys.argv[2])
b = read(sys.argv[3], sys.argv[4])
same = a == b
print(f"{sys.argv[2]} {a[0]}{a[1]} vs {sys.argv[4]} {b[0]}{b[1]}: {'identical' if same else 'DIFFERENT'}")
sys.exit(0 if same else 1)
