"""Copies a batch file with the perm_mask of batch row 1 made crossed: query
0 may not see key 1 and query 1 may not see key 0 (and both see the rest),
a mask without the rank form (its rows do not mask nested sets of keys).

usage: cross_perm_mask.py IN OUT
"""
import json
import struct
import sys

src, dst = sys.argv[1:3]
data = bytearray(open(src, "rb").read())
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
info = header["perm_mask"]
B, S, _ = info["shape"]
base = 8 + n + info["data_offsets"][0]
def put(b, i, j, v):
    struct.pack_into("<f", data, base + 4 * ((b * S + i) * S + j), v)
for i in range(S):
    for j in range(S):
        put(1, i, j, 0.0)
put(1, 0, 1, 1.0)
put(1, 1, 0, 1.0)
open(dst, "wb").write(bytes(data))
