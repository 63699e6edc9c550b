package linux

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// A Mount whose target the host lacks asks for the own root, unless the
// target is in the private /tmp (made there anyway); PrivateRoot always.
func TestRootWanted(t *testing.T) {
	lookup := func(p string) mountns.Kind {
		if p == "/data" || p == "/tmp" {
			return mountns.Dir
		}
		return mountns.Missing
	}
	for _, c := range []struct {
		name string
		rc   spec.Resolved
		want int
	}{
		{"nothing", spec.Resolved{}, 0},
		{"existing target", spec.Resolved{Mounts: []spec.Mount{{Path: "/x", At: "/data"}}}, 0},
		{"absent target", spec.Resolved{Mounts: []spec.Mount{{Path: "/x", At: "/workspace"}}}, 1},
		{"in the private /tmp", spec.Resolved{Mounts: []spec.Mount{{Path: "/x", At: "/tmp/view"}}}, 0},
		{"in a granted /tmp", spec.Resolved{Write: []spec.Path{{Given: "/tmp", Resolved: "/tmp", IsDir: true}},
			Mounts: []spec.Mount{{Path: "/x", At: "/tmp/view"}}}, 1},
		{"private_root", spec.Resolved{Config: spec.Config{PrivateRoot: true}}, 1},
	} {
		if got := rootWanted(&c.rc, lookup); len(got) != c.want {
			t.Errorf("%s: rootWanted = %v, want %d reasons", c.name, got, c.want)
		}
	}
}

// Where the mount layer cannot be used (no user namespaces), or the own
// root cannot be built, a Config that changes what the program sees is
// refused with the reason, and its plan entries say so; others are not.
func TestRefuseViewsWithoutLayer(t *testing.T) {
	noNS := &mountLayer{needs: []string{"mounts"}, root: []string{"private_root"},
		ns: nsState{reason: "user namespaces are disabled (kernel.unprivileged_userns_clone=0)", hint: "enable user namespaces"}}
	blocked := &mountLayer{needs: []string{"private_root"}, root: []string{"private_root"}, ns: nsState{ok: true},
		rootBlocked: "the root filesystem is the initial ramfs (rootfs), which pivot_root cannot leave"}
	for _, c := range []struct {
		name   string
		cfg    spec.Config
		l      *mountLayer
		refuse string
	}{
		{"mounts, no namespaces", spec.Config{Mounts: []spec.Mount{{Path: "/d", At: "/workspace"}}}, noNS, "user namespaces are disabled"},
		{"private_root, no namespaces", spec.Config{PrivateRoot: true}, noNS, "user namespaces are disabled"},
		{"private_root on rootfs", spec.Config{PrivateRoot: true}, blocked, "pivot_root cannot leave"},
		{"plain, no namespaces", spec.Config{}, noNS, ""},
		{"deny paths only, no namespaces", spec.Config{DenyWritePaths: []string{"/x"}}, noNS, ""},
	} {
		rc := &spec.Resolved{Config: c.cfg, Mounts: c.cfg.Mounts}
		err := refuseViews(rc, c.l)
		switch {
		case c.refuse == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.refuse != "" && (err == nil || !errors.Is(err, spec.ErrUnavailable) || !strings.Contains(err.Error(), c.refuse)):
			t.Errorf("%s: %v; want a refusal matching ErrUnavailable naming %q", c.name, err, c.refuse)
		}
		if !c.cfg.PrivateRoot {
			continue
		}
		entries := mountLayerFeatures(rc, c.l, true)
		i := slices.IndexFunc(entries, func(e spec.Enforcement) bool {
			return e.Feature == spec.FeaturePrivateRoot && e.Scope == spec.ScopeCommand
		})
		if i < 0 || entries[i].Enforced || !strings.Contains(entries[i].Detail, "REFUSED") || !strings.Contains(entries[i].Detail, c.refuse) {
			t.Errorf("%s: private_root entry %+v; want REFUSED with the reason", c.name, entries)
		}
	}
}

// Under ApplySelf every view change is refused (spec.RefuseViews, as
// ApplySelf calls it), and the plan's ApplySelf entries say so.
func TestRefuseViewsApplySelfEntries(t *testing.T) {
	rc := &spec.Resolved{Config: spec.Config{PrivateRoot: true, Mounts: []spec.Mount{{Path: "/d", At: "/data"}}},
		Mounts: []spec.Mount{{Path: "/d", At: "/data"}}}
	if err := spec.RefuseViews(rc.Config, "ApplySelf", "no namespaces"); err == nil || !strings.Contains(err.Error(), "mounts and private_root") {
		t.Errorf("RefuseViews: %v", err)
	}
	for _, f := range []string{spec.FeatureMounts, spec.FeaturePrivateRoot} {
		entries := mountLayerFeatures(rc, nil, true)
		i := slices.IndexFunc(entries, func(e spec.Enforcement) bool { return e.Feature == f && e.Scope == spec.ScopeApplySelf })
		if i < 0 || entries[i].Enforced || !strings.Contains(entries[i].Detail, "REFUSED") {
			t.Errorf("%s: no ApplySelf REFUSED entry: %+v", f, entries)
		}
	}
}
