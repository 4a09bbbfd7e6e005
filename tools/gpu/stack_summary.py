#!/usr/bin/env python3
"""Reads the stacks tools/gpu/stackdump/sitecustomize.py wrote (stacks-PID.txt, one dump every S
seconds) and prints, for each process, a timeline: at each dump, each thread's innermost frames
(outside importlib's), so that what a process waited on is a few lines to read.

  python3 tools/gpu/stack_summary.py STACKS_DIR [EVERY_S] [FRAMES]
"""
import glob
import os
import re
import sys

folder = sys.argv[1]
every = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
depth = int(sys.argv[3]) if len(sys.argv) > 3 else 3
frame_re = re.compile(r'\s+File "(.*)", line (\d+) in (\S+)')

for path in sorted(glob.glob(os.path.join(folder, "stacks-*.txt")), key=os.path.getmtime):
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    if len(lines) < 2:
        continue
    head, cmd = lines[0], lines[1]
    role = "worker " + cmd.split("--split-worker")[1].split()[0].rsplit("/", 1)[-1] \
        if "--split-worker" in cmd else ("racelab" if "racelab" in cmd else cmd[:60])
    print(f"== {os.path.basename(path)}: {role} ({head})")
    dump, threads, current = -1, [], None

    def flush():
        if dump < 0:
            return
        parts = []
        for name, frames in threads:
            keep = [f"{os.path.basename(fn)}:{ln} {fu}" for fn, ln, fu in frames
                    if "<frozen" not in fn][:depth]
            if keep:
                parts.append(f"{name}: " + " < ".join(keep))
        print(f"  {dump * every:6.1f} s  " + "\n            ".join(parts))

    for line in lines[2:]:
        if line.startswith("Timeout ("):
            if current is not None:
                threads.append(current)
            flush()
            dump, threads, current = dump + 1, [], None
        elif line.startswith("Thread ") or line.startswith("Current thread "):
            if current is not None:
                threads.append(current)
            current = (line.split(" (")[0].replace("Current thread", "T").replace("Thread", "T")
                       [-6:], [])
        else:
            m = frame_re.match(line)
            if m and current is not None:
                current[1].append((m.group(1), m.group(2), m.group(3)))
    if current is not None:
        threads.append(current)
    flush()
