package linux

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

// refRule is a rule as the straightforward build makes it: every source
// concatenated to the rule's Source when it is added.
type refRule struct {
	path   string
	access landlock.AccessFSSet
	source string
}

type refPolicy struct {
	handled landlock.AccessFSSet
	rules   []refRule
}

// add is linuxPolicy.add as it was before the sources were kept apart: a
// search of the rules and a string concatenation per source.
func (r *refPolicy) add(path string, access landlock.AccessFSSet, source string) {
	access &= r.handled
	if access == 0 {
		return
	}
	for i := range r.rules {
		if r.rules[i].path == path {
			r.rules[i].access |= access
			r.rules[i].source += ", " + source
			return
		}
	}
	r.rules = append(r.rules, refRule{path, access, source})
}

// refExecPolicy is buildLinuxPolicy(rc, abi, inChild, []string{target})'s
// rules built the straightforward way, for Configs without unix sockets,
// shared memory or network entries: the read and write paths, each exec
// path and its interpreters, each extra of the exec directories and its
// interpreters, the exec write paths; every interpreter looked at anew.
func refExecPolicy(rc *spec.Resolved, abi int, target string) []refRule {
	r := refPolicy{handled: handledFor(abi, rc.Config).HandledFS}
	for _, rp := range rc.Read {
		r.add(rp.Resolved, pick(rp.IsDir, llReadDir, llRead), "allowed_read_paths")
	}
	var writePaths []string
	for _, rp := range rc.Write {
		r.add(rp.Resolved, pick(rp.IsDir, llWriteDir, llWriteFile), "allowed_write_paths")
		writePaths = append(writePaths, rp.Resolved)
	}
	grantable := func(in string) (string, bool) {
		p, err := execgrant.Grantable(in, writePaths)
		return p, err == nil
	}
	for _, rp := range append(slices.Clone(rc.Exec), spec.Path{Given: target, Resolved: target}) {
		r.add(rp.Resolved, pick(rp.IsDir, llExecDir, llExecFile), "allowed_exec_paths")
		var interps []string
		if rp.IsDir {
			for _, in := range elfInterpreters {
				if p, ok := grantable(in); ok {
					interps = append(interps, p)
				}
			}
		} else {
			interps, _ = execgrant.Chain(rp.Resolved, writePaths)
		}
		for _, in := range interps {
			r.add(in, llExecFile, "interpreter of "+rp.Resolved)
		}
	}
	for _, x := range execgrant.Extras(execGrants(rc.Exec)) {
		if slices.ContainsFunc(writePaths, func(w string) bool { return x.Path == w || spec.Under(x.Path, w) }) {
			continue
		}
		r.add(x.Path, pick(x.IsDir, llExecDir, llExecFile), "allowed_exec_paths: "+x.Reason)
		for _, in := range pick(x.IsDir, elfInterpreters, x.Interps) {
			if p, ok := grantable(in); ok {
				r.add(p, llExecFile, "interpreter of "+x.Path)
			}
		}
	}
	if rc.Config.AllowExecWritePaths && len(rc.Write) > 0 {
		for _, w := range writePaths {
			r.add(w, ll.AccessFSExecute, "allow_exec_write_paths: programs built here may run")
		}
		for _, in := range elfInterpreters {
			if p, ok := grantable(in); ok {
				r.add(p, llExecFile, "interpreter of programs in the write paths")
			}
		}
	}
	return r.rules
}

// TestPolicySourcesMatchConcatenation: the rules of realistic exec grants
// (exec directories with hundreds of symlink targets, tools with helper
// directories, exec write paths, a write path over some targets), built
// with their sources kept apart and joined only when read (Source), are
// the rules the straightforward build makes, with the same Source text, in
// the same order, for several Landlock ABIs; and a rule more than one
// source added to keeps no judged identity.
func TestPolicySourcesMatchConcatenation(t *testing.T) {
	ws := t.TempDir()
	configs := []Config{
		{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true},
		{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin/git", "/usr/lib/git-core", "/usr/bin/gcc"},
			AllowProcessSpawn: true, AllowExecWritePaths: true},
		{AllowedReadPaths: []string{"/etc"}, AllowedExecPaths: []string{"/usr/bin/python3", "/usr/bin/env", "/bin/sh"}},
		{AllowedWritePaths: []string{ws, "/usr/share"}, AllowedExecPaths: []string{"/usr/bin"}, AllowExecWritePaths: true},
	}
	ran := 0
	for i, cfg := range configs {
		paths := slices.Concat(cfg.AllowedExecPaths, cfg.AllowedReadPaths, cfg.AllowedWritePaths)
		missing := slices.IndexFunc(paths, func(p string) bool {
			_, err := os.Stat(p)
			return err != nil
		})
		if missing >= 0 {
			// The kernel matrix's minimal guest has no /usr/share, git
			// or python3.
			t.Logf("config %d skipped: this host lacks %s", i, paths[missing])
			continue
		}
		ran++
		rc := testResolved(t, cfg)
		for _, abi := range []int{1, 3, 7} {
			p := buildLinuxPolicy(rc, abi, inChild, []string{"/bin/true"})
			want := refExecPolicy(rc, abi, "/bin/true")
			got := make([]refRule, len(p.Paths))
			for j, r := range p.Paths {
				got[j] = refRule{r.Path, r.Access, r.Source()}
				if r.judged && len(r.also) > 0 {
					t.Errorf("config %d, ABI %d: %s has %d sources and a judged identity", i, abi, r.Path, 1+len(r.also))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("config %d, ABI %d: %d rules, the straightforward build %d; first difference: %s",
					i, abi, len(got), len(want), firstRuleDiff(got, want))
			}
			if len(got) < 3 || !slices.ContainsFunc(got, func(r refRule) bool { return strings.Count(r.source, ", ") > 0 }) {
				t.Errorf("config %d, ABI %d: no rule with several sources among %d: the comparison shows nothing", i, abi, len(got))
			}
		}
	}
	if ran == 0 {
		t.Skip("every Config names a path this host lacks: nothing compared")
	}
}

func firstRuleDiff(got, want []refRule) string {
	for j := range min(len(got), len(want)) {
		if got[j] != want[j] {
			return "rule " + got[j].path + " (" + got[j].source + ") against " + want[j].path + " (" + want[j].source + ")"
		}
	}
	return "one list is longer"
}
