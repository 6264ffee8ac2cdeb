"""Copies a safetensors file with one tensor removed from its header.

usage: drop_tensor.py IN NAME OUT
"""
import json
import struct
import sys

src, name, dst = sys.argv[1:4]
data = open(src, "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
del header[name]
blob = json.dumps(header).encode()
blob += b" " * (-len(blob) % 8)
open(dst, "wb").write(struct.pack("<Q", len(blob)) + blob + data[8 + n :])
