#!/usr/bin/env bash
# The README's test command on N fresh clones of HEAD, one after another, each timed
# as a whole (install included). Prints one line a run: exit code, wall seconds and
# pytest's summary line.
#   benchmarks/suite_on_clean_clones.sh [N=5] [WORKDIR=$(mktemp -d)]
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
work=${2:-$(mktemp -d)}
rev=$(git -C "$repo" rev-parse HEAD)
for i in $(seq 1 "$runs"); do
  clone="$work/clone_$i"
  rm -rf "$clone" && git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$rev"
  start=$(date +%s)
  (cd "$clone" && python3 -m venv .venv && .venv/bin/pip install -q --no-compile -e '.[test]' && .venv/bin/python -m pytest) \
    > "$work/run_$i.log" 2>&1
  code=$?
  echo "run $i: $rev exit=$code wall=$(( $(date +%s) - start ))s $(grep -E '[0-9]+ passed' "$work/run_$i.log" | tail -1)"
  rm -rf "$clone/.venv"
done
