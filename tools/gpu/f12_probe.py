"""F12 on real torch: does eager flex_attention's own make_fx trace, which runs outside
compile_lock under _set_compilation_env (save FX's flag, force it False, restore the saved value),
crash another drafter's compiled call, or leave FX's process-wide flag (F10) stuck True so that
every later compiled call raises? Plain Python threads, no racelab (docs/conformance.md, "F12").

  python3 tools/gpu/f12_probe.py [--iterations 30] [--time-limit 60] > f12.txt

The eager fallback is forced as a user meets it: torch._dynamo.config.recompile_limit = 1, main
compiles flex_attention at 1024 (forward and backward), and drafters then call their own
torch.compile(flex_attention) wrappers at other lengths, which the spent budget sends to eager
flex_attention (F7). Phases, each iteration releasing its threads together at a barrier:
  A. one compiled drafter (1024, a cache hit) and one eager drafter (1536): is the compiled one
     crashed by the eager one's trace?
  B. two eager drafters (1536, 2048) and one compiled drafter (1024): after the iteration, with
     no thread inside any trace, is the flag still True (stuck), and does a compiled call then
     raise?
  C. the two eager drafters of B alone, for --stuck-iterations iterations: the stuck flag.
  D. the two eager drafters of B and a thread that compiles other functions (backend "eager",
     so it holds compile_lock but traces nothing with FX), for --stuck-iterations iterations: an
     eager drafter that passed its wrapper's entry check and then waits for compile_lock (to find
     the budget spent) can enter _set_compilation_env while the other one's trace has the flag
     set, save True and restore it after that trace has ended: the stuck flag.
  E. the two eager drafters from a cold start in every iteration (torch._dynamo.reset(), main
     compiles 1024 again): each drafter's first call past the budget takes compile_lock to find
     the budget spent, and the other's eager compile and trace run meanwhile.
Tracer.trace (every make_fx goes through it) and _set_compilation_env, wherever a module holds
it, are wrapped to log the value of the flag each one saved and the value it left; a stuck flag is
reset to False after it was shown, so that the counts go on. The source lines consulted are
printed first.
"""
import argparse
import contextlib
import functools
import importlib
import os
import sys
import threading
import time
import traceback
import warnings

import torch
import torch.fx._symbolic_trace as symbolic_trace
from torch.nn.attention.flex_attention import create_block_mask, flex_attention

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--iterations", type=int, default=30)
p.add_argument("--time-limit", type=float, default=60.0, help="seconds per phase")
p.add_argument("--phases", default="A,B", help="which phases, of A to E")
p.add_argument("--stuck-iterations", type=int, default=150, help="iterations of phases C and D")
p.add_argument("--cold-iterations", type=int, default=25, help="iterations of phase E")
a = p.parse_args()

FX_ERROR = "Detected that you are using FX to symbolically trace a dynamo-optimized function"
T0 = time.perf_counter()
log_lock = threading.Lock()


def now():
    return time.perf_counter() - T0


def flag():
    return symbolic_trace._is_fx_tracing_flag


def show_source():
    """The lines of the installed torch this probe relies on (the eager path of flex_attention,
    the helpers that save and restore FX's flag, and who uses them)."""
    print("## torch source consulted")
    tp = os.path.dirname(torch.__file__)
    for name, lo, hi in (("torch.nn.attention.flex_attention", 1680, 1760),
                         ("torch._higher_order_ops.utils", 280, 312),
                         ("torch._higher_order_ops.flex_attention", 700, 760)):
        path = importlib.import_module(name).__file__
        lines = open(path).read().splitlines()
        print(f"### {os.path.relpath(path, os.path.dirname(tp))} lines {lo}-{hi}")
        for i in range(lo, min(hi, len(lines)) + 1):
            print(f"{i:5d}  {lines[i - 1]}")
    print("### users of _set_compilation_env")
    for dirpath, _, files in os.walk(tp):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                for i, line in enumerate(open(path, errors="replace"), 1):
                    if "_set_compilation_env" in line:
                        print(f"{os.path.relpath(path, os.path.dirname(tp))}:{i}: {line.strip()}")
    print("recompile_limit =", torch._dynamo.config.recompile_limit)


