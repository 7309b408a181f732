#!/usr/bin/env bash
# Installs a groupsync binary and its systemd user unit, or removes them:
#   Deploy/install.sh install BINARY [PREFIX] [DESTDIR]
#   Deploy/install.sh uninstall [PREFIX] [DESTDIR]
# PREFIX defaults to ~/.local; the unit goes to ~/.local/share/systemd/user for ~/.local, PREFIX/lib/systemd/user
# otherwise, which the user's systemd searches for /usr and /usr/local only (another prefix is told to link
# it). DESTDIR stages the files under another root, as packagers do; the paths written into the unit leave it out.
set -euo pipefail
usage() { echo "usage: Deploy/install.sh install BINARY [PREFIX] [DESTDIR] | uninstall [PREFIX] [DESTDIR]" >&2; exit 2; }
action=${1:-}
case "$action" in
  install) binary=${2:-}; [[ -n "$binary" ]] || usage; shift 2 ;;
  uninstall) shift ;;
  *) usage ;;
esac
prefix=${1:-$HOME/.local}
destdir=${2:-}
[[ "$prefix" == /* ]] || { echo "install: PREFIX must be an absolute path, got '$prefix'" >&2; exit 2; }
# systemd runs no executable whose path holds a quote, a backslash or a control character: refused before
# anything is installed, rather than a unit that will not start.
if [[ "$prefix" == *[\"\\]* || "$prefix" == *[[:cntrl:]]* ]]; then
  echo "install: systemd cannot run a binary under PREFIX '$prefix' (it holds a quote, a backslash or a control character)" >&2
  exit 2
fi
if [[ "$prefix" == "$HOME/.local" ]]; then unit_dir="$HOME/.local/share/systemd/user"; else unit_dir="$prefix/lib/systemd/user"; fi
installed_binary="$destdir$prefix/bin/groupsync"
installed_unit="$destdir$unit_dir/groupsync.service"

if [[ "$action" == uninstall ]]; then
  rm -f "$installed_binary" "$installed_unit"
  echo "removed $installed_binary and $installed_unit"
  exit 0
fi
[[ -x "$binary" ]] || { echo "install: $binary is not an executable" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
# Stripped: the symbols are most of an unstripped binary's size.
install -D -m 0755 -s "$binary" "$installed_binary"
mkdir -p "$(dirname "$installed_unit")"
# The unit quotes the path (a space), and % starts a systemd specifier. Replaced by bash, not sed, so that &
# or | in the path are taken as written (patsub_replacement off: bash 5.2 reads & in a replacement as the match).
shopt -u patsub_replacement 2>/dev/null || true
bindir="$prefix/bin"
bindir=${bindir//%/%%}
template=$(<"$here/groupsync.service")
printf '%s\n' "${template//@BINDIR@/$bindir}" > "$installed_unit"
chmod 0644 "$installed_unit"
echo "installed $installed_binary and $installed_unit"
case "$unit_dir" in
  "$HOME/.local/share/systemd/user" | /usr/lib/systemd/user | /usr/local/lib/systemd/user) ;;
  *) echo "the user's systemd does not look in $unit_dir: run 'systemctl --user link $unit_dir/groupsync.service' before enabling it" ;;
esac
