package spec

import (
	"errors"
	"strings"
	"testing"
)

func TestRefuseViews(t *testing.T) {
	if err := RefuseViews(Config{DenyReadPaths: []string{"/x"}}, "ApplySelf", "why"); err != nil {
		t.Errorf("a Config without view changes refused: %v", err)
	}
	err := RefuseViews(Config{Mounts: []Mount{{Path: "/d", At: "/w"}}, PrivateRoot: true}, "WrapCommand on windows", "Windows has none")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "WrapCommand on windows: refused: mounts and private_root") ||
		!strings.Contains(err.Error(), "Windows has none") {
		t.Errorf("RefuseViews: %v", err)
	}
	// The platforms without the layer report both as refused.
	rc := &Resolved{Config: Config{Mounts: []Mount{{Path: "/d", At: "/w"}}, PrivateRoot: true}}
	got := map[string]string{}
	for _, e := range LayerFeatures(rc, "darwin", false) {
		got[e.Feature] = e.Detail
	}
	for _, f := range []string{FeatureMounts, FeaturePrivateRoot} {
		if !strings.HasPrefix(got[f], "REFUSED") {
			t.Errorf("%s: %q, want REFUSED", f, got[f])
		}
	}
}
