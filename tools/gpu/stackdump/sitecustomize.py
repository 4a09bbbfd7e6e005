"""Every Python process started with this folder on PYTHONPATH and RACELAB_STACKS_EVERY=S set
writes all its threads' stacks every S seconds to $RACELAB_STACKS_DIR/stacks-PID.txt (faulthandler,
so a process stuck in native code or holding the GIL still writes them). A diagnostic for the
device scripts (tools/gpu/issue34-h200.sh --stacks S): what a worker process does while it warms up.
"""
import os

_every = os.environ.get("RACELAB_STACKS_EVERY")
if _every:
    import faulthandler
    import time

    _dir = os.environ.get("RACELAB_STACKS_DIR", "/tmp")
    os.makedirs(_dir, exist_ok=True)
    _file = open(os.path.join(_dir, f"stacks-{os.getpid()}.txt"), "w", buffering=1)
    try:
        with open("/proc/self/cmdline", "rb") as f:
            _cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        _cmd = "?"
    _file.write(f"pid {os.getpid()} parent {os.getppid()} started {time.time():.3f}\n{_cmd}\n")
    faulthandler.dump_traceback_later(float(_every), repeat=True, file=_file)
