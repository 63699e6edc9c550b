package windows

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// Address range entries on Windows, as data, on every OS: as every entry
// there, nothing of TCP is confined, the plan says so and Strict refuses;
// the resolved entries keep the ranges in their canonical form.
func TestWindowsPlanRange(t *testing.T) {
	rc, err := spec.Resolve(spec.Config{AllowedTCPConnect: []string{"10.0.0.0/8:443", "[fd00::/8]:*"}})
	if err != nil {
		t.Fatal(err)
	}
	p := PlanFor(rc, Host{})
	var connect []string
	for _, ep := range rc.Connect {
		connect = append(connect, ep.String())
	}
	if got := strings.Join(connect, " "); got != "10.0.0.0/8:443 [fd00::/8]:*" {
		t.Errorf("grants %q", got)
	}
	found := false
	for _, f := range p.Features {
		found = found || f.Feature == spec.FeatureTCPConnect && !f.Enforced && strings.Contains(f.Detail, "every host and port is reachable")
	}
	if !found {
		t.Errorf("features %+v: want tcp_connect not enforced, every host and port reachable", p.Features)
	}
	if err := p.StrictError(spec.ScopeCommand); err == nil || !strings.Contains(err.Error(), spec.FeatureTCPConnect) {
		t.Errorf("Strict: %v, want tcp_connect refused", err)
	}
}
