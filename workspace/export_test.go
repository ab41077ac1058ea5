package workspace

// SetScanLimit lowers maxScanEntries for one Workspace, so tests can reach
// the bound without creating a hundred thousand files.
func (w *Workspace) SetScanLimit(n int) { w.scan = n }
