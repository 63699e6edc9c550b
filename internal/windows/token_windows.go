//go:build windows

package windows

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// tokenIsAppContainer is TOKEN_INFORMATION_CLASS TokenIsAppContainer (29),
// past the end of x/sys/windows's list.
const tokenIsAppContainer = 29

// CurrentTokenFacts reads the facts process_spawn_parent decides on from
// this process's primary token (not a thread's impersonation token).
func CurrentTokenFacts() TokenFacts {
	tok := windows.GetCurrentProcessToken()
	var f TokenFacts
	user, err := tok.GetTokenUser()
	if err != nil {
		return TokenFacts{Err: fmt.Errorf("TokenUser: %w", err)}
	}
	f.User = user.User.Sid.String()
	b, err := tokenInfo(tok, windows.TokenIntegrityLevel)
	if err != nil {
		return TokenFacts{Err: fmt.Errorf("TokenIntegrityLevel: %w", err)}
	}
	label := (*windows.Tokenmandatorylabel)(unsafe.Pointer(&b[0]))
	n := label.Label.Sid.SubAuthorityCount()
	if n == 0 {
		return TokenFacts{Err: fmt.Errorf("TokenIntegrityLevel: label %s has no RID", label.Label.Sid)}
	}
	f.Integrity = label.Label.Sid.SubAuthority(uint32(n) - 1)
	if b, err = tokenInfo(tok, tokenIsAppContainer); err != nil {
		return TokenFacts{Err: fmt.Errorf("TokenIsAppContainer: %w", err)}
	}
	f.AppContainer = *(*uint32)(unsafe.Pointer(&b[0])) != 0
	// Wine 8.0 answers both of these with ERROR_INVALID_FUNCTION: the facts
	// are then unknown, and the probe fails.
	if restricted, err := tok.IsRestricted(); err != nil {
		return TokenFacts{Err: fmt.Errorf("IsTokenRestricted: %w", err)}
	} else if !restricted {
		return f
	}
	if b, err = tokenInfo(tok, windows.TokenRestrictedSids); err != nil {
		return TokenFacts{Err: fmt.Errorf("TokenRestrictedSids: %w", err)}
	}
	for _, g := range (*windows.Tokengroups)(unsafe.Pointer(&b[0])).AllGroups() {
		f.RestrictingSIDs = append(f.RestrictingSIDs, g.Sid.String())
	}
	return f
}

// tokenInfo returns GetTokenInformation(class) of tok, in a buffer aligned
// for the structure it holds.
func tokenInfo(tok windows.Token, class uint32) ([]byte, error) {
	n := uint32(64)
	for {
		buf := make([]uint64, (n+7)/8) // 8-byte aligned
		b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
		err := windows.GetTokenInformation(tok, class, &b[0], uint32(len(b)), &n)
		if err == nil {
			return b, nil
		}
		if err != windows.ERROR_INSUFFICIENT_BUFFER || n <= uint32(len(b)) {
			return nil, err
		}
	}
}
