"""The drafter pipeline on the stand-in (standin_torch.py): main starts one drafter thread per
GPU slot, each compiles lazily on first use, forward then backward. A drafter whose compiled call
raises (F10's FX tracing error) ends there, as a Python thread does; its `with` locks are
released on the way out.

  racelab live python tools/pipelines/drafter_standin.py --interpose standin -- \
      --drafters 2 --warmup none

The options are the scenario format's settings (settings.py, docs/scenarios.md):
--warmup: none | sequential (main runs forward and backward first; with --no-warmup-backward the
          forward only) | lock_first_step / lock_first_forward (one user lock around each
          drafter's first step / first forward) | per_thread_lock (each drafter's own lock around
          its first step)
--gpus G puts drafter i on device cuda:(i % G); --seq-len L, --warmup-seq-len L, --steps N;
torch.compile's default (a second length recompiles dynamic, its backward compiled ahead of time,
F11), or --no-automatic-dynamic (every length static, its backward lazy).
"""

import functools

import pipeline

import standin_torch as torch_standin

p = pipeline.parser(__doc__)
a = p.parse_args()
dynamic = None if a.automatic_dynamic else False  # torch.compile(flex_attention, dynamic=...)

_compiled_flex_attention = {}  # the user's cache of compiled wrappers, one per drafter key


def compiled(key):
    # Check, then insert: between the two another drafter may do the same.
    if key not in _compiled_flex_attention:
        _compiled_flex_attention[key] = functools.partial(torch_standin.flex_attention,
                                                          dynamic=dynamic)
    return _compiled_flex_attention[key]


def step(i, device, length, forward_lock=None):  # i: the drafter (keys are per device)
    if forward_lock is not None:
        with forward_lock:
            out = compiled(device)(device, length)
    else:
        out = compiled(device)(device, length)
    torch_standin.backward(device, out)


if a.warmup == "sequential":
    length = a.warmup_seq_len or a.seq_len
    for g in range(min(a.gpus, a.drafters)):
        out = torch_standin.flex_attention(f"cuda:{g}", length, dynamic=dynamic)
        if a.warmup_backward:
            torch_standin.backward(f"cuda:{g}", out)

pipeline.run_drafters(a, step)
