#!/usr/bin/env bash
# Install the real MCP servers and ACP agents that parity's interop corpus runs against
# (docs/interop.md has the table; tests/interop/run.sh runs them):
#   - npm, pinned in node/package.json + node/package-lock.json (TypeScript SDKs):
#       @modelcontextprotocol/server-everything, server-filesystem, server-memory,
#       server-sequential-thinking (the TypeScript MCP SDK), and @agentclientprotocol/sdk, the
#       TypeScript ACP SDK that node/acp_agent.mjs is built on
#   - PyPI, one venv at .venv/:
#       py_server.py on the `mcp` SDK (requirements.txt),
#       py_acp_agent.py on `agent-client-protocol` (requirements-acp.txt),
#       mcp-server-time, mcp-server-fetch, and py_fastmcp_server.py on `fastmcp`
#       (requirements-corpus.txt)
#   - crates.io: the rmcp server (rmcp-server/main.rs) is an example of the parity-tests package;
#     cargo builds it with the tests, and run.sh builds it when it is missing
# and what the CI-report tests validate JUnit output with:
#   - xmlschema (PyPI, pinned in requirements-ci.txt, same venv) and the JUnit XSD that pytest's
#     source distribution carries (pytest==8.3.4, testing/example_scripts/junit-10.xsd), kept as
#     junit-10.xsd here
#
# Idempotent: a second run with nothing changed does no network work.
# Safe from any cwd. Needs node >= 18 with npm, and python3 >= 3.10 (override with PYTHON=...).
# Writes servers.env (EVERYTHING_CMD, FILESYSTEM_CMD, PYTHON_CMD, PY_ACP_CMD, ...) and prints the commands.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
NODE_DIR="$HERE/node"
VENV="$HERE/.venv"
FS_ROOT="$HERE/fs-root"
MEMORY_DIR="$HERE/memory-store"
ENV_FILE="$HERE/servers.env"
PYTHON="${PYTHON:-python3}"

say() { printf 'interop: %s\n' "$*" >&2; }
die() { printf 'interop: error: %s\n' "$*" >&2; exit 1; }

command -v node >/dev/null 2>&1 || die "node not found on PATH"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH"
command -v "$PYTHON" >/dev/null 2>&1 || die "$PYTHON not found on PATH (set PYTHON=...)"

hash_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

# ---------------------------------------------------------------- npm peers
NPM_FLAGS=(--no-audit --no-fund --loglevel=error --prefix "$NODE_DIR")
npm_stamp="$NODE_DIR/node_modules/.parity-install-stamp"
if [[ -f "$NODE_DIR/package-lock.json" ]]; then
  want="$(hash_of "$NODE_DIR/package.json" "$NODE_DIR/package-lock.json")"
  if [[ -f "$npm_stamp" && "$(cat "$npm_stamp")" == "$want" ]]; then
    say "npm peers up to date"
  else
    say "npm ci (node/package-lock.json)"
    (cd "$NODE_DIR" && npm ci "${NPM_FLAGS[@]}" >/dev/null)
    echo "$want" >"$npm_stamp"
  fi
else
  # First-time bootstrap only: creates the lockfile, which must then be committed.
  say "no lockfile: npm install --save-exact (commit node/package-lock.json afterwards)"
  (cd "$NODE_DIR" && npm install --save-exact "${NPM_FLAGS[@]}" >/dev/null)
  hash_of "$NODE_DIR/package.json" "$NODE_DIR/package-lock.json" >"$npm_stamp"
fi

# Resolve each package's entry point from its own package.json "bin" field.
node_entry() { # <package-name>
  (cd "$NODE_DIR" && node -e '
    const name = process.argv[1];
    const dir = require("path").dirname(require.resolve(name + "/package.json"));
    const pkg = require(name + "/package.json");
    const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
    process.stdout.write(require("path").resolve(dir, bin));
  ' "$1")
}
EVERYTHING_JS="$(node_entry @modelcontextprotocol/server-everything)"
FILESYSTEM_JS="$(node_entry @modelcontextprotocol/server-filesystem)"
[[ -f "$EVERYTHING_JS" ]] || die "missing $EVERYTHING_JS"
[[ -f "$FILESYSTEM_JS" ]] || die "missing $FILESYSTEM_JS"
MEMORY_JS="$(node_entry @modelcontextprotocol/server-memory)"
SEQTHINK_JS="$(node_entry @modelcontextprotocol/server-sequential-thinking)"
[[ -f "$MEMORY_JS" ]] || die "missing $MEMORY_JS"
[[ -f "$SEQTHINK_JS" ]] || die "missing $SEQTHINK_JS"
TS_ACP_JS="$NODE_DIR/acp_agent.mjs"
(cd "$NODE_DIR" && node -e 'import("@agentclientprotocol/sdk").then(() => {}, (e) => { console.error(e); process.exit(1); })') \
  || die "@agentclientprotocol/sdk does not import in node/"

# ---------------------------------------------------------------- Python peers
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 10))' \
  || die "$PYTHON is older than 3.10 (the mcp and agent-client-protocol SDKs need >= 3.10)"
py_stamp="$VENV/.parity-install-stamp"
REQS=(requirements.txt requirements-acp.txt requirements-ci.txt requirements-corpus.txt)
want="$(cd "$HERE" && hash_of "${REQS[@]}")"
if [[ -x "$VENV/bin/python" && -f "$py_stamp" && "$(cat "$py_stamp")" == "$want" ]]; then
  say "python venv up to date"
