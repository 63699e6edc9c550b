package sandbox_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

var update = flag.Bool("update", false, "rewrite golden files")

func probes(spec string) []sandbox.ProbeResult {
	var out []sandbox.ProbeResult
	for f := range strings.FieldsSeq(spec) {
		name, status, _ := strings.Cut(f, "=")
		out = append(out, sandbox.ProbeResult{Name: name, Status: status})
	}
	return out
}

func TestRollupAndSummary(t *testing.T) {
	cases := []struct {
		spec, status, summary string
	}{
		{"file_read=blocked file_write=blocked network=skipped", "sandboxed",
			"Sandbox verified: 2/2 probes blocked (file_read, file_write). Skipped: network."},
		{"file_read=failed file_write=failed network=failed", "unsandboxed",
			"Sandbox not verified: 0/3 probes blocked. Failed: file_read, file_write, network."},
		{"file_read=blocked file_write=failed network=skipped", "partial",
			"Sandbox not verified: 1/2 probes blocked (file_read). Failed: file_write. Skipped: network."},
		{"file_read=skipped network=skipped", "unavailable",
			"Sandbox not verified: 0/0 probes blocked. Skipped: file_read, network."},
		{"", "unavailable", "Sandbox not verified: 0/0 probes blocked."},
		// A positive control that worked does not count; one that failed does.
		{"file_read=blocked control_read=allowed", "sandboxed",
			"Sandbox verified: 1/1 probes blocked (file_read)."},
		{"file_read=blocked control_read=failed", "partial",
			"Sandbox not verified: 1/2 probes blocked (file_read). Failed: control_read."},
	}
	for _, c := range cases {
		r := sandbox.NewCanaryResult("landlock", probes(c.spec))
		if r.Status != c.status || r.Summary != c.summary || r.Verified != (c.status == "sandboxed") {
			t.Errorf("%q: got %s / %q / verified=%v, want %s / %q", c.spec, r.Status, r.Summary, r.Verified, c.status, c.summary)
		}
	}
	r := sandbox.NewCanaryResult("landlock", probes("a=blocked b=failed c=skipped d=skipped e=allowed"))
	if r.Blocked() != 1 || r.Failed() != 1 || r.Skipped() != 2 {
		t.Errorf("counts: blocked %d failed %d skipped %d", r.Blocked(), r.Failed(), r.Skipped())
	}
}

// The three example results: fully sandboxed, network skipped, unsandboxed.
func goldenResults() map[string]sandbox.CanaryResult {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	mk := func(ps []sandbox.ProbeResult) sandbox.CanaryResult {
		r := sandbox.NewCanaryResult("landlock", ps)
		r.Platform, r.Timestamp = "linux", ts
		return r
	}
	return map[string]sandbox.CanaryResult{
		"sandboxed": mk([]sandbox.ProbeResult{
			{Name: "file_read", Status: "blocked", Target: "/etc/passwd", Error: "open /etc/passwd: permission denied"},
			{Name: "file_write", Status: "blocked", Target: "/tmp/.sandbox-canary", Error: "create /tmp/.sandbox-canary: permission denied"},
			{Name: "network", Status: "blocked", Target: "127.0.0.1:1", Error: "dial tcp 127.0.0.1:1: connect: permission denied"},
		}),
		"network_skipped": mk([]sandbox.ProbeResult{
			{Name: "file_read", Status: "blocked", Target: "/etc/passwd", Error: "open /etc/passwd: permission denied"},
			{Name: "file_write", Status: "blocked", Target: "/tmp/.sandbox-canary", Error: "create /tmp/.sandbox-canary: permission denied"},
			{Name: "network", Status: "skipped", Error: "requires Landlock ABI 4 (Linux 6.7+) to restrict TCP ports; this kernel has ABI 2"},
		}),
		"unsandboxed": mk([]sandbox.ProbeResult{
			{Name: "file_read", Status: "failed", Target: "/etc/passwd", Error: "not denied: the operation succeeded"},
			{Name: "file_write", Status: "failed", Target: "/tmp/.sandbox-canary", Error: "not denied: the operation succeeded"},
			{Name: "network", Status: "failed", Target: "127.0.0.1:1", Error: "dial tcp 127.0.0.1:1: connect: connection refused"},
		}),
	}
}

