"""The drafter pipeline on real PyTorch 2.11 (GPU): one process, drafter threads on CUDA devices,
torch.compile(flex_attention) compiled lazily per thread key, forward then backward — the seed
pipeline of docs/results/torch-2.11-h200-seed/race_probe.py, without its barrier (racelab's
scheduler decides the interleaving). Same options as drafter_standin.py.

  racelab live python tools/pipelines/drafter_torch.py --interpose torch-2.11 -- \
      --drafters 2 --warmup none
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


def compiled(key):
    if key not in _compiled_flex_attention:
        _compiled_flex_attention[key] = (torch.compile(flex_attention) if a.automatic_dynamic
                                         else torch.compile(flex_attention, dynamic=False))
    return _compiled_flex_attention[key]


def step(key, device, length, backward=True, forward_lock=None):
    if drafter_lengths and threading.current_thread().name.startswith("drafter "):
        length = drafter_lengths[key % len(drafter_lengths)]
    q, k, v = (torch.randn(1, a.heads, length, a.head_dim, device=device, dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    bm = create_block_mask(causal, 1, 1, length, length, device=device)
    if forward_lock is not None:
        with forward_lock:
            out = compiled(key)(q, k, v, block_mask=bm)
    else:
        out = compiled(key)(q, k, v, block_mask=bm)
    if backward:
        out.float().sum().backward()
    torch.cuda.synchronize(device)


if a.warmup == "sequential":
    length = a.warmup_seq_len or a.seq_len
    for i in range(a.drafters):
        step(i, f"cuda:{i % a.gpus}", length, backward=a.warmup_backward)

pipeline.run_drafters(a, step)
if a.report_fx_flag:
    print(f"drafter_torch: run {pipeline.runs - 1} ends with FX's tracing flag "
          f"{torch.fx._symbolic_trace._is_fx_tracing_flag}", flush=True)
