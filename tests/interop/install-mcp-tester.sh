#!/usr/bin/env bash
# Install the crates.io `mcp-tester` CLI (paiml/rust-mcp-sdk), pinned, into
# <repo>/target/mcp-tester/bin/mcp-tester, for `parity bench --only http` (which compares
# parity's mcp-http profile with mcp-tester's conformance command on the same server).
#
# Not run by CI: building it takes several minutes. The bench looks for the binary at
# target/mcp-tester/bin/mcp-tester (or $MCP_TESTER) and skips its part when it is missing.
#
# Idempotent: when the binary is there and reports the pinned version, nothing is done.
# Safe from any cwd. Needs cargo. Prints the binary's path on stdout.
set -euo pipefail

VERSION="0.8.0"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
ROOT="$REPO/target/mcp-tester"
BIN="$ROOT/bin/mcp-tester"

say() { printf 'mcp-tester: %s\n' "$*" >&2; }
die() { printf 'mcp-tester: error: %s\n' "$*" >&2; exit 1; }

installed_version() {
  [[ -x "$BIN" ]] || return 1
  "$BIN" --version 2>/dev/null | awk '{print $NF}'
}

if [[ "$(installed_version || true)" == "$VERSION" ]]; then
  say "mcp-tester $VERSION already installed"
else
  command -v cargo >/dev/null 2>&1 || die "cargo not found on PATH"
  say "cargo install mcp-tester --version $VERSION --locked --root $ROOT (takes a few minutes)"
  cargo install mcp-tester --version "$VERSION" --locked --root "$ROOT" >&2
  got="$(installed_version || true)"
  [[ "$got" == "$VERSION" ]] || die "installed $BIN reports version '${got:-?}', wanted $VERSION"
fi
printf '%s\n' "$BIN"
