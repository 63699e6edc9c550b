package sandbox

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// Grants is a Config as resolved on this machine (paths absolute with
// symlinks resolved, endpoints parsed), in terms every platform shares: what
// [Plan.Describe] speaks of. PlanFor fills it.
type Grants = spec.Grants

func grantsOf(rc *resolvedConfig) Grants {
	resolved := func(rps []ResolvedPath) []string {
		var out []string
		for _, rp := range rps {
			out = append(out, rp.Resolved)
		}
		return out
	}
	g := Grants{
		Read: resolved(rc.Read), Write: resolved(rc.Write), Exec: resolved(rc.Exec),
		Bind: slices.Clone(rc.Bind), Spawn: rc.Config.AllowProcessSpawn, UDP: rc.Config.AllowUDP,
		UnixSockets: rc.Config.AllowUnixSockets, Camera: rc.Config.AllowCamera, Microphone: rc.Config.AllowMicrophone,
		DenyWrite: slices.Clone(rc.DenyWrite), DenyRead: slices.Clone(rc.DenyRead), Mounts: slices.Clone(rc.Mounts),
	}
	for _, ep := range rc.Connect {
		g.Connect = append(g.Connect, ep.String())
	}
	return g
}

// Describe renders the plan in plain sentences: what a program confined by
// it can and cannot do on this machine (files, programs, processes,
// network, devices, time limit), followed by every part of the Config that
// is not enforced here, with its reason. It is generated from the plan
// alone, so that a host can put it in the description of a tool an AI agent
// calls (for example a help() the agent can read) and the agent learns the
// limits it will meet instead of probing them. A sentence that the plan does
// not back with an enforced feature says so where it stands.
//
// A plan from PlanFor holds the entries of every entry point (on Linux,
// ApplySelf's and WrapCommand/Run's where they differ); describe
// p.For(ScopeCommand) for a program Run starts, or p.For(ScopeApplySelf)
// for one that confines itself, so that the text names only the gaps that
// program meets (see [Plan.For]).
func (p Plan) Describe() string {
	d := &describer{p: p, where: "on this machine"}
	if p.Platform != runtime.GOOS {
		// PlanForPlatform: another OS's plan, computed here as data.
		d.where = "on a " + p.Platform + " machine (a plan computed elsewhere: the host facts it assumed are in PlanForPlatform's doc)"
	}
	mech := p.Mechanism
	if p.Version > 0 {
		mech += " ABI " + strconv.Itoa(p.Version)
	}
	if !p.Available {
		d.para(fmt.Sprintf("No sandbox is in force %s (%s on %s is unavailable: %s).", d.where, mech, p.Platform, p.Reason),
			"A program started here can do whatever the user running it can: read and write every file the user can, reach any host, run and start any program.")
	} else {
		d.para(fmt.Sprintf("This program runs in a sandbox (%s on %s). What it can and cannot do %s:", mech, p.Platform, d.where))
		d.files()
		d.programs()
		d.network()
		d.devices()
	}
	if p.TimeLimit > 0 {
		d.para(fmt.Sprintf("It is stopped after %s.", p.TimeLimit))
	} else {
		d.para("The sandbox sets no time limit.")
	}
	d.notEnforced()
	if p.Available {
		if d.ownRoot() {
			d.para("An operation the sandbox denies fails with a permission error (EACCES or EPERM), and a path outside the grants is not found (ENOENT): neither means the file, host or program is missing from the machine, and retrying will not help.")
		} else {
			d.para("An operation the sandbox denies fails with a permission error (EACCES or EPERM): it does not mean the file, host or program is missing, and retrying will not help.")
		}
	}
	return strings.TrimRight(d.b.String(), "\n") + "\n"
}

// describer writes Describe's paragraphs for one plan.
type describer struct {
	p     Plan
	b     strings.Builder
	where string // "on this machine", or the other platform's
}

// ownRoot reports whether the program gets a root of its own that is in
// force (Config.PrivateRoot, or a Mount at a path the host lacks).
func (d *describer) ownRoot() bool {
	f, ok := d.feature(FeaturePrivateRoot)
	return ok && f.Enforced
}

// shortWhere is where, without the note on a plan computed elsewhere.
func (d *describer) shortWhere() string {
	if d.p.Platform != runtime.GOOS {
		return "on a " + d.p.Platform + " machine"
	}
	return "on this machine"
}

