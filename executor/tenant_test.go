package executor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/wasmhost"
)

// The Config's tenant is every program's fairness key.
func TestExecutor_Execute_tenant(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  func(executor.Config) executor.Config
		want string
	}{
		{"none", func(c executor.Config) executor.Config { return c }, ""},
		{"the config's", func(c executor.Config) executor.Config { return c.WithTenant("acme") }, "acme"},
		{"the last one set", func(c executor.Config) executor.Config { return c.WithTenant("acme").WithTenant("globex") }, "globex"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := "unset"
			rt := fakeRuntime(func(_ context.Context, p wasmhost.Program, _ wasmhost.Dispatcher) (wasmhost.Outcome, error) {
				got = p.Tenant
				return wasmhost.Outcome{}, nil
			})
			e := newExecutor(t, newFixture(t, api.ModePTC).reg, tt.cfg(executor.NewConfig().WithRuntime(rt)))
			r := e.Execute(context.Background(), executor.Call{ID: "t", Name: registry.RunCode, Args: runCode("x")})
			require.True(t, r.OK(), r.Text)
			require.Equal(t, tt.want, got)
		})
	}
}
