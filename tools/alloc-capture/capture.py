#!/usr/bin/env python3
"""Record a memory_viz snapshot of a drafter-like training step on a CUDA device.

Used to make allocator test traces for racelab (see docs/allocator.md). The step is the one the
fixtures in tests/data/alloc/fixtures-h200.tar.gz were recorded with (hidden 2048, 16 heads x 128,
bf16, random sequence length 512-4096), so that traces recorded under other PYTORCH_CUDA_ALLOC_CONF
settings are comparable with them.

  PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
      python3 capture.py --variant sdpa_chunked --iterations 150 --out DIR --tag es

Options beyond the fixture recipe: --memory-fraction calls set_per_process_memory_fraction
(garbage_collection_threshold only acts when a fraction is set), --empty-cache-every N calls
torch.cuda.empty_cache() every N iterations (exercises segment frees and unmaps).
Writes DIR/snap_<variant><tag>_<seed>.pickle and DIR/stats_<variant><tag>_<seed>.json.
"""
import argparse, json, os, random, time
import torch
import torch.nn.functional as F
from torch.nn.attention.flex_attention import flex_attention, create_block_mask

p = argparse.ArgumentParser()
p.add_argument("--variant", required=True, choices=["flex_padded", "sdpa_chunked", "sdpa_fused"])
p.add_argument("--iterations", type=int, default=150)
p.add_argument("--seed", type=int, default=1)
p.add_argument("--out", required=True)
p.add_argument("--tag", default="")
p.add_argument("--memory-fraction", type=float, default=0.0)
p.add_argument("--empty-cache-every", type=int, default=0)
a = p.parse_args()

dev = "cuda:0"
H, D, HID, SMAX, CHUNK = 16, 128, 2048, 4096, 512
torch.cuda.init()
if a.memory_fraction > 0:
    torch.cuda.set_per_process_memory_fraction(a.memory_fraction, 0)
torch.cuda.memory._record_memory_history(max_entries=1000000, context=None, stacks="python")
torch.manual_seed(0)
weights = [(torch.randn(HID, H * D, device=dev, dtype=torch.bfloat16) * 0.02).requires_grad_()
           for _ in range(4)]
Wq, Wk, Wv, Wo = weights
rng = random.Random(a.seed)
flex = torch.compile(flex_attention)


def attn(q, k, v, L):
    if a.variant == "flex_padded":
        def causal_doc(b, h, qi, ki):
            return (qi >= ki) & (qi < L) & (ki < L)
        bm = create_block_mask(causal_doc, 1, 1, SMAX, SMAX, device=dev)
        return flex(q, k, v, block_mask=bm)
    if a.variant == "sdpa_chunked":
        parts = []
        for s in range(0, q.shape[2], CHUNK):
            e = min(s + CHUNK, q.shape[2])
            mask = torch.ones(e - s, k.shape[2], device=dev, dtype=torch.bool).tril(diagonal=s)
            parts.append(F.scaled_dot_product_attention(q[:, :, s:e], k, v, attn_mask=mask))
        return torch.cat(parts, dim=2)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def step(L):
    S = SMAX if a.variant == "flex_padded" else L
    x = torch.randn(1, S, HID, device=dev, dtype=torch.bfloat16)
    q, k, v = ((x @ W).view(1, S, H, D).transpose(1, 2) for W in (Wq, Wk, Wv))
    o = attn(q, k, v, L).transpose(1, 2).reshape(1, S, H * D) @ Wo.t()
    o.float().pow(2).mean().backward()
    for W in weights:
        W.grad = None


lengths = [rng.choice(range(512, SMAX + 1, 64)) for _ in range(a.iterations)]
t0 = time.time_ns() // 1000
step(SMAX)
torch.cuda.synchronize()
warm = {"L": SMAX, "t_start_us": t0, "t_end_us": time.time_ns() // 1000}
rows = []
oom = None
for i, L in enumerate(lengths):
    ts = time.time_ns() // 1000
    try:
        step(L)
    except torch.OutOfMemoryError as e:  # keep the trace: an OOM is a result too
        oom = {"iter": i, "L": L, "message": str(e).splitlines()[0]}
        break
    torch.cuda.synchronize()
    if a.empty_cache_every and (i + 1) % a.empty_cache_every == 0:
        torch.cuda.empty_cache()
    te = time.time_ns() // 1000
    st = torch.cuda.memory_stats()
    rows.append({"iter": i, "L": L, "t_start_us": ts, "t_end_us": te,
                 "reserved": st["reserved_bytes.all.current"],
                 "allocated": st["allocated_bytes.all.current"],
                 "segments": st["segment.all.current"], "device_allocs": st["num_device_alloc"],
                 "device_frees": st["num_device_free"],
                 "inactive_split_bytes": st["inactive_split_bytes.all.current"],
                 "alloc_retries": st["num_alloc_retries"],
                 "peak_allocated": st["allocated_bytes.all.peak"]})
name = f"{a.variant}{a.tag}_{a.seed}"
torch.cuda.memory._dump_snapshot(os.path.join(a.out, f"snap_{name}.pickle"))
torch.cuda.memory._record_memory_history(enabled=None)
free, total = torch.cuda.mem_get_info()
json.dump({"variant": a.variant, "seed": a.seed,
           "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
           "memory_fraction": a.memory_fraction, "empty_cache_every": a.empty_cache_every,
           "device_total_bytes": total, "oom": oom, "device_free_bytes_at_end": free,
           "warmup": warm, "lengths": lengths, "rows": rows},
          open(os.path.join(a.out, f"stats_{name}.json"), "w"))
last = rows[-1]
print(f"{name}: reserved {rows[0]['reserved'] >> 20} -> {last['reserved'] >> 20} MiB, segments "
      f"{rows[0]['segments']} -> {last['segments']}, device allocs {last['device_allocs']}, "
      f"frees {last['device_frees']}, retries {last['alloc_retries']}, total {total}, oom {oom}",
      flush=True)
