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

// The body watched without the lock (watch.solo, an awaited call's) is
// left alone once removed, and the next one takes its place; a body
// taken out and armed by end sees its grace timer from the goroutine
// that removes it, without the body's lock, as settle reads it.
func TestWatch_solo(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWatch(ctx)
	first, second := watchedBody(t), watchedBody(t)
	first.w, second.w = w, w
	w.add(first)
	require.True(t, first.solo)
	w.remove(first)
	require.False(t, first.solo)
	w.add(second)
	require.True(t, second.solo, "the slot is free again")
	w.end()
	require.False(t, first.graceArmed(), "a body no longer watched is left alone")
	w.remove(second)
	require.NotNil(t, second.grace, "armed by end, seen after remove")
	second.grace.Stop()
}

// Hammer: bodies added and removed on their own goroutines while the
// context ends. A removed body sees whether end armed it without its
// lock (-race checks the reads), and nothing stays watched.
func TestWatch_solo_hammer(t *testing.T) {
	for range 200 {
		ctx, cancel := context.WithCancel(context.Background())
		w := newWatch(ctx)
		const n = 4
		bodies := make([]*body, n)
		done := make(chan bool, n)
		for i := range bodies {
			bodies[i] = watchedBody(t)
			bodies[i].w = w
		}
		for _, b := range bodies {
			go func() {
				w.add(b)
				w.remove(b)
				armed := b.grace != nil // as settle reads it, after unwatch
				if armed {
					b.grace.Stop()
				}
				done <- armed
			}()
		}
		cancel() // end runs on its own goroutine (context.AfterFunc)
		for range n {
			<-done
		}
		w.mu.Lock()
		require.True(t, w.ended || !w.over.Load())
		require.Nil(t, w.head, "no body left in the list")
		w.mu.Unlock()
		require.Nil(t, w.solo.Load(), "no body left in the slot")
	}
}