// para writes the non-empty sentences as one paragraph.
func (d *describer) para(sentences ...string) {
	var keep []string
	for _, s := range sentences {
		if s != "" {
			keep = append(keep, s)
		}
	}
	if len(keep) > 0 {
		d.b.WriteString(strings.Join(keep, " ") + "\n\n")
	}
}

// feature is the plan's entry for name.
func (d *describer) feature(name string) (Enforcement, bool) {
	i := slices.IndexFunc(d.p.Features, func(f Enforcement) bool { return f.Feature == name })
	if i < 0 {
		return Enforcement{}, false
	}
	return d.p.Features[i], true
}

// claim is a sentence about what feature governs, marked when the
// feature is not enforced here.
func (d *describer) claim(name, sentence string) string {
	if f, ok := d.feature(name); ok && !f.Enforced {
		return strings.TrimSuffix(sentence, ".") + " (NOT enforced " + d.shortWhere() + ": see below)."
	}
	return sentence
}

// files: what it can read and write.
func (d *describer) files() {
	g := d.p.Grants
	var files []string
	if len(g.Write) > 0 {
		files = append(files, "It can read, create, change, rename and delete files inside "+list(g.Write)+".")
	}
	if len(g.Read) > 0 {
		files = append(files, "It can read (but not change) "+list(g.Read)+".")
	}
	var system []string
	for _, r := range d.p.Paths {
		if strings.HasPrefix(r.Source, "default:") && !slices.Contains(system, r.Path) {
			system = append(system, r.Path)
		}
	}
	if len(system) > 0 {
		files = append(files, "It can also use the system files every program needs, read-only except devices such as /dev/null: "+strings.Join(system, ", ")+".")
	}
	if len(g.Write) == 0 {
		files = append(files, "It cannot create or change any other file.")
	}
	if d.ownRoot() {
		files = append(files, d.claim(FeatureFilesystem, "Every other file and directory does not exist for it: it has a root of its own (below), so opening, listing or creating one fails with \"no such file or directory\" (ENOENT), or with a permission error where a granted directory holds it."))
	} else {
		files = append(files, d.claim(FeatureFilesystem, "Every other file and directory is off limits: reading, writing, creating or listing it fails with a permission error."))
	}
	d.para(files...)
}

// programs: what it can run, and whether it can start processes.
func (d *describer) programs() {
	g := d.p.Grants
	var exec string
	if len(g.Exec) == 0 {
		exec = d.claim(FeatureExec, "It cannot run any program file (executing one fails with a permission error).")
	} else {
		exec = d.claim(FeatureExec, "It can run only these programs (and the interpreters they need, the targets of symlinks in them, and the helper programs of git, gcc and go): "+list(g.Exec)+".")
	}
	if f, ok := d.feature(FeatureExecWrites); ok && f.Enforced {
		exec += " It can also run programs it writes inside the writable paths."
	}
	if _, ok := d.feature(FeatureSharedMem); ok {
		exec += " It can use POSIX shared memory and semaphores in /dev/shm, which other programs of its user share."
	}
	spawn := d.claim(FeatureSpawn, "It cannot start other processes: creating one fails with a permission error.")
	if g.Spawn {
		spawn = d.claim(FeatureSpawn, "It can start child processes; they are confined in the same way.")
	}
	d.para(exec, spawn, d.claim(FeatureScopeSignal, "It cannot send signals to processes outside the sandbox."))
}

