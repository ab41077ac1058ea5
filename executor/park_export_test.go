package executor

// TokenOfParked returns the parent token a parked execution keeps.
func TokenOfParked(p *Parked) Token { return p.run.tok }

// SnapshotOfParked returns a parked execution's snapshot without handing
// it out (Parked.Bytes would keep it from being recycled).
func SnapshotOfParked(p *Parked) []byte { return p.snap.Snapshot }
