"""F14's probe (docs/facts.md), plain Python, no racelab: on a CUDA build of torch without a
device (the CPU machines), FakeTensorMode.__enter__ calls torch._C._ensureCUDADeviceGuardSet(),
which points the process-wide CUDA device guard at a FakeGuardImpl owned by the calling thread's
thread_local. Here a thread enters FakeTensorMode and ends (its thread_local, and the guard with
it, freed), then the main thread enters it: the guard's deviceCount() is a virtual call on freed
memory, which crashes (SIGSEGV) when the allocator has written over the object's vtable pointer.

  python fake_guard_probe.py thread   # a thread first: may crash (exit -11 / 139)
  python fake_guard_probe.py main     # main first, then the thread, then main: never crashes
                                      # (the guard is main's for good: racelab's process_setup)
"""
import sys
import threading

from torch._subclasses.fake_tensor import FakeTensorMode


def enter():
    with FakeTensorMode():
        pass


if sys.argv[1:] == ["main"]:
    enter()
t = threading.Thread(target=enter)
t.start()
t.join()
enter()
print("main entered FakeTensorMode after a thread that had entered it ended: no crash")
