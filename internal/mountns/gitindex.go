package mountns

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
)

// GitlinkPaths reads a git index file (versions 2, 3 and 4; hashLen 20 for
// SHA-1 repositories, 32 for SHA-256) and returns the paths of its gitlink
// entries (mode 160000: a submodule, or an embedded repository added as
// one), which git status and other commands enter, running git in each
// with that repository's own hooks and config. A split index (the "link"
// extension) keeps most entries in a shared index file: shared is then
// that file's name (sharedindex.HEX, in the same git directory), whose
// gitlinks the caller reads too; the union over-approximates, since an
// entry the split part deletes is still counted.
//
// The index is the sandboxed program's to write, so the reader trusts
// nothing in it: the checksum is checked as git checks it, every length
// against the data, and a file it cannot read whole is an error (git would
// refuse it too, or read what this cannot vouch for).
func GitlinkPaths(index []byte, hashLen int) (paths []string, shared string, err error) {
	if hashLen != 20 && hashLen != 32 {
		return nil, "", fmt.Errorf("git index: hash length %d", hashLen)
	}
	if len(index) < 12+hashLen || string(index[:4]) != "DIRC" {
		return nil, "", errors.New("git index: no DIRC header")
	}
	version := binary.BigEndian.Uint32(index[4:8])
	if version < 2 || version > 4 {
		return nil, "", fmt.Errorf("git index: version %d", version)
	}
	count := binary.BigEndian.Uint32(index[8:12])
	body, sum := index[:len(index)-hashLen], index[len(index)-hashLen:]
	// The trailing checksum, as git checks it when it reads the index; all
	// zeros when index.skipHash is set, and git then checks nothing.
	if !bytes.Equal(sum, make([]byte, hashLen)) {
		var want []byte
		if hashLen == 20 {
			h := sha1.Sum(body)
			want = h[:]
		} else {
			h := sha256.Sum256(body)
			want = h[:]
		}
		if !bytes.Equal(sum, want) {
			return nil, "", errors.New("git index: bad checksum")
		}
	}
	off := 12
	var prev []byte // version 4: the previous entry's path
	const statLen = 40
	for i := uint32(0); i < count; i++ {
		fixed := statLen + hashLen + 2
		if off+fixed > len(body) {
			return nil, "", fmt.Errorf("git index: entry %d runs past the end", i)
		}
		e := body[off:]
		mode := binary.BigEndian.Uint32(e[24:28])
		flags := binary.BigEndian.Uint16(e[statLen+hashLen:])
		if flags&0x4000 != 0 { // extended flags
			if version < 3 {
				return nil, "", fmt.Errorf("git index: entry %d has extended flags in version 2", i)
			}
			fixed += 2
			if off+fixed > len(body) {
				return nil, "", fmt.Errorf("git index: entry %d runs past the end", i)
			}
		}
		rest := body[off+fixed:]
		var name []byte
		if version == 4 {
			strip, n := offsetVarint(rest)
			if n == 0 || strip > uint64(len(prev)) {
				return nil, "", fmt.Errorf("git index: entry %d: bad path prefix", i)
			}
			end := bytes.IndexByte(rest[n:], 0)
			if end < 0 {
				return nil, "", fmt.Errorf("git index: entry %d: unterminated path", i)
			}
			name = append(append([]byte(nil), prev[:uint64(len(prev))-strip]...), rest[n:n+end]...)
			off += fixed + n + end + 1
		} else {
			end := bytes.IndexByte(rest, 0)
			if end < 0 {
				return nil, "", fmt.Errorf("git index: entry %d: unterminated path", i)
			}
			name = rest[:end]
			// 1 to 8 NULs pad the entry to a multiple of 8 bytes.
			off += (fixed + end + 8) &^ 7
			if off > len(body) {
				return nil, "", fmt.Errorf("git index: entry %d: padding runs past the end", i)
			}
		}
		prev = name
		if mode>>12 == 0o16 { // S_IFGITLINK, 0160000
			paths = append(paths, string(name))
		}
	}
	// Extensions: a 4-byte signature, a 4-byte length, the data.
	for off+8 <= len(body) {
		sig := string(body[off : off+4])
		size := int(binary.BigEndian.Uint32(body[off+4 : off+8]))
		off += 8
		if size < 0 || size > len(body)-off {
			return nil, "", fmt.Errorf("git index: extension %q runs past the end", sig)
		}
		if sig == "link" {
			if size < hashLen {
				return nil, "", errors.New("git index: short link extension")
			}
			if h := body[off : off+hashLen]; !bytes.Equal(h, make([]byte, hashLen)) { // all zeros: none
				shared = "sharedindex." + hex.EncodeToString(h)
			}
		}
		off += size
	}
	if off != len(body) {
		return nil, "", errors.New("git index: trailing bytes before the checksum")
	}
	return paths, shared, nil
}

// offsetVarint reads git's offset varint (varint.c: each continuation adds
// one before the shift); n is 0 when it is not one.
func offsetVarint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	v = uint64(c & 0x7f)
	n = 1
	for c&0x80 != 0 {
		if n >= len(b) || n > 9 {
			return 0, 0
		}
		c = b[n]
		n++
		v = ((v + 1) << 7) | uint64(c&0x7f)
	}
	return v, n
}
