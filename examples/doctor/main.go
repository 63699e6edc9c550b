// Command doctor is an example of asking, before confining anything, what
// this machine's sandbox can enforce.
//
//	go run ./examples/doctor
package main

import (
	"fmt"
	"os"

	"github.com/openparallax/sandbox"
)

func main() {
	st := sandbox.Probe()
	fmt.Printf("mechanism %s, active %v, Landlock ABI %d, filesystem %v, network %v\n",
		st.Mode, st.Active, st.Version, st.Filesystem, st.Network)
	if st.Reason != "" {
		fmt.Println("reason:", st.Reason)
	}
	plan, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{os.TempDir()}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "doctor:", err)
		os.Exit(1)
	}
	for _, f := range plan.NotEnforced() {
		fmt.Printf("not enforced: %s: %s\n", f.Feature, f.Detail)
	}
	if !st.Active {
		os.Exit(1)
	}
}
