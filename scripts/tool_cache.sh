# Sourced (not run) by the scripts that print the path of a tool they keep in the tools cache
# (helm.sh, promtool.sh): the steps before any fetch or install. Each script defines log() first.
#
# Sets:   tools   the cache directory (WEAVERBIRD_TOOLS_DIR, default <repo>/var/tools, which git ignores)

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${WEAVERBIRD_TOOLS_DIR:-$repo/var/tools}"

# use_given VAR VALUE CHECK PROBLEM: a binary the caller named in VAR is printed (and the script ends)
# when `CHECK VALUE` passes, refused with "VAR=VALUE PROBLEM" when it fails; nothing happens when unset.
use_given() {
  [[ -n "$2" ]] || return 0
  if ! "$3" "$2"; then
    log "$1=$2 $4"
    exit 1
  fi
  echo "$2"
  exit 0
}

# use_cached PATH CHECK: the cached binary is printed (and the script ends) when `CHECK PATH` passes.
use_cached() {
  if "$2" "$1"; then
    echo "$1"
    exit 0
  fi
}
