"""A loop whose memory grows after its first iteration, from known lines, for the attribution test
(check_attribution.py) on the fake torch of tests/live/pipelines/fakecuda. Sizes are multiples of
2 MiB above 10 MiB and no request finds a larger free block, so the fake's segments are PyTorch's.

  iteration 0      two 12 MiB activations (the warm phase, --settle 1)
  iteration 4      a 20 MiB buffer: 24 MiB free in two 12 MiB segments, none large enough:
                   fragmentation
  iteration 7      two 32 MiB buffers (fragmentation: 44 MiB free, the largest 20 MiB), then while
                   they are held a 64 MiB one (the cache holds too little)
Each iteration ends with racelab.iteration(). `--mode stable` makes every allocation in iteration 0
(the same requests from the same lines, all in the warm phase): alloc diff and racelab check compare
the two."""
import argparse

import racelab
import torch

p = argparse.ArgumentParser()
p.add_argument("--mode", choices=("grow", "stable"), default="grow")
stable = p.parse_args().mode == "stable"

MiB = 1 << 20


def activations():
    a = torch.empty(12 * MiB, device="cuda:0")  # site: activations
    b = torch.empty(12 * MiB, device="cuda:0")  # site: activations
    return a, b


def grow_fragmented():
    return torch.empty(20 * MiB, device="cuda:0")  # site: grow_fragmented


def bigger():
    return torch.empty(32 * MiB, device="cuda:0")  # site: bigger


def largest():
    return torch.empty(64 * MiB, device="cuda:0")  # site: largest


for it in range(11):
    held = list(activations())
    del held
    if it >= 4 or stable:
        buf = grow_fragmented()
        del buf
    if it >= 7 or stable:
        x, y = bigger(), bigger()
        z = largest()
        del x, y, z
    racelab.iteration()
