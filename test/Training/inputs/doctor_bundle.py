"""Edits a bundle as someone without xlnetc would, then records every file's
SHA-256 again, so only xlnetc's own checks stand (bundle-trust.test).

  doctor_bundle.py BUNDLE manifest KEY JSON   set manifest[KEY] (KEY a.b: nested)
  doctor_bundle.py BUNDLE grid N              the first kernel launch's grid
  doctor_bundle.py BUNDLE rehash FILE         record FILE's SHA-256 (any path)
"""
import hashlib
import json
import os
import sys

bundle, action = sys.argv[1], sys.argv[2]
manifest_path = os.path.join(bundle, "manifest.json")
manifest = json.load(open(manifest_path))


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


if action == "manifest":
    keys, value = sys.argv[3].split("."), json.loads(sys.argv[4])
    obj = manifest
    for k in keys[:-1]:
        obj = obj.setdefault(k, {})
    obj[keys[-1]] = value
elif action == "grid":
    path = os.path.join(bundle, manifest["program"])
    program = json.load(open(path))
    launch = next(l for s in program["steps"] for l in s["launches"] if "kernel" in l)
    launch["grid"] = int(sys.argv[3])
    json.dump(program, open(path, "w"))
    manifest["sha256"][manifest["program"]] = sha(path)
elif action == "rehash":
    name = sys.argv[3]
    manifest["sha256"][name] = sha(os.path.join(bundle, name))
else:
    sys.exit("unknown action " + action)
json.dump(manifest, open(manifest_path, "w"), indent=2)