else
  if [[ ! -x "$VENV/bin/python" ]]; then
    say "creating venv .venv"
    "$PYTHON" -m venv "$VENV"
  fi
  say "pip install -r ${REQS[*]}"
  (cd "$HERE" && "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-input \
    "${REQS[@]/#/-r}")
  echo "$want" >"$py_stamp"
fi
"$VENV/bin/python" -c 'import mcp.server' || die "the mcp package does not import in .venv"
"$VENV/bin/python" -c 'import acp' || die "the agent-client-protocol package does not import in .venv"
"$VENV/bin/python" -c 'import xmlschema' || die "the xmlschema package does not import in .venv"
"$VENV/bin/python" -c 'import fastmcp, mcp_server_time, mcp_server_fetch' \
  || die "fastmcp, mcp-server-time or mcp-server-fetch does not import in .venv"

# ---------------------------------------------------------------- JUnit XSD
XSD="$HERE/junit-10.xsd"
if [[ -s "$XSD" ]]; then
  say "JUnit XSD present"
else
  say "fetching the JUnit XSD from pytest's source distribution (pytest==8.3.4)"
  tmp="$(mktemp -d)"
  "$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
    --no-binary :all: pytest==8.3.4 -d "$tmp" >/dev/null
  tar -xzf "$tmp"/pytest-8.3.4.tar.gz -C "$tmp" pytest-8.3.4/testing/example_scripts/junit-10.xsd
  mv "$tmp"/pytest-8.3.4/testing/example_scripts/junit-10.xsd "$XSD.tmp"
  mv "$XSD.tmp" "$XSD"
  rm -rf "$tmp"
fi

# ---------------------------------------------------------------- filesystem root
mkdir -p "$FS_ROOT"
[[ -f "$FS_ROOT/hello.txt" ]] || printf 'hello from parity interop\n' >"$FS_ROOT/hello.txt"
# server-memory keeps its knowledge graph in MEMORY_FILE_PATH (by default inside its own
# node_modules directory); give it a file of its own here.
mkdir -p "$MEMORY_DIR"

# ---------------------------------------------------------------- commands
# server-everything's CLI takes a transport argument (stdio|sse|streamableHttp; stdio is the default).
EVERYTHING_CMD="node $EVERYTHING_JS stdio"
FILESYSTEM_CMD="node $FILESYSTEM_JS $FS_ROOT"
PYTHON_CMD="$VENV/bin/python $HERE/py_server.py"
PY_ACP_CMD="$VENV/bin/python $HERE/py_acp_agent.py"
MEMORY_CMD="env MEMORY_FILE_PATH=$MEMORY_DIR/memory.jsonl node $MEMORY_JS"
SEQTHINK_CMD="node $SEQTHINK_JS"
# A fixed zone, so the server never depends on the machine's.
TIME_CMD="$VENV/bin/mcp-server-time --local-timezone UTC"
FETCH_CMD="$VENV/bin/mcp-server-fetch"
FASTMCP_CMD="$VENV/bin/python $HERE/py_fastmcp_server.py"
TS_ACP_CMD="node $TS_ACP_JS"

# Values are single-quoted so the file can be sourced by sh/bash and parsed as KEY='value' lines.
sq() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
{
  echo "# Generated by tests/interop/install.sh; do not edit or commit."
  echo "INTEROP_DIR=$(sq "$HERE")"
  echo "FS_ROOT=$(sq "$FS_ROOT")"
  echo "EVERYTHING_CMD=$(sq "$EVERYTHING_CMD")"
  echo "FILESYSTEM_CMD=$(sq "$FILESYSTEM_CMD")"
  echo "PYTHON_CMD=$(sq "$PYTHON_CMD")"
  echo "PY_ACP_CMD=$(sq "$PY_ACP_CMD")"
  echo "MEMORY_CMD=$(sq "$MEMORY_CMD")"
  echo "SEQTHINK_CMD=$(sq "$SEQTHINK_CMD")"
  echo "TIME_CMD=$(sq "$TIME_CMD")"
  echo "FETCH_CMD=$(sq "$FETCH_CMD")"
  echo "FASTMCP_CMD=$(sq "$FASTMCP_CMD")"
  echo "TS_ACP_CMD=$(sq "$TS_ACP_CMD")"
  echo "JUNIT_XSD=$(sq "$XSD")"
  echo "VENV_PYTHON=$(sq "$VENV/bin/python")"
} >"$ENV_FILE.tmp"
mv "$ENV_FILE.tmp" "$ENV_FILE"

say "wrote $ENV_FILE"
echo "EVERYTHING_CMD: $EVERYTHING_CMD"
echo "FILESYSTEM_CMD: $FILESYSTEM_CMD"
echo "PYTHON_CMD:     $PYTHON_CMD"
echo "PY_ACP_CMD:     $PY_ACP_CMD"
echo "MEMORY_CMD:     $MEMORY_CMD"
echo "SEQTHINK_CMD:   $SEQTHINK_CMD"
echo "TIME_CMD:       $TIME_CMD"
echo "FETCH_CMD:      $FETCH_CMD"
echo "FASTMCP_CMD:    $FASTMCP_CMD"
echo "TS_ACP_CMD:     $TS_ACP_CMD"
