package seatbelt

// A small, strict reader for the SBPL this package emits, and a checker that
// holds every generated profile to explicit allowlists. It is deliberately
// independent of the generator: it shares no code or tables with it.

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

type sexpKind int

const (
	sList sexpKind = iota
	sSymbol
	sString // "..." with SBPL escapes decoded
	sRegex  // #"..." kept raw
	sNumber
)

func (k sexpKind) String() string {
	return [...]string{"list", "symbol", "string", "regex", "number"}[k]
}

type sexp struct {
	kind  sexpKind
	text  string // symbol, decoded string, raw regex, number
	items []sexp // list
	off   int    // byte offset in the source
}

func (s sexp) isSym(name string) bool { return s.kind == sSymbol && s.text == name }

func (s sexp) String() string {
	switch s.kind {
	case sList:
		parts := make([]string, len(s.items))
		for i, it := range s.items {
			parts[i] = it.String()
		}
		return "(" + strings.Join(parts, " ") + ")"
	case sString:
		return strconv.Quote(s.text)
	case sRegex:
		return `#"` + s.text + `"`
	default:
		return s.text
	}
}

// parseSBPL reads a sequence of s-expressions: lists, ";" comments to end of
// line, strings with only \\ and \" escapes, #"regex" literals, symbols and
// integers. It rejects anything else, including Scheme quote syntax and
// control characters inside literals.
func parseSBPL(src string) ([]sexp, error) {
	r := &reader{src: src}
	var out []sexp
	for {
		r.skip()
		if r.i >= len(r.src) {
			return out, nil
		}
		if r.src[r.i] == ')' {
			return nil, fmt.Errorf("offset %d: unbalanced ')'", r.i)
		}
		e, err := r.expr()
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
}

type reader struct {
	src string
	i   int
}

func (r *reader) skip() {
	for r.i < len(r.src) {
		switch c := r.src[r.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			r.i++
		case c == ';':
			for r.i < len(r.src) && r.src[r.i] != '\n' {
				r.i++
			}
		default:
			return
		}
	}
}

func (r *reader) expr() (sexp, error) {
	start := r.i
	c := r.src[r.i]
	switch {
	case c == '(':
		r.i++
		l := sexp{kind: sList, off: start}
		for {
			r.skip()
			if r.i >= len(r.src) {
				return sexp{}, fmt.Errorf("offset %d: unbalanced '(': end of input inside list", start)
			}
			if r.src[r.i] == ')' {
				r.i++
				return l, nil
			}
			e, err := r.expr()
			if err != nil {
				return sexp{}, err
			}
			l.items = append(l.items, e)
		}
	case c == '"':
		r.i++
		s, err := r.literal(start, false)
		return sexp{kind: sString, text: s, off: start}, err
	case c == '#' && r.i+1 < len(r.src) && r.src[r.i+1] == '"':
		r.i += 2
		s, err := r.literal(start, true)
		return sexp{kind: sRegex, text: s, off: start}, err
	case c == '\'' || c == '`' || c == ',':
		return sexp{}, fmt.Errorf("offset %d: quote syntax %q not expected", start, c)
	}
	for r.i < len(r.src) && !strings.ContainsRune(" \t\r\n()\";'`,", rune(r.src[r.i])) {
		r.i++
	}
	tok := r.src[start:r.i]
	if tok == "" {
		return sexp{}, fmt.Errorf("offset %d: unexpected %q", start, c)
	}
	for _, ch := range tok {
		if ch < 0x21 || ch > 0x7e {
			return sexp{}, fmt.Errorf("offset %d: non-printable character in symbol %q", start, tok)
		}
	}
	if regexp.MustCompile(`^-?[0-9]+$`).MatchString(tok) {
		return sexp{kind: sNumber, text: tok, off: start}, nil
	}
	return sexp{kind: sSymbol, text: tok, off: start}, nil
}

// literal reads the body of a string (raw=false: \\ and \" decoded, any
// other escape refused) or of a #"regex" (raw=true: kept as written, a
// backslash protects the next byte).
func (r *reader) literal(start int, raw bool) (string, error) {
	var sb strings.Builder
	for r.i < len(r.src) {
		c := r.src[r.i]
		switch {
		case c == '"':
			r.i++
			s := sb.String()
			if !utf8.ValidString(s) {
				return "", fmt.Errorf("offset %d: literal is not valid UTF-8", start)
			}
			for _, ch := range s {
				if unicode.IsControl(ch) {
					return "", fmt.Errorf("offset %d: control character U+%04X in literal", start, ch)
				}
			}
			return s, nil
		case c == '\\':
			if r.i+1 >= len(r.src) {
				return "", fmt.Errorf("offset %d: unterminated escape", start)
			}
			n := r.src[r.i+1]
			if raw {
				sb.WriteByte(c)
				sb.WriteByte(n)
			} else if n == '\\' || n == '"' {
				sb.WriteByte(n)
			} else {
				return "", fmt.Errorf("offset %d: escape \\%c is not an SBPL string escape", start, n)
			}
			r.i += 2
		case c < 0x20 || c == 0x7f:
			return "", fmt.Errorf("offset %d: control byte %#x in literal", start, c)
		default:
			sb.WriteByte(c)
			r.i++
		}
	}
	return "", fmt.Errorf("offset %d: unterminated literal", start)
}

// ---- the checker ----

// allowedOps maps each operation the generator may allow to the filters it
// may be combined with. "" means the rule may have no filter at all.
var allowedOps = map[string][]string{
	"file-read*":          {"subpath", "literal", "regex"},
	"file-write*":         {"subpath", "literal"},
	"file-write-data":     {"literal", "subpath"},
	"file-ioctl":          {"literal"}, // Policy.Terminal only: see rule
	"ipc-posix-sem":       {"ipc-posix-name-prefix"},
	"file-read-metadata":  {"path-ancestors", "literal"},
	"file-map-executable": {"subpath", "literal", "regex"},
	"process-exec*":       {"subpath", "literal", "regex"},
	"process-fork":        {""},
	"process-info*":       {"target"},
	"signal":              {"target"},
	"sysctl-read":         {"sysctl-name", "sysctl-name-prefix"},
	"mach-lookup":         {"global-name"},
	"system-socket":       {"socket-domain"},
	"network-outbound":    {"remote", "literal"},
	"network-bind":        {"local"},
	"network-inbound":     {"local"},
	"device-camera":       {""},
	"device-microphone":   {""},
}

// allowedConstPaths are the only path strings that may appear literally in a
// profile; everything else must come through (param "...").
var allowedConstPaths = map[string]bool{
	"/usr/lib":                                         true,
	"/System/Library/Frameworks":                       true,
	"/System/Library/PrivateFrameworks":                true,
	"/System/Library/SubFrameworks":                    true,
	"/System/Library/dyld":                             true,
	"/System/Volumes/Preboot/Cryptexes/OS":             true,
	"/System/Cryptexes/OS":                             true,
	"/System/Library/CoreServices/SystemVersion.plist": true,
	"/private/etc/localtime":                           true,
	"/private/var/db/timezone":                         true,
	"/dev/null":                                        true,
	"/dev/zero":                                        true,
	"/dev/random":                                      true,
	"/dev/urandom":                                     true,
	"/dev/tty":                                         true,
	"/private/etc/ssl":                                 true,
	"/private/var/run/mDNSResponder":                   true,
	"/private/etc/hosts":                               true,
	"/usr/share":                                       true,
	"/System/Library/Perl":                             true,
	"/System/Library/CoreServices/SystemVersionCompat.plist": true,
	"/Library/Apple/usr/libexec/oah":                         true,
	"/usr/libexec/rosetta":                                   true,
	"/private/var/db/oah":                                    true,
	"/dev/stdin":                                             true,
	"/dev/stdout":                                            true,
	"/dev/stderr":                                            true,
	"/dev/fd":                                                true,
	"/private/var/select/sh":                                 true,
	"/bin/bash":                                              true,
	"/bin/dash":                                              true,
	"/bin/zsh":                                               true,
	"/private/var/db/xcode_select_link":                      true,
	"/usr/bin/xcrun":                                         true,
	"/Library/Developer/CommandLineTools":                    true,
	"/Library/Perl":                                          true,
	// Only with the operation named in constOnlyFor.
	"/":    true,
	"/etc": true,
	"/tmp": true,
	"/var": true,
}

// metadataOnly are the directories above the constant paths: stat only,
// as literals (added to allowedConstPaths and constOnlyFor by init).
var metadataOnly = []string{
	"/usr", "/usr/bin", "/usr/libexec", "/bin", "/dev", "/System", "/System/Library", "/System/Library/CoreServices",
	"/System/Volumes", "/System/Volumes/Preboot", "/System/Volumes/Preboot/Cryptexes", "/System/Cryptexes",
	"/Library", "/Library/Apple", "/Library/Apple/usr", "/Library/Apple/usr/libexec", "/Library/Developer",
	"/private", "/private/var", "/private/var/db", "/private/var/select", "/private/etc",
}

func init() {
	for _, d := range metadataOnly {
		allowedConstPaths[d] = true
		constOnlyFor[d] = "file-read-metadata"
	}
}

// constOnlyFor restricts constant paths to one operation, always as a
// literal: the root directory only as itself (its names and attributes, for
// dyld; never a subpath), the root symlinks only as metadata.
var constOnlyFor = map[string]string{
	"/": "file-read*", "/etc": "file-read-metadata", "/tmp": "file-read-metadata", "/var": "file-read-metadata",
}

// writableConsts are the only constant paths file-write-data may name:
// devices that reach nothing (null, the terminal, the process's own
// descriptors).
var writableConsts = map[string]bool{
	"/dev/null": true, "/dev/tty": true, "/dev/stdin": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/fd": true,
}

// allowedRegexes are the only regular expressions a profile may hold.
var allowedRegexes = map[string]bool{
	`^/usr/bin/perl5[.][0-9]+$`: true,
}

var allowedMachNames = map[string]bool{
	"com.apple.system.opendirectoryd.libinfo":        true,
	"com.apple.trustd.agent":                         true,
	"com.apple.SystemConfiguration.DNSConfiguration": true,
	"com.apple.SystemConfiguration.configd":          true,
}

var (
	sysctlNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*\.?$`)
	paramNameRE  = regexp.MustCompile(`^([RWXGL](0|[1-9][0-9]*)|T0|D0)$`) // T0: Policy.Terminal, D0: Policy.DeveloperDir, G: Policy.GitDirs
	tcpAddrRE    = regexp.MustCompile(`^(localhost|\*):([1-9][0-9]*)$`)
	// sysctls that must never be readable: other processes' argv, env, list.
	forbiddenSysctl = regexp.MustCompile(`^(kern\.proc|kern\.procargs|kern\.procname|kern\.boottime|net\.)`)
	// the one net.* prefix allowed: the routing table, for the resolver
	routeSysctl = "net.routetable"
)

type analysis struct {
	forms      []sexp
	pairs      map[string]bool // "operation filter-kind"
	paramsUsed map[string]bool
	netAddrs   []string // (remote|local tcp "...") addresses
	consts     []string // constant strings other than params and addresses
}

func (a *analysis) sortedPairs() []string {
	out := make([]string, 0, len(a.pairs))
	for p := range a.pairs {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// analyzeProfile parses prof.Text and checks it against the rules every
// generated profile must obey. It returns the first violation.
func analyzeProfile(prof Profile) (*analysis, error) {
	text := prof.Text
	if !strings.HasPrefix(text, "(version 1)\n(deny default)\n") {
		return nil, errors.New(`text does not start with "(version 1)\n(deny default)\n"`)
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; c != '\n' && (c < 0x20 || c > 0x7e) {
			return nil, fmt.Errorf("text byte %d is %#x: not printable ASCII", i, c)
		}
	}
	forms, err := parseSBPL(text)
	if err != nil {
		return nil, fmt.Errorf("parse: %v", err)
	}
	if len(forms) < 2 {
		return nil, errors.New("fewer than two forms")
	}
	if f := forms[0]; f.kind != sList || len(f.items) != 2 || !f.items[0].isSym("version") || f.items[1].kind != sNumber || f.items[1].text != "1" {
		return nil, fmt.Errorf("first form is %s, want (version 1)", f)
	}
	if f := forms[1]; f.kind != sList || len(f.items) != 2 || !f.items[0].isSym("deny") || !f.items[1].isSym("default") {
		return nil, fmt.Errorf("second form is %s, want (deny default)", f)
	}

	defined := make(map[string]bool, len(prof.Params))
	for _, p := range prof.Params {
		if !paramNameRE.MatchString(p.Name) {
			return nil, fmt.Errorf("param name %q is not of the generated form", p.Name)
		}
		if defined[p.Name] {
			return nil, fmt.Errorf("param %q defined twice", p.Name)
		}
		defined[p.Name] = true
	}

	if len(forms) < 3 || forms[2].String() != thirdForm {
		return nil, fmt.Errorf("third form is %s, want %s", forms[min(2, len(forms)-1)], thirdForm)
	}
	a := &analysis{forms: forms, pairs: map[string]bool{}, paramsUsed: map[string]bool{}}
	denied := false
	for _, f := range forms[3:] {
		if f.kind == sList && len(f.items) > 0 && f.items[0].isSym("deny") {
			if err := a.gitDeny(f, defined); err != nil {
				return nil, fmt.Errorf("rule %s: %v", f, err)
			}
			denied = true
			continue
		}
		if denied {
			return nil, fmt.Errorf("rule %s comes after a deny: the git denies must be last, or an allow after them would win", f)
		}
		if err := a.rule(f, defined); err != nil {
			return nil, fmt.Errorf("rule %s: %v", f, err)
		}
	}
	for name := range defined {
		if !a.paramsUsed[name] {
			return nil, fmt.Errorf("param %q is defined but never referenced", name)
		}
	}
	for _, line := range prof.NotEnforced {
		if line == "" || strings.ContainsAny(line, "\r\n") {
			return nil, fmt.Errorf("NotEnforced line %q is empty or spans lines", line)
		}
	}
	return a, nil
}

// thirdForm is the deny that must follow (deny default): the operations
// (deny default) is reported to leave allowed.
const thirdForm = "(deny file-map-executable process-info* iokit-get-properties nvram*)"

// gitDenyRegexes are the only regular expressions a deny may hold: the
// git protection (written out here, not taken from the generator).
var gitDenyRegexes = map[string]bool{
	`^.*/[^/]*[.][gG][iI][tT]/(([mM][oO][dD][uU][lL][eE][sS]/.+|[wW][oO][rR][kK][tT][rR][eE][eE][sS]/[^/]+)/)?` +
		`([hH][oO][oO][kK][sS](/.*)?|[cC][oO][nN][fF][iI][gG]|[cC][oO][nN][fF][iI][gG][.][wW][oO][rR][kK][tT][rR][eE][eE]|[cC][oO][mM][mM][oO][nN][dD][iI][rR])$`: true,
	`^.*/[^/]*[.][gG][iI][tT]$`: true,
}

// gitDeny checks a deny rule after the third form: only file-write* by
// the git regexes, and by G parameters (Policy.GitDirs).
func (a *analysis) gitDeny(f sexp, defined map[string]bool) error {
	if len(f.items) < 3 || !f.items[1].isSym("file-write*") {
		return errors.New("the only deny expected after the header is file-write* (git protection)")
	}
	seen := map[string]bool{}
	for _, flt := range f.items[2:] {
		if flt.kind == sList && len(flt.items) == 2 && (flt.items[0].isSym("subpath") || flt.items[0].isSym("literal")) {
			kind, err := a.pathArg(flt, flt.items[0].text, flt.items[1:], defined)
			if err != nil {
				return err
			}
			if !strings.HasSuffix(kind, "(param)") || !strings.HasPrefix(flt.items[1].items[1].text, "G") {
				return fmt.Errorf("deny filter %s: only GitDirs parameters", flt)
			}
			continue
		}
		if flt.kind != sList || len(flt.items) != 2 || !flt.items[0].isSym("regex") || flt.items[1].kind != sRegex || !gitDenyRegexes[flt.items[1].text] {
			return fmt.Errorf("deny filter %s is not a git protection regex", flt)
		}
		seen[flt.items[1].text] = true
	}
	if len(seen) != len(gitDenyRegexes) {
		return fmt.Errorf("the git deny holds %d of the %d git protection regexes", len(seen), len(gitDenyRegexes))
	}
	return nil
}

func (a *analysis) rule(f sexp, defined map[string]bool) error {
	if f.kind != sList || len(f.items) < 2 {
		return errors.New("not a rule")
	}
	if !f.items[0].isSym("allow") {
		return fmt.Errorf("action %s: only (deny default) and allow rules are expected", f.items[0])
	}
	var ops []string
	i := 1
	for ; i < len(f.items) && f.items[i].kind == sSymbol; i++ {
		op := f.items[i].text
		if _, ok := allowedOps[op]; !ok {
			return fmt.Errorf("operation %q is not in the allowlist", op)
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return errors.New("no operation")
	}
	filters := f.items[i:]
	if len(filters) == 0 {
		for _, op := range ops {
			if !contains(allowedOps[op], "") {
				return fmt.Errorf("operation %q allowed without a filter", op)
			}
			a.pairs[op+" "] = true
		}
		return nil
	}
	for _, flt := range filters {
		kind, err := a.filter(flt, defined)
		if err != nil {
			return err
		}
		head := flt.items[0].text
		for _, op := range ops {
			if !contains(allowedOps[op], head) {
				return fmt.Errorf("filter %q not allowed with operation %q", head, op)
			}
			if op == "network-outbound" && head == "literal" && flt.items[1].text != "/private/var/run/mDNSResponder" {
				return fmt.Errorf("network-outbound to socket %s", flt.items[1])
			}
			if head == "literal" || head == "subpath" {
				if only := constOnlyFor[flt.items[1].text]; only != "" && (op != only || head != "literal") {
					return fmt.Errorf("constant %s allowed for %s, not %s %s", flt.items[1], only, op, head)
				}
			}
			if strings.Contains(flt.String(), `(param "G`) {
				return fmt.Errorf("%s allowed on a GitDirs parameter %s: those are for the git deny only", op, flt)
			}
			if op == "file-ioctl" && flt.String() != `(literal (param "T0"))` && !(flt.String() == `(literal "/dev/tty")` && defined["T0"]) {
				return fmt.Errorf("file-ioctl on %s: only the Terminal parameter (and /dev/tty with it) may get it", flt)
			}
			if (op == "file-map-executable" || op == "process-exec*") && len(flt.items) == 2 && flt.items[1].kind == sList &&
				strings.HasPrefix(flt.items[1].String(), `(param "R`) {
				return fmt.Errorf("%s on a ReadPaths grant %s: read-only grants must not become code", op, flt)
			}
			if strings.Contains(flt.String(), `(param "L`) && (op != "file-read*" && op != "file-map-executable" && op != "file-read-metadata" ||
				head == "subpath") {
				return fmt.Errorf("%s %s on a LibraryPaths grant: a library is read and mapped, as itself, never executed or written", op, flt)
			}
			if op == "file-write-data" && flt.items[1].kind == sString && !writableConsts[flt.items[1].text] {
				return fmt.Errorf("file-write-data on constant %s", flt.items[1])
			}
			a.pairs[op+" "+kind] = true
		}
	}
	return nil
}

