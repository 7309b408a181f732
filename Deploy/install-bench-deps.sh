#!/usr/bin/env bash
# Installs the peers `make bench` compares GroupSync with, if missing: Redis (Debian's redis-server), strace,
# and pycrdt + matplotlib (PyPI). A peer that cannot be had is not an error: the bench skips it with a note.
set -uo pipefail
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
# Debian: redis-server (the Redis peer), strace (counts timer wake-ups of the idle daemon).
apt_missing=()
command -v redis-server >/dev/null || apt_missing+=(redis-server)
command -v strace >/dev/null || apt_missing+=(strace)
if [ ${#apt_missing[@]} -gt 0 ]; then
  echo "installing: ${apt_missing[*]}"
  { $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${apt_missing[@]}" >/dev/null; } \
    || echo "note: ${apt_missing[*]} could not be installed; the bench will skip what needs it, with a note"
fi
# apt may start a system Redis on 6379; the bench starts its own servers on free ports and never uses it.
if command -v python3 >/dev/null; then
  missing=()
  python3 -c "import pycrdt" 2>/dev/null || missing+=(pycrdt)
  python3 -c "import matplotlib" 2>/dev/null || missing+=(matplotlib)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing (pip): ${missing[*]}"
    python3 -m pip install -q "${missing[@]}" 2>/dev/null \
      || python3 -m pip install -q --user "${missing[@]}" 2>/dev/null \
      || python3 -m pip install -q --break-system-packages "${missing[@]}" 2>/dev/null \
      || echo "note: ${missing[*]} could not be installed; the bench will skip the Yjs peer and/or the chart"
  fi
else
  echo "note: python3 is missing; the bench will skip the Yjs peer and the chart"
fi
exit 0
