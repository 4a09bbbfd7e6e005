#!/usr/bin/env bash
# clang-format over every C++ source: --check fails on any difference, otherwise files are fixed.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.h.in' 2>/dev/null | grep -v '\.h\.in$' || true)
[ ${#files[@]} -gt 0 ] || exit 0
if [ "${1:-}" = "--check" ]; then
  clang-format --dry-run --Werror "${files[@]}"
  echo "format: ${#files[@]} files clean"
else
  clang-format -i "${files[@]}"
fi
