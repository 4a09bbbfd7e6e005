"""Two queue-less drafters on one GPU, written the way issue 36's user wrote theirs, for the
allocator capture's warm-phase test (check_warm_phase.py) on the fake torch of
tests/live/pipelines/fakecuda: each drafter has its parameters (24 MiB) and an AdamW (whose state,
2 x 24 MiB, is allocated at its first step); a step holds a 14 MiB activation until every drafter
holds its own (a barrier: the drafters run at once), frees it and steps the optimizer.

  --warmup sequential  main trains each drafter one step first, one after the other (the
                       second drafter's warmup grows memory, and so does the first step with both
                       drafters running); none: the drafters start cold, together
  --steps N            steps per drafter after the warmup
  --late-grow          drafter 0's last step takes a 16 MiB activation: a new shape, after the
                       warm phase
"""
import argparse
import threading

import torch

p = argparse.ArgumentParser()
p.add_argument("--drafters", type=int, default=2)
p.add_argument("--steps", type=int, default=6)
p.add_argument("--warmup", choices=("none", "sequential"), default="sequential")
p.add_argument("--late-grow", action="store_true")
a = p.parse_args()
MiB = 1 << 20


class Drafter:
    def __init__(self, device):
        self.device = device
        self.weights = torch.empty(24 * MiB, device=device)
        self.opt = torch.optim.AdamW([self.weights])

    def train_step(self, together=None, act_mib=14):
        act = torch.empty(act_mib * MiB, device=self.device)
        if together is not None:
            together.wait()  # every drafter holds its activation
        del act
        self.opt.step()


drafters = [Drafter("cuda:0") for _ in range(a.drafters)]
if a.warmup == "sequential":
    for d in drafters:
        d.train_step()
together = threading.Barrier(a.drafters)


def run(i):
    for s in range(a.steps):
        late = a.late_grow and i == 0 and s == a.steps - 1
        drafters[i].train_step(together, 16 if late else 14)


threads = [threading.Thread(target=run, args=(i,), name=f"drafter 0.{i}")
           for i in range(a.drafters)]
for t in threads:
    t.start()
for t in threads:
    t.join()
