#!/usr/bin/env bash
# Runs `parity run` against every real MCP server and ACP agent that install.sh installs (the
# corpus: docs/interop.md has the table) and keeps one JSON report per run in target/interop/.
# A real peer may fail checks (exit 1: docs/interop.md justifies every fail and warn); exit 2
# (usage) or 3 (could not run) fails this script, and so does any verdict justify.py cannot
# explain. Each run's wall time goes to target/interop/timings.tsv.
#
# INTEROP_ONLY="name ..." runs only the named runs (e.g. `INTEROP_ONLY="time delayed-time"`);
# justify.py then reads only their reports.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
[[ -f "$HERE/servers.env" ]] || { echo "interop: run tests/interop/install.sh first" >&2; exit 2; }
# shellcheck disable=SC1091
source "$HERE/servers.env"
[[ -n "${TS_ACP_CMD:-}" ]] || { echo "interop: servers.env predates the corpus: rerun tests/interop/install.sh" >&2; exit 2; }
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
PARITY="${PARITY:-$TARGET_DIR/debug/parity}"
[[ -x "$PARITY" ]] || (cd "$ROOT" && cargo build -q -p parity-harness) || exit 2
# The rmcp server is an example of the parity-tests package: `cargo test --workspace` builds it
# (CI runs the tests first); build it here only when it is missing.
RMCP_SERVER="${RMCP_SERVER:-$TARGET_DIR/debug/examples/rmcp_interop_server}"
[[ -x "$RMCP_SERVER" ]] || (cd "$ROOT" && cargo build -q -p parity-tests --example rmcp_interop_server) || exit 2
OUT="$ROOT/target/interop"
mkdir -p "$OUT"
TIMINGS="$OUT/timings.tsv"
printf 'run\twall_s\texit\n' >"$TIMINGS"
# Seconds the delayed runs wait before starting their server (delay-start.sh).
DELAY=7

# Default flags, as a user runs parity: the start-up phase (30 s to a session's first answer,
# at most as many process starts at once as the machine has cores) absorbs the one to three
# seconds Node and Python servers take to start on a loaded 2-core machine. INTEROP_FLAGS adds
# flags to every run (e.g. `INTEROP_FLAGS="--timeout-multiplier 2"` on a slower machine).
read -r -a EXTRA_FLAGS <<<"${INTEROP_FLAGS:-}"
STDIO_FLAGS=("${EXTRA_FLAGS[@]}")
HTTP_FLAGS=("${EXTRA_FLAGS[@]}")

passed=0
failed=0
report() { # <name> <parity exit code>
  if [[ $2 -eq 0 || $2 -eq 1 ]]; then
    echo "interop: $1 finished with exit $2 (verdicts in target/interop/$1.json)"
    passed=$((passed + 1))
  else
    echo "interop: $1: parity exited $2 (2 = usage, 3 = could not run)" >&2
    failed=$((failed + 1))
  fi
}
selected() { # <name>: true when INTEROP_ONLY is unset or names it
  [[ -z "${INTEROP_ONLY:-}" || " $INTEROP_ONLY " == *" $1 "* ]]
}
now() { date +%s.%N; }
timed() { # <name> <command...>: runs the command, records its wall time, reports its exit code
  local name=$1 t0 rc
  shift
  t0="$(now)"
  "$@"
  rc=$?
  awk -v n="$name" -v a="$t0" -v b="$(now)" -v rc="$rc" 'BEGIN { printf "%s\t%.1f\t%s\n", n, b - a, rc }' >>"$TIMINGS"
  report "$name" "$rc"
}

