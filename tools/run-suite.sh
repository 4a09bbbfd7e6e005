#!/usr/bin/env bash
# Quick start 1: the main job. Builds the racelab command only (tools/test.sh builds the tests and
# benchmarks), puts it on PATH (tools/build.sh), and runs the bundled scenario suite, writing
# racelab-out/suite/summary.json, one report per scenario, and racelab-out/suite/junit.xml.
# Uses every core (--jobs 0: the results are the same for any number of workers). Exit 0 only
# when every scenario passes (a dfs proof cut short is inconclusive: exit 1).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/build.sh ci racelab
exec build/ci/harness/racelab suite scenarios --jobs 0 --out racelab-out/suite --junit racelab-out/suite/junit.xml "$@"
