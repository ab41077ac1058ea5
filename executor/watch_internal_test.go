package executor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/internal/resolve"
)

// watchedBody is a body as startBody makes it, of a tool without a
// timeout, not yet watched.
func watchedBody(t *testing.T) *body {
	t.Helper()
	def, err := resolve.New(api.Schema{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, api.Input) (api.Output, error) { return api.Output{}, nil }, nil)
	require.NoError(t, err)
	x := &execution{def: def}
	x.life.x = x
	return &x.life
}

func (b *body) graceArmed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.grace != nil
}

// The end of a watched context arms the grace timer of every body watched
// then, and of any added later, at once; not of one that stopped being
// watched.
func TestWatch_end_armsTheBodiesWatched(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newWatch(ctx)
	a, b, gone := watchedBody(t), watchedBody(t), watchedBody(t)
	for _, x := range []*body{a, gone, b} {
		x.w = w
		w.add(x)
	}
	w.remove(gone)
	w.end() // as context.AfterFunc would, once ctx is done
	require.True(t, a.graceArmed())
	require.True(t, b.graceArmed())
	require.False(t, gone.graceArmed(), "a body no longer watched is left alone")
	late := watchedBody(t)
	w.add(late)
	require.True(t, late.graceArmed(), "a body added once ctx ended arms at once")
	for _, x := range []*body{a, b, late} {
		x.grace.Stop()
	}
	cancel()
	require.False(t, w.stop(), "the cancellation started end: too late to stop it")
}

// A scheduler has one watch per context its bodies run under, told apart
// by their Done channel (a context need not be comparable); one of a
// context that never ends registers nothing.
func TestWatches_of_onePerContext(t *testing.T) {
	var ws watches
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type key struct{}
	w := ws.of(ctx)
	require.Same(t, w, ws.of(ctx))
	require.Same(t, w, ws.of(context.WithValue(ctx, key{}, 1)), "the same Done channel: the same watch")
	other, cancelOther := context.WithCancel(context.Background())
	defer cancelOther()
	require.NotSame(t, w, ws.of(other))
	never := ws.of(context.Background())
	require.Nil(t, never.done)
	require.False(t, never.stop())
	ws.stop()
	require.Empty(t, ws.list)
	require.False(t, w.stop(), "stopped already")
}
