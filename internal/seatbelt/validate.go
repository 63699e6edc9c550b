package seatbelt

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxPathLen is PATH_MAX on macOS: a longer path cannot be opened by name.
const maxPathLen = 1024

// rootSymlinks are the macOS top-level symlinks into /private. Seatbelt
// matches resolved paths, so a rule under one of them never matches.
var rootSymlinks = []string{"/etc", "/tmp", "/var"}

// checkPath reports why p is not a usable profile path, or nil.
func checkPath(p string) error {
	if p == "" {
		return errors.New("empty")
	}
	if !utf8.ValidString(p) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range p {
		if r == 0 {
			return errors.New("contains NUL")
		}
		if unicode.IsControl(r) {
			return fmt.Errorf("contains control character U+%04X", r)
		}
	}
	if p[0] != '/' {
		return errors.New("not absolute")
	}
	if c := path.Clean(p); c != p {
		return fmt.Errorf("not clean (want %q)", c)
	}
	if len(p) > maxPathLen {
		return fmt.Errorf("longer than %d bytes", maxPathLen)
	}
	for _, l := range rootSymlinks {
		if p == l || strings.HasPrefix(p, l+"/") {
			return fmt.Errorf("under the symlink %s; pass the resolved path %q", l, "/private"+p)
		}
	}
	return nil
}

// conn is a resolved TCPConnect endpoint.
type conn struct {
	index       int
	rule        string // "localhost" or "*"
	port        string // decimal, or "*" for every port
	resolve     bool   // the host is a DNS name or a wildcard: needs the resolver
	hostsFile   bool   // the host is the name localhost: resolved from /private/etc/hosts
	notEnforced string // NotEnforced line, or ""
}

var loopbackRange = netip.MustParsePrefix("127.0.0.0/8")

// resolveConnects validates endpoints and maps each host to what Seatbelt
// can express.
func resolveConnects(eps []Endpoint) ([]conn, error) {
	out := make([]conn, 0, len(eps))
	for i, ep := range eps {
		switch {
		case ep.AnyPort && ep.Port != 0:
			return nil, fmt.Errorf("%w: TCPConnect[%d] %q: AnyPort with port %d", ErrInvalidPolicy, i, ep.Host, ep.Port)
		case !ep.AnyPort && ep.Port == 0:
			return nil, fmt.Errorf("%w: TCPConnect[%d] %q: port 0", ErrInvalidPolicy, i, ep.Host)
		}
		c := conn{index: i, port: strconv.FormatUint(uint64(ep.Port), 10)}
		if ep.AnyPort {
			c.port = "*"
		}
		host := ep.Host
		switch {
		case host == "" || host == "*":
			c.rule, c.resolve = "*", true
		case strings.EqualFold(strings.TrimSuffix(host, "."), "localhost"):
			// Not the resolver: localhost is in /private/etc/hosts, and
			// granting mDNSResponder for it would open a DNS channel to
			// every name server for a loopback-only Config.
			c.rule, c.hostsFile = "localhost", true
		default:
			bare := host
			if strings.HasPrefix(bare, "[") && strings.HasSuffix(bare, "]") {
				bare = bare[1 : len(bare)-1]
			}
			if r, err := netip.ParsePrefix(bare); err == nil {
				// An address range: "localhost" when it lies inside
				// 127.0.0.0/8 (Seatbelt's localhost is 127.0.0.1 and
				// ::1: narrower than asked, the safe side), else "*"
				// with the host reported as not enforced.
				if r.Addr().Is4() && r.Bits() >= 8 && loopbackRange.Contains(r.Addr()) {
					c.rule = "localhost"
					break
				}
				host = r.Masked().String()
			} else if addr, err := netip.ParseAddr(bare); err == nil {
				if addr.Zone() != "" {
					return nil, fmt.Errorf("%w: TCPConnect[%d] %q: IPv6 zones are not supported", ErrInvalidPolicy, i, host)
				}
				if addr.Unmap().IsLoopback() {
					c.rule = "localhost"
					break
				}
				host = addr.String()
			} else if !isDNSName(host) {
				return nil, fmt.Errorf("%w: TCPConnect[%d] %q: not \"\", \"*\", an IP address or a DNS name", ErrInvalidPolicy, i, host)
			} else {
				c.resolve = true
			}
			c.rule = "*"
			c.notEnforced = fmt.Sprintf("host of %q not enforced: Seatbelt network filters accept only \"localhost\" or \"*\"; allowed as *:%s",
				net.JoinHostPort(host, c.port), c.port)
		}
		out = append(out, c)
	}
	return out, nil
}

