#!/bin/sh
# Starts a server late: `delay-start.sh SECONDS COMMAND [ARGS...]` waits SECONDS, then becomes
# COMMAND (exec, so the server keeps the pid parity spawned). tests/interop/run.sh runs one stdio
# server per SDK through it, to check that a slow start changes no verdict. Whatever the client
# writes meanwhile waits in the stdin pipe until the server reads it. If parity stops the process
# during the wait, the sleep is stopped with it.
set -eu
[ "$#" -ge 2 ] || { echo "usage: delay-start.sh SECONDS COMMAND [ARGS...]" >&2; exit 2; }
seconds=$1
shift
sleep "$seconds" &
pause=$!
trap 'kill "$pause" 2>/dev/null; exit 143' TERM INT HUP
wait "$pause"
trap - TERM INT HUP
exec "$@"
