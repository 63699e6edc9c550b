package linux

import "github.com/openparallax/sandbox/internal/spec"

// TestMetadataPlan is the plan PlanFor would make of rc on Landlock ABI 7
// with seccomp, with the mount layer in the state layer names ("not
// needed", "used" or "unavailable"), for the root package's test of what
// Describe says of file_metadata. For tests only.
func TestMetadataPlan(rc *spec.Resolved, layer string) spec.Plan {
	self := buildLinuxPolicy(rc, 7, "/proc/self", nil).forSelf()
	switch layer {
	case "not needed":
		self.Layer = &mountLayer{}
	case "used":
		self.Layer = &mountLayer{needs: []string{"strict"}, ns: nsState{ok: true}}
	case "unavailable":
		self.Layer = &mountLayer{needs: []string{"strict"}, ns: nsState{reason: "probe refused", hint: "the probe's remedy"}}
	}
	return linuxPlan(rc, self, true, "")
}
