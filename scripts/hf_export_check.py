#!/usr/bin/env python3
"""Loads an `xlnetc export` directory with HuggingFace transformers and checks
it against xlnetc, as a new user would use it (docs/Training.md "Export to
HuggingFace"):

1. `XLNetLMHeadModel.from_pretrained(DIR)` loads it with no warning (no
   missing, unexpected or newly initialised weights);
2. `XLNetTokenizer` and `AutoTokenizer` tokenize every line of --text into
   the ids `xlnetc tokenize` gives (the training pipeline's encoding);
3. HF's forward (model.eval(), a random batch with a permutation mask,
   target mapping, segment ids and incoming memory) gives the logits
   `xlnetc run-step DIR/config.json --weights DIR` gives on the same batch,
   within --rtol of the largest logit.

Prints one line per check and exits non-zero on the first failure.

usage: hf_export_check.py --export DIR --xlnetc BIN --text FILE [--spec SPEC]
                          [--work DIR] [--rtol 1e-5]
"""
import argparse
import logging
import os
import subprocess
import sys
import warnings


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--export", required=True)
    p.add_argument("--xlnetc", required=True)
    p.add_argument("--text", required=True)
    p.add_argument("--spec", help="the run's spec.toml (keep_accents)")
    p.add_argument("--work", default=None)
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq-len", type=int, default=24)
    p.add_argument("--num-predict", type=int, default=6)
    p.add_argument("--mlen", type=int, default=8)
    a = p.parse_args()
    work = a.work or os.path.join(a.export, "..", "hf-check")
    os.makedirs(work, exist_ok=True)

    import numpy as np
    import torch
    import transformers
    from safetensors.numpy import load_file, save_file
    from transformers import AutoTokenizer, XLNetLMHeadModel, XLNetTokenizer

    print(f"transformers {transformers.__version__}, torch {torch.__version__}")

    # 1. The model loads with no warning.
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            if record.levelno >= logging.WARNING:
                records.append(record.getMessage())

    transformers.logging.set_verbosity_warning()
    transformers.logging.get_logger().addHandler(Keep())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = XLNetLMHeadModel.from_pretrained(a.export)
    messages = records + [str(w.message) for w in caught
                          if "weights" in str(w.message).lower()
                          or "initialized" in str(w.message).lower()]
    if messages:
        fail("from_pretrained warned: " + " | ".join(messages))
    model.eval()
    print(f"ok: XLNetLMHeadModel.from_pretrained loads {a.export} with no warning "
          f"({sum(p.numel() for p in model.parameters())} parameters)")

    # 2. Tokenization as training did.
    lines = [l.rstrip("\n") for l in open(a.text, encoding="utf-8")]
    lines = [l for l in lines if l.strip()]
    cmd = [a.xlnetc, "tokenize", os.path.join(a.export, "spiece.model")]
    if a.spec:
        cmd += ["--spec", a.spec]
    ours = subprocess.run(cmd, input="\n".join(lines) + "\n", capture_output=True,
                          text=True, encoding="utf-8")
    if ours.returncode != 0:
        fail(f"xlnetc tokenize: {ours.stderr.strip()}")
    ours = [[int(x) for x in l.split()] for l in ours.stdout.splitlines()]
    for name, tok in (("XLNetTokenizer", XLNetTokenizer.from_pretrained(a.export)),
                      ("AutoTokenizer", AutoTokenizer.from_pretrained(a.export))):
        for line, want in zip(lines, ours):
            got = tok(line, add_special_tokens=False)["input_ids"]
            if got != want:
                fail(f"{name} ({type(tok).__name__}) tokenizes {line!r} as {got}, "
                     f"xlnetc as {want}")
        print(f"ok: {name} ({type(tok).__name__}) gives xlnetc's ids on all "
              f"{len(lines)} lines")

    # 3. The forward on one batch.
    cfg = model.config
    rng = np.random.default_rng(7)
    B, S, NP, M = a.batch, a.seq_len, a.num_predict, a.mlen
    input_k = rng.integers(9, cfg.vocab_size, size=(B, S)).astype(np.int64)
    seg_id = np.zeros((B, S), np.int64)
    seg_id[:, S // 2:] = 1
    perm_mask = np.zeros((B, S, S), np.float32)
    target_mapping = np.zeros((B, NP, S), np.float32)
    target = np.zeros((B, NP), np.int64)
    for b in range(B):
        rank = rng.permutation(S)  # position -> its place in the order
        perm_mask[b] = (rank[None, :] >= rank[:, None]).astype(np.float32)
        pos = np.sort(rng.choice(S, NP, replace=False))
        target_mapping[b, np.arange(NP), pos] = 1
        target[b] = input_k[b, pos]
    mems = [rng.normal(0, 0.5, size=(M, B, cfg.d_model)).astype(np.float32)
            for _ in range(cfg.n_layer)]
    batch = {"input_k": input_k, "seg_id": seg_id, "perm_mask": perm_mask,
             "target_mapping": target_mapping, "target": target,
             "target_mask": np.ones((B, NP), np.float32)}
    for i, m in enumerate(mems):
        batch[f"mems.{i}"] = m
    batch_path = os.path.join(work, "batch.safetensors")
    out_path = os.path.join(work, "xlnetc.out.safetensors")
    save_file(batch, batch_path, metadata={"seq_len": str(S), "reuse_len": str(S)})
    run = subprocess.run([a.xlnetc, "run-step", os.path.join(a.export, "config.json"),
                          "--weights", a.export, "--batch", batch_path, "--out", out_path],
                         capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"xlnetc run-step: {run.stderr.strip()}")
    ours = load_file(out_path)["logits"]
    with torch.no_grad():
        hf = model(input_ids=torch.from_numpy(input_k),
                   token_type_ids=torch.from_numpy(seg_id),
                   perm_mask=torch.from_numpy(perm_mask),
                   target_mapping=torch.from_numpy(target_mapping),
                   mems=[torch.from_numpy(m) for m in mems]).logits.numpy()
    if hf.shape != ours.shape:
        fail(f"logits shapes differ: HF {hf.shape}, xlnetc {ours.shape}")
    err = float(np.abs(hf - ours).max())
    scale = float(np.abs(hf).max())
    if not err <= a.rtol * scale:
        fail(f"logits differ: max |HF - xlnetc| {err:.3g} > {a.rtol:g} x max |HF| {scale:.3g}")
    print(f"ok: HF forward logits {list(hf.shape)} match xlnetc run-step: max |diff| "
          f"{err:.3g} ({err / scale:.2g} of max |logit| {scale:.3g})")


if __name__ == "__main__":
    main()
