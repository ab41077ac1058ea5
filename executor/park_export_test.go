package executor

// TokenOfParked returns the parent token a parked execution keeps.
func TokenOfParked(p *Parked) Token { return p.run.tok }
