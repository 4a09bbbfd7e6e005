"""A DFlash-style training script written the way users write them, on the stand-in for torch
(tools/pipelines/standin_torch.py), to test racelab's control of standard Python synchronisation:

- a target thread streams batches to the drafters through queue.Queue(maxsize=2);
- the target and the drafters start together at a threading.Barrier;
- main waits on a threading.Condition until every drafter has handed back its result, then sets a
  threading.Event to stop them;
- each drafter is a module object whose attention is a "compiled" flex_attention fetched from a
  per-process dict keyed by device (the user's own cache, `_attention_cache`, not the name the
  standin table knows: pass `--dict __main__._attention_cache`);
- `--pool`: the drafters run in a concurrent.futures.ThreadPoolExecutor and main collects them
  with as_completed and Future.result().

  PYTHONPATH=tools/pipelines racelab live python --interpose standin \\
      --dict __main__._attention_cache tests/live/pipelines/train_queue.py -- --warmup none
"""
import argparse
import concurrent.futures
import queue
import threading

import settings  # tools/pipelines, as standin_torch: the scenario format's setting names
import standin_torch as torch

parser = argparse.ArgumentParser()
settings.add_warmup(parser, modes=("none", "sequential"), backward=False, seq_len=False)
parser.add_argument("--drafters", type=int, default=2)
parser.add_argument("--batches", type=int, default=4)
parser.add_argument("--seq-len", type=int, default=1024)
parser.add_argument("--pool", action="store_true")
parser.add_argument("--recompute", action="store_true",
                    help="the worker looks the compiled attention up again in each backward, as "
                         "real torch's checkpoint recompute does")
args = parser.parse_args()

_attention_cache = {}


def compiled_attention(device):
    if device not in _attention_cache:
        _attention_cache[device] = torch.flex_attention
    return _attention_cache[device]


class Drafter:
    """What an nn.Module drafter does per batch: forward through the compiled attention, then
    backward, then an optimizer step (nothing shared)."""

    def __init__(self, device):
        self.device = device
        self.steps = 0

    def forward(self, length):
        return compiled_attention(self.device)(self.device, length)

    def train_step(self, length):
        out = self.forward(length)
        torch.backward(self.device, out)
        if args.recompute:  # foreign lookups of the interposed dict, inside a worker-served call
            torch._engine_run_backward(self.device, lambda: compiled_attention(self.device))
        self.steps += 1


feed = queue.Queue(maxsize=2)
start = threading.Barrier(args.drafters + 1)
stop = threading.Event()
handback = threading.Condition()
results = {}


def target():
    start.wait()
    for _ in range(args.batches):
        feed.put(args.seq_len)
    for _ in range(args.drafters):
        feed.put(None)  # one end marker per drafter


def drafter_loop(i):
    model = Drafter("cuda:0")
    try:
        start.wait()
        while not stop.is_set():
            length = feed.get()
            if length is None:
                break
            model.train_step(length)
    finally:
        with handback:
            results[i] = model.steps
            handback.notify_all()
    return model.steps


if args.warmup == "sequential":
    Drafter("cuda:0").train_step(args.seq_len)

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
