"""A training loop written the way users write one, for live dpor (tests/live/check_dpor.py): a
loader thread pool feeds a queue, two trainer threads take batches, a Semaphore bounds how many
run a step at once (one "GPU"), a Barrier ends each step together, and each trainer logs its loss
and saves a checkpoint under two locks.

--bug: the checkpoint takes the two locks in one order and the logger in the other (a lock-order
inversion that deadlocks in some interleavings only). Without it both take them in one order.
"""
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

BUG = "--bug" in sys.argv
STEPS = 1
TRAINERS = 2

batches = queue.Queue()
gpu = threading.Semaphore(1)
step_done = threading.Barrier(TRAINERS)
metrics_lock = threading.Lock()
ckpt_lock = threading.Lock()
losses = []


def load(i):
    batches.put(i)


def log_loss(loss):
    with metrics_lock:
        with ckpt_lock:  # reads the last checkpoint's step
            losses.append(loss)


def save_checkpoint(step):
    if BUG:
        with ckpt_lock:
            with metrics_lock:
                pass
    else:
        with metrics_lock:
            with ckpt_lock:
                pass


def trainer(rank):
    for step in range(STEPS):
        batch = batches.get()
        with gpu:
            loss = batch * 0.5
        if rank == 0:
            save_checkpoint(step)
        else:
            log_loss(loss)
        step_done.wait()


with ThreadPoolExecutor(max_workers=2) as pool:
    for i in range(STEPS * TRAINERS):
        pool.submit(load, i)
threads = [threading.Thread(target=trainer, args=(r,), name=f"trainer{r}") for r in range(TRAINERS)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert len(losses) == STEPS, losses
