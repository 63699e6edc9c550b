package spawnhelper

import _ "embed"

//go:embed helper_linux_amd64.bin
var image []byte
