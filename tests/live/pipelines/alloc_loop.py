"""A training loop per device, for the allocator capture's CPU test (tests/live/check_capture.py)
on the fake torch of tests/live/pipelines/fakecuda: one thread per device takes its parameter,
then per iteration allocates an activation, frees it and steps its optimizer.

  --grow      the activation grows by 2 MiB each iteration (a new segment every iteration: not
              stable); otherwise its size is constant (one segment, reused: stable from iteration 1)
  --markers   the loop also calls racelab.iteration(device) after each step (the markers, not the
              optimizer steps, are then the capture's iterations)
  --queue     the threads take their iteration numbers from a queue.Queue fed by the main thread
"""
import argparse
import queue
import threading

import torch

p = argparse.ArgumentParser()
p.add_argument("--iterations", type=int, default=6)
p.add_argument("--devices", type=int, default=2)
p.add_argument("--grow", action="store_true")
p.add_argument("--markers", action="store_true")
p.add_argument("--queue", action="store_true")
a = p.parse_args()
MiB = 1 << 20

if a.markers:
    import racelab


def train(dev, work):
    w = torch.empty(12 * MiB, device=dev)  # the parameter, kept
    opt = torch.optim.SGD([w])
    while True:
        i = work.get() if a.queue else work.pop(0) if work else None
        if i is None:
            break
        act = torch.empty((14 + (2 * i if a.grow else 0)) * MiB, device=dev)
        del act
        opt.step()
        if a.markers:
            racelab.iteration(dev)


threads = []
feeds = []
for d in range(a.devices):
    feed = queue.Queue() if a.queue else list(range(a.iterations))
    feeds.append(feed)
    threads.append(threading.Thread(target=train, args=(f"cuda:{d}", feed), name=f"train-{d}"))
for t in threads:
    t.start()
if a.queue:
    for i in range(a.iterations):
        for f in feeds:
            f.put(i)
    for f in feeds:
        f.put(None)
for t in threads:
    t.join()
