#!/usr/bin/env python3
"""racelab live torch --rr and racelab doctor share rr's capability check.

Where doctor says rr cannot record, --rr must exit 2 with the same reason and name the schedule
replay alternative; where rr works, the run is recorded and the rr replay command is printed.
Usage: check_rr.py RACELAB
"""
import subprocess, sys, tempfile

racelab = sys.argv[1]
doctor = subprocess.run([racelab, "doctor"], capture_output=True, text=True)
rr_line = next((l for l in doctor.stdout.splitlines() if l.startswith("rr ")), None)
if rr_line is None:
    sys.exit(f"racelab doctor printed no rr line:\n{doctor.stdout}")
works = rr_line.split()[1] == "ok"
with tempfile.TemporaryDirectory() as out:
    run = subprocess.run([racelab, "live", "torch", "--rr", "--executions", "1", "--hidden", "32",
                          "--heads", "2", "--seq-lens", "16", "--out", out],
                         capture_output=True, text=True, timeout=600)
if works:
    if run.returncode != 0 or "rr replay" not in run.stdout:
        sys.exit(f"rr works here but --rr failed (exit {run.returncode}):\n{run.stdout}{run.stderr}")
    print("rr works here: the run was recorded and the rr replay command printed")
else:
    reason = rr_line.split(None, 2)[2]
    lines = run.stderr.strip().splitlines()
    if run.returncode != 2 or len(lines) != 1:
        sys.exit(f"expected exit 2 and one line, got exit {run.returncode}:\n{run.stderr}")
    if reason not in lines[0] or "--replay" not in lines[0]:
        sys.exit(f"--rr's reason differs from doctor's:\n doctor: {reason}\n --rr:   {lines[0]}")
    print(f"rr cannot record here; --rr says why (exit 2): {lines[0]}")
