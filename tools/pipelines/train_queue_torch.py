"""A DFlash-style training script on real PyTorch 2.11 (GPU), written the way users write them and
independently of drafter_torch.py, for racelab's control of standard Python synchronisation:

- a target thread streams batches (sequence lengths) to the drafters through
  queue.Queue(maxsize=2); the target and the drafters start together at a threading.Barrier;
  main waits on a threading.Condition for every drafter's hand-back, then sets a
  threading.Event to stop them;
- each drafter is an nn.Module (q/k/v and output projections, bf16) whose attention is
  torch.compile(flex_attention) fetched from a per-process dict keyed by device
  (`_attention_kernels`), run under torch.utils.checkpoint(use_reentrant=False), trained with
  AdamW;
- `--warmup sequential`: main runs one training step first, compiling forward and backward;
- `--pool`: the drafters run in a concurrent.futures.ThreadPoolExecutor;
- `--max-len N`: batch lengths drawn from 512..N (multiples of 64, `--seed`), as real batches
  vary; `--attention flex_compiled` pads every batch to N and masks the padding (static shapes),
  while `--attention sdpa_chunked` runs the true length through chunked
  scaled_dot_product_attention (`--chunk` queries at a time, no compile, every length a new
  shape): the allocator verdict tells them apart (racelab check).

The settings' names are the scenario format's (settings.py; `--attention flex` and `chunked` are
deprecated spellings of flex_compiled and sdpa_chunked).

  racelab live python --interpose torch-2.11 --dict __main__._attention_kernels \\
      tools/pipelines/train_queue_torch.py -- --warmup none
"""
import argparse
import concurrent.futures
import queue
import threading

import settings
import torch
import torch.nn as nn
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
from torch.utils.checkpoint import checkpoint

parser = argparse.ArgumentParser()
settings.add_warmup(parser, modes=("none", "sequential"), backward=False, seq_len=False)
parser.add_argument("--drafters", type=int, default=2)
parser.add_argument("--batches", type=int, default=4)
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--dim", type=int, default=512)
parser.add_argument("--heads", type=int, default=8)
parser.add_argument("--pool", action="store_true")
settings.add_attention(parser, ("flex_compiled", "sdpa_chunked"), "flex_compiled")
parser.add_argument("--max-len", type=int, default=0, help="0: every batch is --seq-len long")
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--chunk", type=int, default=512, help="[pipeline] chunk")
args = parser.parse_args()

_attention_kernels = {}  # the user's per-process cache of compiled attention, by device


def attention_kernel(device):
    key = str(device)
    if key not in _attention_kernels:
        _attention_kernels[key] = torch.compile(flex_attention)
    return _attention_kernels[key]


def causal(b, h, q, kv):
    return q >= kv


def padded_causal(length):
    """Causal within the first `length` positions of a padded batch (a tensor, so that one
    compiled kernel serves every length)."""
    def mask(b, h, q, kv):
        return (q >= kv) & (q < length) & (kv < length)
    return mask


def chunked_attention(q, k, v, chunk):
    """Causal attention of the true length, `chunk` queries at a time (the eager fallback users
    take when flex_attention will not compile)."""
    parts = []
    for s in range(0, q.shape[2], chunk):
        e = min(s + chunk, q.shape[2])
        mask = torch.ones(e - s, e, device=q.device, dtype=torch.bool).tril(diagonal=s)
        parts.append(torch.nn.functional.scaled_dot_product_attention(
            q[:, :, s:e], k[:, :, :e], v[:, :, :e], attn_mask=mask))
    return torch.cat(parts, dim=2)


class DrafterBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def attend(self, x, block_mask):
        b, length, dim = x.shape
        q, k, v = self.qkv(x).view(b, length, 3, self.heads, dim // self.heads).permute(
            2, 0, 3, 1, 4)
        if block_mask is None:
            y = chunked_attention(q, k, v, args.chunk)
        else:
            y = attention_kernel(x.device)(q, k, v, block_mask=block_mask)
        return self.out(y.transpose(1, 2).reshape(b, length, dim))

    def forward(self, x, block_mask):
        return checkpoint(self.attend, x, block_mask, use_reentrant=False)


class Drafter:
    def __init__(self, device):
        self.device = device
        self.model = DrafterBlock(args.dim, args.heads).to(device, torch.bfloat16)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=1e-4)
        self.steps = 0

    def train_step(self, length):
        if args.attention == "sdpa_chunked":
            x = torch.randn(1, length, args.dim, device=self.device, dtype=torch.bfloat16)
            mask = None
        elif args.max_len:
            x = torch.randn(1, args.max_len, args.dim, device=self.device, dtype=torch.bfloat16)
            n = torch.tensor(length, device=self.device)
            mask = create_block_mask(padded_causal(n), 1, 1, args.max_len, args.max_len,
                                     device=self.device)
        else:
            x = torch.randn(1, length, args.dim, device=self.device, dtype=torch.bfloat16)
            mask = create_block_mask(causal, 1, 1, length, length, device=self.device)
        loss = self.model(x, mask).float().pow(2).mean()
        loss.backward()
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        torch.cuda.synchronize(self.device)
        self.steps += 1


feed = queue.Queue(maxsize=2)
start = threading.Barrier(args.drafters + 1)
stop = threading.Event()
handback = threading.Condition()
results = {}


def batch_lengths():
    if not args.max_len:
        return [args.seq_len] * args.batches
    import random
    rng = random.Random(args.seed)
    return [rng.choice(range(512, args.max_len + 1, 64)) for _ in range(args.batches)]


def target():
    start.wait()
    for length in batch_lengths():
        feed.put(length)
    for _ in range(args.drafters):
        feed.put(None)


def drafter_loop(i):
    drafter = Drafter("cuda:0")
    try:
        start.wait()
        while not stop.is_set():
            length = feed.get()
            if length is None:
                break
            drafter.train_step(length)
    finally:
        with handback:
            results[i] = drafter.steps
            handback.notify_all()
    return drafter.steps


if args.warmup == "sequential":
    Drafter("cuda:0").train_step(args.max_len or args.seq_len)

feeder = threading.Thread(target=target, name="target")
if args.pool:
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.drafters,
                                               thread_name_prefix="drafter") as pool:
        futures = [pool.submit(drafter_loop, i) for i in range(args.drafters)]
        feeder.start()
        done = sum(f.result() for f in concurrent.futures.as_completed(futures))
else:
    drafters = [threading.Thread(target=drafter_loop, args=(i,), name=f"drafter 0.{i}")
                for i in range(args.drafters)]
    for t in drafters:
        t.start()
    feeder.start()
    with handback:
        handback.wait_for(lambda: len(results) == args.drafters)
    stop.set()
    for t in drafters:
        t.join()
feeder.join()
print(f"train_queue_torch: {sum(results.values())} steps", flush=True)
