#!/usr/bin/env python3
"""The competitor's training step: HuggingFace `XLNetLMHeadModel` on the same
model and step shapes as an xlnetc spec, timed the same way (tokens/s =
batch x seq_len per step), for the side-by-side table of docs/Benchmarks.md.

One step is what xlnetc's training step computes: a forward pass with the
incoming memory (mem_len), a permutation mask [B, S, S] and a target mapping
[B, NP, S] (the query stream over num_predict slots), the loss over the
targets, the backward pass, gradient clipping and an AdamW update. Inputs are
random (a fixed seed): only the shapes matter for the timing. The memory is
carried from step to step as HF returns it.

usage: hf_xlnet_bench.py SPEC.toml [--batch B] [--steps N] [--warmup W]
                         [--dtype fp32|bf16] [--device cuda|cpu] [--compile]
                         [--max-batch] [--json OUT]

--compile runs the model under torch.compile (the warmup steps then include
its compilation). --max-batch looks for the largest batch whose step fits in
the device's memory (doubling from --batch, then bisecting; each try is a
fresh model, two steps) instead of timing.

Prints one line per step and a summary; --json writes
{"model", "batch", "seq_len", "mem_len", "num_predict", "dtype", "device",
 "compile", "step_ms": [...], "tokens_per_s", "peak_mem_bytes"} (with
--max-batch: {"model", ..., "max_batch", "tried": {batch: fits}}).
"""
import argparse
import json
import sys
import time
import tomllib


def hf_config(spec):
    from transformers import XLNetConfig

    m = spec["model"]
    if m["d_model"] != m["n_head"] * m["d_head"]:
        sys.exit("HuggingFace XLNet needs d_model == n_head * d_head")
    return XLNetConfig(
        vocab_size=m["n_token"],
        d_model=m["d_model"],
        n_layer=m["n_layer"],
        n_head=m["n_head"],
        d_inner=m["d_inner"],
        ff_activation={"gelu_tanh": "gelu_new", "gelu_erf": "gelu", "relu": "relu"}[
            m.get("ff_activation", "gelu_tanh")
        ],
        untie_r=m.get("untie_r", True),
        attn_type=m.get("attn_type", "bi"),
        mem_len=m.get("mem_len", 0),
        clamp_len=m.get("clamp_len", -1),
        same_length=m.get("same_length", False),
        dropout=m.get("dropout", 0.1),
        initializer_range=m.get("init_range", 0.02),
        bi_data=spec["data"].get("bi_data", False),
        use_mems_train=True,
    )


def inputs(spec, B, dev, torch):
    """Random inputs of the step's shapes (a fixed seed)."""
    data = spec["data"]
    S, NP = data["seq_len"], data["num_predict"]
    V = spec["model"]["n_token"]
    g = torch.Generator(device="cpu").manual_seed(1)
    input_ids = torch.randint(0, V, (B, S), generator=g).to(dev)
    token_type_ids = torch.zeros(B, S, dtype=torch.long, device=dev)
    token_type_ids[:, S // 2:] = 1
    # A random permutation per row: query i may not see key j when j comes
    # at or after i in the permutation (the last NP positions are targets).
    perm = torch.stack([torch.randperm(S, generator=g) for _ in range(B)])
    rank = torch.empty_like(perm)
    rank.scatter_(1, perm, torch.arange(S).expand(B, S))
    perm_mask = (rank[:, :, None] <= rank[:, None, :]).float().to(dev)
    targets = perm[:, S - NP:]
    target_mapping = torch.zeros(B, NP, S)
    target_mapping.scatter_(2, targets[:, :, None], 1.0)
    target_mapping = target_mapping.to(dev)
    labels = torch.gather(input_ids.cpu(), 1, targets).to(dev)
    return input_ids, token_type_ids, perm_mask, target_mapping, labels


def run_steps(spec, B, args, torch, steps, warmup, verbose):
    """Builds the model and runs warmup + steps training steps of batch B;
    returns (step times in ms after the warmup, peak memory bytes, last loss)."""
    from transformers import XLNetLMHeadModel

    train = spec["train"]
    S = spec["data"]["seq_len"]
    M = spec["model"].get("mem_len", 0)
    dev = torch.device(args.device)
    torch.manual_seed(0)
    model = XLNetLMHeadModel(hf_config(spec)).to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=train.get("learning_rate", 1e-4),
                            eps=train.get("adam_epsilon", 1e-6),
                            weight_decay=train.get("weight_decay", 0.0))
    step_fn = torch.compile(model) if args.compile else model
    input_ids, token_type_ids, perm_mask, target_mapping, labels = inputs(spec, B, dev, torch)
    mems = None
    if M > 0:
        d = spec["model"]["d_model"]
        mems = [torch.zeros(M, B, d, device=dev) for _ in range(spec["model"]["n_layer"])]
    autocast = (torch.autocast(device_type=dev.type, dtype=torch.bfloat16)
                if args.dtype == "bf16" else torch.autocast(device_type=dev.type, enabled=False))
    clip = train.get("clip", 0.0)
    if dev.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    times, loss = [], float("nan")
    for step in range(warmup + steps):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with autocast:
            out = step_fn(input_ids=input_ids, token_type_ids=token_type_ids,
                          perm_mask=perm_mask, target_mapping=target_mapping,
                          labels=labels, mems=mems, use_mems=M > 0)
        out.loss.backward()
        if clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if M > 0:
            mems = [m.detach() for m in out.mems]
        loss = out.loss.item()  # synchronizes
        ms = (time.perf_counter() - t0) * 1e3
        if step >= warmup:
            times.append(ms)
        if verbose:
            print(f"step {step + 1}{' (warmup)' if step < warmup else ''}: "
                  f"loss {loss:.4f}, {ms:.1f} ms, {B * S / ms * 1e3:.0f} tokens/s", flush=True)
    peak = torch.cuda.max_memory_allocated() if dev.type == "cuda" else 0
    return times, peak, loss