// network: TCP, UDP and unix sockets.
func (d *describer) network() {
	g := d.p.Grants
	connect := d.claim(FeatureTCPConnect, "It cannot open TCP connections.")
	switch {
	case slices.Contains(g.Connect, "*:*"):
		connect = d.claim(FeatureTCPConnect, "It can open TCP connections to any host on any port (outgoing TCP is not restricted).")
	case slices.ContainsFunc(g.Connect, func(c string) bool { return strings.HasSuffix(c, ":*") }):
		connect = d.claim(FeatureTCPConnect, "It can open TCP connections only to "+list(g.Connect)+" (\"*\" as host: any host; as port: any port).")
	case len(g.Connect) > 0:
		connect = d.claim(FeatureTCPConnect, "It can open TCP connections only to "+list(g.Connect)+" (\"*\" is any host).")
	}
	if len(g.Connect) > 0 {
		if f, ok := d.feature(FeatureTCPHost); ok && !f.Enforced {
			connect += " Only the ports are enforced, not the hosts: any host on those ports is reachable."
		}
		if f, ok := d.feature(FeatureTCPHost); ok && f.Enforced && slices.ContainsFunc(g.Connect, func(c string) bool { return strings.Contains(c, "/") }) {
			connect += " An address range (such as 10.0.0.0/8) allows the addresses in it, dialled as addresses: a host name is never allowed by a range, whatever it resolves to."
		}
		if _, ok := d.feature(FeatureTCPAnyPort); ok {
			connect += " A \"host:*\" entry is reachable on any port only through the proxy (clients that use HTTP_PROXY, HTTPS_PROXY or ALL_PROXY); a direct connection reaches it only on the ports other entries list (see below)."
		}
	}
	bind := d.claim(FeatureTCPBind, "It cannot listen on TCP ports.")
	if len(g.Bind) > 0 {
		bind = d.claim(FeatureTCPBind, "It can listen on TCP ports "+ports(g.Bind)+" only (0: a port the system picks).")
	}
	udp := d.claim(FeatureUDP, "It cannot use UDP.")
	if g.UDP {
		udp = "It can send and receive UDP to and from any host and port."
	}
	unixSockets := d.claim(FeatureUnixSockets, "It cannot create unix domain sockets (connected socket pairs within the program excepted).")
	if g.UnixSockets {
		unixSockets = d.claim(FeatureUnixSockets, "It can create unix domain sockets.")
	}
	d.para(connect, bind, udp, unixSockets, d.claim(FeatureScopeUnix, "It cannot reach abstract unix sockets outside the sandbox."))
}

// devices: the camera and microphone, protected paths, mounts.
func (d *describer) devices() {
	g := d.p.Grants
	var dev []string
	switch {
	case g.Camera && g.Microphone:
		dev = append(dev, d.claim(FeatureCamera, "It can use the camera.")+" "+d.claim(FeatureMicrophone, "It can use the microphone."))
	case g.Camera:
		dev = append(dev, d.claim(FeatureCamera, "It can use the camera.")+" It cannot use the microphone.")
	case g.Microphone:
		dev = append(dev, d.claim(FeatureMicrophone, "It can use the microphone.")+" It cannot use the camera.")
	default:
		dev = append(dev, "It is not granted the camera or the microphone.")
	}
	if len(g.DenyWrite) > 0 {
		dev = append(dev, d.claim(FeatureDenyWrite, "These stay read-only even inside writable paths: "+list(g.DenyWrite)+"."))
	}
	if len(g.DenyRead) > 0 {
		dev = append(dev, d.claim(FeatureDenyRead, "These cannot be read even inside granted paths: "+list(g.DenyRead)+"."))
	}
	for _, m := range g.Mounts {
		mode := "read-only"
		if m.Write {
			mode = "writable"
		}
		dev = append(dev, d.claim(FeatureMounts, fmt.Sprintf("It sees %s at %s (%s).", m.Path, m.At, mode)))
	}
	if _, ok := d.feature(FeaturePrivateRoot); ok {
		dev = append(dev, d.claim(FeaturePrivateRoot, "It has a root of its own: what it is not granted does not exist for it (no name, no stat), and it does not see the host's mount table."))
	}
	d.para(dev...)
}

// notEnforced lists what the plan does not enforce, with its remedies.
func (d *describer) notEnforced() {
	ne := d.p.NotEnforced()
	if len(ne) == 0 {
		d.para("Everything above is enforced " + d.shortWhere() + ".")
		return
	}
	d.b.WriteString("Not enforced " + d.shortWhere() + " (the program CAN do these, whatever the Config says), or granted only in part (the entry says what the program cannot do):\n")
	for _, f := range ne {
		line := "- " + f.Feature + ": " + f.Detail
		if f.Hint != "" {
			line += " (remedy: " + f.Hint + ")"
		}
		d.b.WriteString(line + "\n")
	}
	d.b.WriteString("\n")
}

// list joins items for a sentence.
func list(items []string) string {
	switch len(items) {
	case 0:
		return "nothing"
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// ports lists ps, comma-separated.
func ports(ps []uint16) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.Itoa(int(p))
	}
	return strings.Join(s, ", ")
}
