//go:build windows

package sandbox

import (
	"strings"
	"testing"
)

// Any-port entries on Windows, as data: the network is not confined, as for
// every entry, and the plan says so; the grants keep the entries as given.
func TestWindowsPlanAnyPort(t *testing.T) {
	rc, err := resolve(Config{AllowedTCPConnect: []string{"api.example.com:*", "localhost:*", "*:*"}})
	if err != nil {
		t.Fatal(err)
	}
	p := windowsPlan(rc, hostState{})
	p.Grants = grantsOf(rc)
	var f *Enforcement
	for i := range p.Features {
		if p.Features[i].Feature == FeatureTCPConnect {
			f = &p.Features[i]
		}
	}
	if f == nil || f.Enforced || !strings.Contains(f.Detail, "every host and port is reachable") {
		t.Errorf("tcp_connect %+v, want not enforced: every host and port", f)
	}
	if got := strings.Join(p.Grants.Connect, " "); got != "api.example.com:* localhost:* *:*" {
		t.Errorf("grants %q", got)
	}
	if err := p.strictError(); err == nil || !strings.Contains(err.Error(), FeatureTCPConnect) {
		t.Errorf("Strict: %v, want tcp_connect refused", err)
	}
}
