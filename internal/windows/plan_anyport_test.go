package windows

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// Any-port entries on Windows, as data, on every OS: the network is not
// confined, as for every entry, and the plan says so; the resolved entries
// (the plan's grants, which the root fills from them) keep the entries as
// given.
func TestWindowsPlanAnyPort(t *testing.T) {
	rc, err := spec.Resolve(spec.Config{AllowedTCPConnect: []string{"api.example.com:*", "localhost:*", "*:*"}})
	if err != nil {
		t.Fatal(err)
	}
	p := PlanFor(rc, Host{})
	var connect []string
	for _, ep := range rc.Connect {
		connect = append(connect, ep.String())
	}
	var f *spec.Enforcement
	for i := range p.Features {
		if p.Features[i].Feature == spec.FeatureTCPConnect {
			f = &p.Features[i]
		}
	}
	if f == nil || f.Enforced || !strings.Contains(f.Detail, "every host and port is reachable") {
		t.Errorf("tcp_connect %+v, want not enforced: every host and port", f)
	}
	if got := strings.Join(connect, " "); got != "api.example.com:* localhost:* *:*" {
		t.Errorf("grants %q", got)
	}
	if err := p.StrictError(spec.ScopeCommand); err == nil || !strings.Contains(err.Error(), spec.FeatureTCPConnect) {
		t.Errorf("Strict: %v, want tcp_connect refused", err)
	}
}
