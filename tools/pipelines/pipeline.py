"""What both drafter pipelines share (drafter_standin.py, drafter_torch.py): their options, so that
a case of the conformance table is the same command line on either, and the drafter threads with
the warmup modes around their first step."""
import argparse
import threading

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
                        "length, whose backward is compiled ahead of time) or false (every length "
                        "compiles static, its backward lazily)")
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
