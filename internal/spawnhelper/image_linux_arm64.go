package spawnhelper

import _ "embed"

//go:embed helper_linux_arm64.bin
var image []byte
