"""Plants PAYLOAD under the name of every entry of the kernel cache DIR, as an
attacker without the user's key can: with format 1's trailer (the bare
SHA-256 of the bytes) or format 2's with a tag under a guessed key
(kernel-cache-trust.test). Usage: plant_kernel_cache.py DIR PAYLOAD v1|v2"""
import hashlib
import hmac
import os
import struct
import sys

directory, payload_path, version = sys.argv[1], sys.argv[2], sys.argv[3]
payload = open(payload_path, "rb").read()
planted = 0
for name in sorted(os.listdir(directory)):
    if not name.endswith(".so"):
        continue
    if version == "v1":
        tag = hashlib.sha256(payload).digest()
        number = 1
    else:
        header = b"xlnetc-kernel-cache/2\n" + name.encode() + b"\n"
        header += struct.pack("<QQ", len(payload), 0)
        tag = hmac.new(b"\0" * 32, header + payload, hashlib.sha256).digest()
        number = 2
    trailer = b"xlkcache" + struct.pack("<IIQQ", number, 0, len(payload), 0) + tag
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(payload + trailer)
    os.chmod(path, 0o600)
    planted += 1
print(f"planted {planted} entries")
