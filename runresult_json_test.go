package sandbox_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestRunResultJSON: RunResult embeds CommandReport, and its JSON keeps
// the names it had before (every field under its Go name, the report's at
// the top level), and reads back what it writes.
func TestRunResultJSON(t *testing.T) {
	res := sandbox.RunResult{ExitCode: 3, Stdout: []byte("o"), Stderr: []byte("e"), StdoutTruncated: true,
		StderrTruncated: true, State: "exit status 3", Duration: time.Second}
	res.LimitExceeded = sandbox.FeatureLimitMemory
	res.DeniedRequests = []sandbox.DeniedRequest{{Protocol: "tcp", Host: "127.0.0.1", Port: 9, Reason: "not-allowed"}}
	res.Removed, res.GitCreated = []string{"/w/.git/commondir"}, []string{"/w/sub/.git"}
	res.Findings = []sandbox.Finding{{Kind: sandbox.FindingSpecialFile, Path: "/w/.git/index"}}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatal(err)
	}
	var got []string
	for k := range keys {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"DeniedRequests", "Duration", "ExitCode", "Findings", "GitCreated", "LimitExceeded", "Removed",
		"State", "Stderr", "StderrTruncated", "Stdout", "StdoutTruncated"}
	if !slices.Equal(got, want) {
		t.Errorf("JSON keys %v, want %v", got, want)
	}
	var back sandbox.RunResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, res) {
		t.Errorf("round trip: %+v, want %+v", back, res)
	}
}
