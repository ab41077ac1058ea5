package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A client that reads slowly loses the lines past the buffer, never slows
// the program: the hook returns at once whatever the client does.
func TestProgress_hook_bufferForASlowClient(t *testing.T) {
	tests := []struct {
		name     string
		lines    int
		wantSent int
	}{
		// The sender holds the first line while the client is stuck, the
		// buffer the next progressBuffer.
		{"below", progressBuffer, progressBuffer},
		{"at", progressBuffer + 1, progressBuffer + 1},
		{"past", progressBuffer + 5, progressBuffer + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu    sync.Mutex
				got   []string
				held  = make(chan struct{})
				stuck = make(chan struct{})
			)
			first := true
			send := func(_ context.Context, p *mcp.ProgressNotificationParams) error {
				mu.Lock()
				got = append(got, p.Message)
				wait := first
				first = false
				mu.Unlock()
				if wait {
					close(held)
					<-stuck
				}
				return nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			p := newProgress(send, "tok", DefaultMaxProgressLines, cancel)
			go p.run(ctx)
			p.hook("line 0")
			<-held // the sender is stuck on line 0
			for i := 1; i < tt.lines; i++ {
				p.hook(fmt.Sprintf("line %d", i))
			}
			close(stuck)
			p.finish()
			want := tt.wantSent
			if tt.lines > tt.wantSent {
				want++ // the note saying how many were lost
			}
			require.Len(t, got, want)
			require.Equal(t, fmt.Sprintf("line %d", tt.wantSent-1), got[tt.wantSent-1])
			if tt.lines > tt.wantSent {
				require.Contains(t, got[len(got)-1], fmt.Sprintf("… %d more console lines were not sent", tt.lines-tt.wantSent))
			}
		})
	}
}

// A hook called after the stream ended (a guest that outlived its run)
// is ignored, never a send on a closed channel.
func TestProgress_hook_afterFinish(t *testing.T) {
	var n int
	ctx, cancel := context.WithCancel(context.Background())
	p := newProgress(func(context.Context, *mcp.ProgressNotificationParams) error { n++; return nil }, "tok", 10, cancel)
	go p.run(ctx)
	p.hook("a")
	p.finish()
	p.hook("late")
	require.Equal(t, 1, n)
}

// finish waits for the queued lines at most the drain, then lets the result
// go without them.
func TestProgress_finish_drain(t *testing.T) {
	tests := []struct {
		name     string
		clientIn time.Duration // how long the client takes per line; -1: for ever
		wantAll  bool
	}{
		{"a client that keeps up", 0, true},
		{"a stuck client", -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stuck := make(chan struct{})
			defer close(stuck)
			var mu sync.Mutex
			var got int
			send := func(ctx context.Context, _ *mcp.ProgressNotificationParams) error {
				if tt.clientIn < 0 {
					<-stuck
				}
				mu.Lock()
				got++
				mu.Unlock()
				return nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			p := newProgress(send, "tok", 10, cancel)
			p.drain = 200 * time.Millisecond
			go p.run(ctx)
			for i := range 3 {
				p.hook(fmt.Sprint(i))
			}
			start := time.Now()
			p.finish()
			require.Less(t, time.Since(start), 10*time.Second, "finish is bounded by the drain")
			require.Error(t, ctx.Err(), "the stream's context ends with finish")
			mu.Lock()
			defer mu.Unlock()
			if tt.wantAll {
				require.Equal(t, 3, got)
			} else {
				require.Zero(t, got)
			}
		})
	}
}
