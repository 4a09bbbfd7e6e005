# tests/live/pipelines/train_queue.py with every execution made WAIT_S seconds longer (a wait
# outside every racelab operation, 0.1 by default): a stand-in for an execution that costs what
# real torch's costs, so that `racelab live --jobs N` can be timed on a machine with few cores
# (bench/live_jobs.sh). Arguments are train_queue.py's.
import os
import select
import sys

select.select([], [], [], float(os.environ.get("WAIT_S", "0.1")))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "live",
                    "pipelines", "train_queue.py")
path = os.path.normpath(path)
sys.argv[0] = path
exec(compile(open(path).read(), path, "exec"))
