package serve

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWorkspaceStates_acquire_bound(t *testing.T) {
	ss := &workspaceStates{root: t.TempDir(), max: 2, open: map[string]*workspaceStateEntry{}}
	defer ss.close()
	_, r1, herr := ss.acquire("s1")
	require.Nil(t, herr)
	_, r2, herr := ss.acquire("s2")
	require.Nil(t, herr, "at the bound")
	_, _, herr = ss.acquire("s3")
	require.NotNil(t, herr, "past the bound with every workspace state in use")
	require.Equal(t, 429, herr.Status)
	require.Equal(t, ReasonMaxSessions, herr.Body.Reason)

	ws1, r1b, herr := ss.acquire("s1")
	require.Nil(t, herr, "an open workspace state is reused")
	r1()
	r1b()
	_, r3, herr := ss.acquire("s3")
	require.Nil(t, herr, "the idle workspace state s1 was closed to make room")
	require.NotContains(t, ss.open, "s1")
	require.NotEmpty(t, ws1.Root())
	r2()
	r3()
}
