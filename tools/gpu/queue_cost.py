"""Where an execution of tools/pipelines/train_queue_torch.py spends its time, without racelab:
the script run again and again in one process (runpy, as racelab's live python runs each
execution), with torch._dynamo.reset() before each run (what racelab's torch table does between
executions) or without it, for several --batches, under the torch-2.11 table's settings
(AOTAutograd's on-disk cache off, as racelab sets it). Prints one line per run and a median per
setting.

  python3 tools/gpu/queue_cost.py [RUNS] [SCRIPT_ARGS...]
"""
import os
import runpy
import statistics
import sys
import time

import torch
import torch._functorch.config

torch._functorch.config.enable_autograd_cache = False  # data/interpose/torch-2.11.json "settings"

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "pipelines", "train_queue_torch.py")
sys.path.insert(0, os.path.dirname(script))
runs = int(sys.argv[1]) if len(sys.argv) > 1 else 6
extra = sys.argv[2:]
for reset in (True, False):
    for batches in (0, 1, 4):
        times = []
        for i in range(runs):
            if reset:
                t0 = time.perf_counter()
                torch._dynamo.reset()
                tr = time.perf_counter() - t0
            else:
                tr = 0.0
            sys.argv = [script, "--warmup", "sequential", "--batches", str(batches)] + extra
            t0 = time.perf_counter()
            runpy.run_path(script, run_name="__main__")
            t = time.perf_counter() - t0
            times.append(t + tr)
            print(f"reset={reset} batches={batches} run {i}: reset {tr:.3f} s, script {t:.3f} s",
                  flush=True)
        print(f"== reset={reset} batches={batches}: median {statistics.median(times[1:]):.3f} s "
              f"(runs 1..{runs - 1}), first {times[0]:.3f} s", flush=True)

# One more run after a reset, 4 batches, under cProfile (the main thread only: the warmup and the
# thread handling): where the time of a warm execution goes.
import cProfile  # noqa: E402
import pstats  # noqa: E402

torch._dynamo.reset()
sys.argv = [script, "--warmup", "sequential", "--batches", "4"] + extra
prof = cProfile.Profile()
prof.enable()
runpy.run_path(script, run_name="__main__")
prof.disable()
print("== profile of one run after a reset, 4 batches, main thread (cumulative, top 40)",
      flush=True)
pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
