"""The drafter pipeline on real PyTorch 2.11 (GPU): one process, drafter threads on CUDA devices,
torch.compile(flex_attention) compiled lazily per thread key, forward then backward — the seed
pipeline of docs/results/torch-2.11-h200-seed/race_probe.py, without its barrier (racelab's
scheduler decides the interleaving). Same options as drafter_standin.py.

  racelab live python tools/pipelines/drafter_torch.py --interpose torch-2.11 -- \
      --drafters 2 --warmup none

With --device cpu the drafters run on the CPU, where torch 2.11 has no flex_attention backward
("FlexAttention does not support backward on CPU"): the compiled attention is then a causal
attention written in torch operations, compiled lazily per thread key through the same Dynamo,
AOTAutograd (the joint-graph trace under compile_lock, F4, F10) and Inductor path, its backward
compiled at the first backward (F2). The CPU's autograd runs the backward on the calling thread,
so the deadlock through a device's worker (F3, F4) cannot happen there; F10's FX error can
(CTest live.torch, tools/install-torch.sh):

  racelab live python --python /opt/racelab/torch-2.11.0 tools/pipelines/drafter_torch.py -- \
      --device cpu --seq-len 64 --heads 2 --head-dim 16 --steps 1 --warmup none
"""

import threading

import pipeline

import torch
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

p = pipeline.parser(__doc__)
p.add_argument("--recompile-limit", type=int, default=0,
               help="[torch] recompile_limit: torch._dynamo.config.recompile_limit (default: "
                    "torch's, 8); with 1 and lengths past the first, flex_attention falls back "
                    "to eager (F7, F12)")
p.add_argument("--drafter-seq-lens", default="",
               help="comma-separated training lengths, drafter i taking the (i mod n)-th "
                    "(default: --seq-len for every drafter)")
p.add_argument("--report-fx-flag", action="store_true",
               help="print FX's process-wide tracing flag (F10) as each run of this script in the "
                    "process starts and ends: True with no thread tracing is a stuck flag (F12)")
p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
               help="where the drafters run: cuda (drafter i on cuda:(i %% gpus), "
                    "flex_attention) or cpu (every drafter on the CPU, a causal attention in "
                    "torch operations: no flex_attention backward on the CPU)")
a = p.parse_args()
if a.report_fx_flag:
    pipeline.runs = getattr(pipeline, "runs", 0) + 1  # the module outlives a racelab execution
    print(f"drafter_torch: run {pipeline.runs - 1} starts with FX's tracing flag "
          f"{torch.fx._symbolic_trace._is_fx_tracing_flag}", flush=True)
if a.recompile_limit:
    torch._dynamo.config.recompile_limit = a.recompile_limit
drafter_lengths = [int(x) for x in a.drafter_seq_lens.split(",") if x]

_compiled_flex_attention = {}  # the user's per-process cache of compiled wrappers


def causal(b, h, q, kv):
    return q >= kv


def causal_attention(q, k, v, block_mask=None):
    """The CPU's attention: softmax(q kᵀ / √d, causal) v, in operations Inductor compiles on the
    CPU with their backward (block_mask is flex_attention's argument, unused here)."""
    scores = (q @ k.transpose(-2, -1)) * q.shape[-1] ** -0.5
    length = q.shape[-2]
    mask = torch.ones(length, length, dtype=torch.bool, device=q.device).tril()
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1) @ v


attention = flex_attention if a.device == "cuda" else causal_attention


def compiled(key):
    if key not in _compiled_flex_attention:
        _compiled_flex_attention[key] = (torch.compile(attention) if a.automatic_dynamic
                                         else torch.compile(attention, dynamic=False))
    return _compiled_flex_attention[key]


def step(key, device, length, backward=True, forward_lock=None):
    if drafter_lengths and threading.current_thread().name.startswith("drafter "):
        length = drafter_lengths[key % len(drafter_lengths)]
    if a.device == "cpu":
        device = "cpu"
    dtype = torch.bfloat16 if a.device == "cuda" else torch.float32
    q, k, v = (torch.randn(1, a.heads, length, a.head_dim, device=device, dtype=dtype,
                           requires_grad=True) for _ in range(3))
    bm = create_block_mask(causal, 1, 1, length, length, device=device) if a.device == "cuda" \
        else None
    if forward_lock is not None:
        with forward_lock:
            out = compiled(key)(q, k, v, block_mask=bm)
    else:
        out = compiled(key)(q, k, v, block_mask=bm)
    if backward:
        out.float().sum().backward()
    if a.device == "cuda":
        torch.cuda.synchronize(device)


if a.warmup == "sequential":
    length = a.warmup_seq_len or a.seq_len
    for i in range(a.drafters):
        step(i, f"cuda:{i % a.gpus}", length, backward=a.warmup_backward)

pipeline.run_drafters(a, step)
if a.report_fx_flag:
    print(f"drafter_torch: run {pipeline.runs - 1} ends with FX's tracing flag "
          f"{torch.fx._symbolic_trace._is_fx_tracing_flag}", flush=True)
