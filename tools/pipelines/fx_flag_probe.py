"""F10's probe (docs/facts.md), plain Python, no racelab, deterministic: while one thread is inside
an FX trace (make_fx, which sets FX's "is tracing" flag for the trace), another thread calls a
torch.compile'd function that is already compiled (a cache hit). Where the flag is process-wide
(torch 2.10 to 2.13) the call's entry check sees the other thread's trace and raises "Detected
that you are using FX to symbolically trace a dynamo-optimized function"; where it is thread-local
(2.14 on) the call runs. Two events order the threads; the compile uses Dynamo's eager back end
(the entry check is Dynamo's, whatever the back end).

  python fx_flag_probe.py     # prints "raised: RuntimeError: Detected that ..." or "ran"
"""
import threading

import torch
from torch.fx.experimental.proxy_tensor import make_fx

compiled = torch.compile(lambda x: (x * 2).sin(), backend="eager")
x = torch.randn(4)
compiled(x)  # compiled now: the call below is a cache hit
inside, done = threading.Event(), threading.Event()


def traced(y):
    inside.set()
    done.wait(60)
    return y + 1


tracer = threading.Thread(target=lambda: make_fx(traced)(torch.randn(4)))
tracer.start()
inside.wait(60)
try:
    compiled(x)
    result = "ran"
except RuntimeError as e:
    result = f"raised: RuntimeError: {str(e).splitlines()[0]}"
done.set()
tracer.join()
print(result)