# Every FX trace (make_fx goes through Tracer.trace) saves the flag, sets it, and restores what it
# saved in a finally: log what each one saved and what it left, per thread.
trace_log = []  # (time, thread, "trace" | "env", saved, left)
_orig_trace = symbolic_trace.Tracer.trace


@functools.wraps(_orig_trace)
def logged_trace(self, *args, **kwargs):
    saved = flag()
    try:
        return _orig_trace(self, *args, **kwargs)
    finally:
        with log_lock:
            trace_log.append((now(), threading.current_thread().name, "trace", saved, flag()))


symbolic_trace.Tracer.trace = logged_trace
_orig_env = getattr(importlib.import_module("torch._higher_order_ops.utils"),
                    "_set_compilation_env", None)


@contextlib.contextmanager
def logged_env():
    saved = flag()
    try:
        with _orig_env():
            yield
    finally:
        with log_lock:
            trace_log.append((now(), threading.current_thread().name, "env", saved, flag()))


if _orig_env is not None:  # wherever a module holds it as a global
    for mod in list(sys.modules.values()):
        if getattr(mod, "_set_compilation_env", None) is _orig_env:
            setattr(mod, "_set_compilation_env", logged_env)


def causal(b, h, q, kv):
    return q >= kv


def step(wrapper, length, backward=True):
    q, k, v = (torch.randn(1, 8, length, 64, device="cuda", dtype=torch.bfloat16,
                           requires_grad=True) for _ in range(3))
    bm = create_block_mask(causal, 1, 1, length, length, device="cuda")
    out = wrapper(q, k, v, block_mask=bm)
    if backward:
        out.float().sum().backward()
    torch.cuda.synchronize()


_fresh = [0]


def compile_others(n):
    """Compiles n functions never seen before (each its own code object), so that this thread
    holds compile_lock often, as a pipeline that compiles something else does."""
    for _ in range(n):
        _fresh[0] += 1
        ns = {}
        exec(f"def fresh_{_fresh[0]}(x):\n    return (x * {_fresh[0] + 1}).sin().cumsum(0) + 1\n", ns)
        torch.compile(ns[f"fresh_{_fresh[0]}"], backend="eager")(torch.randn(256, device="cuda"))


def rewarm():
    """A cold start of every iteration (phase E): Dynamo reset, main compiles 1024 again, so that
    the drafters' first calls past the budget go through compile_lock once more."""
    torch._dynamo.reset()
    step(torch.compile(flex_attention), 1024)


