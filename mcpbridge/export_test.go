package mcpbridge

import "time"

// SetClock replaces the clock the restart delay is measured with.
func SetClock(b *Bridge, now func() time.Time) {
	b.lock <- struct{}{}
	b.now = now
	<-b.lock
}

// DerivePrefix is derivePrefix.
var DerivePrefix = derivePrefix

// AssignNames is assignNames, labelled "upstream".
func AssignNames(prefix string, names []string) (map[string]string, []string) {
	n := assignNames("upstream", prefix, names)
	return n.names, n.warnings
}
