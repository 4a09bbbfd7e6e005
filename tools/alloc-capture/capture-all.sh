#!/usr/bin/env bash
# Record the allocator traces used by racelab's tests and docs (run on a CUDA machine).
# Usage: tools/alloc-capture/capture-all.sh OUTDIR
set -euo pipefail
out=${1:?usage: capture-all.sh OUTDIR}
mkdir -p "$out"
here=$(dirname "$0")
cap() { local conf=$1; shift; PYTORCH_CUDA_ALLOC_CONF=$conf python3 "$here/capture.py" --out "$out" "$@"; }
for v in flex_padded sdpa_chunked sdpa_fused; do
  cap "expandable_segments:True" --variant $v --tag _es
  cap "max_split_size_mb:64,roundup_power2_divisions:4" --variant $v --tag _ms64r4
  cap "garbage_collection_threshold:0.6" --variant $v --tag _gc06
done
# GC only acts with a memory fraction set: allow about 600 MiB of the device.
cap "garbage_collection_threshold:0.6" --variant sdpa_chunked --tag _gc06f --memory-fraction 0.0044
cap "" --variant sdpa_chunked --tag _empty25 --empty-cache-every 25
cap "expandable_segments:True" --variant sdpa_chunked --tag _es_empty25 --empty-cache-every 25
cap "roundup_power2_divisions:[256:1,512:2,1024:4,>:8],max_split_size_mb:40" --variant sdpa_chunked --tag _rbrackets
