package spec

import "context"

// PlanCheck is called by Run (Linux) with the plan of the spawn it is about
// to start, after Strict's check and before anything of the spawn is
// applied: an error stops the run, nothing started. It lets the CLI warn
// about (and refuse) exactly the plan that runs, built once, instead of
// planning the Config a second time beforehand (cmd/sandbox's preflight).
type PlanCheck func(Plan) error

type planCheckKey struct{}

// WithPlanCheck returns ctx carrying check for Run. Only code inside this
// module can call it (the package is internal): it is not public API.
func WithPlanCheck(ctx context.Context, check PlanCheck) context.Context {
	return context.WithValue(ctx, planCheckKey{}, check)
}

// PlanCheckOf is the check ctx carries, or nil.
func PlanCheckOf(ctx context.Context) PlanCheck {
	c, _ := ctx.Value(planCheckKey{}).(PlanCheck)
	return c
}
