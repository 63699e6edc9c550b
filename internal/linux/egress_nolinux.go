//go:build !linux

package linux

// Outside Linux the egress plan is built only as data, in tests, which
// replace these: there is no namespace to probe.
var (
	// netNamespacesAvailable is egress_linux.go's probe on Linux.
	netNamespacesAvailable = func() (ok bool, reason, hint string) {
		return false, "network namespaces are Linux's", ""
	}
	// transparentAvailable is egress_transparent_linux.go's probe on Linux.
	transparentAvailable = func() (bool, string) { return false, "the transparent path is Linux's" }
)
