#!/bin/sh
# Regenerates helper_linux_amd64.bin and helper_linux_arm64.bin from
# c/helper.c (run by "go generate ./internal/spawnhelper"; .ci/run checks that
# the committed files are exactly what this makes). The flags are pinned:
# the same compiler version makes the same bytes on every machine.
#
# Compilers (Debian 12 packages): gcc (amd64) and gcc-aarch64-linux-gnu
# (arm64), both GCC 12.2 with binutils 2.40. Override with CC_AMD64 /
# CC_ARM64; OUT names another directory for the outputs (.ci/run compares).
set -eu
cd "$(dirname "$0")"
out=${OUT:-.}
flags="-std=c11 -Os -Wall -Wextra -Werror -nostdlib -static -ffreestanding -fno-strict-aliasing
 -fno-pie -no-pie -fno-stack-protector -fno-stack-clash-protection
 -fcf-protection=none -fno-asynchronous-unwind-tables -fno-unwind-tables
 -fno-ident -ffile-prefix-map=$PWD=. -Wl,--build-id=none -Wl,-z,noexecstack
 -Wl,-z,norelro -Wl,-z,noseparate-code -Wl,--hash-style=gnu -s"
build() { # compiler, extra flags, output
	"$1" $flags $2 -o "$out/$3.tmp" c/helper.c
	mv "$out/$3.tmp" "$out/$3"
}
build "${CC_AMD64:-x86_64-linux-gnu-gcc}" "-march=x86-64" helper_linux_amd64.bin
build "${CC_ARM64:-aarch64-linux-gnu-gcc}" "-march=armv8-a -mbranch-protection=none" helper_linux_arm64.bin
