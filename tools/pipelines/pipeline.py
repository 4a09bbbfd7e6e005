"""What both drafter pipelines share (drafter_standin.py, drafter_torch.py): their options, so that
a case of the conformance table is the same command line on either, and the drafter threads with
the warmup modes around their first step. The options' names are the scenario format's
(settings.py; tools/conformance.py derives a scenario's arguments with settings.script_args)."""
import argparse
import threading

import settings


def parser(description):
    p = argparse.ArgumentParser(description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drafters", type=int, default=2,
                   help="drafter threads in all ([pipeline] devices x drafters_per_device)")
    p.add_argument("--gpus", type=int, default=1,
                   help="drafter i runs on cuda:(i %% gpus) ([pipeline] devices)")
    settings.add_warmup(p)
    p.add_argument("--seq-len", type=int, default=1024, help="[pipeline] seq_len")
    p.add_argument("--steps", type=int, default=2, help="[pipeline] steps")
    p.add_argument("--heads", type=int, default=8,
                   help="[pipeline] heads (drafter_torch.py's tensors; the stand-in has none)")
    p.add_argument("--head-dim", type=int, default=64,
                   help="[pipeline] head_dim (drafter_torch.py's tensors; the stand-in has none)")
    settings.add_automatic_dynamic(p)
    return p


def run_drafters(a, step):
    """Starts a.drafters threads, drafter i on cuda:(i % a.gpus), each running a.steps steps
    (`step(i, device, length, forward_lock=None)`) with the warmup mode's lock around its first
    one, and joins them. The locks are made here, per run: racelab's bridge replaces them by
    locks of the execution in progress."""
    warmup_lock = threading.Lock()

    def drafter(i):
        device = f"cuda:{i % a.gpus}"
        own_lock = threading.Lock()
        for s in range(a.steps):
            first = s == 0
            if first and a.warmup == "lock_first_step":
                with warmup_lock:
                    step(i, device, a.seq_len)
            elif first and a.warmup == "per_thread_lock":
                with own_lock:
                    step(i, device, a.seq_len)
            elif first and a.warmup == "lock_first_forward":
                step(i, device, a.seq_len, forward_lock=warmup_lock)
            else:
                step(i, device, a.seq_len)

    # Named as the model names drafters: "drafter DEVICE.K", the K-th drafter on cuda:DEVICE.
    threads = [threading.Thread(target=drafter, args=(i,),
                                name=f"drafter {i % a.gpus}.{i // a.gpus}")
               for i in range(a.drafters)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
