package executor

import "github.com/ptcx/ptcx/wasmhost"

// SuspendedOfParked returns the suspension a parked execution holds.
func SuspendedOfParked(p *Parked) *wasmhost.Suspended { return p.snap }
