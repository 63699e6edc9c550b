//go:build linux && !cgo

package main

const cgoEnabled = false
