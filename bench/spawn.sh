#!/usr/bin/env bash
# Times spawning /bin/true bare, through a Go program that only execs
# (the baseline a re-exec trampoline is measured against), through this
# library's WrapCommand and Run, through go-landlock's landlock-restrict
# (built from the module this library depends on) and through bwrap
# (Debian package bubblewrap, installed when missing and running as root).
#
#   bench/spawn.sh [-n SPAWNS] [-rounds ROUNDS]
#
# Every Go program is built with the same CGO_ENABLED (default 0, like a
# static deployment; CGO_ENABLED=1 bench/spawn.sh measures dynamically
# linked hosts, the baseline then linking runtime/cgo too).
set -euo pipefail
cd "$(dirname "$0")/.."
export CGO_ENABLED="${CGO_ENABLED:-0}"

if ! command -v bwrap >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
	else
		echo "bwrap not installed (Debian package bubblewrap): its row is skipped" >&2
	fi
fi
bwrap=$(command -v bwrap || true)
if [ -n "$bwrap" ] && ! "$bwrap" --ro-bind / / --unshare-all --die-with-parent /bin/true 2>/dev/null; then
	echo "bwrap cannot create namespaces here: its row is skipped" >&2
	bwrap=
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/goexec" ./bench/goexec
go build -o "$tmp/landlock-restrict" github.com/landlock-lsm/go-landlock/cmd/landlock-restrict
go build -o "$tmp/spawn" ./bench/spawn
"$tmp/spawn" -goexec "$tmp/goexec" -landlock-restrict "$tmp/landlock-restrict" -bwrap "$bwrap" "$@"
