package linux

// Why a Landlock rule is there: its sources, kept as parts and joined
// only when read (the plan's rule list), so that WrapCommand and Run,
// which read none, build no text for an exec directory's hundreds of
// rules.

import (
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// ruleSource is one reason for a rule: prefix and what, as one text
// (String). The two are kept apart so that a source made of a fixed
// prefix and a path already held costs nothing until it is read.
type ruleSource struct{ prefix, what string }

func (s ruleSource) String() string { return s.prefix + s.what }

// Source is why the rule is there: every source that added to it, in the
// order they were added, joined by ", " (the plan's Source).
func (r linuxRule) Source() string {
	if len(r.also) == 0 {
		return r.why.String()
	}
	var b strings.Builder
	b.WriteString(r.why.prefix)
	b.WriteString(r.why.what)
	for _, s := range r.also {
		b.WriteString(", ")
		b.WriteString(s.prefix)
		b.WriteString(s.what)
	}
	return b.String()
}

// merge adds access and the source why to the rule, whose judged
// identity then no longer holds alone: ruleIDs looks.
func (r *linuxRule) merge(access landlock.AccessFSSet, why ruleSource) {
	r.Access |= access
	r.also = append(r.also, why)
	r.judged = false
}