// filter checks one filter and returns its kind: the filter name followed by
// the names of nested filters, e.g. "subpath(param)" or "remote(tcp)".
func (a *analysis) filter(f sexp, defined map[string]bool) (string, error) {
	if f.kind != sList || len(f.items) == 0 || f.items[0].kind != sSymbol {
		return "", fmt.Errorf("filter %s is not a list headed by a symbol", f)
	}
	head, args := f.items[0].text, f.items[1:]
	one := func(k sexpKind) (sexp, error) {
		if len(args) != 1 || args[0].kind != k {
			return sexp{}, fmt.Errorf("filter %s: want one %s argument", f, k)
		}
		return args[0], nil
	}
	switch head {
	case "subpath", "literal", "path-ancestors":
		return a.pathArg(f, head, args, defined)
	case "regex":
		if len(args) != 1 || args[0].kind != sRegex || !allowedRegexes[args[0].text] {
			return "", fmt.Errorf("regex filter %s not in the allowlist", f)
		}
		return head, nil
	case "ipc-posix-name-prefix":
		s, err := one(sString)
		if err != nil {
			return "", err
		}
		if s.text != "/mp-" && s.text != "mp-" {
			return "", fmt.Errorf("POSIX IPC name prefix %q: only Python's semaphores (/mp-)", s.text)
		}
		return head, nil
	case "sysctl-name", "sysctl-name-prefix":
		s, err := one(sString)
		if err != nil {
			return "", err
		}
		if !sysctlNameRE.MatchString(s.text) || forbiddenSysctl.MatchString(s.text) && !(head == "sysctl-name-prefix" && s.text == routeSysctl) {
			return "", fmt.Errorf("sysctl name %q not allowed", s.text)
		}
		a.consts = append(a.consts, s.text)
		return head, nil
	case "global-name":
		s, err := one(sString)
		if err != nil {
			return "", err
		}
		if !allowedMachNames[s.text] {
			return "", fmt.Errorf("mach service %q not in the allowlist", s.text)
		}
		a.consts = append(a.consts, s.text)
		return head, nil
	case "target":
		s, err := one(sSymbol)
		if err != nil {
			return "", err
		}
		if s.text != "self" && s.text != "same-sandbox" {
			return "", fmt.Errorf("target %q not allowed", s.text)
		}
		return head + "(" + s.text + ")", nil
	case "socket-domain":
		s, err := one(sSymbol)
		if err != nil {
			return "", err
		}
		if s.text != "AF_UNIX" {
			return "", fmt.Errorf("socket domain %q not allowed", s.text)
		}
		return head, nil
	case "remote", "local":
		if len(args) != 2 || args[0].kind != sSymbol {
			return "", fmt.Errorf("filter %s: want (%s PROTO ADDRESS)", f, head)
		}
		switch args[0].text {
		case "tcp":
			if args[1].kind != sString {
				return "", fmt.Errorf("filter %s: address is not a string", f)
			}
			m := tcpAddrRE.FindStringSubmatch(args[1].text)
			if m == nil {
				return "", fmt.Errorf("network address %q: host must be localhost or *, port a number", args[1].text)
			}
			if port, err := strconv.Atoi(m[2]); err != nil || port > 65535 {
				return "", fmt.Errorf("network address %q: bad port", args[1].text)
			}
			if head == "local" && m[1] != "*" {
				return "", fmt.Errorf("local address %q: the generator binds on *", args[1].text)
			}
			a.netAddrs = append(a.netAddrs, args[1].text)
			return head + "(tcp)", nil
		case "unix-socket":
			if args[1].kind != sList || len(args[1].items) == 0 || !args[1].items[0].isSym("subpath") {
				return "", fmt.Errorf("filter %s: unix-socket must be scoped by (subpath (param ...))", f)
			}
			kind, err := a.pathArg(args[1], "subpath", args[1].items[1:], defined)
			if err != nil {
				return "", err
			}
			if kind != "subpath(param)" {
				return "", fmt.Errorf("filter %s: unix-socket scoped by a constant path", f)
			}
			if !strings.HasPrefix(args[1].items[1].items[1].text, "W") {
				return "", fmt.Errorf("filter %s: unix sockets only inside WritePaths", f)
			}
			return head + "(unix-socket(" + kind + "))", nil
		default:
			return "", fmt.Errorf("protocol %q not allowed", args[0].text)
		}
	default:
		return "", fmt.Errorf("filter %q is not in the allowlist", head)
	}
}

