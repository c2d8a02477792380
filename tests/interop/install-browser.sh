#!/usr/bin/env bash
# Install the headless browser that tests/tests/html_report.rs opens the HTML report in:
# Debian's `chromium` package, at /usr/bin/chromium.
#
# Idempotent: when /usr/bin/chromium already exists it does nothing (no network, no apt).
# Otherwise it tries `apt-get install` first and runs `apt-get update` only when that install
# fails without it (a fresh image with empty package lists). Needs root (or sudo-less root in a
# container) and a reachable Debian mirror. Safe from any cwd.
#
# The test skips itself when chromium is missing, unless PARITY_REQUIRE_BROWSER=1 (CI), in
# which case it fails and names this script.
set -euo pipefail

BROWSER=/usr/bin/chromium

say() { printf 'install-browser: %s\n' "$*" >&2; }
die() { printf 'install-browser: error: %s\n' "$*" >&2; exit 1; }

if [[ -x "$BROWSER" ]]; then
  say "$BROWSER already installed ($("$BROWSER" --version 2>/dev/null || echo 'version unknown')); nothing to do"
  exit 0
fi

command -v apt-get >/dev/null 2>&1 || die "apt-get not found: install chromium by hand so that $BROWSER exists"
if [[ "$(id -u)" != 0 ]]; then
  die "must run as root to apt-get install chromium"
fi

export DEBIAN_FRONTEND=noninteractive
install_it() { apt-get install -y --no-install-recommends chromium; }

say "apt-get install chromium"
if ! install_it; then
  say "install failed; running apt-get update and retrying"
  apt-get update
  install_it
fi

[[ -x "$BROWSER" ]] || die "chromium installed but $BROWSER is missing"
say "installed $("$BROWSER" --version 2>/dev/null || echo "$BROWSER")"
