package spec

// Status says what the sandbox mechanism on this machine can enforce, as
// plain data: the root package's Status has the same fields, and converts
// from it. It describes the machine, not a particular Config.
type Status struct {
	// Active is true when ApplySelf/WrapCommand can apply the mechanism.
	Active bool `json:"active"`
	// Mode is the platform's mechanism (the root package's Sandbox.Mode), even when it
	// is not active.
	Mode string `json:"mode"`
	// Version is the Landlock ABI on Linux, 0 elsewhere or when absent.
	Version int `json:"version,omitempty"`
	// Filesystem is true when this library enforces filesystem rules here.
	Filesystem bool `json:"filesystem"`
	// Network is true when this library enforces network rules (TCP ports)
	// here, not merely when the kernel could.
	Network bool `json:"network"`
	// Reason explains what is missing or limited, with a remedy when one
	// exists. Empty when everything is enforced.
	Reason string `json:"reason,omitempty"`
}
