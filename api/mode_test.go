package api_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
)

func TestParseMode(t *testing.T) {
	tests := []struct {
		in      string
		want    api.Mode
		runCode bool
		err     string
	}{
		{"native", api.ModeNative, false, ""},
		{"ptc", api.ModePTC, true, ""},
		{"both", api.ModeBoth, true, ""},
		{"", "", false, `INVALID_DEFINITION: unknown mode "": want native, ptc or both`},
		{"PTC", "", false, `INVALID_DEFINITION: unknown mode "PTC": want native, ptc or both`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			m, err := api.ParseMode(tt.in)
			if tt.err != "" {
				require.ErrorIs(t, err, api.ErrInvalidDefinition)
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, m)
			require.Equal(t, tt.in, m.String())
			require.Equal(t, tt.runCode, m.HasRunCode())
		})
	}
}
