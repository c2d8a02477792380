#!/usr/bin/env bash
# Runs `parity run` against the three real MCP servers installed by install.sh and keeps the JSON
# reports in target/interop/. A real server may fail checks (exit 1: see docs/interop.md for the
# justification of every fail and warn); exit 2 (usage) or 3 (could not run) fails this script.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
[[ -f "$HERE/servers.env" ]] || { echo "interop: run tests/interop/install.sh first" >&2; exit 2; }
# shellcheck disable=SC1091
source "$HERE/servers.env"
PARITY="${PARITY:-$ROOT/target/debug/parity}"
[[ -x "$PARITY" ]] || (cd "$ROOT" && cargo build -q -p parity-harness) || exit 2
OUT="$ROOT/target/interop"
mkdir -p "$OUT"

passed=0
failed=0
for name in everything filesystem python; do
  case "$name" in
    everything) cmd="$EVERYTHING_CMD" ;;
    filesystem) cmd="$FILESYSTEM_CMD" ;;
    python) cmd="$PYTHON_CMD" ;;
  esac
  echo "== parity run --mcp $name"
  # Node and Python servers take up to a few seconds to start on a loaded 2-core machine.
  "$PARITY" run --mcp "$cmd" --jobs 2 --timeout-multiplier 3 --json "$OUT/$name.json"
  rc=$?
  if [[ $rc -eq 0 || $rc -eq 1 ]]; then
    echo "interop: $name finished with exit $rc (verdicts in target/interop/$name.json)"
    passed=$((passed + 1))
  else
    echo "interop: $name: parity exited $rc (2 = usage, 3 = could not run)" >&2
    failed=$((failed + 1))
  fi
done
# Every fail and warn a real server gets must be justified in docs/interop.md (justify.py holds
# the justifications); an unexplained verdict is a bug in parity.
if ! python3 "$HERE/justify.py" > "$OUT/interop-table.md"; then
  echo "interop: a real server got a verdict docs/interop.md does not justify (see above)" >&2
  failed=$((failed + 1))
fi
echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