def phase(name, lanes, iterations, before=None):
    """lanes: (thread name, wrapper, length), a wrapper of None making the length a number of
    fresh functions to compile instead. Runs the iterations; returns per-lane counts."""
    print(f"\n## phase {name}: " + ", ".join(f"{n} at {L}" if w is not None else
                                               f"{n} ({L} functions an iteration)"
                                               for n, w, L in lanes))
    counts = {n: {"ok": 0, "fx_error": 0, "other_error": 0} for n, _, _ in lanes}
    first_fx = {}
    stuck = []
    start_log = len(trace_log)
    t_start = time.perf_counter()
    runs = 0
    for it in range(iterations):
        if time.perf_counter() - t_start > a.time_limit:
            print(f"time limit after {it} iterations")
            break
        if before is not None:
            before()
        barrier = threading.Barrier(len(lanes))

        def lane(n, w, L, it=it):
            barrier.wait()
            try:
                if w is None:
                    compile_others(L)
                else:
                    step(w, L)
                counts[n]["ok"] += 1
            except RuntimeError as e:
                if FX_ERROR in str(e):
                    counts[n]["fx_error"] += 1
                    first_fx.setdefault(n, (it, now(), traceback.format_exc()))
                else:
                    counts[n]["other_error"] += 1
                    print(f"iteration {it} {n}: {type(e).__name__}: {str(e)[:300]}")
            except Exception as e:  # noqa: BLE001 - counted and shown
                counts[n]["other_error"] += 1
                print(f"iteration {it} {n}: {type(e).__name__}: {str(e)[:300]}")

        ts = [threading.Thread(target=lane, args=(n, w, L), name=n) for n, w, L in lanes]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        if flag():  # nobody is tracing now: a True flag is stuck
            msg = f"iteration {it}: FX flag stuck True after the threads joined"
            try:
                step(torch.compile(flex_attention), 1024)
                msg += "; main's next compiled call (1024, a cache hit) did not raise"
            except RuntimeError as e:
                msg += ("; main's next compiled call (1024, a cache hit) raised: "
                        + str(e).splitlines()[0][:160])
            try:
                step(torch.compile(flex_attention), 1024)
                msg += "; and again: no error"
            except RuntimeError as e:
                msg += "; and again: " + str(e).splitlines()[0][:100]
            print(msg)
            recent = trace_log[start_log:][-8:]
            for t, th, what, saved, left in recent:
                print(f"    {t:9.4f} {th}: {what} saved {saved}, left {left}")
            stuck.append(it)
            symbolic_trace._is_fx_tracing_flag = False  # reset, so that the counts go on
        runs += 1
    logs = trace_log[start_log:]
    print(f"iterations run: {runs}")
    for n, c in counts.items():
        print(f"  {n}: {c}")
    for what in ("trace", "env"):
        ls = [e for e in logs if e[2] == what]
        print(f"  {what} regions ({'Tracer.trace' if what == 'trace' else '_set_compilation_env'}):"
              f" {len(ls)}, by thread {sorted({e[1] for e in ls})}; saved True in "
              f"{sum(1 for e in ls if e[3])}, left True in {sum(1 for e in ls if e[4])}")
    print(f"  flag stuck after iterations: {stuck if stuck else 'never'}")
    for n, (it, t, tb) in first_fx.items():
        print(f"  first FX error in {n} at iteration {it} ({t:.3f} s):")
        print("    " + "\n    ".join(tb.strip().splitlines()[-6:]))
    return counts, stuck


print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
show_source()
torch._dynamo.config.recompile_limit = 1
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    main_w = torch.compile(flex_attention)
    step(main_w, 1024)  # the one cache entry the budget allows
    before = len(trace_log)
    step(torch.compile(flex_attention), 1536)  # over budget: eager
    step(torch.compile(flex_attention), 2048)
    eager_w = [str(x.message).splitlines()[0] for x in w]
    eager_regions = sum("without torch.compile" in m for m in eager_w)
    traces = trace_log[before:]
    entries = len(torch._C._dynamo.eval_frame._debug_get_cache_entry_list(flex_attention.__code__))
print(f"\nwarm-up: main compiled 1024; the calls at 1536 and 2048 warned of the eager path "
      f"{eager_regions} time(s) and made {len(traces)} FX trace(s) "
      f"({sum(1 for e in traces if e[2] == 'env')} _set_compilation_env); warnings: "
      f"{sorted({m[:120] for m in eager_w})}")
print("flag after warm-up:", flag(), f"; Dynamo's cache entries for flex_attention: {entries}")
if entries > 1:
    print("the budget did not send the calls to eager flex_attention; phases call it directly")
    eager = lambda: flex_attention  # noqa: E731
else:
    eager = lambda: torch.compile(flex_attention)  # noqa: E731

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    phases = a.phases.split(",")
    if "A" in phases:
        phase("A", [("compiled 1024", torch.compile(flex_attention), 1024),
                    ("eager 1536", eager(), 1536)], a.iterations)
    if "B" in phases:
        phase("B", [("eager 1536", eager(), 1536), ("eager 2048", eager(), 2048),
                    ("compiled 1024", torch.compile(flex_attention), 1024)], a.iterations)
    if "C" in phases:
        phase("C", [("eager 1536", eager(), 1536), ("eager 2048", eager(), 2048)],
              a.stuck_iterations)
    if "E" in phases:
        phase("E", [("eager 1536", torch.compile(flex_attention), 1536),
                    ("eager 2048", torch.compile(flex_attention), 2048)],
              a.cold_iterations, before=rewarm)
    if "D" in phases:
        phase("D", [("eager 1536", eager(), 1536), ("eager 2048", eager(), 2048),
                    ("compiling", None, 4)], a.stuck_iterations)
print("\nflag at the end:", flag())
os._exit(0)
