"""Copies a safetensors file, dropping tensors and setting metadata.

usage: edit_safetensors.py IN OUT [--drop NAME]... [--meta KEY=VALUE]...

The data section is rebuilt from the kept tensors, contiguous as the format
requires (a dropped tensor's bytes go with it).
"""
import json
import struct
import sys

src, dst = sys.argv[1:3]
data = open(src, "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
args = sys.argv[3:]
for flag, value in zip(args[::2], args[1::2]):
    if flag == "--drop":
        del header[value]
    elif flag == "--meta":
        key, _, val = value.partition("=")
        header.setdefault("__metadata__", {})[key] = val
    else:
        sys.exit(f"unknown option {flag}")
body = data[8 + n :]
section = b""
for name, entry in sorted(
    ((k, v) for k, v in header.items() if k != "__metadata__"),
    key=lambda kv: tuple(kv[1]["data_offsets"]),
):
    begin, end = entry["data_offsets"]
    entry["data_offsets"] = [len(section), len(section) + end - begin]
    section += body[begin:end]
blob = json.dumps(header).encode()
blob += b" " * (-len(blob) % 8)
open(dst, "wb").write(struct.pack("<Q", len(blob)) + blob + section)
