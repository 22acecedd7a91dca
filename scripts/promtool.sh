#!/usr/bin/env bash
# Prints the path of a promtool binary (Prometheus' rule and query checker), installing it if needed.
#
# There is no route to the Prometheus release downloads from CI or the developers' machines, only
# to package registries. Debian's `prometheus` package ships promtool, so it comes from apt (the
# distribution's ordinary client, which checks the package signatures). The binary is then copied
# into the tools cache, so later runs need neither apt nor the package to stay installed.
#
# Usage:  PROMTOOL="$(scripts/promtool.sh)" && "$PROMTOOL" check rules deploy/prometheus/weaverbird-alerts.yaml
# Env:    WEAVERBIRD_TOOLS_DIR  cache directory (default: <repo>/var/tools, which git ignores)
#         PROMTOOL_BIN          use this promtool instead; nothing is installed
# Exits non-zero with a message on stderr when promtool cannot be found or installed (no apt-get,
# not root, or the package index cannot be reached).
set -euo pipefail

log() { echo "promtool.sh: $*" >&2; }

works() { [[ -x "$1" ]] && "$1" --version >/dev/null 2>&1; }

# shellcheck source=scripts/tool_cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/tool_cache.sh"
use_given PROMTOOL_BIN "${PROMTOOL_BIN:-}" works "does not run"
dest="$tools/promtool/promtool"
use_cached "$dest" works

found="$(command -v promtool || true)"
if [[ -z "$found" ]]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    log "promtool is not installed and there is no apt-get to install Debian's prometheus package"
    exit 1
  fi
  if [[ "$(id -u)" != 0 ]]; then
    log "promtool is not installed; run as root (or: sudo apt-get install -y prometheus)"
    exit 1
  fi
  log "installing Debian's prometheus package for promtool (once)"
  # Without a package index (a fresh machine) the install fails: refresh the index and try again.
  # policy-rc.d 101 keeps the package's Prometheus server from being started: only promtool is wanted.
  policy="/usr/sbin/policy-rc.d"
  own_policy=""
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 0755 "$policy" && own_policy=1
  fi
  trap '[[ -n "$own_policy" ]] && rm -f "$policy"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1; then
    apt-get update >/dev/null 2>&1 || { log "apt-get update failed"; exit 1; }
    apt-get install -y --no-install-recommends prometheus >/dev/null 2>&1 || {
      log "apt-get install prometheus failed"
      exit 1
    }
  fi
  found="$(command -v promtool || true)"
  [[ -n "$found" ]] || { log "the prometheus package brought no promtool"; exit 1; }
fi

mkdir -p "$(dirname "$dest")"
# Copy then rename within one filesystem: concurrent callers never see a half-written binary.
tmp="$(mktemp "$tools/.promtool.XXXXXX")"
cp "$found" "$tmp"
chmod 0755 "$tmp"
mv -f "$tmp" "$dest"
log "cached $("$dest" --version 2>&1 | head -n1) at $dest"
echo "$dest"
