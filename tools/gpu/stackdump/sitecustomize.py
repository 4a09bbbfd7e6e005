"""Every Python process started with this folder on PYTHONPATH and RACELAB_STACKS_EVERY=S set
writes all its threads' stacks every S seconds to $RACELAB_STACKS_DIR/stacks-PID.txt, in
faulthandler's layout (tools/gpu/stack_summary.py reads them): what a worker process does while
it warms up. A diagnostic for the device scripts (tools/gpu/issue34-h200.sh).

A daemon thread takes the stacks with the GIL held (sys._current_frames). Not
faulthandler.dump_traceback_later: its watchdog walks the threads without the GIL, and racelab
makes and ends threads in every execution; on an H100 it crashed the coordinator (SIGSEGV) within
12 s, twice.
"""
import os

_every = os.environ.get("RACELAB_STACKS_EVERY")
if _every:
    import sys
    import threading
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
    _sleep = time.sleep  # the real one: racelab later makes time.sleep virtual for its threads

    def _dump_forever(every):
        me = threading.get_ident()
        while True:
            _sleep(every)
            lines = [f"Timeout ({every} s)!"]
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                lines.append(f"Thread 0x{ident:016x} (most recent call first):")
                while frame is not None:
                    code = frame.f_code
                    lines.append(f'  File "{code.co_filename}", line {frame.f_lineno} in '
                                 f'{code.co_name}')
                    frame = frame.f_back
                lines.append("")
            _file.write("\n".join(lines) + "\n")

    threading.Thread(target=_dump_forever, args=(float(_every),), name="racelab-stackdump",
                     daemon=True).start()
