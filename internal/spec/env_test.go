package spec

import (
	"errors"
	"slices"
	"testing"
)

func TestValidateEnv(t *testing.T) {
	for _, ok := range []map[string]string{nil, {}, {"PATH": "/usr/bin", "EMPTY": "", "odd name-1.x": "a=b"}} {
		if err := ValidateEnv(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	for _, bad := range []map[string]string{{"": "x"}, {"A=B": "x"}, {"A\x00": "x"}, {"A": "x\x00y"}} {
		err := ValidateEnv(bad)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "env" || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%q: %v; want a ConfigError for env", bad, err)
		}
	}
}

func TestEnvList(t *testing.T) {
	if EnvList(nil) != nil {
		t.Error("nil map: want nil (inherit is the caller's choice, not ours)")
	}
	if l := EnvList(map[string]string{}); l == nil || len(l) != 0 {
		t.Errorf("empty map: %#v; want an empty, non-nil list (no variable at all)", l)
	}
	got := EnvList(map[string]string{"B": "2", "A": "1=1", "C": ""})
	if want := []string{"A=1=1", "B=2", "C="}; !slices.Equal(got, want) {
		t.Errorf("%q; want %q", got, want)
	}
}
