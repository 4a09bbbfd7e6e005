#!/usr/bin/env bash
# GPU test (label gpu): the live LibTorch workload on a CUDA device. Lazy compile with two drafters
# on one GPU must deadlock and its schedule must replay to the same deadlock; a sequential
# forward+backward warmup must stay clean; live alloc must record fused attention as stable.
# Skipped (exit 77) with a message where racelab has no CUDA LibTorch or no GPU is present.
# Usage: gpu_live.sh RACELAB   (results of a real run: docs/results/live-torch-h200.md)
set -uo pipefail
racelab=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
# The probe is one real execution (one drafter, warmed): where this racelab has no CUDA LibTorch or
# no device, it exits 2 saying so, and the test skips. Any other refusal is the probe's own fault
# and fails the test: a probe that cannot run must not turn the GPU test into a silent skip (as
# `--executions 0` did once its check became strict).
probe=$("$racelab" live torch --device cuda --drafters 1 --warmup sequential --executions 1 \
  --hang-timeout 30 --out "$out/probe" 2>&1)
rc=$?
if [ $rc -eq 2 ]; then
  if grep -qE -- "--device cuda|LibTorch" <<<"$probe"; then
    echo "SKIPPED: no CUDA here ($probe)"
    exit 77
  fi
  fail "the probe was refused for another reason: $probe"
fi
[ $rc -eq 0 ] || fail "the probe (one warmed drafter) did not run clean (exit $rc): $probe"
"$racelab" live torch --device cuda --drafters 2 --warmup none --strategy pct --executions 400 \
  --hang-timeout 5 --expect deadlock --out "$out/lazy" || fail "no deadlock found with lazy compile"
grep -q '"kind": "deadlock"' "$out/lazy/report.json" || fail "report.json has no deadlock"
"$racelab" live torch --replay "$out/lazy/schedule-deadlock.json" --hang-timeout 5 \
  --out "$out/replay" >"$out/replay.txt"
[ $? -eq 1 ] && grep -q "^deadlock" "$out/replay.txt" || fail "the schedule did not replay the deadlock"
"$racelab" live torch --device cuda --drafters 2 --warmup sequential --strategy pct \
  --executions 100 --hang-timeout 5 --out "$out/warm" || fail "sequential warmup was not clean"
"$racelab" live alloc --attention fused --iterations 40 --out "$out/alloc" >"$out/alloc.txt" ||
  fail "live alloc failed"
grep -q "live_fused_1: stable" "$out/alloc.txt" || fail "fused attention was not stable"
echo "gpu live checks passed"
