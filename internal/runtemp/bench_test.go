package runtemp

import "testing"

// BenchmarkNewRemove is a Run's private temporary directory made and
// removed as Run does for a program that leaves it as it was: "home" as
// Run makes it when the caller sets no HOME (a home with Go's telemetry
// mode in it beside tmp), "callerhome" with the caller's HOME (tmp only).
// It measures the caller's temporary directory's file system: set TMPDIR
// to compare another.
func BenchmarkNewRemove(b *testing.B) {
	for _, c := range []struct {
		name string
		env  []string
	}{{"home", nil}, {"callerhome", []string{"HOME=/nonexistent"}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				d, err := New(c.env)
				if err != nil {
					b.Fatal(err)
				}
				if err := d.Remove(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
