#!/usr/bin/env bash
# Finds Debian's chromium and chromium-driver for the browser test (tests/browser), installing them with
# apt-get when missing (as root; a Chinese font comes along so Chinese answers render in screenshots).
# Prints two lines, CHROMIUM=<path> and CHROMEDRIVER=<path>; exits 2 when neither the binaries nor apt-get
# are available (the test then skips and says why), 1 when an install failed.
set -euo pipefail

find_bin() {
  local name
  for name in "$@"; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

chromium_bin() { find_bin chromium chromium-browser; }
driver_bin() { find_bin chromedriver chromium-driver || { [ -x /usr/lib/chromium/chromedriver ] && echo /usr/lib/chromium/chromedriver; }; }

if ! chromium_bin >/dev/null || ! driver_bin >/dev/null; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "neither chromium + chromium-driver nor apt-get to install them is available" >&2
    exit 2
  fi
  sudo=""
  if [ "$(id -u)" != "0" ]; then
    if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
      echo "chromium is missing and installing it needs root (apt-get)" >&2
      exit 1
    fi
  fi
  echo "installing chromium and chromium-driver with apt-get ..." >&2
  $sudo apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium chromium-driver fonts-wqy-microhei >&2
fi

# Without a CJK font Chinese text renders as boxes; a missing font never fails the script.
if command -v fc-list >/dev/null 2>&1 && [ -z "$(fc-list :lang=zh 2>/dev/null)" ] && [ "$(id -u)" = "0" ] \
    && command -v apt-get >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fonts-wqy-microhei >&2 \
    || echo "could not install a Chinese font; screenshots may show boxes" >&2
fi

echo "CHROMIUM=$(chromium_bin)"
echo "CHROMEDRIVER=$(driver_bin)"
