"""Where FX's process-wide tracing flag (F10) is set during one compile of flex_attention, next to
the scheduling points that the torch-2.11 interposition table gives racelab: plain Python on one
thread, no racelab. For each event it prints the time, the thread, what happened, FX's flag
(torch.fx._symbolic_trace._is_fx_tracing_flag) and how many cache entries Dynamo holds for
flex_attention's code, so that a model step can be mapped onto a live point where the flag and the
cache are what the model says they are (docs/conformance.md, "Following the model on real torch").

  python3 tools/gpu/fx_flag_timeline.py [--lengths 1024,1536] [--rounds 2] > timeline.txt

Each round starts from torch._dynamo.reset() with AOTAutograd's disk cache off, as every racelab
execution does (data/interpose/torch-2.11.json); the first round also pays the process's one-time
initialisation. The second length recompiles with a dynamic length (F6, F11).
"""
import argparse
import functools
import sys
import threading
import time

import torch
import torch._dynamo.convert_frame as convert_frame
import torch._inductor.compile_fx as compile_fx
import torch.autograd
import torch.autograd.graph
import torch.fx._symbolic_trace as symbolic_trace
import torch.fx.experimental.proxy_tensor as proxy_tensor
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--lengths", default="1024,1536")
p.add_argument("--rounds", type=int, default=2)
a = p.parse_args()

T0 = time.perf_counter()
events = []
depth = threading.local()


def cache_entries():
    try:
        return len(torch._C._dynamo.eval_frame._debug_get_cache_entry_list(flex_attention.__code__))
    except Exception:  # noqa: BLE001 - a diagnostic: any failure is shown, not fatal
        return -1


def event(what):
    d = getattr(depth, "n", 0)
    events.append((time.perf_counter() - T0, threading.current_thread().name, "  " * d + what,
                   symbolic_trace._is_fx_tracing_flag, cache_entries()))


def traced(label, fn, result=False):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        event(label)
        depth.n = getattr(depth, "n", 0) + 1
        try:
            r = fn(*args, **kwargs)
        except BaseException as e:
            depth.n -= 1
            event(f"{label} raised {type(e).__name__}")
            raise
        depth.n -= 1
        event(f"{label} end" + (f" -> {r}" if result else ""))
        return r
    return wrapper


class LoggedLock:
    """compile_lock, logged: Dynamo's `with compile_lock` and compile_fx_backward's import see it."""

    def __init__(self, inner):
        self.inner = inner

    def __enter__(self):
        event("lock compile_lock (asked)")
        self.inner.acquire()
        event("lock compile_lock")
        return self

    def __exit__(self, *exc):
        event("unlock compile_lock")
        self.inner.release()
        return False

    def acquire(self, *a, **k):
        return self.inner.acquire(*a, **k)

    def release(self):
        return self.inner.release()


callers = {}  # (function, file:line) -> calls of is_fx_symbolic_tracing, every round


def entry_check(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        f = sys._getframe(1)
        r = fn(*args, **kwargs)
        where = (f"{f.f_code.co_name} in "
                 f"{f.f_code.co_filename.rsplit('site-packages/', 1)[-1]}:{f.f_lineno}")
        callers[where] = callers.get(where, 0) + 1
        if callers[where] <= 20:
            event(f"is_fx_symbolic_tracing() -> {r} (from {where})")
        return r
    return wrapper


convert_frame.compile_lock = LoggedLock(convert_frame.compile_lock)
torch.autograd.grad = traced("autograd.grad", torch.autograd.grad)
_erb = torch.autograd.graph._engine_run_backward
torch.autograd.graph._engine_run_backward = traced("_engine_run_backward", _erb)
torch.autograd._engine_run_backward = torch.autograd.graph._engine_run_backward
compile_fx.compile_fx_forward = traced("compile_fx_forward", compile_fx.compile_fx_forward)
compile_fx.compile_fx_backward = traced("compile_fx_backward", compile_fx.compile_fx_backward)
symbolic_trace.is_fx_symbolic_tracing = entry_check(symbolic_trace.is_fx_symbolic_tracing)
symbolic_trace.Tracer.trace = traced("Tracer.trace", symbolic_trace.Tracer.trace)
proxy_tensor.dispatch_trace = traced("dispatch_trace", proxy_tensor.dispatch_trace)
torch._functorch.config.enable_autograd_cache = False


def causal(b, h, q, kv):
    return q >= kv


def step(wrapper, length):
    q, k, v = (torch.randn(1, 8, length, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    bm = create_block_mask(causal, 1, 1, length, length, device="cuda")
    event(f"call the compiled wrapper (L={length})")
    out = wrapper(q, k, v, block_mask=bm)
    event(f"forward returned (L={length}); backward()")
    out.float().sum().backward()
    torch.cuda.synchronize()
    event(f"backward returned (L={length})")


print(f"torch {torch.__version__}; flag at start {symbolic_trace._is_fx_tracing_flag}")
for rnd in range(a.rounds):
    torch._dynamo.reset()
    events.clear()
    wrapper = torch.compile(flex_attention)
    for length in [int(x) for x in a.lengths.split(",")]:
        step(wrapper, length)
    print(f"\n## round {rnd} ({'cold process' if rnd == 0 else 'after torch._dynamo.reset()'})")
    print(f"{'time':>9}  {'thread':<12} {'flag':<5} {'entries':>7}  event")
    for t, th, what, flag, n in events:
        print(f"{t:9.4f}  {th:<12} {str(flag):<5} {n:>7}  {what}")
    sys.stdout.flush()
print("\n## callers of is_fx_symbolic_tracing (all rounds; the first 20 calls of each are shown above)")
for where, n in sorted(callers.items(), key=lambda kv: -kv[1]):
    print(f"{n:7d}  {where}")
