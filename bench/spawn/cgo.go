//go:build linux && cgo

package main

const cgoEnabled = true