// pathArg checks the single argument of a path filter: an allowlisted
// constant or (param "NAME") with NAME defined.
func (a *analysis) pathArg(f sexp, head string, args []sexp, defined map[string]bool) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("filter %s: want one argument", f)
	}
	arg := args[0]
	switch {
	case arg.kind == sString:
		if !allowedConstPaths[arg.text] {
			return "", fmt.Errorf("constant path %q is not in the allowlist", arg.text)
		}
		a.consts = append(a.consts, arg.text)
		return head, nil
	case arg.kind == sList && len(arg.items) == 2 && arg.items[0].isSym("param") && arg.items[1].kind == sString:
		name := arg.items[1].text
		if !defined[name] {
			return "", fmt.Errorf("(param %q) is not defined in Params", name)
		}
		a.paramsUsed[name] = true
		return head + "(param)", nil
	}
	return "", fmt.Errorf("filter %s: argument must be a string or (param \"NAME\")", f)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decodeArgs parses sandbox-exec arguments the way its getopt(3) loop does
// for the options "f:n:p:D:": an option's argument is the rest of the word or
// the next word, "--" ends the options, the first non-option word is the
// command; -D NAME=VALUE splits at the first "=".
func decodeArgs(args []string) (text string, params map[string]string, cmd []string, err error) {
	params = map[string]string{}
	i := 0
	for i < len(args) {
		w := args[i]
		if w == "--" {
			i++
			break
		}
		if len(w) < 2 || w[0] != '-' {
			break
		}
		opt := w[1]
		if !strings.ContainsRune("fnpD", rune(opt)) {
			return "", nil, nil, fmt.Errorf("unknown option %q", w)
		}
		var arg string
		if len(w) > 2 {
			arg = w[2:]
		} else {
			if i+1 >= len(args) {
				return "", nil, nil, fmt.Errorf("option %q needs an argument", w)
			}
			i++
			arg = args[i]
		}
		i++
		switch opt {
		case 'p':
			text = arg
		case 'D':
			name, value, ok := strings.Cut(arg, "=")
			if !ok {
				return "", nil, nil, fmt.Errorf("-D %q has no '='", arg)
			}
			if _, dup := params[name]; dup {
				return "", nil, nil, fmt.Errorf("-D %q given twice", name)
			}
			params[name] = value
		default:
			return "", nil, nil, fmt.Errorf("option -%c not expected", opt)
		}
	}
	return text, params, args[i:], nil
}
