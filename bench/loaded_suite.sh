#!/usr/bin/env bash
# The whole test suite (the test step of `make test`: python -m pytest -q) while two CPU-bound
# busy loops compete for the cores: the suite must pass on a loaded machine (issue 9).
#
#   bench/loaded_suite.sh                 # the whole suite
#   bench/loaded_suite.sh tests/core      # or any pytest arguments
#   bench/loaded_suite.sh --write-docs    # also record the output in docs/benchmarks/loaded_suite.md
#
# PYTHON (default .venv/bin/python) runs the suite. The busy loops stop by themselves after
# LOAD_MAX_S seconds (default 3600) and are killed when this script exits, however it exits.
set -uo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-.venv/bin/python}

# --write-docs: run again without it and record what it prints (bench/figures.py).
if [ "${1:-}" = "--write-docs" ]; then
  shift
  bench/loaded_suite.sh "$@" | "$PYTHON" bench/figures.py --stdin loaded_suite \
    "bench/loaded_suite.sh${*:+ $*}"
  exit "${PIPESTATUS[0]}"
fi
# As the Makefile's `test` target sets them.
export DAGSTER_HOME=${DAGSTER_HOME:-$PWD}
export CONTENT_STORE_DIR=${CONTENT_STORE_DIR:-$PWD/content_store}
LOAD_MAX_S=${LOAD_MAX_S:-3600}
BUSY_LOOPS=2

busy=()
suite=""
stop_load() {
  # The suite too, when this script is stopped early (a `timeout` around it, Ctrl-C).
  for pid in $suite "${busy[@]}"; do
    kill "$pid" 2>/dev/null
  done
  for pid in $suite "${busy[@]}"; do
    wait "$pid" 2>/dev/null
  done
}
trap stop_load EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for _ in $(seq "$BUSY_LOOPS"); do
  "$PYTHON" -c '
import sys, time
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:  # pure CPU, bounded
    pass
' "$LOAD_MAX_S" &
  busy+=("$!")
done

echo "load: $BUSY_LOOPS busy loops (pids ${busy[*]}, at most ${LOAD_MAX_S}s) on $(nproc) cores;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
started=$(date +%s)
# In the background and waited for, so a signal to this script runs its trap at once.
"$PYTHON" -m pytest -q "$@" &
suite=$!
wait "$suite"
status=$?
suite=""
elapsed=$(($(date +%s) - started))

alive=0
for pid in "${busy[@]}"; do
  kill -0 "$pid" 2>/dev/null && alive=$((alive + 1))
done
echo "suite: exit code $status in ${elapsed}s ($((elapsed / 60))m$((elapsed % 60))s);" \
  "busy loops still running at the end: $alive of $BUSY_LOOPS;" \
  "load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
