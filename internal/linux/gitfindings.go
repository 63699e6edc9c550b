package linux

// The pure half of finding what git protection reports (the kinds are
// spec.FindingGit*): what a git
// todo list asks git to run, and what a walk after the run found that the
// walk before it did not.

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// gitExecLines returns the lines of a git todo list (rebase -i's
// git-rebase-todo, the sequencer's todo) that git runs as commands: those
// whose first word is exec or x. Comment lines are skipped as git skips
// them ("#"). Each is cut to 200 bytes; at most 3 are returned, with the
// number of all.
func gitExecLines(todo []byte) (lines []string, n int) {
	for l := range strings.SplitSeq(string(todo), "\n") {
		l = strings.TrimLeft(l, " \t")
		word, _, _ := strings.Cut(strings.ReplaceAll(strings.TrimRight(l, "\r"), "\t", " "), " ")
		if !strings.EqualFold(word, "exec") && !strings.EqualFold(word, "x") {
			continue
		}
		n++
		if len(lines) < 3 {
			lines = append(lines, l[:min(len(l), 200)])
		}
	}
	return lines, n
}

// gitTodoFiles are the todo lists, relative to a git directory, whose
// exec lines git runs at --continue.
var gitTodoFiles = []string{"rebase-merge/git-rebase-todo", "sequencer/todo"}

// gitNewRepos compares the walk after the run (end) with the one before
// it (start) and returns the findings for what appeared: repositories,
// bare repositories and special .git entries; spots are the directories
// whose .git GitCreated reports already. What the walk after the run did
// not reach is a finding too.
func gitNewRepos(start, end gitWalkResult, spots []string) []spec.Finding {
	in := func(list []string) map[string]bool {
		m := map[string]bool{}
		for _, p := range list {
			m[p] = true
		}
		return m
	}
	repos, bare, odd, spot := in(start.Repos), in(start.Bare), in(start.Odd), in(spots)
	var out []spec.Finding
	for _, d := range end.Repos {
		if !repos[d] && !spot[d] {
			out = append(out, spec.Finding{Kind: spec.FindingGitRepository, Path: path.Join(d, ".git"),
				Detail: "the program created this repository (none was here at the start): its hooks and config are the program's, and git runs them the next time anyone works in " + d + "; look at them before running git there"})
		}
	}
	for _, d := range end.Bare {
		if !bare[d] {
			out = append(out, spec.Finding{Kind: spec.FindingGitBareRepository, Path: d,
				Detail: "the program made this directory a bare git repository (HEAD, objects/, refs/): git run inside it uses its config (core.sshCommand runs a program at git fetch, for one) and hooks; look at them, or remove it, before running git there"})
		}
	}
	for _, g := range end.Odd {
		if !odd[g] {
			out = append(out, spec.Finding{Kind: spec.FindingSpecialFile, Path: g,
				Detail: "the program left a .git that is not a file or a directory (a FIFO, a socket or a device): git run there may block opening it; it was not opened"})
		}
	}
	// What the start's walk did not reach either is reported once, as
	// the start's.
	end.NotWalked = slices.DeleteFunc(slices.Clone(end.NotWalked), func(d string) bool { return slices.Contains(start.NotWalked, d) })
	if len(end.NotWalked) == 0 {
		end.NotWalkedMore = 0
	}
	return append(out, gitNotWalkedFindings(end, "after the run")...)
}

// gitNotWalkedFindings are the findings for what walk did not reach
// (when: "at the start" or "after the run").
func gitNotWalkedFindings(walk gitWalkResult, when string) []spec.Finding {
	var out []spec.Finding
	for i, d := range walk.NotWalked {
		detail := fmt.Sprintf("the walk for git repositories %s did not walk this directory, or walked it in part (%s): a repository there was neither protected nor reported",
			when, gitBudgetWords())
		if i == len(walk.NotWalked)-1 && walk.NotWalkedMore > 0 {
			detail += fmt.Sprintf("; %d more directories were not walked either", walk.NotWalkedMore)
		}
		out = append(out, spec.Finding{Kind: spec.FindingGitNotWalked, Path: d, Detail: detail})
	}
	return out
}

// gitBudgetWords names the walk's budget, for plan entries and findings.
func gitBudgetWords() string {
	b := defaultGitWalkBudget
	return fmt.Sprintf("its budget of %d directories, %d entries and %v, or an error", b.dirs, b.entries, b.time)
}
