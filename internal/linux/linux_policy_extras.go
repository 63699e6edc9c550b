package linux

// The rules an exec grant brings beyond its own paths: symlink targets,
// helper directories and their interpreters (execgrant.Extras), added in
// time linear in their number.

import (
	"slices"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

// addExecExtras adds what the exec grants mean beyond their own paths (see
// execgrant.Extras), each rule with its reason. Interpreters follow the
// rule of addExecPaths (execgrant.Grantable); a symlink target or helper
// directory inside a write path is not granted: the program could rewrite
// it and run what it wrote. seen holds the answers of execgrant.Grantable
// for this build's writePaths.
func (p *linuxPolicy) addExecExtras(rc *spec.Resolved, writePaths []string, seen grantableMemo) {
	// A directory's hundreds of symlink targets name few interpreters
	// (/bin/sh, python3, the dynamic loader): each is checked once per
	// policy, against the same writePaths.
	extras := execgrant.Extras(execGrants(rc.Exec))
	p.Paths = slices.Grow(p.Paths, len(extras)) // once, not by doubling
	b := p.batch()
	under := make([]string, len(writePaths)) // each write path's prefix, once
	for i, w := range writePaths {
		under[i] = strings.TrimSuffix(w, "/") + "/"
	}
	for _, x := range extras {
		if slices.Contains(writePaths, x.Path) || slices.ContainsFunc(under, func(u string) bool {
			return strings.HasPrefix(x.Path, u)
		}) {
			continue
		}
		source := ruleSource{"allowed_exec_paths: ", x.Reason}
		if !x.IsDir && (x.Dev != 0 || x.Ino != 0) {
			// The target's identity as the scan judged it (see ruleIDs).
			b.addJudged(x.Path, llExecFile, source, RuleID{Dev: x.Dev, Ino: x.Ino})
		} else {
			b.add(x.Path, pick(x.IsDir, llExecDir, llExecFile), source)
		}
		b.grantInterps(pick(x.IsDir, elfInterpreters, x.Interps), pick(x.IsDir, elfInterpreters, []string{x.Loader}), writePaths, x.Path, seen)
	}
}

// grantableMemo holds, for one policy being built (one writePaths), what
// execgrant.Grantable answered for an interpreter: the path to grant, or
// ok false when it was refused. It lives no longer than that build, so an
// answer is as fresh as the build's first look at the file.
type grantableMemo map[string]grantableAnswer

type grantableAnswer struct {
	path string
	ok   bool
}

// grantable is execgrant.Grantable(in, writePaths), asked once per memo
// (every time with a nil memo).
func (m grantableMemo) grantable(in string, writePaths []string) (string, bool) {
	if a, ok := m[in]; ok {
		return a.path, a.ok
	}
	r, err := execgrant.Grantable(in, writePaths)
	if m != nil {
		m[in] = grantableAnswer{r, err == nil}
	}
	return r, err == nil
}

// ruleBatch adds rules to p as linuxPolicy.add does, with the same
// result, in constant time per rule: add searches p.Paths, which for the
// hundreds of rules of an exec directory (the same interpreter named by a
// hundred targets) costs quadratic time. Nothing else may change p.Paths
// while the batch is used.
type ruleBatch struct {
	p   *linuxPolicy
	idx map[string]int // p.Paths' index of a path
}

// batch starts a ruleBatch on p.
func (p *linuxPolicy) batch() *ruleBatch {
	b := &ruleBatch{p: p, idx: make(map[string]int, cap(p.Paths))}
	for i, r := range p.Paths {
		if _, ok := b.idx[r.Path]; !ok { // add finds the first
			b.idx[r.Path] = i
		}
	}
	return b
}

// add is linuxPolicy.addFrom.
func (b *ruleBatch) add(path string, access landlock.AccessFSSet, why ruleSource) {
	b.addRule(linuxRule{Path: path, Access: access, why: why})
}

// addJudged is add of a rule whose path this build judged as the object
// id (linuxRule.id): kept only while nothing else adds to the rule.
func (b *ruleBatch) addJudged(path string, access landlock.AccessFSSet, why ruleSource, id RuleID) {
	b.addRule(linuxRule{Path: path, Access: access, why: why, id: id, judged: true})
}

func (b *ruleBatch) addRule(r linuxRule) {
	r.Access &= b.p.HandledFS
	if r.Access == 0 {
		return
	}
	if i, ok := b.idx[r.Path]; ok {
		b.p.Paths[i].merge(r.Access, r.why)
		return
	}
	b.idx[r.Path] = len(b.p.Paths)
	b.p.Paths = append(b.p.Paths, r)
}

// grantInterps grants execute on each of cands that is grantable (outside
// writePaths), as the interpreter of why; those in loaders are loaders.
// seen, when not nil, remembers the answers for this policy's writePaths.
func (b *ruleBatch) grantInterps(cands, loaders, writePaths []string, why string, seen grantableMemo) {
	for _, in := range cands {
		if r, ok := seen.grantable(in, writePaths); ok {
			b.add(r, llExecFile, ruleSource{"interpreter of ", why})
			if slices.Contains(loaders, in) {
				b.p.addLoader(r)
			}
		}
	}
}
