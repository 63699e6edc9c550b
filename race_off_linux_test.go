//go:build linux && !race

package sandbox_test

const raceEnabled = false
