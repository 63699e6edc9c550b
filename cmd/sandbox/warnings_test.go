package main

import (
	"slices"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestAskedNotEnforced: of the plan's entries not enforced for run, those
// a flag or field asked for are kept (a limit, a host), the defaults are
// not (the loader), nor ApplySelf's, nor what was not asked; a feature
// this command does not know is kept, never hidden.
func TestAskedNotEnforced(t *testing.T) {
	p := sandbox.Plan{Available: true, Features: []sandbox.Enforcement{
		{Feature: sandbox.FeatureLimitMemory, Detail: "no cgroup"},
		{Feature: sandbox.FeatureLimitCPUTime, Detail: "no cgroup"},
		{Feature: sandbox.FeatureTCPHost, Detail: "port only", Scope: sandbox.ScopeCommand},
		{Feature: sandbox.FeatureTCPHost, Detail: "ApplySelf", Scope: sandbox.ScopeApplySelf},
		{Feature: sandbox.FeatureExecLoader, Detail: "loader"},
		{Feature: sandbox.FeatureGitProtect, Detail: "past the budget", Scope: sandbox.ScopeCommand},
		{Feature: "some_future_feature", Detail: "new"},
		{Feature: sandbox.FeatureMounts, Detail: "made", Enforced: true},
	}}
	cfg := sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 1 << 20}, AllowedTCPConnect: []string{"example.com:443"},
		AllowedWritePaths: []string{"/w"}, NoGitProtection: true}
	var got []string
	for _, e := range askedNotEnforced(p, cfg) {
		got = append(got, e.Feature+" ("+e.Detail+")")
	}
	want := []string{sandbox.FeatureLimitMemory + " (no cgroup)", sandbox.FeatureTCPHost + " (port only)", "some_future_feature (new)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	cfg.NoGitProtection, cfg.Limits.CPUTime = false, time.Second
	got = got[:0]
	for _, e := range askedNotEnforced(p, cfg) {
		got = append(got, e.Feature)
	}
	if !slices.Contains(got, sandbox.FeatureGitProtect) || !slices.Contains(got, sandbox.FeatureLimitCPUTime) {
		t.Errorf("git protection of the write paths and a CPU limit asked: got %q", got)
	}
}
