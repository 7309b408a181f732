#!/usr/bin/env bash
# Installs the Debian packages GroupSync builds and tests with, if any is missing.
# The Swift toolchain itself is expected on PATH (swift 6.x).
set -euo pipefail
# zlib1g-dev: protocol version 2 deflates `changes` bodies (Sources/CZlib, Protocol/PROTOCOL.md §5.2).
# tzdata: the balance's policy names a zone (`--timezone Europe/Madrid`), read from /usr/share/zoneinfo.
packages=(zlib1g-dev libsqlite3-dev libssl-dev libnotify-dev pkg-config openssl procps dbus python3-dbus python3-gi python3 iproute2 iptables tzdata)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "run as root, or install sudo, to install: ${missing[*]}"; exit 1; }
    sudo_cmd="sudo"
  fi
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v swift >/dev/null || { echo "swift is not on PATH: install the Swift 6 toolchain (see README)"; exit 1; }
