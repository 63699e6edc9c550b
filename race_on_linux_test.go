//go:build linux && race

package sandbox_test

// raceEnabled: the race detector's runtime allocates private memory of its
// own, which RLIMIT_DATA counts.
const raceEnabled = true