def fits(spec, B, args, torch):
    """Whether two steps of batch B run without running out of memory."""
    try:
        run_steps(spec, B, args, torch, 1, 1, False)
        return True
    except torch.OutOfMemoryError:
        return False
    finally:
        import gc
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("spec")
    ap.add_argument("--batch", type=int, default=0, help="default: the spec's")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--max-batch", action="store_true",
                    help="find the largest batch that fits instead of timing")
    ap.add_argument("--json")
    args = ap.parse_args(argv[1:])

    import torch

    with open(args.spec, "rb") as f:
        spec = tomllib.load(f)
    data = spec["data"]
    B = args.batch or spec["train"]["train_batch_size"]
    S, NP = data["seq_len"], data["num_predict"]
    M = spec["model"].get("mem_len", 0)
    mode = "torch.compile" if args.compile else "eager"
    base = {"model": args.spec, "seq_len": S, "mem_len": M, "num_predict": NP,
            "dtype": args.dtype, "device": args.device, "compile": args.compile,
            "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else ""}

    if args.max_batch:
        if not args.device.startswith("cuda"):
            sys.exit("--max-batch needs a GPU (--device cuda): only a device runs out of memory")
        tried = {}
        lo, hi = 0, None
        b = B
        while hi is None and b <= 1 << 16:  # double until a batch fails
            tried[b] = fits(spec, b, args, torch)
            print(f"batch {b}: {'fits' if tried[b] else 'out of memory'}", flush=True)
            if tried[b]:
                lo, b = b, b * 2
            else:
                hi = b
        while hi is not None and hi - lo > 1:  # bisect between lo and hi
            mid = (lo + hi) // 2
            tried[mid] = fits(spec, mid, args, torch)
            print(f"batch {mid}: {'fits' if tried[mid] else 'out of memory'}", flush=True)
            lo, hi = (mid, hi) if tried[mid] else (lo, mid)
        result = dict(base, max_batch=lo, tried={str(k): v for k, v in sorted(tried.items())})
        print(f"HF XLNetLMHeadModel {args.spec} S={S} M={M} NP={NP} {args.dtype} {mode}: "
              f"largest batch that fits {lo}")
    else:
        times, peak, loss = run_steps(spec, B, args, torch, args.steps, args.warmup, True)
        mean = sum(times) / len(times)
        result = dict(base, batch=B, step_ms=times, tokens_per_s=B * S / mean * 1e3,
                      peak_mem_bytes=peak, final_loss=loss)
        print(f"HF XLNetLMHeadModel {args.spec} B={B} S={S} M={M} NP={NP} {args.dtype} {mode}: "
              f"{mean:.1f} ms/step, {result['tokens_per_s']:.0f} tokens/s, "
              f"peak {peak / 2**30:.2f} GiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
