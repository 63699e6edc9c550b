#!/usr/bin/env bash
# Times spawning /bin/true bare, through a Go program that only execs (the
# floor of a re-exec trampoline), through this library's WrapCommand and
# Run, through go-landlock's landlock-restrict (built from the module this
# library depends on) and through bwrap (Debian package bubblewrap,
# installed when missing and running as root), from two host programs,
# interleaved round by round:
#
#   nocgo  the spawn benchmark built with CGO_ENABLED=0 (a static program)
#   cgo    the same built with cgo (dynamically linked, runtime/cgo) in a
#          module of its own, aaa.example/cgohost, that also imports
#          aaa.example/cgohost/slowinit, whose init takes 20 ms; its import
#          path sorts before this module's, so Go runs it before any
#          package of this module (a realistic large program). A re-exec
#          trampoline pays it on every spawn; the static helper does not.
#
#   bench/spawn.sh [-n SPAWNS] [-rounds ROUNDS]
#
# Ratios are against the bare spawn timed by the same host in the same
# rounds.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

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
CGO_ENABLED=0 go build -o "$tmp/goexec-nocgo" ./bench/goexec
CGO_ENABLED=1 go build -o "$tmp/goexec-cgo" ./bench/goexec
CGO_ENABLED=0 go build -o "$tmp/landlock-restrict" github.com/landlock-lsm/go-landlock/cmd/landlock-restrict
CGO_ENABLED=0 go build -o "$tmp/spawn-nocgo" ./bench/spawn

# The cgo host: bench/spawn's files in a module that sorts first.
mkdir -p "$tmp/cgohost/slowinit"
cp bench/spawn/*.go "$tmp/cgohost/"
cat >"$tmp/cgohost/slowinit.go" <<'GO'
package main

import _ "aaa.example/cgohost/slowinit"
GO
cat >"$tmp/cgohost/slowinit/slowinit.go" <<'GO'
// Package slowinit stands for a large program's start-up: its init takes
// 20 ms. It imports only syscall, so that Go initialises it as soon as
// syscall is, before any package of the sandbox module (import path order).
package slowinit

import "syscall"

func init() {
	ts := syscall.Timespec{Nsec: 20e6}
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
GO
cp go.sum "$tmp/cgohost/"
cat >"$tmp/cgohost/go.mod" <<GO
module aaa.example/cgohost

go $(go list -m -f '{{.GoVersion}}')

require github.com/openparallax/sandbox v0.0.0

replace github.com/openparallax/sandbox => $repo
GO
(cd "$tmp/cgohost" && go mod tidy >/dev/null 2>&1 && CGO_ENABLED=1 go build -o "$tmp/spawn-cgo" .)

args=(-landlock-restrict "$tmp/landlock-restrict" -bwrap "$bwrap" -goexec "nocgo:$tmp/goexec-nocgo,cgo:$tmp/goexec-cgo")
"$tmp/spawn-nocgo" -hosts "nocgo=$tmp/spawn-nocgo,cgo=$tmp/spawn-cgo" "$@" "${args[@]}"
