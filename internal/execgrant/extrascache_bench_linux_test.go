package execgrant

import "testing"

// BenchmarkExtrasWarm is a warm Engine's exec-directory expansion per
// spawn with an `--exec /usr/bin` grant: "rescan" as when the cached scan
// cannot be used (the entry dropped first, as the old time bound did every
// 10 s), "validated" as the cache answers when nothing changed.
func BenchmarkExtrasWarm(b *testing.B) {
	granted := []Grant{{Path: "/usr/bin", IsDir: true}}
	b.Run("rescan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			execExtrasCache.Lock()
			clear(execExtrasCache.m)
			execExtrasCache.Unlock()
			Extras(granted)
		}
	})
	b.Run("validated", func(b *testing.B) {
		Extras(granted)
		b.ReportAllocs()
		for b.Loop() {
			Extras(granted)
		}
	})
}

// BenchmarkExtrasFirst is the same expansion as the first in a process
// makes it, as every `sandbox run --exec /usr/bin` does: no cached scan
// and no cached interpreter (every target's head read and parsed).
func BenchmarkExtrasFirst(b *testing.B) {
	granted := []Grant{{Path: "/usr/bin", IsDir: true}}
	b.ReportAllocs()
	for b.Loop() {
		execExtrasCache.Lock()
		clear(execExtrasCache.m)
		execExtrasCache.Unlock()
		interpreters.Lock()
		clear(interpreters.m)
		interpreters.Unlock()
		Extras(granted)
	}
}
