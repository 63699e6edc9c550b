package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// --allow-camera and --allow-microphone reach the Config: the macOS profile
// (rendered on every OS) holds each device rule exactly when its flag is
// given, and the plan reports each asked-for device.
func TestPlanDeviceFlags(t *testing.T) {
	for _, tc := range []struct {
		flags       []string
		camera, mic bool
	}{
		{nil, false, false},
		{[]string{"--allow-camera"}, true, false},
		{[]string{"--allow-microphone"}, false, true},
		{[]string{"--allow-camera", "--allow-microphone"}, true, true},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"plan", "--platform", "darwin", "--json"}, tc.flags...)
		if code := run(args, nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("%q: exit %d: %s", tc.flags, code, stderr.String())
		}
		var rep planReport
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatalf("%q: %v", tc.flags, err)
		}
		if rep.Seatbelt == nil || rep.Seatbelt.Error != "" {
			t.Fatalf("%q: no profile: %s", tc.flags, rep.Seatbelt.Error)
		}
		if got := strings.Contains(rep.Seatbelt.Profile, "(allow device-camera)"); got != tc.camera {
			t.Errorf("%q: profile has device-camera %v, want %v", tc.flags, got, tc.camera)
		}
		if got := strings.Contains(rep.Seatbelt.Profile, "(allow device-microphone)"); got != tc.mic {
			t.Errorf("%q: profile has device-microphone %v, want %v", tc.flags, got, tc.mic)
		}
		reported := map[string]bool{}
		for _, f := range rep.Plan.Features {
			reported[f.Feature] = true
		}
		if rep.Plan.Available { // an unavailable plan lists only the core features
			if reported[sandbox.FeatureCamera] != tc.camera || reported[sandbox.FeatureMicrophone] != tc.mic {
				t.Errorf("%q: plan reports camera %v microphone %v", tc.flags, reported[sandbox.FeatureCamera], reported[sandbox.FeatureMicrophone])
			}
		}
	}
}