# The stdio and ACP runs go in the background, each with its console output in
# target/interop/<name>.log; `settle` waits for them and reports each in the order launched.
# Runs belong to a pool (POOL: `stdio` or `delayed`) with at most LIMIT of its runs at once: two
# undelayed runs keep both cores busy while one waits on its peer, and the delayed runs, which
# spend most of their time asleep, go beside them in a pool of their own.
POOL=stdio
LIMIT="${INTEROP_JOBS:-2}"
stdio_pids=()
delayed_pids=()
launched=()
pool_running() { # the number of this pool's runs still going
  local -n pids="${POOL}_pids"
  local n=0 p q
  for p in $(jobs -rp); do
    for q in "${pids[@]}"; do [[ $p == "$q" ]] && n=$((n + 1)); done
  done
  echo "$n"
}
launch() { # <name> <command...>
  local name=$1
  local -n pids="${POOL}_pids"
  shift
  while (($(pool_running) >= LIMIT)); do wait -n; done
  launched+=("$name")
  (
    t0="$(now)"
    "$@" >"$OUT/$name.log" 2>&1
    rc=$?
    awk -v n="$name" -v a="$t0" -v b="$(now)" -v rc="$rc" 'BEGIN { printf "%s\t%.1f\t%s\n", n, b - a, rc }' >"$OUT/$name.time"
  ) &
  pids+=("$!")
}
settle() {
  local name rc
  wait
  for name in "${launched[@]}"; do
    if [[ ! -f "$OUT/$name.time" ]]; then
      echo "interop: $name left no timing (see target/interop/$name.log)" >&2
      failed=$((failed + 1))
      continue
    fi
    cat "$OUT/$name.time" >>"$TIMINGS"
    rc="$(cut -f3 "$OUT/$name.time")"
    grep -h '^summary:' "$OUT/$name.log" | sed "s/^/interop: $name: /"
    if [[ $rc -ne 0 && $rc -ne 1 ]]; then
      tail -n 30 "$OUT/$name.log" >&2
    fi
    report "$name" "$rc"
  done
  launched=()
}
kill_runs() {
  local pids
  pids="$(jobs -p)"
  # shellcheck disable=SC2086 # one pid per word
  [[ -n "$pids" ]] && kill $pids 2>/dev/null
}
trap kill_runs EXIT
trap 'kill_runs; exit 130' INT TERM

# mcp-server-fetch is the one server whose tools reach the network. parity only lists its tools
# and sends calls that must be refused before any fetch (unknown tools, invalid arguments), but
# as a guard it runs in a network namespace of its own, where only a downed loopback exists, when
# the machine allows one (root, or user namespaces).
ISOLATE=()
if unshare --net true 2>/dev/null; then
  ISOLATE=(unshare --net --)
else
  echo "interop: note: cannot create a network namespace; mcp-server-fetch runs without one" >&2
fi

run_mcp() { # <name> <command> [more flags…]
  selected "$1" || return 0
  rm -f "$OUT/$1.json" "$OUT/$1.time" # never let justify.py read a report of an earlier run
  echo "== parity run --mcp $1"
  local name="$1" cmd="$2"
  shift 2
  launch "$name" "$PARITY" run --mcp "$cmd" "${STDIO_FLAGS[@]}" "$@" --json "$OUT/$name.json"
}

# The ACP profile. `--acp` and `--tool-method` name the agent and its tool extension method,
# `--cancel-prompt` the prompt both agents keep open until session/cancel (without it
# acp.prompt.cancel can only skip).
run_acp() { # <name> <command>
  selected "$1" || return 0
  rm -f "$OUT/$1.json" "$OUT/$1.time"
  echo "== parity run --acp $1"
  launch "$1" "$PARITY" run --acp "$2" --profile acp --tool-method _interop/tool \
    --cancel-prompt wait_for_cancel "${STDIO_FLAGS[@]}" --json "$OUT/$1.json"
}

# ---------------------------------------------------------------- slow starters
# One stdio server per SDK again, started DELAY seconds late (delay-start.sh): a slow start must
# change no verdict and leave no case not-run (justify.py compares each with its undelayed run).
# They spend most of their time asleep, so all six run at once, started first and beside the
# undelayed runs below (a pool of their own).
POOL=delayed
LIMIT="${INTEROP_DELAYED_JOBS:-6}"
delayed="sh $HERE/delay-start.sh $DELAY"
run_mcp delayed-memory "$delayed $MEMORY_CMD"
run_mcp delayed-time "$delayed $TIME_CMD"
run_mcp delayed-fastmcp "$delayed $FASTMCP_CMD"
run_mcp delayed-rmcp "$delayed $RMCP_SERVER"
run_acp delayed-py-acp "$delayed $PY_ACP_CMD"
run_acp delayed-ts-acp "$delayed $TS_ACP_CMD"

# ---------------------------------------------------------------- stdio
POOL=stdio
LIMIT="${INTEROP_JOBS:-2}"
read -r -a fetch_words <<<"$FETCH_CMD"
# server-everything's annotations are trusted: the tool-result checks call its tools annotated
# read-only (and not destructive), nothing else (docs/interop.md).
run_mcp everything "$EVERYTHING_CMD" --call-tools read-only
run_mcp filesystem "$FILESYSTEM_CMD"
run_mcp memory "$MEMORY_CMD"
run_mcp seqthink "$SEQTHINK_CMD"
run_mcp python "$PYTHON_CMD"
run_mcp time "$TIME_CMD"
run_mcp fetch "${ISOLATE[*]} ${fetch_words[*]}"
run_mcp fastmcp "$FASTMCP_CMD"
run_mcp rmcp "$RMCP_SERVER"
run_acp py-acp "$PY_ACP_CMD"
run_acp ts-acp "$TS_ACP_CMD"
settle

