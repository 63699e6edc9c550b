package linux

import (
	"slices"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func TestGitExecLines(t *testing.T) {
	todo := "pick 1234 a\n# exec commented out\n  exec make test\nx\trm -rf ~\nX  echo upper\nexecute nothing\nfixup 5678 b\r\nexec   last\r\n"
	lines, n := gitExecLines([]byte(todo))
	if n != 4 || !slices.Equal(lines, []string{"exec make test", "x\trm -rf ~", "X  echo upper"}) {
		t.Errorf("gitExecLines = %q, %d; want the first 3 of 4", lines, n)
	}
	if _, n := gitExecLines([]byte("pick 1 a\nreword 2 b\n")); n != 0 {
		t.Errorf("%d exec lines in a todo without any", n)
	}
}

// What appeared since the start is reported, once; what GitCreated covers
// (a spot) is not; a directory the start's walk did not reach either is
// not reported again.
func TestGitNewRepos(t *testing.T) {
	start := gitWalkResult{Repos: []string{"/ws"}, Bare: []string{"/ws/srv.git"}, NotWalked: []string{"/ws/big"}}
	end := gitWalkResult{Repos: []string{"/ws", "/ws/new", "/ws/spot"}, Bare: []string{"/ws/srv.git", "/ws/b"},
		Odd: []string{"/ws/f/.git"}, NotWalked: []string{"/ws/big", "/ws/other"}}
	var got []string
	for _, f := range gitNewRepos(start, end, []string{"/ws/spot"}) {
		got = append(got, f.Kind+" "+f.Path)
	}
	want := []string{spec.FindingGitRepository + " /ws/new/.git", spec.FindingGitBareRepository + " /ws/b",
		spec.FindingSpecialFile + " /ws/f/.git", spec.FindingGitNotWalked + " /ws/other"}
	if !slices.Equal(got, want) {
		t.Errorf("gitNewRepos = %q, want %q", got, want)
	}
}
