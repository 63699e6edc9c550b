//go:build unix

package execgrant

import "syscall"

// openNoFollow makes open(2) fail on a symlink at the last step.
const openNoFollow = syscall.O_NOFOLLOW
