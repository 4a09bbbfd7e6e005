#!/usr/bin/env bash
# Quick start 1: the main job. Builds the racelab command only (tools/test.sh builds the tests and
# benchmarks), puts it on PATH (tools/build.sh), and runs the bundled scenario suite, writing
# racelab-out/suite/summary.json, one report per scenario, and racelab-out/suite/junit.xml.
# Uses every core (--jobs 0: the verdicts are the same for any number of workers; a dpor proof
# split over two or more runs stateless, says so in one note, and counts more executions than one
# job with its state cache). The scenarios that prove a warmup or a clean variant prove with dpor,
# every interleaving ("proven (dpor, exhaustive, N executions)"). Every scenario under scenarios/
# runs, subfolders included: scenarios/torch-2.14/ holds the twins that name torch 2.14's profile
# (docs/scenarios.md, "Torch profiles"). Exit 0 only when every scenario passes (a proof cut short
# is inconclusive: exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh ci racelab
exec build/ci/harness/racelab suite scenarios --jobs 0 --out racelab-out/suite --junit racelab-out/suite/junit.xml "$@"
