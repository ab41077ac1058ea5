package workspace_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ptcx/ptcx/workspace"
)

// TestWorkspace_hammer runs every file tool from many goroutines at once,
// while another process-like writer changes a file behind the workspace's
// back. Run with -race: the observation state and the root are shared.
func TestWorkspace_hammer(t *testing.T) {
	e := newEnv(t, workspace.Options{})
	shared := strings.Repeat("shared line\n", 200)
	e.file("shared.txt", shared)
	ext := e.file("ext.txt", "gen 0\n")

	const workers, rounds = 8, 15
	ctx := context.Background()
	errs := make(chan error, workers*rounds)
	report := func(format string, args ...any) { errs <- fmt.Errorf(format, args...) }

	stop := make(chan struct{})
	var external sync.WaitGroup
	external.Go(func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_ = os.WriteFile(ext, []byte(fmt.Sprintf("gen %d\n", i%10)), 0o644)
			time.Sleep(time.Millisecond)
		}
	})

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			own := fmt.Sprintf("w%d/own.txt", w)
			if _, err := e.try(ctx, "write", m{"path": own, "content": "v0\n"}); err != nil {
				report("create %s: %v", own, err)
				return
			}
			for i := range rounds {
				// Concurrency-safe tools on a file nobody changes.
				out, err := e.try(ctx, "read", m{"path": "shared.txt", "start_line": 1 + i, "end_line": 10 + i})
				if err != nil || !strings.HasPrefix(string(out.Value), `{"path":"shared.txt","content":"shared line\n`) {
					report("read shared: %v %s", err, out.Value)
				}
				for name, args := range map[string]m{
					"grep": {"pattern": "shared", "path": "shared.txt"},
					"glob": {"pattern": "**/*.txt"},
					"list": {"path": filepath.Dir(own)},
				} {
					if _, err := e.try(ctx, name, args); err != nil {
						report("%s: %v", name, err)
					}
				}
				// Its own file: every edit was preceded by its own write or edit.
				edit := m{"path": own, "old_string": fmt.Sprintf("v%d\n", i), "new_string": fmt.Sprintf("v%d\n", i+1)}
				if _, err := e.try(ctx, "edit", edit); err != nil {
					report("edit %s: %v", own, err)
				}
				// A file changed behind its back: refused or applied, never corrupted.
				if _, err := e.try(ctx, "read", m{"path": "ext.txt"}); err != nil {
					report("read ext: %v", err)
				}
				_, err = e.try(ctx, "edit", m{"path": "ext.txt", "old_string": "gen", "new_string": "GEN"})
				if err != nil && !errors.Is(err, workspace.ErrChanged) && !errors.Is(err, workspace.ErrNoMatch) {
					report("edit ext: %v", err)
				}
			}
			out, err := e.try(ctx, "read", m{"path": own})
			var r readOut
			if err == nil {
				err = json.Unmarshal(out.Value, &r)
			}
			if err != nil || r.Content != fmt.Sprintf("v%d\n", rounds) {
				report("final %s: %v %q", own, err, r.Content)
			}
		})
	}
	wg.Wait()
	close(stop)
	external.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, shared, e.content("shared.txt"))
}
