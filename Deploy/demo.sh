#!/usr/bin/env bash
# The main job, on one machine: three devices in temporary homes, paired with each other, their daemons on
# loopback. A write on one appears on the others; one device is partitioned (its daemon stopped), both
# sides write, and after it returns everything converges on the later write. Cleans up after itself.
set -euo pipefail
BIN=${1:-groupsync}
WORK=$(mktemp -d /tmp/groupsync-demo.XXXXXX)
declare -A ID PORT DAEMON
# Stops the daemons still running (a restarted device's old PID is not kept: it may belong to another
# process by now). On failure, shows the end of each daemon's log before the folder goes.
cleanup() {
  local status=$?
  for p in "${DAEMON[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "$status" -ne 0 ]; then
    for log in "$WORK"/*.log; do [ -f "$log" ] && { echo "-- $log (last lines)"; tail -n 15 "$log"; }; done
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
gs() { local dev=$1; shift; "$BIN" --home "$WORK/$dev" "$@"; }
# A free loopback port for each device.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start() { local dev=$1; "$BIN" --home "$WORK/$dev" serve --listen "127.0.0.1:${PORT[$dev]}" 2>>"$WORK/$dev.log" & DAEMON[$dev]=$!; }
# Wait until a device holds the expected value (or fail after 5 s).
await() {
  local dev=$1 key=$2 want=$3
  for _ in $(seq 1 100); do
    [ "$(gs "$dev" get group.demo "$key" 2>/dev/null || true)" = "$want" ] && return 0
    sleep 0.05
  done
  echo "!! $dev did not get $key=$want"; return 1
}

DEVICES=(laptop desktop phone)
say "Three devices, each with its own home and identity"
for dev in "${DEVICES[@]}"; do
  ID[$dev]=$(gs "$dev" init --name "$dev" 2>/dev/null)
  PORT[$dev]=$(port)
  printf '  %-8s %s  127.0.0.1:%s\n' "$dev" "${ID[$dev]}" "${PORT[$dev]}"
done

say "Pairing every device with the other two (by device ID, both directions)"
for a in "${DEVICES[@]}"; do for b in "${DEVICES[@]}"; do
  [ "$a" = "$b" ] || gs "$a" peer add "${ID[$b]}" "127.0.0.1:${PORT[$b]}" --name "$b"
done; done
gs laptop peer list

say "Starting the three daemons (mutual TLS 1.3 on loopback)"
for dev in "${DEVICES[@]}"; do start "$dev"; done
sleep 1
gs laptop status

say "The HonorFit app on the laptop writes its earned minutes and an action list"
t0=$(date +%s%N)
gs laptop set group.demo earnedMinutes --double 12.5
gs laptop set group.demo familyActivitySelectionIds --json '{"social":"opaque-selection-token"}'
gs laptop set group.demo actions_for_focus_intervalDidEnd --json '[{"type":"blockSelection","familyActivitySelectionId":"social"}]'
# One check per line: under `set -e` a failure inside an `a && b` list does not stop the script.
await desktop earnedMinutes 12.5
await phone earnedMinutes 12.5
t1=$(date +%s%N)
echo "  desktop and phone have earnedMinutes=12.5 after $(( (t1 - t0) / 1000000 )) ms (including two CLI runs)"
gs phone get --json group.demo actions_for_focus_intervalDidEnd

say "Partition: the phone goes offline (its daemon stops)"
kill "${DAEMON[phone]}"; wait "${DAEMON[phone]}" 2>/dev/null || true; DAEMON[phone]=
gs phone set group.demo shieldTitle "written offline on the phone"
sleep 0.01
gs laptop set group.demo shieldTitle "written later on the laptop"
gs desktop delete group.demo actions_for_focus_intervalDidEnd
echo "  phone   shieldTitle = $(gs phone get group.demo shieldTitle)"
echo "  laptop  shieldTitle = $(gs laptop get group.demo shieldTitle)"
echo "  desktop deleted actions_for_focus_intervalDidEnd while the phone was away"

say "Heal: the phone comes back and catches up (only what changed is sent)"
start phone
await phone shieldTitle "written later on the laptop"
deleted=no
for _ in $(seq 1 100); do
  if ! gs phone get group.demo actions_for_focus_intervalDidEnd >/dev/null 2>&1; then deleted=yes; break; fi
  sleep 0.05
done
[ "$deleted" = yes ] || { echo "!! the delete never reached the phone"; exit 1; }
for dev in "${DEVICES[@]}"; do
  printf '  %-8s shieldTitle = %-30s actions = %s\n' "$dev" "$(gs "$dev" get group.demo shieldTitle)" "$(gs "$dev" get group.demo actions_for_focus_intervalDidEnd 2>/dev/null || echo '(deleted)')"
done
echo "  the later write (laptop) won everywhere; the delete reached the phone"
grep -h "event=applied" "$WORK/phone.log" | tail -n 2 | sed 's/^/  phone log: /'

say "Status on the laptop"
gs laptop status
say "Done: three devices converged. Cleaning up."
