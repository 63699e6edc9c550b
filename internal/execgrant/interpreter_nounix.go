//go:build !unix

package execgrant

// openNoFollow is 0 where open has no O_NOFOLLOW (Windows): Lstat's answer
// and the SameFile check after opening stand in for it.
const openNoFollow = 0
