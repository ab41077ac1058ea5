package registry_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/registry"
)

// run_code's schema spells its limits as api.RunCodeLimits does, the one
// type of that spelling (ptcx serve's requests and config take it too),
// and its model budget's minimum is api.MinModelBytes.
func TestRunCodeInputSchema_limitsAreRunCodeLimits(t *testing.T) {
	var schema struct {
		Properties struct {
			Limits struct {
				Properties map[string]struct{ Minimum int }
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(registry.RunCodeInputSchema), &schema))
	var inSchema, inType []string
	for name := range schema.Properties.Limits.Properties {
		inSchema = append(inSchema, name)
	}
	for f := range reflect.TypeFor[api.RunCodeLimits]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		inType = append(inType, name)
	}
	slices.Sort(inSchema)
	slices.Sort(inType)
	require.Equal(t, inType, inSchema)
	require.Equal(t, api.MinModelBytes, schema.Properties.Limits.Properties["model_bytes"].Minimum)
	require.Equal(t, registry.MinMemoryMB, schema.Properties.Limits.Properties["memory_mb"].Minimum)
}
