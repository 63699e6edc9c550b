package safefs

import (
	"testing"

	"github.com/openparallax/sandbox/internal/childtest"
)

// TestRemoveAllAsNobody removes, as nobody, a tree whose directories the
// program left unlistable and unwritable to their owner: RemoveAll makes
// each accessible through its own descriptor (never following a link)
// before it lists it.
func TestRemoveAllAsNobody(t *testing.T) {
	if !childtest.AsNobody(t) {
		return
	}
	TestRemoveAllNeverFollows(t)
}