// isDNSName reports whether s is a syntactically valid host name: dot
// separated labels of letters, digits, '-' and '_' (not starting or ending
// with '-'), each 1 to 63 bytes, at most 253 bytes without an optional
// trailing dot.
func isDNSName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// grants is a Policy validated: its path grants by list, and its TCP
// endpoints as Seatbelt can express them.
type grants struct {
	reads, writes, execs, libs []grant
	conns                      []conn
}

// validate checks p and numbers its paths as parameters (added to
// prof.Params in order: R, W, X, then T0 and D0).
func validate(p Policy, prof *Profile) (grants, error) {
	isDir := p.IsDir
	if isDir == nil {
		isDir = func(string) bool { return true }
	}
	lists := []struct {
		name, prefix string
		paths        []string
	}{
		{"ReadPaths", "R", p.ReadPaths},
		{"WritePaths", "W", p.WritePaths},
		{"ExecPaths", "X", p.ExecPaths},
		{"LibraryPaths", "L", p.LibraryPaths},
	}
	out := make([][]grant, len(lists))
	for li, l := range lists {
		seen := make(map[string]bool, len(l.paths))
		for i, path := range l.paths {
			if err := checkPath(path); err != nil {
				return grants{}, fmt.Errorf("%w: %s[%d] %q: %v", ErrInvalidPolicy, l.name, i, path, err)
			}
			if seen[path] {
				continue
			}
			seen[path] = true
			g := grant{list: l.name, index: i, param: l.prefix + strconv.Itoa(len(out[li])), dir: l.prefix != "L" && isDir(path)} // a library is a file
			out[li] = append(out[li], g)
			prof.Params = append(prof.Params, Param{Name: g.param, Value: path})
		}
	}
	conns, err := resolveConnects(p.TCPConnect)
	if err != nil {
		return grants{}, err
	}
	for i, port := range p.TCPBind {
		if port == 0 {
			return grants{}, fmt.Errorf("%w: TCPBind[%d]: port 0", ErrInvalidPolicy, i)
		}
	}
	if p.Terminal != "" {
		if !isPTYPath(p.Terminal) {
			return grants{}, fmt.Errorf("%w: Terminal %q: not a pseudo-terminal's path (/dev/ttysNNN)", ErrInvalidPolicy, p.Terminal)
		}
		prof.Params = append(prof.Params, Param{Name: "T0", Value: p.Terminal})
	} else if p.ControllingTerminal {
		return grants{}, fmt.Errorf("%w: ControllingTerminal without a Terminal", ErrInvalidPolicy)
	}
	if p.DeveloperDir != "" {
		if err := checkPath(p.DeveloperDir); err != nil {
			return grants{}, fmt.Errorf("%w: DeveloperDir %q: %v", ErrInvalidPolicy, p.DeveloperDir, err)
		}
		if p.XcrunShim {
			prof.Params = append(prof.Params, Param{Name: "D0", Value: p.DeveloperDir})
		}
	}
	if p.GitProtection {
		for i, d := range p.GitDirs {
			if err := checkPath(d); err != nil {
				return grants{}, fmt.Errorf("%w: GitDirs[%d] %q: %v", ErrInvalidPolicy, i, d, err)
			}
		}
		for _, f := range gitDirFiles(p.GitDirs) {
			if err := checkPath(f.path); err != nil {
				return grants{}, fmt.Errorf("%w: GitDirs: %q: %v", ErrInvalidPolicy, f.path, err)
			}
			prof.Params = append(prof.Params, Param{Name: f.param, Value: f.path})
		}
	}
	return grants{reads: out[0], writes: out[1], execs: out[2], libs: out[3], conns: conns}, nil
}