func TestCanaryJSONGolden(t *testing.T) {
	for name, r := range goldenResults() {
		got, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("testdata", "canary", name+".json")
		if *update {
			os.WriteFile(path, append(got, '\n'), 0o644)
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got)+"\n" != string(want) {
			t.Errorf("%s: JSON differs from %s:\n%s", name, path, got)
		}
		var back sandbox.CanaryResult
		if err := json.Unmarshal(want, &back); err != nil || back.Summary != r.Summary || back.Status != r.Status {
			t.Errorf("%s: golden does not decode back: %v", name, err)
		}
	}
}

func TestStatusFileRoundTrip(t *testing.T) {
	ws := t.TempDir()
	if r := sandbox.ReadCanaryResult(ws); r.Status != "unknown" || !strings.Contains(r.Summary, "no canary result") {
		t.Errorf("missing file: %+v", r)
	}
	want := goldenResults()["sandboxed"]
	if err := sandbox.WriteCanaryResult(ws, want); err != nil {
		t.Fatal(err)
	}
	got := sandbox.ReadCanaryResult(ws)
	if !got.Verified || got.Status != want.Status || got.Summary != want.Summary || len(got.Probes) != 3 || !got.Timestamp.Equal(want.Timestamp) {
		t.Errorf("read back %+v", got)
	}
	fi, err := os.Stat(filepath.Join(ws, ".openparallax", "sandbox.status"))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != sandbox.StatusFileMode {
		t.Errorf("mode %v, want %v", fi.Mode().Perm(), os.FileMode(sandbox.StatusFileMode))
	}
	entries, _ := os.ReadDir(filepath.Join(ws, ".openparallax"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestReadCanaryResultRejects(t *testing.T) {
	good, _ := json.Marshal(goldenResults()["sandboxed"])
	cases := map[string]string{
		"empty":            "",
		"not JSON":         "sandboxed",
		"truncated":        string(good[:len(good)/2]),
		"trailing":         string(good) + "{}",
		"unknown field":    `{"verified":true,"status":"sandboxed","probes":[{"name":"a","status":"blocked"}],"extra":1}`,
		"lying verified":   `{"verified":true,"status":"partial","probes":[{"name":"a","status":"blocked"},{"name":"b","status":"failed"}]}`,
		"lying status":     `{"verified":true,"status":"sandboxed","probes":[{"name":"a","status":"failed"}]}`,
		"no probes":        `{"verified":true,"status":"sandboxed","probes":[]}`,
		"bad probe status": `{"verified":false,"status":"unavailable","probes":[{"name":"a","status":"maybe"}]}`,
		"unnamed probe":    `{"verified":true,"status":"sandboxed","probes":[{"status":"blocked"}]}`,
		"array":            `[]`,
		"null":             `null`,
	}
	for name, content := range cases {
		ws := t.TempDir()
		os.Mkdir(filepath.Join(ws, ".openparallax"), 0o700)
		os.WriteFile(filepath.Join(ws, ".openparallax", "sandbox.status"), []byte(content), 0o644)
		r := sandbox.ReadCanaryResult(ws)
		if r.Status != "unknown" || r.Verified || r.Summary == "" {
			t.Errorf("%s: got %s verified=%v summary=%q, want unknown with a reason", name, r.Status, r.Verified, r.Summary)
		}
	}
}

func TestStatusFileRefusesSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	r := goldenResults()["sandboxed"]
	// A symlinked .openparallax pointing elsewhere.
	ws, elsewhere := t.TempDir(), t.TempDir()
	os.Symlink(elsewhere, filepath.Join(ws, ".openparallax"))
	if err := sandbox.WriteCanaryResult(ws, r); err == nil {
		t.Error("wrote through a symlinked .openparallax")
	}
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Errorf("wrote into the symlink target: %v", entries)
	}
	// A symlink at the final name.
	ws = t.TempDir()
	os.Mkdir(filepath.Join(ws, ".openparallax"), 0o700)
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	os.Symlink(victim, filepath.Join(ws, ".openparallax", "sandbox.status"))
	if err := sandbox.WriteCanaryResult(ws, r); err == nil {
		t.Error("wrote over a symlink at the final name")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("symlink target changed: %q", b)
	}
	if got := sandbox.ReadCanaryResult(ws); got.Status != "unknown" {
		t.Errorf("read through a symlink: %+v", got)
	}
}

// Concurrent writers never produce a torn file: every read is one whole
// result that was written.
func TestStatusFileConcurrentWriters(t *testing.T) {
	ws := t.TempDir()
	written := map[string]bool{}
	var results []sandbox.CanaryResult
	for i := range 8 {
		ps := make([]sandbox.ProbeResult, 50+i*40)
		for j := range ps {
			ps[j] = sandbox.ProbeResult{Name: fmt.Sprintf("p%d_%d", i, j), Status: "blocked", Error: strings.Repeat("x", 100)}
		}
		r := sandbox.NewCanaryResult("landlock", ps)
		results = append(results, r)
		written[r.Probes[0].Name] = true
	}
	if err := sandbox.WriteCanaryResult(ws, results[0]); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for _, r := range results {
		wg.Go(func() {
			for range 40 {
				if err := sandbox.WriteCanaryResult(ws, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	readerDone := make(chan int)
	pause := readerPause(t)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				readerDone <- n
				return
			default:
			}
			got := sandbox.ReadCanaryResult(ws)
			if got.Status != "sandboxed" || len(got.Probes) == 0 || !written[got.Probes[0].Name] {
				t.Errorf("torn or foreign read: %s %q", got.Status, got.Summary)
			}
			n++
			time.Sleep(pause)
		}
	}()
	wg.Wait()
	close(stop)
	if n := <-readerDone; n == 0 {
		t.Error("reader never ran")
	}
	entries, _ := os.ReadDir(filepath.Join(ws, ".openparallax"))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %d entries", len(entries))
	}
}

// An Engine's check of an Agent's result: the nonce it handed out must come
// back, and the result must be recent.
func TestReadFreshCanaryResult(t *testing.T) {
	nonce := sandbox.NewCanaryNonce()
	if other := sandbox.NewCanaryNonce(); len(nonce) < 22 || other == nonce {
		t.Fatalf("nonces %q, %q: want two distinct values of at least 128 bits", nonce, other)
	}
	fresh := goldenResults()["sandboxed"]
	fresh.Timestamp, fresh.Nonce = time.Now().UTC(), nonce
	cases := []struct {
		name   string
		edit   func(r *sandbox.CanaryResult)
		nonce  string
		maxAge time.Duration
		reason string // "" when the result must come back verified
	}{
		{"fresh, own nonce", func(*sandbox.CanaryResult) {}, nonce, time.Minute, ""},
		{"no nonce in the result", func(r *sandbox.CanaryResult) { r.Nonce = "" }, nonce, time.Minute, "carries no nonce"},
		{"another run's nonce", func(r *sandbox.CanaryResult) { r.Nonce = sandbox.NewCanaryNonce() }, nonce, time.Minute, "another nonce"},
		{"too old", func(r *sandbox.CanaryResult) { r.Timestamp = time.Now().Add(-2 * time.Minute) }, nonce, time.Minute, "old, more than 1m0s"},
		{"no timestamp", func(r *sandbox.CanaryResult) { r.Timestamp = time.Time{} }, nonce, time.Minute, "old"},
		{"in the future", func(r *sandbox.CanaryResult) { r.Timestamp = time.Now().Add(time.Hour) }, nonce, time.Minute, "in the future"},
		{"caller has no nonce", func(*sandbox.CanaryResult) {}, "", time.Minute, "no nonce to check"},
		{"caller has no age", func(*sandbox.CanaryResult) {}, nonce, 0, "no maximum age"},
		{"not verified stays so", func(r *sandbox.CanaryResult) {
			*r = sandbox.NewCanaryResult("landlock", probes("file_read=failed"))
			r.Nonce = nonce
		}, nonce, time.Minute, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := t.TempDir()
			r := fresh
			c.edit(&r)
			if err := sandbox.WriteCanaryResult(ws, r); err != nil {
				t.Fatal(err)
			}
			got := sandbox.ReadFreshCanaryResult(ws, c.nonce, c.maxAge)
			if c.reason == "" {
				if got.Status != r.Status || got.Verified != r.Verified || got.Nonce != nonce {
					t.Errorf("got %s verified=%v nonce=%q, want the result as written (%s)", got.Status, got.Verified, got.Nonce, r.Status)
				}
				return
			}
			if got.Verified || got.Status != "unknown" || !strings.Contains(got.Summary, c.reason) || strings.HasPrefix(got.Summary, "Sandbox verified") {
				t.Errorf("got %s verified=%v %q, want unknown with %q", got.Status, got.Verified, got.Summary, c.reason)
			}
		})
	}
	if got := sandbox.ReadFreshCanaryResult(t.TempDir(), nonce, time.Minute); got.Status != "unknown" || !strings.Contains(got.Summary, "no canary result") {
		t.Errorf("missing file: %+v", got)
	}
}
