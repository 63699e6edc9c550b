package winjob

import (
	"strings"
	"testing"
)

// Which thread ResumeSuspendedProcess resumes, and when it refuses, as
// data: the threads of a process created suspended, in snapshot order.
func TestMainThread(t *testing.T) {
	for _, c := range []struct {
		name    string
		threads []threadFacts
		want    uint32
		err     string
	}{
		{"only the main thread", []threadFacts{{tid: 8, created: 100}}, 8, ""},
		{"a thread injected at creation", []threadFacts{{tid: 8, created: 100}, {tid: 12, created: 105}}, 8, ""},
		{"injected in the same clock tick", []threadFacts{{tid: 8, created: 100}, {tid: 12, created: 100}}, 8, ""},
		{"injected thread's time unreadable", []threadFacts{{tid: 8, created: 100}, {tid: 12}}, 8, ""},
		{"no thread", nil, 0, "no thread"},
		{"main thread's time unknown", []threadFacts{{tid: 8}, {tid: 12, created: 105}}, 0, "creation time unknown"},
		{"first listed is not the oldest", []threadFacts{{tid: 8, created: 100}, {tid: 12, created: 99}}, 0, "created before thread 8"},
	} {
		got, err := mainThread(42, c.threads)
		if c.err == "" && (err != nil || got != c.want) {
			t.Errorf("%s: mainThread = %d, %v; want %d", c.name, got, err, c.want)
		}
		if c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: mainThread = %d, %v; want an error saying %q", c.name, got, err, c.err)
		}
	}
}

// The main thread's previous suspend count: only 1 (CREATE_SUSPENDED, now
// lifted) is a process that starts now and never ran before.
func TestResumed(t *testing.T) {
	for prev, want := range map[uint32]string{0: "was not suspended", 1: "", 2: "still suspended", 7: "suspended 7 times"} {
		err := resumed(42, 8, prev)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("resumed(prev %d) = %v, want %q", prev, err, want)
		}
	}
}
