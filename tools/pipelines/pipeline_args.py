"""The options both drafter pipelines take (drafter_standin.py, drafter_torch.py), so that a case
of the conformance table is the same command line on either."""
import argparse

WARMUPS = ["none", "sequential", "sequential_forward", "lock_first_step", "lock_first_forward",
           "per_thread_lock"]


def parser(description):
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drafters", type=int, default=2)
    p.add_argument("--gpus", type=int, default=1, help="drafter i runs on cuda:(i %% gpus)")
    p.add_argument("--warmup", default="none", choices=WARMUPS)
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--warmup-seq-len", type=int, default=0,
                   help="the sequential warmup's length (default: --seq-len)")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--dynamic", choices=["auto", "false"], default="auto",
                   help="torch.compile's dynamic: auto (a second length recompiles with a dynamic "
                        "length) or false (every length compiles static); the stand-in compiles "
                        "lazily either way")
    return p
