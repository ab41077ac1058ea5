package shape

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCount_noun(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{0, "0 keys"},
		{1, "1 key"},
		{2, "2 keys"},
		{1000, "1000 keys"},
	} {
		require.Equal(t, tc.want, count(tc.n, "key"))
	}
}
