package mcpbridge

import (
	"context"
	"fmt"
	"slices"

	"github.com/ptcx/ptcx/api"
)

// ToolsChange is what a refresh after notifications/tools/list_changed did.
type ToolsChange struct {
	// Added are the tools registered by this refresh, and Restored those
	// the upstream lists again after it had dropped them.
	Added, Restored []string
	// Removed are the registered tools the upstream no longer lists: they
	// stay registered (a registry cannot forget a tool), and a call to one
	// fails with UNKNOWN_TOOL saying the upstream dropped it.
	Removed []string
	// Warnings are those of the refresh (renamed or skipped tools).
	Warnings []string
	// Err is why the refresh failed (the tool set is then unchanged).
	Err error
}

// listChanged is the session's handler of notifications/tools/list_changed:
// it asks the refresher for one refresh. Notifications that arrive while
// one is pending are folded into it, so a flood costs one listing at a
// time.
func (b *Bridge) listChanged() {
	select {
	case b.listChangedCh <- struct{}{}:
	default:
	}
}

// refresher runs the refreshes asked for, one at a time, until Close.
func (b *Bridge) refresher() {
	defer close(b.refresherDone)
	for {
		select {
		case <-b.closing:
			return
		case <-b.listChangedCh:
		}
		ctx, cancel := b.startContext(context.Background())
		ch := b.refresh(ctx)
		cancel()
		if b.isClosing() {
			return
		}
		if b.onChange != nil {
			b.onChange(ch)
		}
	}
}

// refresh lists the upstream's tools again (within the start timeout),
// registers the new ones, and marks those it no longer lists as gone. A
// tool whose schema changed keeps the schema it was registered with (the
// upstream still validates the arguments it gets).
func (b *Bridge) refresh(ctx context.Context) (ch ToolsChange) {
	s, err := b.acquire(ctx)
	if err != nil {
		return ToolsChange{Err: err}
	}
	listed, err := listTools(ctx, s, b.startTimeout)
	if err != nil {
		return ToolsChange{Err: fmt.Errorf("%s: refreshing its tools after tools/list_changed: %w", b.label, err)}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	before := len(b.warnings)
	defer func() { ch.Warnings = slices.Clone(b.warnings[before:]) }()
	defs, err := b.definitions(listed)
	if err != nil {
		ch.Err = fmt.Errorf("%s: refreshing its tools after tools/list_changed: %w", b.label, err)
		return ch
	}
	for _, d := range defs {
		if _, taken := b.reg.Get(b.scope, d.tool.Name); taken {
			b.skip(d.upstream, fmt.Sprintf("%s: new tool %q skipped: the name is already registered for scope %q", b.label, d.tool.Name, b.scope))
			continue
		}
		if err := b.register(d); err != nil {
			b.skip(d.upstream, fmt.Sprintf("%s: new tool %q skipped: %v", b.label, d.tool.Name, err))
			continue
		}
		if _, ok := b.names[d.upstream]; ok {
			ch.Added = append(ch.Added, d.tool.Name)
		}
	}
	listedNow := map[string]bool{}
	for _, t := range listed {
		listedNow[t.Name] = true
	}
	for up, name := range b.names {
		switch {
		case !listedNow[up] && !b.gone[up]:
			b.gone[up] = true
			ch.Removed = append(ch.Removed, name)
		case listedNow[up] && b.gone[up]:
			delete(b.gone, up)
			ch.Restored = append(ch.Restored, name)
		}
	}
	slices.Sort(ch.Removed)
	slices.Sort(ch.Restored)
	return ch
}

// unlisted refuses a call to a tool the upstream no longer lists.
func (b *Bridge) unlisted(tool string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.gone[tool] {
		return nil
	}
	return api.Errorf(api.CodeUnknownTool, "%s no longer offers %s (it changed its tool list); call another of its tools", b.label, tool)
}
