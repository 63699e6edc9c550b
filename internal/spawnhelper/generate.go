package spawnhelper

// helper_linux_amd64.bin and helper_linux_arm64.bin are made from helper.c
// by gen.sh, with pinned flags; .ci/run regenerates them and fails when the
// committed files differ.
//go:generate sh gen.sh