# ---------------------------------------------------------------- Streamable HTTP
# The mcp-http profile against the servers that offer Streamable HTTP: server-everything's own
# `streamableHttp` entry point (Express, `PORT` from the environment, endpoint /mcp),
# py_server.py's and py_fastmcp_server.py's `--http PORT` (uvicorn, bound to 127.0.0.1) and the
# rmcp server's `--http PORT` (axum, bound to 127.0.0.1). Each server gets a free loopback port,
# is started in the background, is waited for (bounded), and is always stopped afterwards.
# Everything stays on 127.0.0.1.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
wait_for_port() { # <port> <pid> <seconds>: 0 once 127.0.0.1:<port> accepts connections
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    kill -0 "$2" 2>/dev/null || return 1
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
http_pid=""
stop_http() {
  if [[ -n "$http_pid" ]]; then
    kill "$http_pid" 2>/dev/null
    # The Node, uvicorn and axum servers exit on SIGTERM at once; SIGKILL one that does not.
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
      kill -0 "$http_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$http_pid" 2>/dev/null
    wait "$http_pid" 2>/dev/null
    http_pid=""
  fi
}
trap 'kill_runs; stop_http' EXIT
trap 'kill_runs; stop_http; exit 130' INT TERM
# server-everything calls Express's `app.listen(PORT)`, which binds every interface, and has no
# host setting: this preload pins a listen without a host to 127.0.0.1, so the server is
# reachable only over loopback.
loopback_js="$OUT/listen-loopback.cjs"
cat >"$loopback_js" <<'JS'
// Generated by tests/interop/run.sh: bind servers that name no host to 127.0.0.1 only.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || /^[0-9]+$/.test(String(args[0]))) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
JS

run_http_profile() { # <name> <port> [more flags…]
  local name="$1" port="$2"
  shift 2
  "$PARITY" run --url "http://127.0.0.1:$port/mcp" --profile mcp-http "${HTTP_FLAGS[@]}" "$@" --json "$OUT/$name.json"
}
for name in everything-http python-http fastmcp-http rmcp-http; do
  selected "$name" || continue
  port="$(free_port)"
  log="$OUT/$name.server.log"
  rm -f "$OUT/$name.json"
  echo "== parity run --url $name (http://127.0.0.1:$port/mcp)"
  case "$name" in
    everything-http)
      # shellcheck disable=SC2086 # EVERYTHING_CMD is `node <entry> stdio`: word splitting intended
      set -- $EVERYTHING_CMD
      PORT="$port" node --require "$loopback_js" "$2" streamableHttp >"$log" 2>&1 &
      ;;
    python-http)
      # shellcheck disable=SC2086 # `<venv python> <py_server.py>`
      $PYTHON_CMD --http "$port" >"$log" 2>&1 &
      ;;
    fastmcp-http)
      # shellcheck disable=SC2086 # `<venv python> <py_fastmcp_server.py>`
      $FASTMCP_CMD --http "$port" >"$log" 2>&1 &
      ;;
    rmcp-http)
      "$RMCP_SERVER" --http "$port" >"$log" 2>&1 &
      ;;
  esac
  http_pid=$!
  if ! wait_for_port "$port" "$http_pid" 30; then
    echo "interop: $name did not accept connections on 127.0.0.1:$port within 30 s (log: $log)" >&2
    tail -n 20 "$log" >&2
    stop_http
    report "$name" 3
    continue
  fi
  more=()
  [[ "$name" == everything-http ]] && more=(--call-tools read-only)
  timed "$name" run_http_profile "$name" "$port" "${more[@]}"
  stop_http
done

echo "== wall time per run (s)"
column -t -s $'\t' "$TIMINGS" 2>/dev/null || cat "$TIMINGS"

# Every fail and warn a real peer gets must be justified in docs/interop.md (justify.py holds
# the justifications); an unexplained verdict is a bug in parity.
if ! python3 "$HERE/justify.py" > "$OUT/interop-table.md"; then
  echo "interop: a real peer got a verdict docs/interop.md does not justify (see above)" >&2
  failed=$((failed + 1))
fi
echo "interop: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
